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
import json
import os
import sys

import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.errors import ColumnError, EmptySelectionError, ParameterError, join_names
from ..core.masking import printable
from ..core.metrics import whole_k
from ..core.numbers import time_limit_seconds
from ..measures.models import suppression_limit
from ..measures.target import ReleaseTarget
from ..transformations.capping import check_cap
from ..transformations.pseudonyms import DEFAULT_LENGTH, DEFAULT_SHIFT_DAYS
from ..workflow.cost import step_cost
from ..workflow.health_steps import CapRecordsStep, PseudonymizeStep, SafeHarborStep, ShiftDatesStep
from ..workflow.history import WorkingCopy
from ..workflow.keys import key_file, key_id, read_key_file, shared_key_problem
from ..workflow.power_choice import FIRST_DELIVERY_POWER, SUGGESTION_RULE, one_record_per_person
from ..workflow.recipe import Reading
from ..workflow.release import release_csv
from ..workflow.safe_harbor import compare_routes
from .common import (
    command,
    data_arguments,
    print_json,
    read_dataset,
    real_argument,
    refuse_protected,
    split,
    whole_argument,
    write,
)
from .projects import project_store_key


def person_argument(parser: argparse.ArgumentParser) -> None:
    """``--person COL``."""
    parser.add_argument(
        "--person",
        metavar="COL",
        help="the column saying whose record it is (several records per person): classes, k and "
        "suppression are then counted in distinct persons",
    )


def household_argument(parser: argparse.ArgumentParser) -> None:
    """``--household COL``."""
    parser.add_argument(
        "--household",
        metavar="COL",
        help="the column saying whose household a record belongs to (several people per household); released "
        "as a pseudonym, each household's members' records are protected together (k counted in households)",
    )


def power_argument(parser: argparse.ArgumentParser) -> None:
    """``--power M``."""
    parser.add_argument(
        "--power",
        metavar="M",
        default=None,
        help="when records link (the person or household column released as a pseudonym): how many of a "
        "person's records an attacker may know, a whole number of at least 1, or all (default: all, the whole "
        "history)",
    )


def keep_argument(parser: argparse.ArgumentParser) -> None:
    """``--keep COL,...``."""
    parser.add_argument(
        "--keep", metavar="COL,...", help="columns released unchanged, never counted in classes (role keep)"
    )


def unseen_argument(parser: argparse.ArgumentParser) -> None:
    """``--unseen refuse|top``."""
    parser.add_argument(
        "--unseen",
        default="refuse",
        metavar="refuse|top",
        help="a category a hierarchy does not list: refused in one sentence naming it (refuse, the default) or "
        "generalized to its column's top level (top), counted in --json unseen; numbers, codes and dates are "
        "placed by their hierarchy's rule (bands on the whole line)",
    )


def key_arguments(parser: argparse.ArgumentParser, *, steps: bool = True) -> None:
    """``--key-file`` and, with ``steps``, the keyed steps' options."""
    parser.add_argument(
        "--key-file",
        metavar="FILE",
        help="the project key (64 hex characters on one line) for pseudonyms and date shifts; created, "
        "readable by you only, when absent. Keep it secret and never put it in a release",
    )
    shared_key_argument(parser)
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
        type=whole_argument("The pseudonym length", minimum=None),
        default=DEFAULT_LENGTH,
        metavar="N",
        help=f"hex characters per pseudonym (default {DEFAULT_LENGTH}, at least 12)",
    )
    parser.add_argument(
        "--shift-dates",
        metavar="COL,...",
        help="date columns moved by one offset per person (needs the person column), intervals kept; with "
        "--engine duckdb|spark moved where the data lives (the key stays in this process)",
    )
    parser.add_argument(
        "--shift-days",
        type=whole_argument("The date shift", minimum=None),
        default=None,
        metavar="N",
        help=f"largest date shift in days, either way (default {DEFAULT_SHIFT_DAYS})",
    )


