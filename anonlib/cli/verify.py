"""``verify``: re-check a release package (``anonlib.workflow.verify``).

With ``--key-file FILE`` or ``--project NAME`` (the project's key, kept in the project
store), the recipe's pseudonym and date-shift steps are replayed under that key, so the
source check covers pseudonymized releases too; the key is never printed (only its id).

Exit codes: 0 every check passed, 1 a check failed (each failed part is named:
released.csv, recipe.json, report.html, README.txt, SHA256SUMS, target,
source), 2 bad input (no such file, not a zip, not a release package, not a key file,
no such project, both --key-file and --project).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.errors import ParameterError
from ..workflow.keys import key_id
from ..workflow.verify import PartCheck, Verification, verify_package
from .common import command, engine_arguments, print_json
from .health import read_given_key, shared_key_argument


def _key(args: argparse.Namespace, store) -> bytes | None:
    """The key of ``--key-file`` (an existing key file; never created here) or of the
    project ``--project`` names (a sentence when there is no such project), else None."""
    if args.key_file:
        return read_given_key(args, args.key_file, create=False)[0]  # never created here
    if args.project:
        return store.key(store.summary(args.project).ref)  # ProjectError: a sentence naming the projects there are
    return None


def _verify(args: argparse.Namespace) -> int:
    store = None
    if args.project:
        from ..projects import ProjectStore

        store = ProjectStore(read_only=True)  # verifying reads the store; it never writes it
    key = _key(args, store)
    earlier = None
    if args.project and Path(args.package).is_file():  # a delivery judged with the project's earlier ones
        from ..projects.linked import package_earlier

        earlier = package_earlier(store, args.project, Path(args.package).read_bytes())
    engine = args.engine
    if args.spark_master and engine != "spark":
        raise ParameterError("--spark-master applies to the Spark engine; add --engine spark.")
    if engine is not None and args.source is None:
        print(
            "note: the package alone is checked in memory (a release package is bounded in size); --engine "
            "re-applies the recipe where a source given with it lies.",
            file=sys.stderr,
        )
    if engine == "spark" and args.spark_master:
        from ..engine import shared  # noqa: PLC0415 - Spark only when asked

        shared("spark", master=args.spark_master)
    result = verify_package(args.package, args.source, key=key, earlier=earlier, engine=engine)
    if args.project:
        # the package against the project's audit log: the log's own check (its head included), and
        # whether the log records this package at the entry it states, after the head it states
        from ..projects import package_log_problems
        from ..projects.audit import AUDIT_LOG

        package = Path(args.package).read_bytes()
        problems = package_log_problems(store, package, args.project)
        checks = [*result.checks, *(PartCheck(AUDIT_LOG, False, problem) for problem in problems)]
        if not problems:
            checks.append(PartCheck(AUDIT_LOG, True, "the project's audit log records this package"))
        result = Verification(tuple(checks))
    from ..projects.drafts import approval_check

    approval = approval_check(Path(args.package).read_bytes(), store)  # who drafted and who approved it
    if approval is not None:
        result = Verification((*result.checks, approval))
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    "package": args.package,
                    "source": args.source,
                    "key_id": None if key is None else key_id(key),
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
        "the source file) that the recipe reproduces it, pseudonyms and date shifts replayed under "
        "--key-file or the --project's key (exit 0 all good, 1 a check failed, 2 bad input)",
        "python -m anonlib verify release.zip patients.csv --key-file project.key",
        _verify,
    )
    parser.add_argument("package", help="the release package (zip) from the Risk report page or --package")
    parser.add_argument("source", nargs="?", help="the file the release was made from (optional)")
    key = parser.add_mutually_exclusive_group()
    key.add_argument(
        "--key-file",
        metavar="FILE",
        help="the project key the pseudonyms and date shifts were made with (read, never created or printed)",
    )
    key.add_argument("--project", metavar="NAME", help="use the key the project NAME keeps in the project store")
    shared_key_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    engine_arguments(parser)
    parser.set_defaults(outputs=(), inputs=())
