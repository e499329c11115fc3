"""Health data on the command line: the options of pseudonyms, date shifts, the person
and keep roles (shared by ``anonymize``, ``apply``, ``profile`` and ``risk``), and the
``safe-harbor`` command.

- ``--person COL``: the column saying whose record it is; classes, k and suppression
  are counted in distinct persons;
- ``--keep COL,...``: columns released unchanged (never counted in classes);
- ``--pseudonymize COL`` (repeatable) with ``--key-file F``: the column released as
  keyed pseudonyms; the key file is created (random, mode 0600) when absent, and
  standard error says so;
- ``--shift-dates COL,... --shift-days N``: dates moved by one offset per person
  (needs the person column).
"""

from __future__ import annotations

import argparse
import sys

from ..core.dataset import Dataset, Role
from ..core.errors import ColumnError, ParameterError, join_names
from ..transformations.pseudonyms import DEFAULT_LENGTH, DEFAULT_SHIFT_DAYS
from ..workflow.health_steps import PseudonymizeStep, ShiftDatesStep
from ..workflow.keys import key_file, key_id
from .common import split


def person_argument(parser: argparse.ArgumentParser) -> None:
    """``--person COL``."""
    parser.add_argument(
        "--person",
        metavar="COL",
        help="the column saying whose record it is (several records per person): classes, k and "
        "suppression are then counted in distinct persons",
    )


def keep_argument(parser: argparse.ArgumentParser) -> None:
    """``--keep COL,...``."""
    parser.add_argument(
        "--keep", metavar="COL,...", help="columns released unchanged, never counted in classes (role keep)"
    )


def key_arguments(parser: argparse.ArgumentParser, *, steps: bool = True) -> None:
    """``--key-file`` and, with ``steps``, the keyed steps' options."""
    parser.add_argument(
        "--key-file",
        metavar="FILE",
        help="the project key (64 hex characters on one line) for pseudonyms and date shifts; created, "
        "readable by you only, when absent. Keep it secret and never put it in a release",
    )
    if not steps:
        return
    parser.add_argument(
        "--pseudonymize",
        action="append",
        metavar="COL",
        help="release this identifier column as keyed pseudonyms (HMAC-SHA-256 under --key-file; repeatable)",
    )
    parser.add_argument(
        "--pseudonym-length",
        type=int,
        default=DEFAULT_LENGTH,
        metavar="N",
        help=f"hex characters per pseudonym (default {DEFAULT_LENGTH}, at least 12)",
    )
    parser.add_argument(
        "--shift-dates",
        metavar="COL,...",
        help="date columns moved by one offset per person (needs the person column), intervals kept",
    )
    parser.add_argument(
        "--shift-days",
        type=int,
        default=None,
        metavar="N",
        help=f"largest date shift in days, either way (default {DEFAULT_SHIFT_DAYS})",
    )


def health_roles(args: argparse.Namespace, columns) -> dict[str, Role]:
    """The roles ``--person``, ``--keep`` and ``--pseudonymize`` set (checked against ``columns``)."""
    columns = list(columns)
    roles: dict[str, Role] = {}

    def known(column: str, option: str) -> str:
        if column not in columns:
            raise ColumnError(
                f"{option} names the column '{column}', which is not in the data. "
                f"Available columns: {join_names(columns)}."
            )
        return column

    for column in split(getattr(args, "keep", None)):
        roles[known(column, "--keep")] = Role.KEEP
    person = getattr(args, "person", None)
    if person:
        roles[known(person.strip(), "--person")] = Role.PERSON
    for column in getattr(args, "pseudonymize", None) or []:
        column = known(column.strip(), "--pseudonymize")
        if roles.get(column) is Role.KEEP:
            raise ParameterError(f"'{column}' is named in --keep and in --pseudonymize; choose one.")
        roles.setdefault(column, Role.IDENTIFIER)  # released only as its pseudonym
    return roles


def refuse_pseudonymizing(dataset: Dataset, args: argparse.Namespace) -> None:
    """A sentence when ``--pseudonymize`` names a quasi-identifier or sensitive column."""
    for column in getattr(args, "pseudonymize", None) or []:
        role = dataset.roles.get(column.strip())
        if role in (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.COUNT):
            raise ParameterError(
                f"'{column}' is a {role.value} column; --pseudonymize is for identifiers and the person column "
                "(a pseudonym says nothing an attacker could match or a study could analyse)."
            )


def project_key(args: argparse.Namespace, *, needed: bool, why: str) -> bytes | None:
    """The key of ``--key-file`` (created when absent, said on standard error); a sentence
    when ``needed`` and no key file is given (``why`` names the option needing it)."""
    path = getattr(args, "key_file", None)
    if not path:
        if needed:
            raise ParameterError(f"{why} needs the project key: add --key-file FILE (created when it does not exist).")
        return None
    key, created = key_file(path)
    if created:
        args.created_key_file = path  # removed again if the command then fails (nothing written on bad input)
        print(
            f"note: created the key file {path} (key id {key_id(key)}, readable by you only). Keep it secret, out "
            "of every release, and use it for every delivery: another key gives other pseudonyms and dates.",
            file=sys.stderr,
        )
    return key


def keyed_steps(args: argparse.Namespace, dataset: Dataset) -> list:
    """The steps of ``--pseudonymize`` and ``--shift-dates`` on ``dataset``, in that order
    (dates are shifted by the person's value as read: a pseudonymised person column is
    shifted after it is pseudonymised, which the same key makes the same in every delivery)."""
    columns = [c.strip() for c in getattr(args, "pseudonymize", None) or []]
    dates = split(getattr(args, "shift_dates", None))
    days = getattr(args, "shift_days", None)
    if days is not None and not dates:
        raise ParameterError("--shift-days says how far dates move; name the date columns with --shift-dates.")
    if len(set(columns)) != len(columns):
        raise ParameterError("A column is named twice in --pseudonymize; name each once.")
    if dates:
        missing = [c for c in dates if c not in dataset.frame.columns]
        if missing:
            raise ColumnError(f"--shift-dates names {join_names(missing)}, which is not in the data.")
        if dataset.person is None:
            raise ParameterError(
                "Shifting dates needs a person column (every date of a person moves by the same offset): "
                "name it with --person COL (or --role COL=person)."
            )
    if not columns and not dates:
        return []
    refuse_pseudonymizing(dataset, args)
    key = project_key(args, needed=True, why="--pseudonymize" if columns else "--shift-dates")
    steps: list = [PseudonymizeStep.made(c, key, length=args.pseudonym_length) for c in columns]
    if dates:
        steps.append(ShiftDatesStep.made(dates, dataset.person, key, days=DEFAULT_SHIFT_DAYS if days is None else days))
    return steps