def shared_key_argument(parser: argparse.ArgumentParser) -> None:
    """``--allow-shared-key``: use a key file its group or others may read (refused otherwise)."""
    parser.add_argument(
        "--allow-shared-key",
        action="store_true",
        help="use a --key-file that other users may read or change (refused otherwise: anyone who reads the key "
        "can recompute every pseudonym); a warning says so",
    )


def read_given_key(args: argparse.Namespace, path: str, *, create: bool = True) -> tuple[bytes, bool]:
    """The key of the key file ``path`` and whether it was created now (``keys.key_file``; with
    ``create`` False an absent file is a sentence); a key file others may read is used only with
    ``--allow-shared-key``, and a warning says so."""
    shared = bool(getattr(args, "allow_shared_key", False))
    key, created = key_file(path, shared=shared) if create else (read_key_file(path, shared=shared), False)
    problem = None if created else shared_key_problem(path)
    if problem:
        print(f"warning: {problem}; it was used because of --allow-shared-key.", file=sys.stderr)
    return key, created


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
    """The key of ``--key-file`` (created when absent, said on standard error), else the key of
    the ``--project`` (kept in the project store); a sentence when ``needed`` and neither is
    given (``why`` names the option needing it). With both, the key file's key must be the
    project's (a sentence otherwise), and a project this command creates is created with it."""
    path = getattr(args, "key_file", None)
    if not path:
        if needed and getattr(args, "project", None):
            return project_store_key(args)
        if needed:
            raise ParameterError(
                f"{why} needs the project key: add --key-file FILE (created when it does not exist) or "
                "--project NAME (the project keeps its key)."
            )
        return None
    if not os.path.lexists(path):
        refuse_protected(path, "--key-file", keys=False)  # a new key file is never made over the store
    key, created = read_given_key(args, path)
    if created:  # said once the command has succeeded; removed again if it fails (nothing written on bad input)
        args.created_key_file = path
        args.created_key_note = (
            f"note: created the key file {path} (key id {key_id(key)}, readable by you only). Keep it secret, out "
            "of every release, and use it for every delivery: another key gives other pseudonyms and dates."
        )
    if getattr(args, "project", None):
        project_store_key(args, given=key, path=path)
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
        missing = [c for c in dates if c not in dataset._column_order()]  # a Dataset or an engine's table
        if missing:
            raise ColumnError(f"--shift-dates names {join_names(missing)}, which is not in the data.")
        if dataset.person is None:
            raise ParameterError(
                "Shifting dates needs a person column (every date of a person moves by the same offset): "
                "name it with --person COL (or --role COL=person)."
            )
    if not columns and not dates:
        if getattr(args, "key_file", None) and getattr(args, "project", None):
            project_key(args, needed=False, why="--key-file")  # the project's key, or the one it is created with
        return []
    refuse_pseudonymizing(dataset, args)
    key = project_key(args, needed=True, why="--pseudonymize" if columns else "--shift-dates")
    steps: list = [PseudonymizeStep.made(c, key, length=args.pseudonym_length) for c in columns]
    if dates:
        steps.append(ShiftDatesStep.made(dates, dataset.person, key, days=DEFAULT_SHIFT_DAYS if days is None else days))
    return steps


def cap_arguments(parser: argparse.ArgumentParser) -> None:
    """``--cap-records N``, ``--cap-order first|random`` and ``--time COL``."""
    parser.add_argument(
        "--cap-records",
        metavar="N",
        help="release at most N records per person (needs --person): a person with many records is unique "
        "whatever the generalization; the records left out are counted (capped_records); with --engine "
        "duckdb the engine keeps each person's first N (not on Spark, which does not keep the file's order)",
    )
    parser.add_argument(
        "--cap-order",
        choices=("first", "random"),
        default=None,
        help="with --cap-records: keep each person's first records (the earliest by --time, else in the "
        "file's order; default) or records drawn at random under the project key (--key-file; in memory only)",
    )
    parser.add_argument(
        "--time",
        metavar="COL",
        help="with --cap-records: the time column (a day, a year, a date) ordering a person's records",
    )


