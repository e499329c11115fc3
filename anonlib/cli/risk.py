"""``risk`` (prosecutor, journalist and marketer risk, population uniqueness, special
uniques, HIPAA identifiers) and ``models`` (l-diversity, t-closeness, α, δ, β per
sensitive attribute, and whether a release target is met)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from ..core.dataset import Role
from ..core.errors import DataFileError, EmptySelectionError, ParameterError
from ..core.hierarchy import read_hierarchy_csv
from ..core.loading import load_table
from ..measures.identifiers import hipaa_identifiers
from ..measures.models import MODELS, ModelRequirement, acceptance, model_values
from ..measures.risk import reidentification, suda
from .common import analysis_frame, command, data_arguments, engine_arguments, load_dataset, split


def _quasi_identifiers(dataset) -> list[str]:
    qis = list(dataset.quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Name the quasi-identifiers with --qi (no column name suggests one).")
    return qis


def _population(path: str | None) -> pd.DataFrame | None:
    if not path:
        return None
    if not Path(path).is_file():
        raise DataFileError(f"The population file '{Path(path).name}' does not exist or is not a file.")
    return load_table(path).frame


def _share(x: float | None) -> str:
    """A share as a percentage; tiny ones keep two significant digits (0.00081%)."""
    if x is None:
        return "-"
    return f"{100 * x:.2g}%" if 0 < x < 1e-4 else f"{100 * x:.2f}%"


def _risk(args: argparse.Namespace) -> int:
    dataset = load_dataset(args)
    qis = _quasi_identifiers(dataset)
    if args.engine and args.suda:
        raise ParameterError("Special uniques (--suda) are found in memory; leave out --engine for them.")
    frame, dropped = analysis_frame(dataset, qis, "--qi")
    result = reidentification(
        frame,
        qis,
        count=dataset.count,
        population=_population(args.population),
        sampling_fraction=args.sampling_fraction,
        threshold=args.threshold,
        population_count=args.population_count,
    )
    # on an engine the records stay there: the HIPAA check reads the column names only
    flags = hipaa_identifiers(dataset.frame if not args.engine else pd.DataFrame(columns=list(dataset.columns)))
    special = suda(frame, qis, max_size=args.suda_size, count=dataset.count) if args.suda else None
    if args.json:
        out = {
            "dataset": dataset.name,
            "rows_dropped": dropped,
            **result.as_dict(),
            "hipaa_identifiers": [f.as_dict() for f in flags],
        }
        if special is not None:
            out["special_uniques"] = {
                "max_size": special.max_size,
                "records": special.special_unique_records,
                "records_by_smallest_size": {str(s): n for s, n in special.by_size()},
                "attribute_counts": dict(special.attribute_counts()),
                "minimal_uniques": special.table(frame, limit=args.suda_rows).to_dict("records"),
            }
        print(json.dumps(out, indent=2))
        return 0
    print(f"dataset              {dataset.name}")
    print(f"quasi-identifiers    {', '.join(qis)}")
    print(f"records              {result.records:,}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    print(f"classes              {result.classes:,}")
    print("prosecutor (the attacker knows the person is in the file)")
    print(f"  highest risk       {_share(result.prosecutor_highest)}")
    print(f"  average risk       {_share(result.prosecutor_average)}")
    for t, n in result.records_above:
        print(f"  records above {100 * t:g}%".ljust(21) + f"{n:,} ({_share(n / result.records)})")
    print("journalist (the attacker matches against the population)")
    if result.k_map is None:
        print("  needs a population table (--population FILE)")
    else:
        print(f"  highest risk       {_share(result.journalist_highest)}  (k-map {result.k_map:,})")
        print(f"  average risk       {_share(result.journalist_average)}")
        print(f"  records above {100 * result.threshold:g}%".ljust(21) + _share(result.journalist_records_at_risk))
    print("marketer (the attacker re-identifies as many as possible)")
    print(f"  records re-identified on average  {_share(result.marketer)}")
    if result.uniqueness is not None:
        u = result.uniqueness
        print(
            f"population uniques (sampling fraction {u.sampling_fraction:g}; share of records unique in the population)"
        )
        for model in ("zayatz", "pitman", "snb"):
            print(f"  {model:<18} {_share(getattr(u, model))}")
        print(f"  {'dankar':<18} {_share(u.dankar)}  ({u.dankar_model})")
    if special is not None:
        print(f"special uniques (combinations of up to {special.max_size} quasi-identifiers)")
        print(f"  records singled out {special.special_unique_records:,}")
        for size, n in special.by_size():
            print(f"  by {size} attribute{'s' if size > 1 else ''}".ljust(21) + f"{n:,}")
    print("HIPAA identifiers left in the file" + ("" if flags else ": none found"))
    for f in flags:
        print(f"  {f.column}: ({f.letter}) {f.identifier}; {f.reason}; suggested role {f.suggested_role.value}")
    return 0


def parse_requirement(text: str, hierarchies: dict[str, pd.DataFrame]) -> ModelRequirement:
    """``MODEL:SENSITIVE=VALUE`` (``recursive_cl:dx=3,c=2``) as a requirement.

    >>> parse_requirement("recursive_cl:dx=3,c=2", {}).describe()
    'recursive (2, 3)-diversity of dx'
    """
    model, sep, rest = text.partition(":")
    rest, _, extra = rest.partition(",")
    sensitive, eq, value = rest.rpartition("=")
    if not sep or not eq or not sensitive.strip():
        raise ParameterError(
            f"Give a privacy model as MODEL:SENSITIVE=VALUE (e.g. distinct_l:diagnosis=3); got '{text}'."
        )
    c = None
    if extra:
        key, _, c = extra.partition("=")
        if key.strip() != "c":
            raise ParameterError(f"Only recursive (c,l)-diversity takes an extra ',c=C'; got '{text}'.")
    try:
        number = float(value)
        c_number = None if c is None else float(c)
    except ValueError:
        raise ParameterError(f"The value in '{text}' is not a number.") from None
    model = model.strip()
    hierarchy = hierarchies.get(sensitive.strip()) if model == "t_closeness" else None
    return ModelRequirement(model, sensitive.strip(), number, c_number, hierarchy)


def _hierarchies(specs: list[str]) -> dict[str, pd.DataFrame]:
    out = {}
    for spec in specs:
        attribute, sep, path = spec.partition("=")
        if not sep or not attribute.strip() or not path.strip():
            raise ParameterError(f"Give a hierarchy as ATTRIBUTE=file.csv; got '{spec}'.")
        if not Path(path.strip()).is_file():
            raise DataFileError(f"The hierarchy file '{Path(path.strip()).name}' does not exist or is not a file.")
        out[attribute.strip()] = read_hierarchy_csv(Path(path.strip()).read_bytes())
    return out


def _models(args: argparse.Namespace) -> int:
    dataset = load_dataset(args)
    both = [c for c in split(args.sensitive) if c in split(args.qi)]
    if both:
        raise ParameterError(
            f"{', '.join(both)} is both a quasi-identifier and a sensitive attribute; "
            "a column can only have one of the two roles."
        )
    if args.sensitive:  # the columns named replace the guessed ones, as --qi does
        roles = {c: Role.IGNORE for c in dataset.sensitive}
        roles.update({c: Role.SENSITIVE for c in split(args.sensitive)})
        dataset = dataset.with_roles(roles)
    qis = _quasi_identifiers(dataset)
    hierarchies = _hierarchies(args.hierarchy or [])
    requirements = [parse_requirement(r, hierarchies) for r in args.require or []]
    sensitive = list(dict.fromkeys(list(dataset.sensitive) + [r.sensitive for r in requirements]))
    if not sensitive:
        raise EmptySelectionError("Name the sensitive attributes with --sensitive (no column is marked sensitive).")
    frame, dropped = analysis_frame(dataset, qis + [s for s in sensitive if s not in qis], "--qi or --sensitive")
    values = [
        model_values(frame, qis, s, count=dataset.count, recursive_l=args.l, hierarchy=hierarchies.get(s))
        for s in sensitive
    ]
    target = acceptance(
        frame, qis, k=args.k, requirements=requirements, max_suppressed=args.max_suppressed, count=dataset.count
    )
    if args.json:
        print(
            json.dumps(
                {
                    "dataset": dataset.name,
                    "quasi_identifiers": qis,
                    "rows_dropped": dropped,
                    "models": [v.as_dict() for v in values],
                    "target": {
                        "k": args.k,
                        "requirements": [r.describe() for r in requirements],
                        "max_suppressed": args.max_suppressed,
                        "acceptable": target.acceptable,
                        "records": target.records,
                        "suppressed_records": target.suppressed_records,
                        "suppressed_share": target.suppressed_share,
                        "failing": {name: n for name, n in target.failing},
                    },
                },
                indent=2,
            )
        )
        return 0 if target.acceptable else 1
    print(f"dataset            {dataset.name}")
    print(f"quasi-identifiers  {', '.join(qis)}")
    print(f"records            {target.records:,}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    for v in values:
        print(f"{v.sensitive} ({v.values} values; {v.classes:,} classes)")
        print(f"  k                          {v.k:,}")
        print(f"  alpha (largest share)      {v.alpha:.4f}")
        print(f"  distinct l                 {v.distinct_l}")
        print(f"  entropy l                  {v.entropy_l:.4f}")
        print(f"  recursive c for l = {v.recursive_l}      {v.recursive_c:.4f}")
        print(f"  t ({v.t_distance} distance)".ljust(29) + ("-" if v.t is None else f"{v.t:.4f}"))
        print(f"  delta                      {v.delta:.4f}")
        print(f"  beta (basic)               {v.beta:.4f}")
        print(f"  beta (enhanced)            {v.enhanced_beta:.4f}")
    if requirements or args.k > 1:
        print(
            f"target             k = {args.k}"
            + "".join(f"; {r.describe()}" for r in requirements)
            + f"; at most {100 * args.max_suppressed:g}% suppressed records"
        )
        for name, n in target.failing:
            print(f"  records in classes failing {name}: {n:,}")
        print(
            f"  suppressed records {target.suppressed_records:,} ({100 * target.suppressed_share:.2f}%): "
            + ("target met" if target.acceptable else "target NOT met")
        )
    return 0 if target.acceptable else 1


def register(commands) -> None:
    risk = command(
        commands,
        "risk",
        "prosecutor, journalist and marketer re-identification risk, population uniques, "
        "special uniques and HIPAA identifiers",
        "python -m anonlib risk --sample adult --qi age,sex,race --sampling-fraction 0.01",
        _risk,
    )
    data_arguments(risk, qi=True)
    engine_arguments(risk)
    risk.add_argument("--population", help="population table: the quasi-identifier columns (+ a count column)")
    risk.add_argument("--population-count", help="count column of the population table (default: found)")
    risk.add_argument("--sampling-fraction", type=float, help="share of the population in the file, in (0, 1]")
    risk.add_argument("--threshold", type=float, default=0.2, help="risk above which a record is at risk (default 0.2)")
    risk.add_argument("--suda", action="store_true", help="also find the special uniques (SUDA)")
    risk.add_argument("--suda-size", type=int, help="largest combination size for special uniques (default 3)")
    risk.add_argument("--suda-rows", type=int, default=100, help="minimal uniques listed in --json (default 100)")
    risk.add_argument("--json", action="store_true", help="print the result as JSON")

    models = command(
        commands,
        "models",
        "l-diversity, t-closeness, alpha, delta and beta per sensitive attribute, and "
        "whether k plus the required models are met after suppression (exit 1 when not)",
        "python -m anonlib models --sample adult --qi age,sex --sensitive income "
        "--k 5 --require distinct_l:income=2 --max-suppressed 0.05",
        _models,
    )
    data_arguments(models, qi=True)
    engine_arguments(models)
    models.add_argument("--sensitive", help="comma-separated sensitive attributes (default: guessed from names)")
    models.add_argument("--l", type=int, default=2, help="l of the reported recursive (c,l)-diversity (default 2)")
    models.add_argument(
        "--hierarchy",
        action="append",
        metavar="ATTR=FILE",
        help="ARX hierarchy of a sensitive attribute for the hierarchical t-closeness distance",
    )
    models.add_argument("--k", type=int, default=1, help="k of the release target (default 1)")
    models.add_argument(
        "--require",
        action="append",
        metavar="MODEL:SENSITIVE=VALUE",
        help=f"a required model ({', '.join(MODELS)}), e.g. t_closeness:income=0.2 or "
        "recursive_cl:income=3,c=2; repeat for several",
    )
    models.add_argument(
        "--max-suppressed", type=float, default=0.0, help="share of records that may be suppressed (default 0)"
    )
    models.add_argument("--json", action="store_true", help="print the result as JSON")
