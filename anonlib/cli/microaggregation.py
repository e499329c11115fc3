"""``microaggregate``: MDAV on numeric columns (Domingo-Ferrer & Mateo-Sanz 2002).

Writes the table with the chosen columns replaced by their group's mean (or
median; groups of k to 2k - 1 records) and reports the groups and the
information loss SSE/SST (``anonlib.transformations.microaggregation``). Identifier columns
are never written.
"""

from __future__ import annotations

import argparse
import json

from ..core.dataset import Role
from ..core.masking import printable
from ..measures.target import ReleaseTarget
from ..transformations.microaggregation import STATISTICS, microaggregate
from ..workflow.release import release_csv
from .common import command, data_arguments, once, print_json, read_dataset, split, whole_option, write


def _microaggregate(args: argparse.Namespace) -> int:
    dataset, _ = read_dataset(args)
    columns = once(split(args.columns), "--columns")
    k = whole_option(args.k, "k", minimum=1)
    frame = dataset.frame
    if args.drop_missing:
        frame = frame.dropna(subset=[c for c in columns if c in frame.columns]).reset_index(drop=True)
    result = microaggregate(frame, columns, target=ReleaseTarget(k), count=dataset.count, statistic=args.statistic)
    summary = {
        "dataset": str(dataset.name),
        "columns": list(result.columns),
        "k": k,
        "statistic": result.statistic,
        "records": int(result.group_sizes.sum()),
        "groups": int(len(result.group_sizes)),
        "smallest_group": int(result.group_sizes.min()) if len(result.group_sizes) else 0,
        "largest_group": int(result.group_sizes.max()) if len(result.group_sizes) else 0,
        "sse": result.sse,
        "sst": result.sst,
        "information_loss": result.loss,
    }
    if args.out:
        kept = [c for c in result.table.columns if dataset.roles.get(c) is not Role.IDENTIFIER]
        write(args.out, release_csv(result.table[kept]))
    if args.json:
        print_json(args, json.dumps(summary, indent=2))
        return 0
    print(f"dataset            {printable(summary['dataset'])}")
    print(f"columns            {', '.join(summary['columns'])} (standardized for distances)")
    print(
        f"groups             {summary['groups']:,} of {summary['smallest_group']} to {summary['largest_group']} "
        f"records sharing their {summary['statistic']}"
    )
    print(
        f"information loss   {summary['information_loss']:.4f} (SSE/SST: 0 nothing lost, 1 every record "
        "replaced by the overall mean)"
    )
    return 0


def register(commands) -> None:
    parser = command(
        commands,
        "microaggregate",
        "microaggregate numeric columns with MDAV: groups of k to 2k-1 records share their mean",
        "python -m anonlib microaggregate survey.csv --columns age,income --k 5 --out micro.csv",
        _microaggregate,
    )
    data_arguments(parser)
    parser.add_argument("--columns", required=True, help="comma-separated numeric columns to microaggregate")
    parser.add_argument("--k", required=True, help="smallest number of records per group")
    parser.add_argument(
        "--statistic", choices=STATISTICS, default="mean", help="the value a group shares (default: mean)"
    )
    parser.add_argument("--out", metavar="CSV", help="write the microaggregated table to this CSV file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
