"""``models``: l-diversity, t-closeness, α, δ and β per sensitive attribute, and whether a
release target (k, required models, a suppression limit) is met."""

from __future__ import annotations

import argparse
import json

from ..core.dataset import Role
from ..core.errors import EmptySelectionError, ParameterError
from ..core.masking import printable
from ..measures.models import MODELS, acceptance, model_values
from .common import (
    analysis_frame,
    command,
    data_arguments,
    engine_arguments,
    hierarchy_files,
    load_dataset,
    parse_requirement,
    print_json,
    quasi_identifiers,
    real_argument,
    split,
    whole_argument,
)


def _models(args: argparse.Namespace) -> int:
    dataset = load_dataset(args)
    both = [c for c in split(args.sensitive) if c in split(args.qi)]
    if both:
        raise ParameterError(
            f"{', '.join(both)} is both a quasi-identifier and a sensitive attribute; "
            "a column can only have one of the two roles."
        )
    if args.sensitive:  # the columns named replace the guessed ones, as --qi does
        roles = {c: Role.IGNORE for c in dataset.sensitive}
        roles.update({c: Role.SENSITIVE for c in split(args.sensitive)})
        dataset = dataset.with_roles(roles)
    qis = quasi_identifiers(dataset)
    hierarchies = hierarchy_files(args.hierarchy or [])
    requirements = [parse_requirement(r, hierarchies) for r in args.require or []]
    sensitive = list(dict.fromkeys(list(dataset.sensitive) + [r.sensitive for r in requirements]))
    if not sensitive:
        raise EmptySelectionError("Name the sensitive attributes with --sensitive (no column is marked sensitive).")
    frame, dropped = analysis_frame(dataset, qis + [s for s in sensitive if s not in qis], "--qi or --sensitive")
    values = [
        model_values(frame, qis, s, count=dataset.count, recursive_l=args.l, hierarchy=hierarchies.get(s))
        for s in sensitive
    ]
    target = acceptance(
        frame, qis, k=args.k, requirements=requirements, max_suppressed=args.max_suppressed, count=dataset.count
    )
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    "dataset": dataset.name,
                    "quasi_identifiers": qis,
                    "rows_dropped": dropped,
                    "models": [v.as_dict() for v in values],
                    "target": {
                        "k": args.k,
                        "requirements": [r.describe() for r in requirements],
                        "max_suppressed": args.max_suppressed,
                        "acceptable": target.acceptable,
                        "records": target.records,
                        "suppressed_records": target.suppressed_records,
                        "suppressed_share": target.suppressed_share,
                        "failing": {name: n for name, n in target.failing},
                    },
                },
                indent=2,
            ),
        )
        return 0 if target.acceptable else 1
    print(f"dataset            {printable(dataset.name)}")
    print(f"quasi-identifiers  {', '.join(qis)}")
    print(f"records            {target.records:,}" + (f" ({dropped:,} rows dropped)" if dropped else ""))
    for v in values:
        print(f"{v.sensitive} ({v.values} values; {v.classes:,} classes)")
        print(f"  k                          {v.k:,}")
        print(f"  alpha (largest share)      {v.alpha:.4f}")
        print(f"  distinct l                 {v.distinct_l}")
        print(f"  entropy l                  {v.entropy_l:.4f}")
        print(f"  recursive c for l = {v.recursive_l}      {v.recursive_c:.4f}")
        print(f"  t ({v.t_distance} distance)".ljust(29) + ("-" if v.t is None else f"{v.t:.4f}"))
        print(f"  delta                      {v.delta:.4f}")
        print(f"  beta (basic)               {v.beta:.4f}")
        print(f"  beta (enhanced)            {v.enhanced_beta:.4f}")
    if requirements or args.k > 1:
        print(
            f"target             k = {args.k}"
            + "".join(f"; {r.describe()}" for r in requirements)
            + f"; at most {100 * args.max_suppressed:g}% suppressed records"
        )
        for name, n in target.failing:
            print(f"  records in classes failing {name}: {n:,}")
        print(
            f"  suppressed records {target.suppressed_records:,} ({100 * target.suppressed_share:.2f}%): "
            + ("target met" if target.acceptable else "target NOT met")
        )
    return 0 if target.acceptable else 1


def register(commands) -> None:
    models = command(
        commands,
        "models",
        "l-diversity, t-closeness, alpha, delta and beta per sensitive attribute, and "
        "whether k plus the required models are met after suppression (exit 1 when not)",
        "python -m anonlib models --sample adult --qi age,sex --sensitive income "
        "--k 5 --require distinct_l:income=2 --max-suppressed 0.05",
        _models,
    )
    data_arguments(models, qi=True)
    engine_arguments(models)
    models.add_argument("--sensitive", help="comma-separated sensitive attributes (default: guessed from names)")
    models.add_argument(
        "--l",
        type=whole_argument("l", minimum=None),
        default=2,
        help="l of the reported recursive (c,l)-diversity (default 2)",
    )
    models.add_argument(
        "--hierarchy",
        action="append",
        metavar="ATTR=FILE",
        help="ARX hierarchy of a sensitive attribute for the hierarchical t-closeness distance",
    )
    models.add_argument(
        "--k", type=whole_argument("k", minimum=None), default=1, help="k of the release target (default 1)"
    )
    models.add_argument(
        "--require",
        action="append",
        metavar="MODEL:SENSITIVE=VALUE",
        help=f"a required model ({', '.join(MODELS)}), e.g. t_closeness:income=0.2 or "
        "recursive_cl:income=3,c=2; repeat for several",
    )
    models.add_argument(
        "--max-suppressed", type=real_argument, default=0.0, help="share of records that may be suppressed (default 0)"
    )
    models.add_argument("--json", action="store_true", help="print the result as JSON")
