"""``verify``: re-check a release package (``anonlib.workflow.verify``).

Exit codes: 0 every check passed, 1 a check failed (each failed part is named:
released.csv, recipe.json, report.html, README.txt, SHA256SUMS, target,
source), 2 bad input (no such file, not a zip, not a release package).
"""

from __future__ import annotations

import argparse
import json

from ..workflow.verify import verify_package
from .common import command, print_json


def _verify(args: argparse.Namespace) -> int:
    result = verify_package(args.package, args.source)
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    "package": args.package,
                    "source": args.source,
                    "passed": result.passed,
                    "failed_parts": list(result.failed_parts),
                    "checks": [{"part": c.part, "passed": c.passed, "sentence": c.sentence} for c in result.checks],
                },
                indent=2,
            ),
        )
        return 0 if result.passed else 1
    width = max(len(c.part) for c in result.checks)
    for c in result.checks:
        print(f"{'ok    ' if c.passed else 'FAILED'} {c.part:<{width}}  {c.part} {c.sentence.rstrip('.')}.")
    if result.passed:
        what = "" if args.source else " (give the source file too, to check that the recipe reproduces the table)"
        print(f"result  all {len(result.checks)} checks passed{what}")
        return 0
    print(
        f"result  {sum(not c.passed for c in result.checks)} of {len(result.checks)} checks failed: "
        f"{', '.join(result.failed_parts)}"
    )
    return 1


def register(commands) -> None:
    parser = command(
        commands,
        "verify",
        "re-check a release package: digests, the target on the released table, and (given "
        "the source file) that the recipe reproduces it (exit 0 all good, 1 a check failed, 2 bad input)",
        "python -m anonlib verify release.zip patients.csv",
        _verify,
    )
    parser.add_argument("package", help="the release package (zip) from the Risk report page or --package")
    parser.add_argument("source", nargs="?", help="the file the release was made from (optional)")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.set_defaults(outputs=(), inputs=())
