"""``leakage`` (Longpre et al.; Arca & Hewett 2021): the average information an attacker
gains per attribute or combination of attributes, in bits and normalized."""

from __future__ import annotations

import argparse
import json

from ..core.loading import to_safe_csv
from ..core.masking import printable
from ..measures.leakage import attribute_label, leakage_table
from .common import (
    analysed_columns,
    analysis_frame,
    command,
    data_arguments,
    engine_arguments,
    integers,
    load_dataset,
    once,
    print_json,
    split,
    write,
)


def _leakage(args: argparse.Namespace) -> int:
    dataset = load_dataset(args)
    columns = analysed_columns(dataset, once(split(args.attributes), "--attributes"))
    frame, dropped = analysis_frame(dataset, columns, "--attributes")
    sizes = integers(args.sizes, "combination sizes") if args.sizes else None
    table = leakage_table(frame, columns, count=dataset.count, sizes=sizes)
    shown = table.assign(attribute=[attribute_label(a) for a in table["attribute"]])
    if args.csv:
        write(args.csv, to_safe_csv(shown))
    if args.json:
        print_json(
            args,
            json.dumps(
                {"dataset": dataset.name, "rows_dropped": dropped, "leakage": shown.to_dict("records")}, indent=2
            ),
        )
        return 0
    print(f"dataset            {printable(dataset.name)}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    width = max(9, *(len(a) for a in shown["attribute"]))
    print(f"{'attribute':<{width}}  {'partitions':>10}  {'loss (bits)':>11}  {'normalized':>10}")
    for row in shown.itertuples(index=False):
        print(f"{row.attribute:<{width}}  {row.partitions:>10,}  {row.loss:>11.5f}  {row.normalized:>10.5f}")
    return 0


def register(commands) -> None:
    leakage = command(
        commands,
        "leakage",
        "average information loss (bits and normalized) per attribute or combination",
        "python -m anonlib leakage --sample arca_table1 --attributes Age,Zip --sizes 1,2",
        _leakage,
    )
    data_arguments(leakage)
    engine_arguments(leakage)
    leakage.add_argument("--attributes", help="comma-separated columns (default: quasi-identifiers and sensitive)")
    leakage.add_argument("--sizes", help="combination sizes, e.g. 1,2 for single attributes and pairs (default: 1)")
    leakage.add_argument("--json", action="store_true", help="print the result as JSON")
    leakage.add_argument("--csv", metavar="OUT", help="also write the table to this CSV file")
