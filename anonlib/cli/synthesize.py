"""``synthesize``: a differentially private synthetic table (the optional ``dp`` extra).

    python -m anonlib synthesize FILE --columns A,B,... --epsilon E [--delta D]
        [--method mst|pairs|aim] [--cuts COL=v1,v2,...] [--values COL=a,b,...]
        [--values-from-data] [--person COL [--records-per-person N]] [--rows N]
        --out OUT [--package ZIP] [--ship synthetic|tables] [--report FILE]
        [--project NAME] [--json]

OpenDP makes the release (``anonlib.transformations.synthesis``); the package holds only
OpenDP's output and the declared inputs (``anonlib.workflow.private_package``), what it
holds chosen before the run (``--ship``). The comparison with the file's records
(``anonlib.workflow.private_release``) is the privacy officer's: printed, in ``--json``
and in ``--report FILE``, never in the package. Exit codes: 0 the table passed its
checks, 1 it failed one (everything asked for is still written, as chosen), 2 bad input
or a refusal (one sentence; nothing written). Without OpenDP: one sentence saying how to
install it, exit 2.

Before the file is read, the release's budget is settled from the options (OpenDP's map of
the whole release, δ's cap, MST's split: ``plan_budget``) and checked against the file's
privacy budget in the project store (kept by the file's SHA-256 across every project, the
audit chain verified whole): a release refused there reads nothing and writes nothing.
With or without ``--project`` the spend is recorded before OpenDP reads the records; a
release whose spend cannot be recorded (no usable store) is refused. The budget follows the
people: the file's fingerprint is kept with the spend, and a spent file whose people this
file's overlap by more than half is charged too (a note each: which file, how much overlaps,
what is left; refused past its total; ``--json`` ``budget.charged``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.errors import ParameterError, PrivacyBudgetError, StoreError
from ..core.fingerprint import file_fingerprint
from ..core.masking import printable
from ..core.samples import sample_sha256
from ..projects import ProjectStore, charges, file_budget, spend_privacy, spending_refusal
from ..projects.audit import COMMAND_LINE
from ..projects.drafts import draft_private
from ..transformations.synthesis import (
    DEFAULT_METHOD,
    DEFAULT_TIME_LIMIT,
    METHODS,
    RARE_RECORDS,
    NumberCuts,
    cuts_within,
    needs_cuts,
    parse_cuts,
    plan_budget,
    rare_values,
    require_opendp,
)
from ..workflow.private_package import SHIP, private_package, private_report
from ..workflow.private_release import FAILED_SENTENCE, private_release, several_records_per_person
from ..workflow.recipe import Reading
from ..workflow.release import file_digest, release_csv
from .common import (
    command,
    data_arguments,
    drafted,
    print_json,
    read_dataset,
    real_argument,
    split,
    whole_argument,
    write,
)
from .projects import project_for
from .team import team_member

KEEP_FAILED_GONE = (
    "--keep-failed is gone: what the package holds is chosen before the run with --ship synthetic|tables, "
    "never by the checks on the records."
)
DEFAULT_CUTS_GONE = (
    "--default-cuts is gone: cuts are never suggested from the data (its range is one person's value); give "
    "--bounds COLUMN=LOW,HIGH (round cuts inside them) or --cuts COLUMN=LOW:c1,c2,...:HIGH."
)


def _cuts(args: argparse.Namespace, columns: list[str]) -> dict[str, NumberCuts]:
    """--cuts COL=... (bounds LOW:c1,...:HIGH, or --bounds COL=LOW,HIGH, or the end bins as wide
    as their neighbours) and --bounds COL=LOW,HIGH alone (round cuts inside them): declared, never
    read from the data, so settled before the file is read."""
    bounds = {}
    for spec in args.bounds or []:
        column, _, text = spec.partition("=")
        values = split(text)
        if not column or len(values) != 2:
            raise ParameterError(f"Write --bounds as COLUMN=LOW,HIGH (e.g. age=17,90); got '{spec}'.")
        if column.strip() not in columns:
            raise ParameterError(f"--bounds names {column.strip()}, which is not in --columns.")
        bounds[column.strip()] = values
    out: dict[str, NumberCuts] = {}
    for spec in args.cuts or []:
        column, _, text = spec.partition("=")
        column = column.strip()
        if not column or not text:
            raise ParameterError(f"Write --cuts as COLUMN=v1,v2,... (e.g. age=20,30,40); got '{spec}'.")
        if column not in columns:
            raise ParameterError(f"--cuts names {column}, which is not in --columns.")
        if ":" in text:
            out[column] = parse_cuts(column, text)
            continue
        try:
            points = [float(v) for v in split(text)]
        except ValueError:
            raise ParameterError(f"The cuts of {column} must be numbers separated by commas; got '{text}'.") from None
        if column in bounds:
            low, high = bounds[column]
        elif len(points) >= 2:  # the end bins as wide as their neighbours: no bound read from the data
            low, high = points[0] - (points[1] - points[0]), points[-1] + (points[-1] - points[-2])
        else:
            raise ParameterError(f"{column} has one cut: give its public bounds with --bounds {column}=LOW,HIGH.")
        out[column] = NumberCuts(column, tuple(points), low, high)
    for column, (low, high) in bounds.items():
        if column not in out:  # bounds alone: round cuts inside them
            out[column] = cuts_within(column, low, high)
    return out


def _numbers_without_cuts(dataset, columns: list[str], cuts: dict[str, NumberCuts], values: dict) -> None:
    """A number column to release without cuts: one sentence asking for its public bounds (quoting
    nothing read from the records)."""
    for column in columns:
        if column not in cuts and column not in values and needs_cuts(dataset.frame[column]):
            raise ParameterError(
                f"{column} holds numbers: give its public bounds, --bounds {column}=LOW,HIGH (round cuts inside "
                f"them), or its cuts, --cuts {column}=LOW:c1,c2,...:HIGH (what is known without this file)."
            )


def _pairs(text: str | None) -> list[tuple[str, str]]:
    out = []
    for item in split(text):
        a, sep, b = item.partition(":")
        if not sep or not a.strip() or not b.strip():
            raise ParameterError(f"Write --pairs as A:B,C:D (two columns each); got '{item}'.")
        out.append((a.strip(), b.strip()))
    return out


def _values(specs: list[str] | None, columns: list[str]) -> dict[str, list[str]]:
    """--values COL=a,b,... (repeatable): the public value list of a category column."""
    out: dict[str, list[str]] = {}
    for spec in specs or []:
        column, sep, text = spec.partition("=")
        column = column.strip()
        values = split(text)
        if not sep or not column or not values:
            raise ParameterError(f"Write --values as COLUMN=a,b,... (e.g. sex=F,M); got '{spec}'.")
        if column not in columns:
            raise ParameterError(f"--values names {column}, which is not in --columns.")
        if column in out:
            raise ParameterError(f"--values gives {column} twice; give its list once.")
        out[column] = values
    return out


def _store() -> ProjectStore:
    """The project store a private release records its spend in: without it, no release."""
    try:
        return ProjectStore()
    except StoreError as err:
        said = str(err).rstrip(".")
        raise StoreError(
            f"No private release is made while its spend cannot be recorded ({said[:1].lower()}{said[1:]})."
        ) from None


def _file_sha256(args: argparse.Namespace) -> tuple[str, str]:
    """(SHA-256, name) of the file read: its bytes', or the bundled sample's."""
    if args.sample:
        return sample_sha256(args.sample), f"sample:{args.sample}"
    if not args.file:
        raise ParameterError("Give a file to read, or --sample NAME (see `python -m anonlib samples`).")
    try:
        return file_digest(args.file), Path(args.file).name
    except OSError:
        raise ParameterError(f"The file {printable(args.file)} cannot be read.") from None


def _synthesize(args: argparse.Namespace) -> int:
    if args.keep_failed:
        raise ParameterError(KEEP_FAILED_GONE)
    if args.default_cuts:
        raise ParameterError(DEFAULT_CUTS_GONE)
    require_opendp()  # before reading anything: without the extra, one sentence saying how to install it
    if args.records_per_person is not None and not args.person:
        raise ParameterError("--records-per-person needs --person COLUMN (the column that marks each person).")
    columns = split(args.columns)
    if not columns:
        raise ParameterError("Name the columns to release with --columns A,B,...")
    if args.epsilon is None and args.rho is None:
        raise ParameterError("Give the budget with --epsilon E (and --delta D), or --rho R with --delta D.")
    if args.rows is not None and args.rows < 1:
        raise ParameterError(f"--rows must be at least 1; got {args.rows}.")
    if args.person and args.person in columns:
        raise ParameterError(
            f"--person {args.person} marks people; it is never released, so leave it out of --columns."
        )
    values = _values(args.values, columns)
    cuts = _cuts(args, columns)
    # the budget from the settings alone, before any record is read: OpenDP's map, δ's cap, MST's split
    budget = plan_budget(
        columns,
        epsilon=args.epsilon,
        delta=args.delta,
        rho=args.rho,
        method=args.method,
        cuts=list(cuts),
        values=list(values),
        values_from_data=args.values_from_data,
        predict=args.predict,
        pairs=_pairs(args.pairs),
        person=bool(args.person),
    )
    store = _store()
    member = team_member(store)  # a team's store: the release is a draft, nothing written until approved
    if member is not None and not args.project:
        raise ParameterError(
            "In a team's store a private release belongs to a project: give --project NAME (its members' roles "
            "decide who drafts and who approves it)."
        )
    sha, name = _file_sha256(args)
    refused = spending_refusal(store, sha, name, epsilon=budget.stated.epsilon, delta=budget.stated.delta)
    if refused:  # a broken audit chain, or a total passed: before the file is read
        raise PrivacyBudgetError(refused)
    dataset, table = read_dataset(args)
    unknown = [c for c in columns if c not in dataset.frame.columns]
    if unknown:
        raise ParameterError(f"--columns names {', '.join(unknown)}, not in the file.")
    if args.person and args.person not in dataset.frame.columns:
        raise ParameterError(f"--person names {args.person}, not in the file.")
    _numbers_without_cuts(dataset, columns, cuts, values)
    person = args.person or dataset.person
    if person is None:
        warning = several_records_per_person(dataset.frame, skip=columns)
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
    if args.values_from_data:
        declared = [c for c in columns if c not in cuts and c not in values]
        rare = rare_values(dataset.frame, declared)
        if rare:
            listed = "; ".join(f"{c}: {', '.join(v)}" for c, v in rare.items())
            print(
                f"note: --values-from-data declares public these values held by fewer than {RARE_RECORDS} records "
                f"(each names few people; give --values to leave one out): {listed}",
                file=sys.stderr,
            )
    for sentence in filter(None, [budget.sentence()]):
        print(f"note: {sentence}", file=sys.stderr)
    # the budget follows the people: a spent file whose people this one's overlap by more than half is charged too
    people = file_fingerprint(dataset.frame, person)
    charged = charges(store, sha, people)
    for charge in charged:
        refused = charge.budget.refusal(budget.stated.epsilon, budget.stated.delta, why=charge.words())
        if refused:
            raise PrivacyBudgetError(refused)
    for charge in charged:
        print(f"note: {charge.sentence()}", file=sys.stderr)

    def progress(stage: str, share: float) -> None:
        print(f"[{100 * share:3.0f}%] {stage}", file=sys.stderr, flush=True)

    ref = None
    source = Path(args.file).read_bytes() if args.file else None
    if args.project:
        origin = f"sample:{args.sample}" if args.sample else "upload:" + str(dataset.name)
        reading = Reading.of(table, source) if table is not None and source is not None else None
        ref = project_for(args.project, dataset, source, origin, reading)

    def spend(stated) -> None:  # every input checked, before OpenDP reads the records: spent from here on
        entry = spend_privacy(
            store,
            ref,
            epsilon=stated.epsilon,
            delta=stated.delta,
            source_name=name,
            source_sha256=sha,
            records=len(dataset.frame),
            made_by=COMMAND_LINE,
            user=None if member is None else member.label,
            fingerprint=people,
        )
        where = f"project {ref.name}" if ref is not None else "no project"
        print(
            f"audit log          entry {entry.id} ({where}): ε = {stated.epsilon:g}, δ = {stated.delta:g} spent "
            f"({file_budget(store, sha, name).sentence()})",
            file=sys.stderr,
        )

    made = private_release(
        dataset,
        columns,
        epsilon=args.epsilon,
        delta=args.delta,
        rho=args.rho,
        method=args.method,
        cuts=[cuts[c] for c in columns if c in cuts],
        predict=args.predict,
        pairs=_pairs(args.pairs),
        rows=args.rows,
        values=values,
        values_from_data=args.values_from_data,
        person=person,
        records_per_person=args.records_per_person,
        time_limit=args.time_limit,
        progress=progress,
        before_measuring=spend,
    )
    s, c = made.synthesis, made.comparison
    if member is not None:
        args.team_draft = draft_private(
            store,
            ref,
            private_package(s, ship=args.ship),
            member=member,
            source_name=name,
            source_sha256=sha,
            target=f"differentially private release: ε = {s.budget.epsilon:g}, δ = {s.budget.delta:g}",
            rows=s.rows,
        )
        print(
            f"draft              release {args.team_draft.id} of project {ref.name}: nothing written until another "
            "member approves it",
            file=sys.stderr,
        )
    else:
        write(args.out, release_csv(s.table))
        if args.package:
            write(args.package, private_package(s, ship=args.ship))
        if args.report:
            write(args.report, private_report(s, c, source_name=made.source_name))
    if args.json:
        b = s.budget
        print_json(
            args,
            json.dumps(
                {
                    "method": s.method,
                    "method_description": s.method_label,
                    "epsilon": b.epsilon,
                    "delta": b.delta,
                    "rho": b.rho,
                    "noise": b.noise,
                    "delta_to_find_value_lists": b.delta_keys,
                    "rows": s.rows,
                    "unit": s.unit,
                    **({"records_per_person": s.records_per_person} if s.unit == "person" else {}),
                    "values_from": dict(s.value_sources),
                    "missing_spelled_as": dict(s.missing),
                    "ship": args.ship,
                    "report": args.report,
                    "project": args.project,
                    "budget": file_budget(store, sha, name).to_json() | {"charged": [c.to_json() for c in charged]},
                    "records_estimate": s.records_estimate,
                    "outside_bounds": dict(s.outside),
                    "seconds": s.seconds,
                    "estimated_seconds": s.estimate,
                    "library": dict(s.library),
                    "columns": list(s.columns),
                    "cuts": [
                        {"column": x.column, "lower": x.lower, "upper": x.upper, "cuts": list(x.cuts)} for x in s.cuts
                    ],
                    "pairs": [list(p) for p in s.pairs],
                    "pairs_chosen_by_opendp": [list(p) for p in s.chosen_pairs],
                    "mst_pairs": s.selections,
                    "predict": s.predict,
                    "passed": c.passed,
                    "comparison": c.to_json(),
                    "out": args.out,
                    "package": args.package,
                    "reproducible": False,
                    **drafted(args),
                },
                indent=2,
            ),
        )
    else:
        print(made.sentence())
        for sentence in c.sentences():
            print(f"  {sentence}")
    if not c.passed:
        print(f"note: {FAILED_SENTENCE}", file=sys.stderr)
        return 1
    return 0


def register(commands) -> None:
    parser = command(
        commands,
        "synthesize",
        "a differentially private synthetic table of chosen columns (OpenDP; needs pip install '.[dp]'), compared "
        "with the file's records for the privacy officer (exit 0 its checks passed, 1 one failed, 2 bad input)",
        "python -m anonlib synthesize adult.csv --columns sex,race,income,age --cuts age=17:30,50:90 --epsilon 3 "
        "--values-from-data --out synthetic.csv --package private.zip --report comparison.html",
        _synthesize,
    )
    data_arguments(parser)
    parser.add_argument("--columns", required=True, metavar="A,B,...", help="the columns to release")
    parser.add_argument("--epsilon", type=real_argument, help="the privacy budget ε (e.g. 1 or 3)")
    parser.add_argument(
        "--delta", type=real_argument, default=0.0, help="δ (default 0: pure ε-DP, Laplace; > 0: zCDP, Gaussian noise)"
    )
    parser.add_argument(
        "--rho", type=real_argument, help="the budget as ρ (zero-concentrated DP) instead of ε; needs --delta"
    )
    parser.add_argument(
        "--method",
        choices=list(METHODS),
        default=DEFAULT_METHOD,
        help="; ".join(f"{k}: {v}" for k, v in METHODS.items()) + f" (default {DEFAULT_METHOD})",
    )
    parser.add_argument(
        "--cuts",
        action="append",
        metavar="COL=v1,v2,...",
        help="public cut points of a number column (repeatable); LOW:v1,v2,...:HIGH adds its public bounds, "
        "otherwise --bounds or the end bins as wide as their neighbours",
    )
    parser.add_argument(
        "--bounds",
        action="append",
        metavar="COL=LOW,HIGH",
        help="public bounds of a number column (repeatable); alone, round cuts inside them",
    )
    parser.add_argument("--default-cuts", action="store_true", help=argparse.SUPPRESS)  # gone: DEFAULT_CUTS_GONE
    parser.add_argument(
        "--values",
        action="append",
        metavar="COL=a,b,...",
        help="the public value list of a category column (repeatable); other values count as missing",
    )
    parser.add_argument(
        "--values-from-data",
        action="store_true",
        help="declare the value lists read from the file public knowledge (the values held by fewer than "
        f"{RARE_RECORDS} records are named on standard error); without it and without --values, δ > 0 lets OpenDP "
        "find the lists privately (its threshold spends δ too)",
    )
    parser.add_argument(
        "--person",
        metavar="COL",
        help="the column marking each person: ε then protects the person (default: the file's person role)",
    )
    parser.add_argument(
        "--records-per-person",
        type=whole_argument("The records per person", minimum=None),
        metavar="N",
        help="records kept per person, at most, by the file's design (needed with a person column; any more are "
        "dropped at random before measuring)",
    )
    parser.add_argument("--predict", metavar="COL", help="the column crossed with every other, and the tree predicts")
    parser.add_argument("--pairs", metavar="A:B,C:D", help="more two-way tables to measure (the pairs method, AIM)")
    parser.add_argument(
        "--rows",
        type=whole_argument("The synthetic records", minimum=None),
        help="synthetic records (default the DP count of the records)",
    )
    parser.add_argument("--out", required=True, metavar="CSV", help="write the synthetic table to this CSV file")
    parser.add_argument("--package", metavar="ZIP", help="write the private release package (zip)")
    parser.add_argument(
        "--ship",
        choices=list(SHIP),
        default="synthetic",
        help="what the package holds, chosen before the run: the synthetic table with the DP tables (synthetic, "
        "the default) or the DP tables only (tables)",
    )
    parser.add_argument(
        "--report",
        metavar="HTML",
        help="write the comparison with the records (for the privacy officer; never in the package)",
    )
    parser.add_argument("--keep-failed", action="store_true", help=argparse.SUPPRESS)  # gone: KEEP_FAILED_GONE
    parser.add_argument(
        "--project",
        metavar="NAME",
        help="create or use this project and record the release's ε and δ under it (without it, the spend is "
        "recorded in the audit log under no project); either way it is spent from the file's budget, kept by its "
        "SHA-256 across every project (refused, nothing written, past it: projects budget NAME --epsilon E)",
    )
    parser.add_argument(
        "--time-limit",
        type=real_argument,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help=f"refuse a run estimated past this many seconds (default {DEFAULT_TIME_LIMIT:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the release and its comparison as JSON")
    parser.set_defaults(outputs=("out", "package", "report"), inputs=("file",))
