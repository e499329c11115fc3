"""What the budget's fingerprint adds to a private release (dp.md part 4: under 10% at 10^6 records).

A panel of 10^6 records (10^5 people × 10 yearly waves: person, year, birth year, sex, city, an
education level) is released privately as ``synthesize`` does it (MST, ε = 1, declared value lists
for sex, city and education, per person with 10 records per person); separately, its fingerprint
is taken as ``synthesize`` takes it (``file_fingerprint``: the person column given, and again with
none given, the person then found by structure). Printed: each time, the share the fingerprint
adds to the release, and the target.

    python bench/bench_fingerprint.py [--records 1000000] [--repeat 3]

Needs the ``dp`` extra for the release; without it only the fingerprint is timed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from anonlib.core.dataset import Dataset  # noqa: E402
from anonlib.core.fingerprint import file_fingerprint  # noqa: E402

TARGET = 0.10  # the fingerprint adds under 10% to a private release's time


def panel(records: int, waves: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    people = records // waves
    person = np.repeat(np.arange(people), waves)
    return pd.DataFrame(
        {
            "idcode": person,
            "year": np.tile(np.arange(1968, 1968 + waves), people),
            "birth_yr": np.repeat(rng.integers(1940, 1960, people), waves),
            "sex": np.repeat(rng.choice(["f", "m"], people), waves),
            "city": rng.choice(["north", "south", "east", "west"], records),
            "grade": rng.choice(["none", "school", "college", "degree"], records),
        }
    )


def best(seconds: list[float]) -> float:
    return min(seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frame = panel(args.records)
    print(f"records {len(frame):,}, people {frame['idcode'].nunique():,}, load {os.getloadavg()[0]:.1f}")
    named, found = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        file_fingerprint(frame, "idcode")
        named.append(time.perf_counter() - t)
        t = time.perf_counter()
        fp = file_fingerprint(frame)
        found.append(time.perf_counter() - t)
    print(f"fingerprint, person named        {best(named):6.2f} s")
    print(f"fingerprint, person by structure {best(found):6.2f} s  (found: {fp.person})")
    try:
        from anonlib.workflow.private_release import private_release
    except ImportError:  # pragma: no cover - without the dp extra
        print("the dp extra is not installed: the release is not timed")
        return 0
    dataset = Dataset.from_frame("panel.csv", frame, {"idcode": "person"})
    t = time.perf_counter()
    private_release(
        dataset,
        ["sex", "city", "grade"],
        epsilon=1.0,
        values={
            "sex": ["f", "m"],
            "city": ["north", "south", "east", "west"],
            "grade": ["none", "school", "college", "degree"],
        },
        person="idcode",
        records_per_person=10,
    )
    release = time.perf_counter() - t
    print(f"private release (MST, ε = 1)     {release:6.2f} s  (load {os.getloadavg()[0]:.1f})")
    for what, seconds in (("named", best(named)), ("by structure", best(found))):
        share = seconds / release
        verdict = "meets" if share < TARGET else "MISSES"
        print(
            f"fingerprint ({what}) adds {100 * share:.1f}% to the release: {verdict} the target of {100 * TARGET:.0f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
