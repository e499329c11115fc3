"""``risk``: prosecutor, journalist and marketer risk, population uniqueness, special
uniques and the HIPAA identifiers left in a file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from ..core.equivalence import person_classes
from ..core.errors import DataFileError, ParameterError
from ..core.loading import load_table
from ..core.masking import printable
from ..measures.identifiers import hipaa_identifiers
from ..measures.risk import reidentification, suda
from .common import (
    analysis_frame,
    command,
    data_arguments,
    engine_arguments,
    load_dataset,
    print_json,
    quasi_identifiers,
    real_argument,
    whole_argument,
)
from .health import person_argument


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
    qis = quasi_identifiers(dataset)
    if args.engine and args.suda:
        raise ParameterError("Special uniques (--suda) are found in memory; leave out --engine for them.")
    person = getattr(dataset, "person", None)
    if person is not None:
        if args.population or args.sampling_fraction is not None or args.suda:
            raise ParameterError(
                "Population tables, sampling fractions and special uniques count records; leave out --person for them."
            )
        frame, dropped = dataset.analysis_frame(list(qis), person=True)
        counted = person_classes(frame, qis, person, count=dataset.count)
        result = reidentification(frame, qis, count=dataset.count, threshold=args.threshold, person=person)
    else:
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
        if person is not None:  # the risks are of people: a class of f people, 1 / f
            out.update(
                unit="people",
                person=person,
                persons=counted.n_persons,
                records=int(counted.classes.sizes.sum()),
                people_in_classes=result.records,
                k=counted.k,
            )
        if special is not None:
            out["special_uniques"] = {
                "max_size": special.max_size,
                "records": special.special_unique_records,
                "records_by_smallest_size": {str(s): n for s, n in special.by_size()},
                "attribute_counts": dict(special.attribute_counts()),
                "minimal_uniques": special.table(frame, limit=args.suda_rows).to_dict("records"),
            }
        print_json(args, json.dumps(out, indent=2))
        return 0
    print(f"dataset              {printable(dataset.name)}")
    print(f"quasi-identifiers    {', '.join(qis)}")
    if person is not None:
        records = int(counted.classes.sizes.sum())
        print(f"records              {records:,}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
        print(f"people               {counted.n_persons:,} (person column {person}; the risks below are of people)")
    else:
        print(f"records              {result.records:,}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    print(f"classes              {result.classes:,}")
    print("prosecutor (the attacker knows the person is in the file)")
    print(f"  highest risk       {_share(result.prosecutor_highest)}")
    print(f"  average risk       {_share(result.prosecutor_average)}")
    unit = "people" if person is not None else "records"
    for t, n in result.records_above:
        print(f"  {unit} above {100 * t:g}%".ljust(21) + f"{n:,} ({_share(n / result.records)})")
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
    person_argument(risk)
    engine_arguments(risk)
    risk.add_argument("--population", help="population table: the quasi-identifier columns (+ a count column)")
    risk.add_argument("--population-count", help="count column of the population table (default: found)")
    risk.add_argument("--sampling-fraction", type=real_argument, help="share of the population in the file, in (0, 1]")
    risk.add_argument(
        "--threshold", type=real_argument, default=0.2, help="risk above which a record is at risk (default 0.2)"
    )
    risk.add_argument("--suda", action="store_true", help="also find the special uniques (SUDA)")
    risk.add_argument(
        "--suda-size",
        type=whole_argument("The SUDA size", minimum=None),
        help="largest combination size for special uniques (default 3)",
    )
    risk.add_argument(
        "--suda-rows",
        type=whole_argument("The SUDA rows", minimum=None),
        default=100,
        help="minimal uniques listed in --json (default 100)",
    )
    risk.add_argument("--json", action="store_true", help="print the result as JSON")