def cap_step(args: argparse.Namespace, dataset: Dataset):
    """The step of ``--cap-records`` on ``dataset`` (None without it); a sentence for an option
    given without it, or a cap without a person column."""
    limit = getattr(args, "cap_records", None)
    order, time = getattr(args, "cap_order", None), getattr(args, "time", None)
    if limit is None:
        if order is not None or time is not None:
            raise ParameterError("--cap-order and --time say how --cap-records N keeps a person's records; add it.")
        return None
    if dataset.person is None:
        raise ParameterError(
            "--cap-records keeps at most N records of each person: name the person column with --person COL "
            "(or --role COL=person)."
        )
    if time is not None and time not in dataset._column_order():  # a Dataset or an engine's table
        raise ColumnError(f"--time names '{time}', which is not in the data.")
    order = order or "first"
    key = project_key(args, needed=True, why="--cap-order random") if order == "random" else None
    return CapRecordsStep.made(dataset.person, check_cap(limit), order=order, time=time, key=key)


# --------------------------------------------------------------------------- safe-harbor

SAFE_HARBOR_PAGE = "command line (safe-harbor)"


def _safe_harbor(args: argparse.Namespace) -> int:
    """HIPAA Safe Harbor applied to a file: every change listed first, the release written,
    then its remaining risk beside the optimal generalization's."""
    dataset, table = read_dataset(args)
    k = whole_k(args.k)
    limit = suppression_limit(args.max_suppressed)
    args.time_limit = time_limit_seconds(args.time_limit)
    leave = [c for c in (dataset.count, dataset.person) if c]
    step = SafeHarborStep.planned(dataset.frame, reference_year=args.reference_year, leave=leave)
    cost = step_cost(step, dataset)  # the records each change changes, as the Dataset page counts them
    if not args.json:  # every change is said before anything is applied or written
        print(f"dataset            {printable(dataset.name)}")
        print(f"Safe Harbor        45 CFR 164.514(b)(2); ages counted to {step.reference_year}; {step.census}")
        for sentence in step.sentences(cost):
            print(f"change             {sentence}")
    # the release: every column but what Safe Harbor removes and the identifiers; what it
    # generalizes is judged as a quasi-identifier
    roles = {c: Role.KEEP for c in dataset.columns_with(Role.IGNORE)}
    generalized = {c.column for c in step.changes if c.action in ("zip3", "year", "birth_date", "birth_year", "age")}
    roles.update({c: Role.QUASI_IDENTIFIER for c in generalized})
    loaded = dataset.with_roles(roles)
    reading = Reading.of(table, args.file) if table is not None else None
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=k), reading=reading).apply(step, SAFE_HARBOR_PAGE)
    released = release_csv(copy.release())
    account = copy.column_account()
    try:
        comparison = compare_routes(
            loaded, step, target=ReleaseTarget(k=k, max_suppressed=limit), time_limit=args.time_limit
        )
        problem = None
    except EmptySelectionError as err:
        comparison, problem = None, str(err)
    if args.out:
        write(args.out, released)
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    "dataset": dataset.name,
                    "reference_year": step.reference_year,
                    "census": step.census,
                    "restricted_zip3": list(step.restricted_zip3),
                    "changes": [
                        {**c.to_json(), "records_changed": step.changed_records(cost)[c.column]} for c in step.changes
                    ],
                    "records": copy.loaded_records,
                    "released_records": copy.check.records if copy.check else None,
                    **account.to_json(),
                    "quasi_identifiers": list(comparison.quasi_identifiers) if comparison else [],
                    "k": comparison.safe_harbor.k if comparison else None,
                    "comparison": comparison.to_json() if comparison else None,
                    "comparison_problem": problem,
                },
                indent=2,
            ),
        )
        return 0
    released_names, left_out = account.sentences()
    print(f"columns            {released_names}")
    print(f"                   {left_out}")
    if comparison is None:
        print(f"remaining risk     not measured: {problem}")
        return 0
    print(f"quasi-identifiers  {', '.join(comparison.quasi_identifiers)}")
    for label, route in (("Safe Harbor", comparison.safe_harbor), ("optimal (expert)", comparison.optimal)):
        if route is None:
            continue
        print(
            f"{label:<18} k {route.k:,}; highest prosecutor risk {100 * route.prosecutor_highest:.1f}%; "
            f"{route.records_below_k:,} records in classes < {k}; {route.suppressed:,} suppressed; "
            f"{100 * route.loss:.1f}% of the information lost"
        )
    for sentence in comparison.sentences():
        print(f"in words           {sentence}")
    return 0


