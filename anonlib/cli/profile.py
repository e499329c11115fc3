"""``profile`` (k, anonymity vector, records at risk) and ``samples``."""

from __future__ import annotations

import argparse
import json

from ..core.dataset import Dataset, role_guesses
from ..core.masking import printable
from ..core.metrics import whole_k
from ..core.samples import SAMPLES
from ..engine import first_rows
from ..measures.avector import vector_text
from ..measures.linkage import linkage_risk
from ..measures.power import risk_by_power
from ..measures.profile import risk_profile
from .common import data_arguments, engine_arguments, load_dataset, print_json
from .health import household_argument, person_argument

ROLE_ROWS = 1_000_000  # rows an engine's table is read for its guessed roles (~0.1 GB a few columns wide)
# each power of by_power an engine counts, estimated within this (else reported as not counted): the
# profile of 10^8 records of 10^7 people stays within the spec's 5 minutes (power 2 estimated at 96 s
# is counted, power 3 at about 9 minutes is not)
ENGINE_POWER_SECONDS = 120.0


def _profile(args: argparse.Namespace) -> int:
    dataset = load_dataset(args)
    k = whole_k(args.k)
    if not isinstance(dataset, Dataset):  # on an engine the roles below read every column: all typed in one query
        dataset.decide_kinds(list(dataset.columns))
    risk = risk_profile(dataset)
    result = {"dataset": dataset.name, **risk.as_dict()}
    # when records link: people by the sequence of their rows, households by their members together
    linkage = linkage_risk(dataset, risk.quasi_identifiers)
    history, households = linkage.history, linkage.households
    if history is not None:
        result["people_unique_on_history"] = history.unique
        result["people_in_histories_below"] = {f"<{t}": n for t, n in history.below}
    if households is not None:
        result["household"] = dataset.household
        result.update(households.as_dict())
    by_power = ()
    local = isinstance(dataset, Dataset)  # else a table on an engine, counted there
    if dataset.person is not None:  # an attacker who knows m of a person's records, m = 1, 2, 3, 5, all
        frame = dataset.analysis_frame(list(risk.quasi_identifiers), person=True)[0] if local else dataset
        limit = None if local else ENGINE_POWER_SECONDS
        by_power = risk_by_power(
            frame, risk.quasi_identifiers, dataset.person, k=k, count=dataset.count, max_seconds=limit
        )
        result["by_power_k"] = k
        result["by_power"] = [r.as_dict() for r in by_power]
    # read off the values: on an engine, of its first ROLE_ROWS rows (the whole table up to that size)
    frame = dataset.frame if local else first_rows(dataset, ROLE_ROWS)
    result["roles"] = {c: g.role.value for c, g in role_guesses(frame, contents=True).items()}
    if args.json:
        print_json(args, json.dumps(result, indent=2))
        return 0
    print(f"dataset            {printable(dataset.name)}")
    print(f"quasi-identifiers  {', '.join(risk.quasi_identifiers)}")
    print(
        f"records            {risk.records:,}" + (f" ({risk.rows_dropped:,} rows dropped)" if risk.rows_dropped else "")
    )
    if risk.person is not None:  # counted in people: k, the vector and the small classes
        print(f"people             {risk.persons:,} (person column {risk.person}; counted in people below)")
    print(f"classes            {risk.classes:,}")
    print(f"k                  {risk.k}" + (" (in people)" if risk.person is not None else ""))
    unit = risk.unit
    print(f"unique {unit:<11} {risk.unique_records:,} ({100 * risk.unique_share:.2f}%)")
    for threshold, n in risk.records_below:
        print(f"in classes < {threshold:<5} {n:,} {unit} ({100 * risk.share_below(threshold):.2f}%)")
    print(f"anonymity vector   {vector_text(risk.vector)}  (--json prints it whole)")
    if history is not None:  # if the person column is released, a person is found by all of their rows
        print(
            f"unique on history  {history.unique:,} of {history.people:,} people ({100 * history.unique_share:.2f}%) "
            "are the only person with their sequence of rows"
        )
        for threshold, n in history.below:
            print(f"history shared < {threshold:<2} {n:,} people ({100 * history.share_below(threshold):.2f}%)")
    for r in by_power:
        if r.refused is not None:
            print(f"power {r.label:<12} not counted: {r.refused}")
            continue
        print(
            f"power {r.label:<12} {r.people_unique:,} people unique, {r.people_below_k:,} people in histories "
            f"shared by fewer than {k} (an attacker who knows "
            + ("all of a person's records)" if r.power is None else f"{r.power} of a person's records)")
        )
    if households is not None:
        h = households
        print(
            f"households         {h.households:,} ({h.records:,} records); {h.unique:,} "
            f"({100 * h.unique_share:.2f}%) unique on their members' rows together"
        )
        print(
            f"household risk     max {h.max:.4f}, mean {h.mean:.4f}; {h.above:,} households above {h.threshold:g} "
            "(1 - product of 1 - 1/f over the members' records)"
        )
    return 0


def _samples(args: argparse.Namespace) -> int:
    for key, sample in SAMPLES.items():
        print(f"{key:<22} {sample.title}")
    return 0


_profile_help = (
    "k, anonymity vector, unique records and records in classes smaller than 2, 5 and 10 "
    "for the chosen quasi-identifiers. Example: python -m anonlib profile --sample adult --qi age,sex,race"
)


def register(commands) -> None:
    profile = commands.add_parser("profile", help="re-identification risk of a table", description=_profile_help)
    data_arguments(profile, qi=True)
    person_argument(profile)
    household_argument(profile)
    engine_arguments(profile)
    profile.add_argument(
        "--k",
        default=5,
        help="with --person: the k of by_power's people below k (people whose history, or any m of its records, "
        "fewer than k people share; default 5)",
    )
    profile.add_argument("--json", action="store_true", help="print the result as JSON")
    profile.set_defaults(handler=_profile)

    samples = commands.add_parser("samples", help="list the bundled samples")
    samples.set_defaults(handler=_samples)
