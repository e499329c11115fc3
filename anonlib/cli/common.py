"""What every command shares: reading the table and its roles, parsing numbers
and lists of numbers, writing the files the user asked for, and declaring the
data options."""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pandas as pd

from ..core.dataset import ROLE_VALUES, Dataset, Role
from ..core.errors import (
    AnonlibError,
    ColumnError,
    DataFileError,
    EmptySelectionError,
    FileTooLargeError,
    ParameterError,
    join_names,
)
from ..core.hierarchy import read_hierarchy_csv
from ..core.loading import DEFAULT_MAX_BYTES, LoadedTable, load_table
from ..core.masking import CONTROL_BUT_LINES, printable
from ..core.numbers import MAX_COUNT, real_number, shown, whole_number
from ..core.samples import SAMPLES, load_sample
from ..measures.models import ModelRequirement
from ..measures.utility import MEASURE_NAMES
from ..projects.location import store_files
from ..transformations.generalization import METHOD_NAMES
from ..workflow.keys import parse_key


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors as one sentence on standard error and exit code 2."""

    def error(self, message: str) -> NoReturn:
        text = message[:1].upper() + message[1:]
        print(f"error: {text.rstrip('.')}; see `{self.prog} --help`.", file=sys.stderr)
        raise SystemExit(2)


def whole_argument(what: str, *, minimum: int | None = 0, maximum: int | None = MAX_COUNT):
    """An option's ``type``: its text as a whole number read by the one parser
    (``numbers.whole_number``: ASCII digits within bounds), else argparse's one-sentence error.

    >>> whole_argument("The release number", minimum=1)("12")
    12
    >>> whole_argument("The release number", minimum=1)("١٢")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: The release number must be a whole number of at least 1; got '١٢'.
    """

    def parse(text: str) -> int:
        try:
            return whole_number(text, what, minimum=minimum, maximum=maximum)
        except ParameterError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


def real_argument(text: str) -> float:
    """An option's ``type`` for a number that may have a fraction: ASCII digits (a point, an
    exponent) read as a finite float, else argparse's one-sentence error; ranges are checked
    where the number is used.

    >>> real_argument("0.5"), real_argument("1e-3")
    (0.5, 0.001)
    >>> real_argument("٠.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: A number is written in ASCII digits, e.g. 0.5; got '٠.5'.
    """
    try:
        return real_number(text, "A number", minimum=-math.inf, maximum=math.inf)
    except ParameterError:
        raise argparse.ArgumentTypeError(f"A number is written in ASCII digits, e.g. 0.5; got {shown(text)}.") from None


def print_json(args: argparse.Namespace, text: str) -> None:
    """Write a command's one JSON document (``--json``) to standard output. While a
    ``--json`` command runs, ``main`` sends everything else printed to standard output
    (written files, notes) to standard error, so the output parses with ``json.loads``."""
    stream = getattr(args, "json_stream", None) or sys.stdout
    stream.write(escaped_controls(text) + "\n")


def escaped_controls(text: str) -> str:
    """JSON text with every control or bidirectional character written as a ``\\uXXXX`` escape
    (``json.dumps`` with ``ensure_ascii=False`` leaves C1 controls and right-to-left overrides raw):
    the same document, which no terminal shows differently.

    >>> escaped_controls(json.dumps({"name": "a\u202eb\x85"}, ensure_ascii=False, indent=1))
    '{\\n "name": "a\\\\u202eb\\\\u0085"\\n}'
    """
    return CONTROL_BUT_LINES.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def split(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


# the commands that count people, histories and households on an engine
ENGINE_OWNER_COMMANDS = ("profile", "anonymize")


def load_dataset(args: argparse.Namespace) -> Dataset:
    """The table a command works on, with roles from --qi/--count/--role and the missing policy.

    With ``--engine duckdb|spark`` it is an ``anonlib.engine.EngineTable``: the
    files are scanned where they are and the measures run on that engine (the
    same attributes and ``analysis_frame`` as a ``Dataset``)."""
    return read_dataset(args)[0]


def read_dataset(args: argparse.Namespace) -> tuple[Dataset, LoadedTable | None]:
    """The dataset of --sample or the file, and how the file was read (None for a
    sample or a table scanned by an engine)."""
    table = None
    if args.sample and args.file:
        raise ParameterError("Give either a file or --sample NAME, not both.")
    if args.sample and (args.delimiter or args.encoding or getattr(args, "header", None) is not None):
        raise ParameterError(
            "--delimiter, --encoding and --header describe a file; a bundled sample needs none of them."
        )
    engine = getattr(args, "engine", None)
    if getattr(args, "spark_master", None) and engine != "spark":
        raise ParameterError("--spark-master applies to the Spark engine; add --engine spark.")
    if engine:
        dataset = _scan(args, engine)
    elif args.sample:
        dataset = load_sample(args.sample)
    elif args.file:
        try:
            table = load_table(
                args.file, delimiter=args.delimiter, encoding=args.encoding, header=getattr(args, "header", None)
            )
        except FileTooLargeError as err:
            raise FileTooLargeError(f"{err} Or count it where it is with --engine duckdb.") from None
        for note in table.notes:  # what the reader noticed or guessed, before any result
            print(f"note: {note}", file=sys.stderr)
        dataset = Dataset.from_frame(args.file, table.frame, missing_texts=table.missing_texts)
    else:
        raise ParameterError("Give a file to read, or --sample NAME (see `python -m anonlib samples`).")
    refuse_two_roles(args)
    roles: dict[str, Role] = {}
    if args.qi:
        roles.update({c: Role.IGNORE for c in dataset.quasi_identifiers})
        roles.update({c: Role.QUASI_IDENTIFIER for c in split(args.qi)})
    if args.count:
        roles.update({c: Role.IGNORE for c in dataset.columns_with(Role.COUNT) if c != args.count})
        roles[args.count] = Role.COUNT
    roles.update(_role_options(getattr(args, "role", None) or [], dataset))
    health = health_roles(args, column_names(dataset))
    if health:
        for owner in (Role.PERSON, Role.HOUSEHOLD):  # the one person (household) column is the one named last
            if owner in health.values():
                roles.update({c: Role.IGNORE for c in dataset.columns_with(owner) if c not in health})
        current = {**dict(dataset.roles), **roles}
        for column, role in health.items():  # a pseudonymised person (household) column keeps its role
            if not (role is Role.IDENTIFIER and current.get(column) in (Role.PERSON, Role.HOUSEHOLD)):
                roles[column] = role
    owners = (Role.PERSON, Role.HOUSEHOLD)
    counted_there = getattr(args, "command", None) in ENGINE_OWNER_COMMANDS  # people, households counted there
    if (
        engine
        and not counted_there
        and (any(r in owners for r in roles.values()) or any(dataset.columns_with(r) for r in owners))
    ):
        raise ParameterError(
            "Counting people or households needs the table in memory; leave out --engine to use a person or "
            "household column."
        )
    dataset = dataset.with_roles(roles) if roles else dataset
    return (dataset.with_missing("drop") if args.drop_missing else dataset), table


def refuse_two_roles(args: argparse.Namespace) -> None:
    """A sentence when the options give one column two roles (``--person mrn --shield age,mrn``,
    ``--qi`` and ``--keep``, ``--pseudonymize`` and ``--shield``, ...): one column, one role. A
    pseudonymised person column stays the person column (``--person`` with ``--pseudonymize``).

    >>> refuse_two_roles(argparse.Namespace(person="mrn", shield="age,mrn"))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: 'mrn' is given two roles: person (--person) and quasi-identifier (--shield); one column has one role, so name it in one of these options only.
    """
    named: dict[str, tuple[str, Role]] = {}
    given = [
        *((c.strip(), "--count", Role.COUNT) for c in [getattr(args, "count", None)] if c),
        *((c.strip(), "--person", Role.PERSON) for c in [getattr(args, "person", None)] if c),
        *((c.strip(), "--household", Role.HOUSEHOLD) for c in [getattr(args, "household", None)] if c),
        *((c, "--keep", Role.KEEP) for c in split(getattr(args, "keep", None))),
        *((c.strip(), "--pseudonymize", Role.IDENTIFIER) for c in getattr(args, "pseudonymize", None) or []),
        *((c, "--shield", Role.QUASI_IDENTIFIER) for c in split(getattr(args, "shield", None))),
        *((c, "--qi", Role.QUASI_IDENTIFIER) for c in split(getattr(args, "qi", None))),
    ]
    for spec in getattr(args, "role", None) or []:
        column, sep, role = spec.rpartition("=")
        if sep and role.strip().lower() in ROLE_VALUES:
            given.append((column.strip(), "--role", Role(role.strip().lower())))
    # the person (household) column released as its pseudonym
    allowed = {frozenset((Role.PERSON, Role.IDENTIFIER)), frozenset((Role.HOUSEHOLD, Role.IDENTIFIER))}
    for column, option, role in given:
        if column not in named:
            named[column] = (option, role)
            continue
        first_option, first = named[column]
        if first is not role and frozenset((first, role)) not in allowed:
            raise ParameterError(
                f"'{column}' is given two roles: {first.value} ({first_option}) and {role.value} ({option}); one "
                "column has one role, so name it in one of these options only."
            )


def health_roles(args: argparse.Namespace, columns) -> dict[str, Role]:
    """The roles (of ``anonlib.cli.health``'s options) ``--person``, ``--household``, ``--keep`` and
    ``--pseudonymize`` set (checked against ``columns``)."""
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
    household = getattr(args, "household", None)
    if household:
        roles[known(household.strip(), "--household")] = Role.HOUSEHOLD
    for column in getattr(args, "pseudonymize", None) or []:
        column = known(column.strip(), "--pseudonymize")
        if roles.get(column) is Role.KEEP:
            raise ParameterError(f"'{column}' is named in --keep and in --pseudonymize; choose one.")
        roles.setdefault(column, Role.IDENTIFIER)  # released only as its pseudonym
    return roles


def declared(args: argparse.Namespace, target=None) -> tuple[str, ...]:
    """The sensitive attributes the user named: ``--role COL=sensitive`` and the sensitive attributes
    of the target's privacy models (``--require``); a guessed sensitive column is not declared.

    >>> declared(argparse.Namespace(role=["dx=sensitive", "age=quasi-identifier"]))
    ('dx',)
    """
    named = []
    for spec in getattr(args, "role", None) or []:
        column, sep, role = spec.rpartition("=")
        if sep and role.strip().lower() == Role.SENSITIVE.value:
            named.append(column.strip())
    named += list(getattr(target, "sensitive", ()) or ())
    return tuple(dict.fromkeys(named))


def _role_options(specs: Sequence[str], dataset: Dataset) -> dict[str, Role]:
    """``--role COLUMN=ROLE`` options (repeatable), checked against the table's columns."""
    out: dict[str, Role] = {}
    for spec in specs:
        column, sep, role = spec.rpartition("=")
        column, role = column.strip(), role.strip().lower()
        if not sep or not column or not role:
            raise ParameterError(f"Give a role as COLUMN=ROLE, e.g. --role Code=quasi-identifier; got '{spec}'.")
        if column not in column_names(dataset):
            raise ColumnError(
                f"--role names the column '{column}', which is not in the data. "
                f"Available columns: {join_names(column_names(dataset))}."
            )
        if role not in ROLE_VALUES:
            raise ParameterError(f"'{role}' is not a role; use one of {join_names(ROLE_VALUES)}.")
        out[column] = Role(role)
    counts = [c for c, r in out.items() if r is Role.COUNT]
    if counts:  # the column named last as count is the one count column
        out.update({c: Role.IGNORE for c in dataset.columns_with(Role.COUNT) if c not in counts})
    return out


def column_names(dataset) -> tuple[str, ...]:
    """The column names of a ``Dataset`` or of an engine's table."""
    return tuple(dataset.frame.columns) if isinstance(dataset, Dataset) else tuple(dataset.columns)


def refuse_identifiers(dataset: Dataset, columns: Sequence[str], option: str) -> None:
    """A sentence saying how to use a column marked as an identifier from the command
    line (``option`` named it), when one of ``columns`` is."""
    identifiers = [c for c in columns if c in dataset.identifiers]
    if identifiers:
        first = identifiers[0]
        raise ColumnError(
            f"{join_names(identifiers)} {'is' if len(identifiers) == 1 else 'are'} marked as an identifier "
            f"and identifiers are never analysed; to use it in {option}, "
            f"add --role {first}=quasi-identifier (or sensitive)."
        )


def analysis_frame(dataset: Dataset, columns: Sequence[str], option: str) -> tuple[pd.DataFrame, int]:
    """``dataset.analysis_frame(columns)``, saying how to use a column marked as an
    identifier from the command line (``option`` named it). A table on an engine
    (``--engine``) is returned as it is, for the measures to count it there."""
    refuse_identifiers(dataset, columns, option)
    if not isinstance(dataset, Dataset):
        return dataset, dataset.summary(list(columns))[1]
    return dataset.analysis_frame(list(columns))


def _scan(args: argparse.Namespace, engine: str):
    """Files (or a bundled sample's file) scanned in place on DuckDB or Spark."""
    from ..engine import connect, scan

    if getattr(args, "header", None) is False:
        raise ParameterError(
            "The engines read files whose first row names the columns; leave out --engine for this file."
        )
    running = connect(engine, master=getattr(args, "spark_master", None))
    if args.sample:
        sample = SAMPLES[args.sample]
        table = scan(sample.path, engine=running, name=sample.title)
        return table.with_roles({c: sample.roles.get(c, Role.IGNORE) for c in table.columns})
    if args.file:
        return scan(args.file, engine=running, delimiter=args.delimiter, encoding=args.encoding)
    raise ParameterError("Give a file, folder or pattern to scan, or --sample NAME (see `python -m anonlib samples`).")


def engine_arguments(parser: argparse.ArgumentParser) -> None:
    """--engine and --spark-master: run the counts on DuckDB or Spark instead of in memory."""
    parser.add_argument(
        "--engine",
        choices=["duckdb", "spark"],
        help="count where the data lives: duckdb (files larger than memory; FILE may be a folder "
        "or a pattern such as 'visits/*.parquet') or spark (default: in memory)",
    )
    parser.add_argument(
        "--spark-master",
        metavar="URL",
        help="Spark master URL, e.g. spark://host:7077 or yarn (default: local mode on this machine)",
    )


def integers(text: str | None, what: str) -> list[int]:
    """Whole numbers from "4,4,5,2" (spaces allowed); a sentence naming the bad entry otherwise.
    Their size is checked where they are used (``anonlib.core.numbers``)."""
    numbers = []
    for item in split(text):
        try:
            numbers.append(int(item))
        except ValueError:
            try:
                number = float(item)  # 1e3 is a whole number too
            except ValueError:
                number = math.nan
            if not (math.isfinite(number) and number.is_integer()):
                raise ParameterError(
                    f"The {what} must be whole numbers separated by commas; '{item}' is not one."
                ) from None
            numbers.append(int(number))
    if not numbers:
        raise ParameterError(f"Give the {what} as whole numbers separated by commas, e.g. 4,4,5,2.")
    return numbers


def whole_option(text: str | None, what: str, *, minimum: int = 0, maximum: int = MAX_COUNT) -> int | None:
    """An option holding one whole number (None when not given)."""
    return None if text is None else whole_number(text, what, minimum=minimum, maximum=maximum)


def fraction_option(text: str | None, what: str) -> float | None:
    """An option holding a threshold of at least 0 and below 1 (None when not given)."""
    return None if text is None else real_number(text, what, minimum=0.0, maximum=1.0, below=True)


OUTPUT_OPTIONS = ("out", "csv")  # a command's options naming files it writes (``outputs`` default)
INPUT_OPTIONS = ("file", "population", "resources", "hierarchy", "key_file")  # ... and files it reads (``inputs``)
_CHUNK = 1 << 20


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output that names an input file, another output, the
    project store (its database, journal, WAL or shared-memory file) or a key file.

    A command declares the options naming the files it writes and reads
    (``parser.set_defaults(outputs=..., inputs=...)``; default ``OUTPUT_OPTIONS``
    and ``INPUT_OPTIONS``). Two names are the same file when they resolve to the
    same path or, when both exist, ``os.path.samefile`` says so (a symlink, a hard
    link, ``./x``, ``dir/../x``, a relative or absolute spelling).

    >>> check_outputs(argparse.Namespace(file="a.csv", out="./b/../a.csv"))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: --out names the input file 'a.csv'; write the result to another file (anonlib never replaces a file it reads).
    """
    outputs = [(f"--{o}", getattr(args, o, None)) for o in getattr(args, "outputs", OUTPUT_OPTIONS)]
    outputs = [(option, path) for option, path in outputs if path]
    inputs = [
        (option, path)
        for option in getattr(args, "inputs", INPUT_OPTIONS)
        for path in _input_paths(getattr(args, option, None))
    ]
    for i, (option, path) in enumerate(outputs):
        for source_option, source in inputs:
            if same_file(path, source):
                what = "the key file" if source_option == "key_file" else "the input file"
                raise ParameterError(
                    f"{option} names {what} '{source}'; write the result to another file "
                    "(anonlib never replaces a file it reads)."
                )
        for other, earlier in outputs[:i]:
            if same_file(path, earlier):
                raise ParameterError(
                    f"{other} and {option} name the same file '{path}'; give each output its own file."
                )
        refuse_protected(path, option)


def refuse_protected(path: str | os.PathLike, option: str, *, keys: bool = True) -> None:
    """A sentence when ``path`` (given with ``option``) names a file of the project store
    (``ANONLIB_HOME``/``ANONLIB_STORE``: the database, its journal, WAL or shared-memory file)
    or (with ``keys``) an existing key file (64 hex characters on one line), compared as files (links and
    spellings resolved); nothing is written over them.

    >>> import tempfile
    >>> key = Path(tempfile.mkdtemp()) / "project.key"
    >>> _ = key.write_text("ab" * 32 + "\\n")
    >>> refuse_protected(key, "--out")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: --out names a key file ('project.key'); write the result to another file (anonlib never replaces a key, which no other copy may hold).
    """
    for protected in store_files():
        if same_file(path, protected):
            raise ParameterError(
                f"{option} names the project store's file '{protected}'; write the result to another file "
                "(anonlib never replaces the store, which holds every project, key and audit entry)."
            )
    if keys and _is_key_file(path):
        raise ParameterError(
            f"{option} names a key file ('{Path(path).name}'); write the result to another file (anonlib never "
            "replaces a key, which no other copy may hold)."
        )


def _is_key_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an existing file holding a project key (64 hex characters on one line)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > 80:
            return False
        with open(path, "rb") as file:
            parse_key(file.read().decode("ascii").strip())
        return True
    except (OSError, UnicodeDecodeError, AnonlibError):
        return False


def _input_paths(value) -> list[str]:
    """The files an input option names: a path, ``ATTR=path`` specs (repeatable), or an
    engine's pattern (each file it matches)."""
    if not value:
        return []
    paths = []
    for item in [value] if isinstance(value, str) else value:
        path = item.partition("=")[2] if "=" in item and not Path(item).exists() else item
        paths.append(path)
        if glob.has_magic(path):
            paths.extend(glob.glob(path, recursive=True))
    return paths


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two names reach the same file (links and spellings resolved).

    >>> same_file("x.csv", "./x.csv"), same_file("x.csv", "y.csv")
    (True, False)
    """
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


@contextmanager
def replaced_atomically(path: str | os.PathLike, mode: int | None = None) -> Iterator[Path]:
    """A fresh name beside ``path`` to write to; on success it is synced and renamed
    over ``path`` (``os.replace``), so ``path`` holds either the old or the whole new
    content; on any failure (or Ctrl-C) the partial file is removed and ``path`` is
    untouched. A symlink is followed: the file it points to is the one replaced. The
    file gets ``mode`` when given (0600 for a file holding a key or raw records), else
    the mode of the file it replaces or the usual one (umask)."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}.part{target.suffix}"
    try:
        yield temporary
        if temporary.is_file():
            _sync(temporary)
            if mode is None:
                mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o666 & ~_umask()
            os.chmod(temporary, mode)
        elif temporary.is_dir() and target.is_dir():  # an engine wrote a folder (Spark) over an earlier one
            shutil.rmtree(target)
        os.replace(temporary, target)
    except BaseException:
        _remove(temporary)
        raise


def write(path: str, data: bytes, *, stream=None, private: bool = False) -> None:
    """Write a result file the user asked for (--out/--csv/--recipe/--package): the one
    place the command line writes files, always atomically (``replaced_atomically``);
    a sentence if it cannot be written. "written PATH" goes to ``stream`` (default
    standard output; ``report`` keeps standard output for the page). A ``private`` file
    (holding a key or raw records, e.g. a project export) is readable by its owner only (0600)."""
    refuse_protected(path, "The output")  # the one writer never replaces the store or a key
    try:
        with (
            replaced_atomically(path, 0o600 if private else None) as temporary,
            os.fdopen(
                os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666), "wb"
            ) as out,
        ):
            _copy_out(out, data)
    except OSError as err:
        raise DataFileError(
            f"Could not write '{path}': {err.strerror or err}; any earlier file there is unchanged."
        ) from None
    print(f"written            {path}", file=stream or sys.stdout)


def _copy_out(out, data: bytes) -> None:
    view = memoryview(data)
    for start in range(0, len(view), _CHUNK):
        out.write(view[start : start + _CHUNK])


def _sync(path: Path) -> None:
    with open(path, "rb+") as file:
        os.fsync(file.fileno())


def _remove(path: Path) -> None:
    try:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink(missing_ok=True)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def once(columns: list[str], option: str) -> list[str]:
    """``columns`` when each is named once, else a sentence naming the repeated one."""
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise ParameterError(f"{join_names(repeated)} is named twice in {option}; name each column once.")
    return columns


def analysed_columns(dataset: Dataset, wanted: Sequence[str]) -> list[str]:
    """The columns given, or the dataset's quasi-identifiers and sensitive columns."""
    columns = list(wanted) or list(dataset.quasi_identifiers + dataset.sensitive)
    if not columns:
        raise EmptySelectionError("Name the columns to use (the dataset has no quasi-identifier or sensitive column).")
    return columns


def data_arguments(parser: argparse.ArgumentParser, *, qi: bool = False, positional: bool = True) -> None:
    """The file/--sample options of a command reading a table (as the profile command has them)."""
    if positional:
        parser.add_argument(
            "file",
            nargs="?",
            help="CSV/TSV/Excel/Parquet file (or use --sample; with --engine also a folder or pattern)",
        )
    parser.add_argument("--sample", choices=list(SAMPLES), help="a bundled sample instead of a file")
    if qi:
        parser.add_argument("--qi", help="comma-separated quasi-identifier columns (default: guessed from names)")
    else:
        parser.set_defaults(qi=None)
    parser.add_argument("--count", help="column holding how many records each row stands for")
    parser.add_argument("--drop-missing", action="store_true", help="drop rows with missing values in the columns used")
    parser.add_argument("--delimiter", help="field delimiter (default: detected)")
    parser.add_argument("--encoding", help="text encoding (default: detected)")
    parser.add_argument(
        "--header",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the first row holds the column names (--header) or data (--no-header); default: detected",
    )
    parser.add_argument(
        "--role",
        action="append",
        metavar="COLUMN=ROLE",
        help=f"set a column's role (repeatable): {', '.join(ROLE_VALUES)}; e.g. --role Code=quasi-identifier",
    )


def command(commands, name: str, summary: str, example: str, handler) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name,
        help=summary,
        description=f"{summary[0].upper()}{summary[1:]}. Example: {example}",
    )
    parser.set_defaults(handler=handler)
    return parser


