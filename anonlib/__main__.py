"""Command line: ``python -m anonlib <command> ...`` for batch work (``--help`` on each).

Commands:
  profile   k, anonymity vector and records at risk of a table for chosen quasi-identifiers
  samples   list the bundled sample datasets
  leakage   average information loss per attribute or combination (Longpre et al., Arca & Hewett)
  privacy   share of individuals protected by minimum PPP / PoAC (Kroes et al.)
  anonymize least generalization reaching k-anonymity with IAB, exhaustive or greedy search
  schedule  screening schedule keeping people anonymous (Caballero et al.)
  vector    anonymity vector, k and lexicographic index of class sizes
  index     exact lexicographic index of an anonymity vector, and improvements
  report    one-page printable HTML risk report of a table (every capability's findings)

Errors are printed as one sentence on standard error with exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .anonymize import METHOD_NAMES
from .anonymize import METHODS as SEARCH_METHODS
from .anonymize import search
from .avector import anonymity_vector, improvement, k_of, lex_index, partition_count, population_of, vector_text
from .dataset import Dataset, Role
from .equivalence import encode, record_counts
from .errors import AnonlibError, DataFileError, EmptySelectionError, ParameterError, join_names
from .hierarchy import default_hierarchy, read_hierarchy_csv, validate_hierarchy
from .leakage import attribute_label, leakage_table
from .loading import load_table, to_safe_csv
from .metrics import weighted_median
from .peers import MEASURE_NAMES, MEASURES, default_q, min_poac, min_ppp
from .profile import risk_profile
from .samples import SAMPLES, load_sample
from .schedule import DEFAULT_RULE, RULES, assign, make_schedule, matrix_vector
from .schedule import METHODS as SCHEDULE_METHODS


def _split(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def _dataset(args: argparse.Namespace) -> Dataset:
    if args.sample:
        dataset = load_sample(args.sample)
    elif args.file:
        table = load_table(args.file, delimiter=args.delimiter, encoding=args.encoding)
        dataset = Dataset.from_frame(args.file, table.frame)
    else:
        raise ParameterError("Give a file to read, or --sample NAME (see `python -m anonlib samples`).")
    roles: dict[str, Role] = {}
    if args.qi:
        roles.update({c: Role.IGNORE for c in dataset.quasi_identifiers})
        roles.update({c: Role.QUASI_IDENTIFIER for c in _split(args.qi)})
    if args.count:
        roles[args.count] = Role.COUNT
    dataset = dataset.with_roles(roles) if roles else dataset
    return dataset.with_missing("drop") if args.drop_missing else dataset


def _profile(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    risk = risk_profile(dataset)
    result = {"dataset": dataset.name, **risk.as_dict()}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"dataset            {dataset.name}")
    print(f"quasi-identifiers  {', '.join(risk.quasi_identifiers)}")
    print(f"records            {risk.records:,}" + (f" ({risk.rows_dropped:,} rows dropped)" if risk.rows_dropped else ""))
    print(f"classes            {risk.classes:,}")
    print(f"k                  {risk.k}")
    print(f"unique records     {risk.unique_records:,} ({100 * risk.unique_share:.2f}%)")
    for threshold, n in risk.records_below:
        print(f"in classes < {threshold:<5} {n:,} ({100 * n / max(risk.records, 1):.2f}%)")
    print(f"anonymity vector   {vector_text(risk.vector)}  (--json prints it whole)")
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report import build_report, render_html

    page = render_html(build_report(_dataset(args), k=args.k, p=args.p))
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as out:
                out.write(page)
        except OSError as err:
            print(f"error: could not write {args.out}: {err.strerror or err}.", file=sys.stderr)
            return 2
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(page)
    return 0


def _samples(args: argparse.Namespace) -> int:
    for key, sample in SAMPLES.items():
        print(f"{key:<22} {sample.title}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m anonlib", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    profile = commands.add_parser("profile", help="re-identification risk of a table", description=_profile_help)
    _data_arguments(profile, qi=True)
    profile.add_argument("--json", action="store_true", help="print the result as JSON")
    profile.set_defaults(handler=_profile)

    report = commands.add_parser("report", help="one-page HTML risk report", description=(
        "One printable HTML page: k, anonymity vector, leakage per attribute, individual privacy (minimum PPP) "
        "and a suggested generalization, with the parameters used; to --out, else to standard output. "
        "Example: python -m anonlib report --sample adult --k 5 --out report.html"))
    _data_arguments(report, qi=True)
    report.add_argument("--k", type=int, default=5, help="k of the suggested generalization (default 5)")
    report.add_argument("--p", type=float, default=0.0, help="PPP threshold of individual privacy (default 0)")
    report.add_argument("--out", help="write the HTML to this file (default: standard output)")
    report.set_defaults(handler=_report)

    samples = commands.add_parser("samples", help="list the bundled samples")
    samples.set_defaults(handler=_samples)
    _add_batch_commands(commands)
    return parser


_profile_help = (
    "k, anonymity vector, unique records and records in classes smaller than 2, 5 and 10 "
    "for the chosen quasi-identifiers. Example: python -m anonlib profile --sample adult --qi age,sex,race"
)


# --- batch commands: leakage, privacy, anonymize, schedule, vector, index ----------------


def _integers(text: str | None, what: str) -> list[int]:
    """Whole numbers from "4,4,5,2" (spaces allowed); a sentence naming the bad entry otherwise."""
    numbers = []
    for item in _split(text):
        try:
            numbers.append(int(item))
        except ValueError:
            raise ParameterError(f"The {what} must be whole numbers separated by commas; '{item}' is not one.") from None
    if not numbers:
        raise ParameterError(f"Give the {what} as whole numbers separated by commas, e.g. 4,4,5,2.")
    return numbers


def _write(path: str, data: bytes) -> None:
    """Write a result file the user asked for (--out/--csv); a sentence if it cannot be written."""
    try:
        Path(path).write_bytes(data)
    except OSError as err:
        raise DataFileError(f"Could not write '{path}': {err.strerror or err}.") from None
    print(f"written            {path}")


def _analysed_columns(dataset: Dataset, wanted: Sequence[str]) -> list[str]:
    """The columns given, or the dataset's quasi-identifiers and sensitive columns."""
    columns = list(wanted) or list(dataset.quasi_identifiers + dataset.sensitive)
    if not columns:
        raise EmptySelectionError("Name the columns to use (the dataset has no quasi-identifier or sensitive column).")
    return columns


