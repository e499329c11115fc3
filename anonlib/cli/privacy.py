"""``privacy`` (Kroes et al. 2021): the share of records whose sensitive value
stays protected, by minimum PPP or PoAC. With a person column (``--role COL=person``, or
found by structure) a record's look-alikes are the record itself and other people's records,
as on the Individual privacy page."""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..core.dataset import Dataset
from ..core.equivalence import encode, record_counts
from ..core.loading import to_safe_csv
from ..core.masking import printable
from ..core.metrics import weighted_median
from ..measures.peers import MEASURE_NAMES, MEASURES, default_q, min_poac, min_ppp
from .common import (
    analysis_frame,
    command,
    data_arguments,
    fraction_option,
    load_dataset,
    once,
    print_json,
    split,
    write,
)


def _privacy(args: argparse.Namespace) -> int:
    dataset = load_dataset(args)
    sensitive = args.sensitive
    p = fraction_option(args.p, "The threshold p")
    given_q = fraction_option(args.q, "The threshold q")
    aux = once(split(args.aux), "--aux") or [c for c in dataset.quasi_identifiers + dataset.sensitive if c != sensitive]
    frame, dropped = analysis_frame(dataset, [sensitive, *aux], "--sensitive or --aux")
    person = getattr(dataset, "person", None) if isinstance(dataset, Dataset) else None
    if person is not None:  # the same rows, with whose record each is
        frame = frame.assign(**{person: dataset.analysis_frame([sensitive, *aux], person=True)[0][person]})
    count = dataset.count
    include_empty = not args.no_empty
    label = MEASURE_NAMES.get(args.measure, args.measure)
    if args.measure == "poac":
        q = given_q if given_q is not None else default_q(p, encode(frame, [sensitive]).cardinalities[0])
        values = min_poac(frame, sensitive, aux, q, include_empty=include_empty, count=count, person=person)
        protected = values >= 1.0  # q-downward privacy: min PoAC = 1
    else:
        q = None
        values = min_ppp(frame, sensitive, aux, include_empty=include_empty, count=count, person=person)
        protected = values > p  # p-upward privacy: min PPP > p
    weights = record_counts(frame, count)
    weights = np.ones(len(frame), dtype=np.int64) if weights is None else weights
    records = int(weights.sum())
    share = float((protected * weights).sum() / max(records, 1))
    median = weighted_median(values, weights) if len(values) else float("nan")
    if args.out:
        per_row = frame.drop(columns=[person] if person else []).assign(
            **{f"min {label}": values, "protected": protected}
        )
        write(args.out, to_safe_csv(per_row))
    result = {
        "dataset": dataset.name,
        "sensitive": sensitive,
        "aux": aux,
        "measure": args.measure,
        "p": p,
        "q": q,
        "include_empty": include_empty,
        "records": records,
        "individuals": records,
        "rows_dropped": dropped,
        "protected_share": share,
        f"median_min_{args.measure}": median,
        "person": person,
        "look_alikes": "records" if person is None else "the record itself and other people's records",
    }
    if args.json:
        print_json(args, json.dumps(result, indent=2))
        return 0
    print(f"dataset            {printable(dataset.name)}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    print(f"sensitive          {sensitive}")
    print(
        f"auxiliary          {', '.join(aux) or '(none)'}  ({2 ** len(aux) - (0 if include_empty else 1):,} combinations)"
    )
    print(f"records            {records:,}")
    if person is not None:
        print(f"look-alikes        among other people's records ('{person}' says whose record it is)")
    what = f"min {label} > {p:g}" if args.measure == "ppp" else f"min {label} = 1 at q = {q:g}"
    print(f"protected share    {100 * share:.2f}%  ({what})")
    print(f"median min {label:<7} {median:.4f}")
    return 0


def register(commands) -> None:
    privacy = command(
        commands,
        "privacy",
        "share of records protected: minimum PPP or PoAC over every subset of what an adversary knows",
        "python -m anonlib privacy --sample kroes_table1_option2 --sensitive Diagnosis --aux Gender,Age --p 0.2",
        _privacy,
    )
    data_arguments(privacy)
    privacy.add_argument("--sensitive", required=True, help="the sensitive column")
    privacy.add_argument(
        "--aux", help="comma-separated auxiliary columns (default: the other quasi-identifiers and sensitive)"
    )
    privacy.add_argument("--measure", choices=list(MEASURES), default="ppp", help="ppp (default) or poac")
    privacy.add_argument("--p", default="0", help="PPP threshold: protected when min PPP > p (default 0)")
    privacy.add_argument("--q", help="PoAC threshold q (default p / (number of sensitive values - 1))")
    privacy.add_argument("--no-empty", action="store_true", help="leave out knowing nothing (the empty subset)")
    privacy.add_argument("--out", metavar="CSV", help="write each row's values and minimum to this CSV file")
    privacy.add_argument("--json", action="store_true", help="print the result as JSON")
