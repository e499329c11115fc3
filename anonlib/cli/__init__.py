"""Command line: ``python -m anonlib <command> ...`` for batch work (``--help`` on each).

Commands:
  profile   k, anonymity vector and records at risk of a table for chosen quasi-identifiers
  samples   list the bundled sample datasets
  leakage   average information loss per attribute or combination (Longpre et al., Arca & Hewett)
  privacy   share of records protected by minimum PPP / PoAC (Kroes et al.)
  anonymize the generalization losing the least information that meets k, privacy models and a suppression limit
  schedule  screening schedule keeping people anonymous (Caballero et al.)
  vector    anonymity vector, k and lexicographic index of class sizes
  index     exact lexicographic index of an anonymity vector, and improvements
  report    one-page printable HTML risk report of a table (every capability's findings)
  risk      prosecutor, journalist and marketer risk, population uniques, special uniques, HIPAA identifiers
  models    l-diversity, t-closeness, alpha, delta, beta per sensitive attribute; is a release target met
  microaggregate  MDAV on numeric columns: groups of k to 2k-1 records share their mean
  apply     re-apply a release recipe to a file and check its release target
  verify    re-check a release package: digests, the target, and that the recipe reproduces it
  safe-harbor  apply HIPAA Safe Harbor, every change listed first, and compare its risk with the optimal release
  projects  list, show, export, import or delete the projects of the project store
  audit     the audit log of every release made from a project
  synthesize  a differentially private synthetic table (OpenDP, the dp extra), compared with the file's records

Errors are printed as one sentence on standard error with exit code 2. With
``--json`` a command writes one JSON document to standard output and nothing else;
notes, progress and "written" lines go to standard error. Every line printed goes through
``anonlib.core.masking.SafeLines``: no control character of a column name or value reaches the
terminal raw, and no password of the store's URL or DSN is printed in any form. SIGTERM and
SIGHUP end a command as Ctrl-C (SIGINT) does: whatever it was writing under a temporary name
(``.part`` files, which may hold a key or raw records) is removed, a release into a project is
finished or undone, and the exit code is 128 + the signal's number.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence

from ..core.errors import AnonlibError
from ..core.masking import SafeLines, mask_secrets, printable
from ..projects.store import valid_name
from . import (
    anonymize,
    apply,
    health,
    leakage,
    microaggregation,
    models,
    privacy,
    profile,
    projects,
    report,
    risk,
    schedules,
    synthesize,
    verify,
)
from .common import Parser, check_outputs

COMMAND_MODULES = (
    profile,
    report,
    leakage,
    privacy,
    anonymize,
    schedules,
    risk,
    models,
    microaggregation,
    apply,
    verify,
    health,
    projects,
    synthesize,
)
log = logging.getLogger("anonlib.cli")
PROJECT_RELEASES = ("anonymize", "apply", "synthesize")  # the commands whose --project may create a project


def build_parser() -> Parser:
    parser = Parser(prog="python -m anonlib", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in COMMAND_MODULES:
        module.register(commands)
    parser.commands = commands.choices
    return parser


def _parse(argv: Sequence[str] | None):
    """Parse the command line; an unknown option is reported by the command it was given to."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the command was, so that it ends as Ctrl-C ends it: every
    ``finally`` and ``except BaseException`` runs (temporary files removed, a release undone)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _signals_end_cleanly():
    """While a command runs (in the main thread): SIGTERM and SIGHUP raise ``Terminated`` once
    (a second one while cleaning up is ignored); the handlers before are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = []

    def handler(signum, _frame) -> None:
        if not raised:
            raised.append(signum)
            raise Terminated(signum)

    before = {sig: signal.signal(sig, handler) for sig in TERMINATING}
    try:
        yield
    finally:
        for sig, previous in before.items():
            signal.signal(sig, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (2 with a sentence on bad input).

    An output naming an input file is refused before any work (``check_outputs``).
    Output cut short by the reader (``... | head``) ends quietly. Anything
    unexpected is one sentence too (``ANONLIB_DEBUG=1`` shows the traceback).
    Every printed line is masked and escaped (``SafeLines``); SIGTERM and SIGHUP end the
    command as Ctrl-C does (``Terminated``).
    """
    out, err = SafeLines(sys.stdout), SafeLines(sys.stderr)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _signals_end_cleanly():
        try:
            args = _parse(argv)
            try:
                return _run(args)
            finally:
                created = getattr(args, "created_key_file", None)
                if created and getattr(args, "failed", True):  # a key made for a run that wrote nothing is not kept
                    try:
                        os.remove(created)
                    except OSError:
                        pass
                elif created:
                    print(args.created_key_note, file=sys.stderr)
        finally:
            for stream in (out, err):
                try:
                    stream.flush()
                except (OSError, ValueError):  # the reader went away
                    pass


def _run(args) -> int:
    """Run the parsed command (see ``main``); marks ``args.failed`` when it ends on an error."""
    args.failed = True
    try:
        check_outputs(args)  # before any work: no output may name an input or another output
        if getattr(args, "project", None) is not None and args.command in PROJECT_RELEASES:  # '' is a blank name
            valid_name(args.project)  # a name the store refuses is said before anything is written
        if getattr(args, "json", False):  # one JSON document on standard output, every other line on standard error
            args.json_stream = sys.stdout
            with contextlib.redirect_stdout(sys.stderr):
                code = args.handler(args)
        else:
            code = args.handler(args)
        sys.stdout.flush()
        args.failed = False
        return code
    except AnonlibError as err:
        # no password of a URL or DSN, whatever said it; no control character of a name or value
        message = "\n".join(printable(line) for line in mask_secrets(str(err)).split("\n"))
        print(f"error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except Terminated as stopped:
        name = signal.Signals(stopped.signum).name
        print(
            f"error: Stopped by {name}; nothing more was written (files being written were removed).", file=sys.stderr
        )
        return 128 + stopped.signum
    except KeyboardInterrupt:
        print("error: Interrupted; nothing more was written (files being written were removed).", file=sys.stderr)
        return 130
    except MemoryError:
        print("error: This computer ran out of memory for this request; choose fewer columns or rows.", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - no traceback reaches the user
        if os.environ.get("ANONLIB_DEBUG"):
            raise
        print(
            f"error: Something unexpected went wrong ({type(err).__name__}); please report the command "
            "that led here (ANONLIB_DEBUG=1 shows the details).",
            file=sys.stderr,
        )
        return 2


def _quiet_stdout() -> None:
    """The reader closed the pipe: send the rest of the output nowhere, so the
    interpreter's final flush does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (tests capture it)
        pass
