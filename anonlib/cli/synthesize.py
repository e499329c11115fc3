"""``synthesize``: a differentially private synthetic table (the optional ``dp`` extra).

    python -m anonlib synthesize FILE --columns A,B,... --epsilon E [--delta D]
        [--method pairs|mst|aim] [--cuts COL=v1,v2,...] [--rows N] --out OUT
        [--package ZIP] [--json]

OpenDP makes the release (``anonlib.transformations.synthesis``); it is compared with
the file's records as the k-anonymous release is (``anonlib.workflow.private_release``).
Exit codes: 0 the table passed its checks, 1 it failed one (OUT is still written, for
inspection; the package then holds the DP tables, not the table), 2 bad input or a
refusal (one sentence; nothing written). Without OpenDP: one sentence saying how to
install it, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..core.errors import ParameterError
from ..transformations.synthesis import (
    DEFAULT_METHOD,
    DEFAULT_TIME_LIMIT,
    METHODS,
    NumberCuts,
    default_number_cuts,
    needs_cuts,
    parse_cuts,
    require_opendp,
)
from ..workflow.private_package import private_package
from ..workflow.private_release import private_release
from ..workflow.release import file_digest, release_csv
from .common import command, data_arguments, print_json, read_dataset, split, write


def _cuts(args: argparse.Namespace, dataset, columns: list[str]) -> list[NumberCuts]:
    """--cuts COL=... (bounds LOW:c1,...:HIGH, or --bounds COL=LOW,HIGH, or the end bins as
    wide as their neighbours) and, with --default-cuts, the typed hierarchy's first level."""
    bounds = {}
    for spec in args.bounds or []:
        column, _, text = spec.partition("=")
        values = split(text)
        if not column or len(values) != 2:
            raise ParameterError(f"Write --bounds as COLUMN=LOW,HIGH (e.g. age=17,90); got '{spec}'.")
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
    for column in columns:
        values = dataset.frame[column]
        if column in out or not needs_cuts(values):
            continue
        suggested = default_number_cuts(values, column)
        if args.default_cuts:
            out[column] = suggested
            print(f"note: {suggested.text()} (its typed hierarchy's first level, read from the data)", file=sys.stderr)
        else:
            raise ParameterError(
                f"{column} holds numbers: give its public cuts, e.g. --cuts {column}="
                f"{suggested.lower:g}:{','.join(f'{c:g}' for c in suggested.cuts)}:{suggested.upper:g} (its typed "
                "hierarchy's first level), or --default-cuts to take those."
            )
    return [out[c] for c in columns if c in out]


def _pairs(text: str | None) -> list[tuple[str, str]]:
    out = []
    for item in split(text):
        a, sep, b = item.partition(":")
        if not sep or not a.strip() or not b.strip():
            raise ParameterError(f"Write --pairs as A:B,C:D (two columns each); got '{item}'.")
        out.append((a.strip(), b.strip()))
    return out


def _synthesize(args: argparse.Namespace) -> int:
    require_opendp()  # before reading anything: without the extra, one sentence saying how to install it
    dataset, _ = read_dataset(args)
    columns = split(args.columns)
    if not columns:
        raise ParameterError("Name the columns to release with --columns A,B,...")
    unknown = [c for c in columns if c not in dataset.frame.columns]
    if unknown:
        raise ParameterError(f"--columns names {', '.join(unknown)}, not in the file.")
    if args.epsilon is None and args.rho is None:
        raise ParameterError("Give the budget with --epsilon E (and --delta D), or --rho R with --delta D.")
    if args.rows is not None and args.rows < 1:
        raise ParameterError(f"--rows must be at least 1; got {args.rows}.")
    cuts = _cuts(args, dataset, columns)

    def progress(stage: str, share: float) -> None:
        print(f"[{100 * share:3.0f}%] {stage}", file=sys.stderr, flush=True)

    made = private_release(
        dataset,
        columns,
        epsilon=args.epsilon,
        delta=args.delta,
        rho=args.rho,
        method=args.method,
        cuts=cuts,
        predict=args.predict,
        pairs=_pairs(args.pairs),
        rows=args.rows,
        time_limit=args.time_limit,
        progress=progress,
    )
    s, c = made.synthesis, made.comparison
    write(args.out, release_csv(s.table))
    if args.package:
        source = file_digest(args.file) if args.file else None
        write(
            args.package,
            private_package(s, c, source_name=made.source_name, source_sha256=source, include_failed=args.keep_failed),
        )
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
                    "rows": s.rows,
                    "records_estimate": s.records_estimate,
                    "seconds": s.seconds,
                    "estimated_seconds": s.estimate,
                    "library": dict(s.library),
                    "columns": list(s.columns),
                    "cuts": [
                        {"column": x.column, "lower": x.lower, "upper": x.upper, "cuts": list(x.cuts)} for x in s.cuts
                    ],
                    "pairs": [list(p) for p in s.pairs],
                    "predict": s.predict,
                    "passed": c.passed,
                    "comparison": c.to_json(),
                    "out": args.out,
                    "package": args.package,
                    "reproducible": False,
                },
                indent=2,
            ),
        )
    else:
        print(made.sentence())
        for sentence in c.sentences():
            print(f"  {sentence}")
    if not c.passed:
        print(
            "note: the synthetic table fails a check: it is written to --out for inspection only; "
            + (
                "the package holds it as asked (--keep-failed)."
                if args.keep_failed
                else "the package holds the DP tables."
            ),
            file=sys.stderr,
        )
        return 1
    return 0


def register(commands) -> None:
    parser = command(
        commands,
        "synthesize",
        "a differentially private synthetic table of chosen columns (OpenDP; needs pip install '.[dp]'), compared "
        "with the file's records (exit 0 its checks passed, 1 one failed, 2 bad input)",
        "python -m anonlib synthesize adult.csv --columns sex,race,income,age --cuts age=17:30,50:90 --epsilon 3 "
        "--out synthetic.csv --package private.zip",
        _synthesize,
    )
    data_arguments(parser)
    parser.add_argument("--columns", required=True, metavar="A,B,...", help="the columns to release")
    parser.add_argument("--epsilon", type=float, help="the privacy budget ε (e.g. 1 or 3)")
    parser.add_argument(
        "--delta", type=float, default=0.0, help="δ (default 0: pure ε-DP, Laplace; > 0: zCDP, Gaussian noise)"
    )
    parser.add_argument("--rho", type=float, help="the budget as ρ (zero-concentrated DP) instead of ε; needs --delta")
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
    parser.add_argument("--bounds", action="append", metavar="COL=LOW,HIGH", help="public bounds of a number column")
    parser.add_argument(
        "--default-cuts",
        action="store_true",
        help="cut number columns without --cuts at their typed hierarchy's first level (read from the data's "
        "range: use only when that range is public)",
    )
    parser.add_argument("--predict", metavar="COL", help="the column crossed with every other, and the tree predicts")
    parser.add_argument("--pairs", metavar="A:B,C:D", help="more two-way tables to measure (the pairs method, AIM)")
    parser.add_argument("--rows", type=int, help="synthetic records (default 3 times the DP estimate of records)")
    parser.add_argument("--out", required=True, metavar="CSV", help="write the synthetic table to this CSV file")
    parser.add_argument("--package", metavar="ZIP", help="write the private release package (zip)")
    parser.add_argument(
        "--keep-failed", action="store_true", help="put the synthetic table in the package even when it fails a check"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help=f"refuse a run estimated past this many seconds (default {DEFAULT_TIME_LIMIT:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the release and its comparison as JSON")
    parser.set_defaults(outputs=("out", "package"), inputs=("file",))