def register(commands) -> None:
    parser = command(
        commands,
        "safe-harbor",
        "apply HIPAA Safe Harbor (45 CFR 164.514(b)(2)) to the columns it recognises, every change listed first, "
        "and compare the risk left with the optimal generalization's",
        "python -m anonlib safe-harbor visits.csv --out safe_harbor.csv --k 5",
        _safe_harbor,
    )
    data_arguments(parser, qi=True)
    parser.add_argument("--out", metavar="CSV", help="write the released table to this CSV file")
    parser.add_argument(
        "--k", default=5, help="the k both releases are judged at (records in smaller classes counted; default 5)"
    )
    parser.add_argument(
        "--max-suppressed",
        default=0.0,
        type=real_argument,
        help="share of records the optimal generalization may suppress (default 0)",
    )
    parser.add_argument(
        "--reference-year",
        type=whole_argument("The reference year", minimum=None),
        default=None,
        help="the year ages are counted to for birth dates and years of birth (default: this year)",
    )
    parser.add_argument(
        "--time-limit",
        type=real_argument,
        default=30.0,
        metavar="SECONDS",
        help="stop the optimal search after this many seconds with the best found (default 30)",
    )
    parser.add_argument("--json", action="store_true", help="print the changes and the risks as JSON")


def power_notes(frame: pd.DataFrame, person: str | None, count: str | None, target, links) -> list[str]:
    """What a release whose records link states (its package's notes): the power defended and the
    rule by which the pages suggest one, and on a first delivery of one record per person released
    at another power, the sentence saying so (also printed to standard error). ``frame``: the
    searched records; nothing when the target does not link records.

    >>> from anonlib.measures.target import ReleaseTarget
    >>> power_notes(pd.DataFrame({"pid": ["a", "a"]}), "pid", None, ReleaseTarget(k=2), None)
    []
    """
    if not target.linkable:
        return []
    notes = [f"The target is counted {target.power_text()}. {SUGGESTION_RULE}"]
    first = first_delivery_note(frame, person, count, target, links)
    if first is not None:
        notes.append(first)
        print(f"note: {first}", file=sys.stderr)
    return notes


def first_delivery_note(frame: pd.DataFrame, person: str | None, count: str | None, target, links) -> str | None:
    """On a first delivery of one record per person, released at another power than the one the
    suggestion rule gives there (``FIRST_DELIVERY_POWER``): the sentence saying so (None otherwise).

    >>> from anonlib.measures.target import ReleaseTarget
    >>> one = pd.DataFrame({"pid": ["a", "b"]})
    >>> print(first_delivery_note(one, "pid", None, ReleaseTarget(k=2, person="pid", linked=("pid",)), None))
    Every person has one record in this delivery, so every adversary power gives this same release; deliveries that add records to the same people are judged on their histories, and power 2 is the one suggested for them (--power 2).
    """
    if person is None or target.power == FIRST_DELIVERY_POWER or (links is not None and links.linked):
        return None
    if not one_record_per_person(frame, person, count):
        return None
    return (
        "Every person has one record in this delivery, so every adversary power gives this same release; deliveries "
        "that add records to the same people are judged on their histories, and power "
        f"{FIRST_DELIVERY_POWER} is the one suggested for them (--power {FIRST_DELIVERY_POWER})."
    )
