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
  risk      prosecutor, journalist and marketer risk, population uniques, special uniques, HIPAA identifiers
  models    l-diversity, t-closeness, alpha, delta, beta per sensitive attribute; is a release target met
  apply     re-apply a release recipe to a file and check its release target

Errors are printed as one sentence on standard error with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..core.errors import AnonlibError
from . import apply, leakage, privacy, profile, report, risk, schedules

COMMAND_MODULES = (profile, report, leakage, privacy, schedules, risk, apply)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m anonlib", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (2 with a sentence on bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except AnonlibError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
