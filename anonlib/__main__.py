"""Command line: ``python -m anonlib <command> ...`` for batch work (``--help`` on each).

Commands:
  profile   k, anonymity vector and records at risk of a table for chosen quasi-identifiers
  samples   list the bundled sample datasets

Errors are printed as one sentence on standard error with exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .dataset import Dataset, Role
from .errors import AnonlibError, ParameterError
from .loading import load_table
from .profile import risk_profile
from .samples import SAMPLES, load_sample


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
    shown = ", ".join(str(v) for v in risk.vector[:30]) + (", ..." if len(risk.vector) > 30 else "")
    print(f"anonymity vector   ({shown})  (--json prints it whole)")
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
    profile.add_argument("file", nargs="?", help="CSV/TSV/Excel/Parquet file (or use --sample)")
    profile.add_argument("--sample", choices=list(SAMPLES), help="a bundled sample instead of a file")
    profile.add_argument("--qi", help="comma-separated quasi-identifier columns (default: guessed from names)")
    profile.add_argument("--count", help="column holding how many records each row stands for")
    profile.add_argument("--drop-missing", action="store_true", help="drop rows with missing quasi-identifier values")
    profile.add_argument("--delimiter", help="field delimiter (default: detected)")
    profile.add_argument("--encoding", help="text encoding (default: detected)")
    profile.add_argument("--json", action="store_true", help="print the result as JSON")
    profile.set_defaults(handler=_profile)

    report = commands.add_parser("report", help="one-page HTML risk report", description=(
        "One printable HTML page: k, anonymity vector, leakage per attribute, individual privacy (minimum PPP) "
        "and a suggested generalization, with the parameters used; to --out, else to standard output. "
        "Example: python -m anonlib report --sample adult --k 5 --out report.html"))
    report.add_argument("file", nargs="?", help="CSV/TSV/Excel/Parquet file (or use --sample)")
    report.add_argument("--sample", choices=list(SAMPLES), help="a bundled sample instead of a file")
    report.add_argument("--qi", help="comma-separated quasi-identifier columns (default: guessed from names)")
    report.add_argument("--count", help="column holding how many records each row stands for")
    report.add_argument("--drop-missing", action="store_true", help="drop rows with missing quasi-identifier values")
    report.add_argument("--delimiter", help="field delimiter (default: detected)")
    report.add_argument("--encoding", help="text encoding (default: detected)")
    report.add_argument("--k", type=int, default=5, help="k of the suggested generalization (default 5)")
    report.add_argument("--p", type=float, default=0.0, help="PPP threshold of individual privacy (default 0)")
    report.add_argument("--out", help="write the HTML to this file (default: standard output)")
    report.set_defaults(handler=_report)

    samples = commands.add_parser("samples", help="list the bundled samples")
    samples.set_defaults(handler=_samples)
    return parser


_profile_help = (
    "k, anonymity vector, unique records and records in classes smaller than 2, 5 and 10 "
    "for the chosen quasi-identifiers. Example: python -m anonlib profile --sample adult --qi age,sex,race"
)


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