def drafted(args: argparse.Namespace) -> dict:
    """What ``--json`` adds for a release kept as a draft in a team's store (``team.md``): its
    ``state`` and its ``release`` number; nothing otherwise."""
    draft = getattr(args, "team_draft", None)
    return {} if draft is None else {"state": "draft", "release": draft.id, "project": draft.project}


def report_release(
    args: argparse.Namespace,
    *,
    dataset: str,
    dropped: int,
    shield: Sequence[str],
    given,
    result,
    target,
    check,
    measure: str,
    rows: tuple[int, int],
    k: int,
    utility: float,
    steps: Sequence[str],
    seconds: str,
    cells: tuple[int, int] = (0, 0),
    engine: dict | None = None,
    engine_line: str | None = None,
    account=None,
    people: tuple[int, int] | None = None,
    earlier: int = 0,
    capped: tuple[int, int, int] | None = None,
    kept=(),
    unseen=(),
) -> int:
    """What ``anonymize`` states about its release, in memory and on an engine alike: the JSON
    of ``--json`` or the lines printed, and the exit code (0 when the written file meets the
    target, else 1). ``check`` is the recount of the file written; ``k`` and ``utility`` are
    measured on it too, and ``rows`` (the distinct rows written and those of the file before,
    over the same columns: the text and ``--json`` state this one pair); ``engine`` adds the engine's keys to the JSON and
    ``engine_line`` its line to the text. ``people`` (with a person column: the people searched
    and the people released) makes ``k`` and ``suppressed`` count people, the records beside them.
    ``capped`` (a records-per-person cap: records left out, people who lost one, the cap) adds
    ``capped_records`` and ``capped_people``.
    ``kept`` names the columns released unchanged outside the target, or is their ``KeptRisk`` (the
    people or records unique once they are added, measured on the released table). ``unseen`` are the
    values a given hierarchy did not list, placed by its rule or at the top (``UnseenValues``)."""
    kept_json = kept.to_json() if hasattr(kept, "to_json") else {"kept": list(kept)}
    # the unit k, suppression and the people are counted in: the search's (people, histories, households)
    # when it counted owners, though the file written without their column is recounted in records
    unit_target = target if people is not None else check.target

    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    "dataset": dataset,
                    "shield": list(shield),
                    "rows_dropped": dropped,
                    "method": result.method,
                    "rows": rows[0],
                    "violations": check.failing_records,
                    "requirements": [r.describe() for r in target.requirements],
                    "max_suppressed": target.max_suppressed,
                    "suppressed_records": check.suppressed_records,
                    "levels": dict(result.levels),
                    "measure": measure,
                    "utility": utility,
                    "optimal": result.optimal,
                    "bound": result.bound,
                    "checked": result.checked,
                    "lattice_size": result.lattice_size,
                    "generated": result.generated,
                    "seconds": result.seconds,
                    "k": k,
                    "k_target": target.k,
                    "target": unit_target.describe(),
                    "unit": unit_target.unit,
                    "power": "all" if check.target.power is None else check.target.power,
                    **({"earlier_deliveries": earlier} if earlier else {}),
                    "met": check.met,
                    "records": check.loaded_records,
                    "released_records": check.records,
                    "suppressed": check.suppressed_records,
                    "failing_records": check.failing_records,
                    "cells_suppressed": cells[0],
                    "records_with_suppressed_cells": cells[1],
                    "verdict": check.sentence(),
                    "steps": list(steps),
                    **kept_json,
                    "unseen": [u.to_json() for u in unseen],
                    "hierarchies": {a: ("file" if a in given else "default") for a in shield},
                    "original_rows": rows[1],
                    "original_violations": result.root.violations,
                    **(account.to_json() if account is not None else {}),
                    **({"persons": check.loaded_persons, "released_persons": check.persons} if check.by_person else {}),
                    **(
                        {
                            "persons": people[0],
                            "released_persons": people[1],
                            "suppressed": people[0] - people[1],
                            "suppressed_persons": people[0] - people[1],
                        }
                        if people is not None
                        else {}
                    ),
                    # households counted in households (persons/released_persons kept for the contract)
                    **(
                        {
                            "households": people[0],
                            "released_households": people[1],
                            "suppressed_households": people[0] - people[1],
                        }
                        if people is not None and unit_target.unit == "households"
                        else {}
                    ),
                    **(
                        {"capped_records": capped[0], "capped_people": capped[1], "cap_records": capped[2]}
                        if capped is not None
                        else {}
                    ),
                    **(engine or {}),
                    **drafted(args),
                },
                indent=2,
            ),
        )
        return 0 if check.met else 1
    print(f"dataset            {printable(dataset)}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    proof = (
        ""
        if result.optimal is None
        else ", proven optimal"
        if result.optimal
        else f", not proven optimal (lowest possible {result.bound:.5f})"
    )
    print(f"method             {METHOD_NAMES[result.method]}{proof}")
    if engine_line:
        print(f"engine             {engine_line}")
    print(f"levels             {', '.join(f'{a} {v}/{result.max_levels[a]}' for a, v in result.levels.items())}")
    print(f"rows               {rows[0]:,} (original {rows[1]:,}) distinct; {check.records:,} records released")
    print(f"target             {unit_target.describe()}")
    whole = unit_target.whole
    print(f"k (as released)    {k:,}" + (f" {whole}" if people is not None else ""))
    if people is not None:
        print(f"{'suppressed ' + whole:<18} {people[0] - people[1]:,} of {people[0]:,}")
    print(f"suppressed records {check.suppressed_records:,} of {check.loaded_records:,}")
    if capped is not None:
        print(
            f"capped records     {capped[0]:,} records of {capped[1]:,} people left out "
            f"(at most {capped[2]:,} records per person)"
        )
    if cells and cells[0]:
        print(f"suppressed cells   {cells[0]:,} in {cells[1]:,} records (local suppression)")
    print(f"utility loss       {utility:.5f} ({MEASURE_NAMES[measure]}; 0 = nothing lost, 1 = all)")
    if result.checked is not None:
        print(f"generalizations    {result.checked:,} counted of {result.lattice_size:,}")
    else:
        print(f"tables generated   {result.generated:,}")
    print(f"seconds            {seconds}")
    if account is not None:
        released, left_out = account.sentences()
        print(f"columns            {released}")
        print(f"                   {left_out}")
    if hasattr(kept, "sentence") and kept.kept:
        print(f"kept               {kept.sentence()}")
    for u in unseen:
        print(f"unseen             {u.sentence()}")
    print(f"result             {check.sentence()}")
    if not check.met:
        print(f"not met            {check.failing_records:,} records in classes failing the target")
    return 0 if check.met else 1