def _leakage(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    columns = _analysed_columns(dataset, _split(args.attributes))
    frame, dropped = dataset.analysis_frame(columns)
    sizes = _integers(args.sizes, "combination sizes") if args.sizes else None
    table = leakage_table(frame, columns, count=dataset.count, sizes=sizes)
    shown = table.assign(attribute=[attribute_label(a) for a in table["attribute"]])
    if args.csv:
        _write(args.csv, to_safe_csv(shown))
    if args.json:
        print(json.dumps({"dataset": dataset.name, "rows_dropped": dropped, "leakage": shown.to_dict("records")}, indent=2))
        return 0
    print(f"dataset            {dataset.name}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    width = max(9, *(len(a) for a in shown["attribute"]))
    print(f"{'attribute':<{width}}  {'partitions':>10}  {'loss (bits)':>11}  {'normalized':>10}")
    for row in shown.itertuples(index=False):
        print(f"{row.attribute:<{width}}  {row.partitions:>10,}  {row.loss:>11.5f}  {row.normalized:>10.5f}")
    return 0


def _privacy(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    sensitive = args.sensitive
    aux = _split(args.aux) or [c for c in dataset.quasi_identifiers + dataset.sensitive if c != sensitive]
    frame, dropped = dataset.analysis_frame([sensitive, *aux])
    count = dataset.count
    include_empty = not args.no_empty
    if not 0.0 <= args.p < 1.0:
        raise ParameterError(f"The threshold p must be at least 0 and below 1; got {args.p:g}.")
    label = MEASURE_NAMES.get(args.measure, args.measure)
    if args.measure == "poac":
        q = args.q if args.q is not None else default_q(args.p, encode(frame, [sensitive]).cardinalities[0])
        values = min_poac(frame, sensitive, aux, q, include_empty=include_empty, count=count)
        protected = values >= 1.0  # q-downward privacy: min PoAC = 1
    else:
        q = None
        values = min_ppp(frame, sensitive, aux, include_empty=include_empty, count=count)
        protected = values > args.p  # p-upward privacy: min PPP > p
    weights = record_counts(frame, count)
    weights = np.ones(len(frame), dtype=np.int64) if weights is None else weights
    share = float((protected * weights).sum() / max(weights.sum(), 1))
    median = weighted_median(values, weights) if len(values) else float("nan")
    if args.out:
        per_row = frame.assign(**{f"min {label}": values, "protected": protected})
        _write(args.out, to_safe_csv(per_row))
    result = {
        "dataset": dataset.name, "sensitive": sensitive, "aux": aux, "measure": args.measure, "p": args.p, "q": q,
        "include_empty": include_empty, "individuals": int(weights.sum()), "rows_dropped": dropped,
        "protected_share": share, f"median_min_{args.measure}": median,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"dataset            {dataset.name}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    print(f"sensitive          {sensitive}")
    print(f"auxiliary          {', '.join(aux) or '(none)'}  ({2 ** len(aux) - (0 if include_empty else 1):,} combinations)")
    print(f"individuals        {int(weights.sum()):,}")
    what = f"min {label} > {args.p:g}" if args.measure == "ppp" else f"min {label} = 1 at q = {q:g}"
    print(f"protected share    {100 * share:.2f}%  ({what})")
    print(f"median min {label:<7} {median:.4f}")
    return 0


def _hierarchy_files(specs: Sequence[str]) -> dict[str, pd.DataFrame]:
    """ARX hierarchy files given as ATTR=path.csv."""
    out: dict[str, pd.DataFrame] = {}
    for spec in specs:
        attribute, sep, path = spec.partition("=")
        if not sep or not attribute.strip() or not path.strip():
            raise ParameterError(f"Give a hierarchy as ATTRIBUTE=file.csv; got '{spec}'.")
        file = Path(path.strip())
        if not file.is_file():
            raise DataFileError(f"The hierarchy file '{file.name}' does not exist or is not a file.")
        out[attribute.strip()] = read_hierarchy_csv(file.read_bytes())
    return out


def _anonymize(args: argparse.Namespace) -> int:
    dataset = _dataset(args)
    shield = _split(args.shield)
    if not shield:
        raise EmptySelectionError("Name the shield attributes (the ones an attacker may know), e.g. --shield Zip,Age.")
    wanted = set(shield) | set(dataset.quasi_identifiers + dataset.sensitive)
    columns = [c for c in dataset.frame.columns if c in wanted] + [c for c in shield if c not in dataset.frame.columns]
    frame, dropped = dataset.analysis_frame(columns)
    given = _hierarchy_files(args.hierarchy or [])
    unknown = [a for a in given if a not in shield]
    if unknown:
        raise ParameterError(f"Hierarchies were given for {join_names(unknown)}, which is not in the shield.")
    hierarchies = {}
    for attribute in shield:
        if attribute in given:
            hierarchies[attribute] = validate_hierarchy(given[attribute], frame[attribute], attribute)
        else:
            hierarchies[attribute] = default_hierarchy(frame[attribute], attribute)[1]
    result = search(frame, shield, args.k, hierarchies, args.method, count=dataset.count)
    if args.out:
        _write(args.out, to_safe_csv(result.table))
    summary = {"dataset": dataset.name, "shield": shield, "k": args.k, "rows_dropped": dropped, **result.summary()}
    summary["hierarchies"] = {a: ("file" if a in given else "default") for a in shield}
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"dataset            {dataset.name}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    print(f"method             {METHOD_NAMES[result.method]}, k = {result.k}")
    print(f"levels             {', '.join(f'{a} {v}/{result.max_levels[a]}' for a, v in result.levels.items())}")
    print(f"rows               {result.rows:,} (original {result.root.rows:,})")
    print(f"violations         {result.violations:,} (original {result.root.violations:,})")
    print(f"tables generated   {result.generated:,}")
    print(f"seconds            {result.seconds:.4f}")
    return 0


def _print_matrix(matrix: np.ndarray, limit: int = 40) -> None:
    if matrix.shape[0] > limit or matrix.shape[1] > limit:
        print(f"matrix             {matrix.shape[0]:,} x {matrix.shape[1]:,} (too large to print)")
        return
    width = max(2, len(str(int(matrix.max(initial=0)))))
    print("matrix (rows: quasi-identifier values, columns: resources)")
    for row in matrix:
        print("  " + " ".join(f"{int(x):>{width}}" for x in row))


def _schedule(args: argparse.Namespace) -> int:
    population_mode = bool(args.file or args.sample)
    if population_mode and (args.freqs or args.capacities):
        raise ParameterError("Give either --freqs and --capacities, or a population with --resources; not both.")
    if population_mode:
        if not args.resources:
            raise ParameterError("Give the resource table (one row per slot with a capacity column) with --resources FILE.")
        dataset = _dataset(args)
        qis = list(dataset.quasi_identifiers)
        population, dropped = dataset.analysis_frame(qis)
        resources = load_table(args.resources, delimiter=args.delimiter, encoding=args.encoding).frame
        res = make_schedule(
            population, resources, qis, count=dataset.count, capacity=args.capacity, group=args.group,
            method=args.method, rule=args.rule, seed=args.seed, time_limit=args.time_limit,
        )
        if args.out:
            _write(args.out, to_safe_csv(res.schedule))
        matrix, vector, index, base, proven = res.matrix, res.vector, res.index, res.base_vector, res.proven_optimal
    else:
        if not (args.freqs and args.capacities):
            raise ParameterError(
                "Give --freqs and --capacities (e.g. --freqs 4,4,5,2 --capacities 4,2,4,3,2), "
                "or a population file with --resources FILE."
            )
        matrix = assign(
            _integers(args.freqs, "frequencies"), _integers(args.capacities, "capacities"), args.method,
            rule=args.rule, seed=args.seed, time_limit=args.time_limit,
        )
        vector = matrix_vector(matrix)
        index, base, proven, dropped = lex_index(vector), None, None, 0
    result = {
        "method": args.method, "rule": (args.rule or DEFAULT_RULE) if args.method == "heuristic" else None,
        "matrix": matrix.tolist(), "anonymity_vector": list(vector), "k": k_of(vector),
        "lexicographic_index": None if index is None else str(index),
    }
    if base is not None:
        result["vector_before"] = list(base)
    if args.method == "optimal" and proven is not None:
        result["proven_optimal"] = proven
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"method             {args.method}" + (f" (rule {result['rule']})" if result["rule"] else ""))
    if dropped:
        print(f"rows dropped       {dropped:,}")
    _print_matrix(matrix)
    if base is not None:
        print(f"vector before      {vector_text(base)}")
    print(f"anonymity vector   {vector_text(vector)}")
    print(f"k                  {k_of(vector)}")
    print(f"lexicographic index {'-' if index is None else index}")
    if proven is not None:
        print(f"proven optimal     {'yes' if proven else 'no (time limit)'}")
    return 0


def _vector_summary(vector: tuple[int, ...]) -> dict:
    people = population_of(vector)
    return {
        "anonymity_vector": list(vector), "k": k_of(vector), "people": people,
        "lexicographic_index": str(lex_index(vector)), "possible_vectors": str(partition_count(people)),
    }


def _print_vector_summary(result: dict) -> None:
    print(f"anonymity vector   {vector_text(result['anonymity_vector'])}")
    print(f"k                  {result['k']}")
    print(f"people             {result['people']:,}")
    print(f"lexicographic index {result['lexicographic_index']} of {result['possible_vectors']} possible vectors")


def _vector(args: argparse.Namespace) -> int:
    result = _vector_summary(anonymity_vector(_integers(args.sizes, "class sizes")))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_vector_summary(result)
    return 0


def _index(args: argparse.Namespace) -> int:
    vector = tuple(_integers(args.vector, "anonymity-vector entries"))
    result = _vector_summary(vector)
    if args.versus or args.base:
        if not (args.versus and args.base):
            raise ParameterError("The improvement needs both --versus (the other vector) and --base (the reference vector).")
        other, base = tuple(_integers(args.versus, "--versus entries")), tuple(_integers(args.base, "--base entries"))
        result["improvement"] = improvement(vector, other, base)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    _print_vector_summary(result)
    if "improvement" in result:
        print(f"improvement        {100 * result['improvement']:.4f}% over {vector_text(other)} (base {vector_text(base)})")
    return 0


def _data_arguments(parser: argparse.ArgumentParser, *, qi: bool = False, positional: bool = True) -> None:
    """The file/--sample options of a command reading a table (as the profile command has them)."""
    if positional:
        parser.add_argument("file", nargs="?", help="CSV/TSV/Excel/Parquet file (or use --sample)")
    parser.add_argument("--sample", choices=list(SAMPLES), help="a bundled sample instead of a file")
    if qi:
        parser.add_argument("--qi", help="comma-separated quasi-identifier columns (default: guessed from names)")
    else:
        parser.set_defaults(qi=None)
    parser.add_argument("--count", help="column holding how many records each row stands for")
    parser.add_argument("--drop-missing", action="store_true", help="drop rows with missing values in the columns used")
    parser.add_argument("--delimiter", help="field delimiter (default: detected)")
    parser.add_argument("--encoding", help="text encoding (default: detected)")


def _command(commands, name: str, summary: str, example: str, handler) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name, help=summary, description=f"{summary[0].upper()}{summary[1:]}. Example: {example}",
    )
    parser.set_defaults(handler=handler)
    return parser


def _add_batch_commands(commands) -> None:
    """Subcommands computing each capability's numbers (one library call each)."""
    leakage = _command(
        commands, "leakage", "average information loss (bits and normalized) per attribute or combination",
        "python -m anonlib leakage --sample arca_table1 --attributes Age,Zip --sizes 1,2", _leakage,
    )
    _data_arguments(leakage)
    leakage.add_argument("--attributes", help="comma-separated columns (default: quasi-identifiers and sensitive)")
    leakage.add_argument("--sizes", help="combination sizes, e.g. 1,2 for single attributes and pairs (default: 1)")
    leakage.add_argument("--json", action="store_true", help="print the result as JSON")
    leakage.add_argument("--csv", metavar="OUT", help="also write the table to this CSV file")

    privacy = _command(
        commands, "privacy", "share of individuals protected: minimum PPP or PoAC over every subset of what an adversary knows",
        "python -m anonlib privacy --sample kroes_table1_option2 --sensitive Diagnosis --aux Gender,Age --p 0.2", _privacy,
    )
    _data_arguments(privacy)
    privacy.add_argument("--sensitive", required=True, help="the sensitive column")
    privacy.add_argument("--aux", help="comma-separated auxiliary columns (default: the other quasi-identifiers and sensitive)")
    privacy.add_argument("--measure", choices=list(MEASURES), default="ppp", help="ppp (default) or poac")
    privacy.add_argument("--p", type=float, default=0.0, help="PPP threshold: protected when min PPP > p (default 0)")
    privacy.add_argument("--q", type=float, help="PoAC threshold q (default p / (number of sensitive values - 1))")
    privacy.add_argument("--no-empty", action="store_true", help="leave out knowing nothing (the empty subset)")
    privacy.add_argument("--out", metavar="CSV", help="write each row's values and minimum to this CSV file")
    privacy.add_argument("--json", action="store_true", help="print the result as JSON")

    anonymize = _command(
        commands, "anonymize", "least generalization putting every shield group in at least k records",
        "python -m anonlib anonymize --sample arca_table1 --shield Zip,Age,AC --k 3 --hierarchy Age=age.csv", _anonymize,
    )
    _data_arguments(anonymize)
    anonymize.add_argument("--shield", required=True, help="comma-separated attributes an attacker may know")
    anonymize.add_argument("--k", type=int, required=True, help="smallest allowed group (records)")
    anonymize.add_argument("--method", choices=list(SEARCH_METHODS), default="iab", help="search method (default iab)")
    anonymize.add_argument(
        "--hierarchy", action="append", metavar="ATTR=FILE",
        help="ARX hierarchy CSV of a shield attribute (repeatable; default: built from the values)",
    )
    anonymize.add_argument("--out", metavar="CSV", help="write the generalized table to this CSV file")
    anonymize.add_argument("--json", action="store_true", help="print the result as JSON")

    schedule = _command(
        commands, "schedule", "screening schedule keeping people anonymous: matrix, anonymity vector, k, index",
        "python -m anonlib schedule --freqs 4,4,5,2 --capacities 4,2,4,3,2 --method heuristic --rule largest", _schedule,
    )
    schedule.add_argument("--freqs", help="people per quasi-identifier value, e.g. 4,4,5,2")
    schedule.add_argument("--capacities", help="seats per resource (slot), e.g. 4,2,4,3,2")
    schedule.add_argument("--population", dest="file", help="population table instead of --freqs (one row per person, or --count)")
    _data_arguments(schedule, qi=True, positional=False)
    schedule.add_argument("--resources", help="resource table: one row per slot with a capacity column")
    schedule.add_argument("--capacity", default="capacity", help="capacity column of --resources (default: capacity)")
    schedule.add_argument("--group", help="column of both tables (e.g. region): people only go to their own group's slots")
    schedule.add_argument("--method", choices=list(SCHEDULE_METHODS), default="heuristic", help="default heuristic")
    schedule.add_argument("--rule", choices=list(RULES), help=f"heuristic split rule (default {DEFAULT_RULE})")
    schedule.add_argument("--seed", type=int, default=0, help="seed of the random method (default 0)")
    schedule.add_argument("--time-limit", type=float, help="seconds per step of the optimal method (default 10)")
    schedule.add_argument("--out", metavar="CSV", help="with a population: write the schedule to this CSV file")
    schedule.add_argument("--json", action="store_true", help="print the result as JSON")

    vector = _command(
        commands, "vector", "anonymity vector, k and exact lexicographic index of equivalence-class sizes",
        "python -m anonlib vector --sizes 4,4,5,2", _vector,
    )
    vector.add_argument("--sizes", required=True, help="comma-separated class sizes")
    vector.add_argument("--json", action="store_true", help="print the result as JSON")

    index = _command(
        commands, "index", "exact lexicographic index of an anonymity vector (and the improvement over another)",
        "python -m anonlib index --vector 0,2,1,2 --versus 2,3,1,1 --base 0,1,0,2,1", _index,
    )
    index.add_argument("--vector", required=True, help="comma-separated anonymity vector")
    index.add_argument("--versus", help="another vector of the same people: print the anonymity improvement over it")
    index.add_argument("--base", help="the reference vector the improvement is relative to")
    index.add_argument("--json", action="store_true", help="print the result as JSON")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (2 with a sentence on bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except AnonlibError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
