"""What every command shares: reading the table and its roles, parsing lists of
numbers, writing the files the user asked for, and declaring the data options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from ..core.dataset import Dataset, Role
from ..core.errors import DataFileError, EmptySelectionError, FileTooLargeError, ParameterError
from ..core.loading import load_table
from ..core.samples import SAMPLES, load_sample


def split(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def load_dataset(args: argparse.Namespace) -> Dataset:
    """The table a command works on, with roles from --qi/--count and the missing policy.

    With ``--engine duckdb|spark`` it is an ``anonlib.engine.EngineTable``: the
    files are scanned where they are and the measures run on that engine (the
    same attributes and ``analysis_frame`` as a ``Dataset``)."""
    engine = getattr(args, "engine", None)
    if getattr(args, "spark_master", None) and engine != "spark":
        raise ParameterError("--spark-master applies to the Spark engine; add --engine spark.")
    if engine:
        dataset = _scan(args, engine)
    elif args.sample:
        dataset = load_sample(args.sample)
    elif args.file:
        try:
            table = load_table(args.file, delimiter=args.delimiter, encoding=args.encoding)
        except FileTooLargeError as err:
            raise FileTooLargeError(f"{err} Or count it where it is with --engine duckdb.") from None
        dataset = Dataset.from_frame(args.file, table.frame)
    else:
        raise ParameterError("Give a file to read, or --sample NAME (see `python -m anonlib samples`).")
    roles: dict[str, Role] = {}
    if args.qi:
        roles.update({c: Role.IGNORE for c in dataset.quasi_identifiers})
        roles.update({c: Role.QUASI_IDENTIFIER for c in split(args.qi)})
    if args.count:
        roles[args.count] = Role.COUNT
    dataset = dataset.with_roles(roles) if roles else dataset
    return dataset.with_missing("drop") if args.drop_missing else dataset


def _scan(args: argparse.Namespace, engine: str):
    """Files (or a bundled sample's file) scanned in place on DuckDB or Spark."""
    from ..engine import connect, scan

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
        "--engine", choices=["duckdb", "spark"],
        help="count where the data lives: duckdb (files larger than memory; FILE may be a folder "
        "or a pattern such as 'visits/*.parquet') or spark (default: in memory)",
    )
    parser.add_argument(
        "--spark-master", metavar="URL",
        help="Spark master URL, e.g. spark://host:7077 or yarn (default: local mode on this machine)",
    )


def integers(text: str | None, what: str) -> list[int]:
    """Whole numbers from "4,4,5,2" (spaces allowed); a sentence naming the bad entry otherwise."""
    numbers = []
    for item in split(text):
        try:
            numbers.append(int(item))
        except ValueError:
            raise ParameterError(f"The {what} must be whole numbers separated by commas; '{item}' is not one.") from None
    if not numbers:
        raise ParameterError(f"Give the {what} as whole numbers separated by commas, e.g. 4,4,5,2.")
    return numbers


def write(path: str, data: bytes) -> None:
    """Write a result file the user asked for (--out/--csv); a sentence if it cannot be written."""
    try:
        Path(path).write_bytes(data)
    except OSError as err:
        raise DataFileError(f"Could not write '{path}': {err.strerror or err}.") from None
    print(f"written            {path}")


def analysed_columns(dataset: Dataset, wanted: Sequence[str]) -> list[str]:
    """The columns given, or the dataset's quasi-identifiers and sensitive columns."""
    columns = list(wanted) or list(dataset.quasi_identifiers + dataset.sensitive)
    if not columns:
        raise EmptySelectionError("Name the columns to use (the dataset has no quasi-identifier or sensitive column).")
    return columns


def data_arguments(parser: argparse.ArgumentParser, *, qi: bool = False, positional: bool = True) -> None:
    """The file/--sample options of a command reading a table (as the profile command has them)."""
    if positional:
        parser.add_argument("file", nargs="?", help="CSV/TSV/Excel/Parquet file (or use --sample; with --engine also a folder or pattern)")
    parser.add_argument("--sample", choices=list(SAMPLES), help="a bundled sample instead of a file")
    if qi:
        parser.add_argument("--qi", help="comma-separated quasi-identifier columns (default: guessed from names)")
    else:
        parser.set_defaults(qi=None)
    parser.add_argument("--count", help="column holding how many records each row stands for")
    parser.add_argument("--drop-missing", action="store_true", help="drop rows with missing values in the columns used")
    parser.add_argument("--delimiter", help="field delimiter (default: detected)")
    parser.add_argument("--encoding", help="text encoding (default: detected)")


def command(commands, name: str, summary: str, example: str, handler) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name, help=summary, description=f"{summary[0].upper()}{summary[1:]}. Example: {example}",
    )
    parser.set_defaults(handler=handler)
    return parser