def hierarchy_files(specs: Sequence[str]) -> dict[str, pd.DataFrame]:
    """ARX hierarchy files given as ``ATTR=path.csv`` (``--hierarchy``, repeatable), read and size-checked."""
    out: dict[str, pd.DataFrame] = {}
    for spec in specs:
        attribute, sep, path = spec.partition("=")
        if not sep or not attribute.strip() or not path.strip():
            raise ParameterError(f"Give a hierarchy as ATTRIBUTE=file.csv; got '{spec}'.")
        file = Path(path.strip())
        if not file.is_file():
            raise DataFileError(f"The hierarchy file '{file.name}' does not exist or is not a file.")
        if file.stat().st_size > DEFAULT_MAX_BYTES:
            raise FileTooLargeError(
                f"The hierarchy file '{file.name}' is larger than {DEFAULT_MAX_BYTES // 1024**2} MB, the limit for a table."
            )
        out[attribute.strip()] = read_hierarchy_csv(file.read_bytes())
    return out


def quasi_identifiers(dataset) -> list[str]:
    """The quasi-identifiers of a dataset (``--qi`` or guessed); a sentence when there are none."""
    qis = list(dataset.quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Name the quasi-identifiers with --qi (no column name suggests one).")
    return qis


def parse_requirement(text: str, hierarchies: dict[str, pd.DataFrame]) -> ModelRequirement:
    """``MODEL:SENSITIVE=VALUE`` (``recursive_cl:dx=3,c=2``) as a requirement.

    >>> parse_requirement("recursive_cl:dx=3,c=2", {}).describe()
    'recursive (2, 3)-diversity of dx'
    """
    model, sep, rest = text.partition(":")
    rest, _, extra = rest.partition(",")
    sensitive, eq, value = rest.rpartition("=")
    if not sep or not eq or not sensitive.strip():
        raise ParameterError(
            f"Give a privacy model as MODEL:SENSITIVE=VALUE (e.g. distinct_l:diagnosis=3); got '{text}'."
        )
    c = None
    if extra:
        key, _, c = extra.partition("=")
        if key.strip() != "c":
            raise ParameterError(f"Only recursive (c,l)-diversity takes an extra ',c=C'; got '{text}'.")
    try:
        number = float(value)
        c_number = None if c is None else float(c)
    except ValueError:
        raise ParameterError(f"The value in '{text}' is not a number.") from None
    model = model.strip()
    hierarchy = hierarchies.get(sensitive.strip()) if model == "t_closeness" else None
    return ModelRequirement(model, sensitive.strip(), number, c_number, hierarchy)
