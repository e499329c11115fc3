"""``report``: the one-page printable HTML risk report."""

from __future__ import annotations

import argparse
import sys

from ..core.metrics import whole_k
from .common import data_arguments, fraction_option, load_dataset, write


def _report(args: argparse.Namespace) -> int:
    from ..workflow.report import build_report
    from ..workflow.report_html import render_html

    page = render_html(
        build_report(load_dataset(args), k=whole_k(args.k), p=fraction_option(args.p, "The threshold p"))
    )
    if args.out:
        write(args.out, page.encode("utf-8"), stream=sys.stderr)
    else:
        sys.stdout.write(page)
    return 0


def register(commands) -> None:
    report = commands.add_parser(
        "report",
        help="one-page HTML risk report",
        description=(
            "One printable HTML page: k, anonymity vector, leakage per attribute, individual privacy (minimum PPP) "
            "and a suggested generalization, with the parameters used; to --out, else to standard output. "
            "Example: python -m anonlib report --sample adult --k 5 --out report.html"
        ),
    )
    data_arguments(report, qi=True)
    report.add_argument("--k", default="5", help="k of the suggested generalization (default 5)")
    report.add_argument("--p", default="0", help="PPP threshold of individual privacy (default 0)")
    report.add_argument("--out", help="write the HTML to this file (default: standard output)")
    report.set_defaults(handler=_report)
