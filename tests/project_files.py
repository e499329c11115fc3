"""Seeded files and working copies the project tests share: a monthly survey delivery of
the same layout (age, sex, zip, diagnosis), and the steps a privacy officer applies to it."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from sqlalchemy import create_engine, text

from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.workflow import BandsStep, ReleaseTarget, SuppressionStep, WorkingCopy
from anonlib.workflow.recipe import Reading

ROLES = {"age": "quasi-identifier", "sex": "quasi-identifier", "zip": "quasi-identifier", "dx": "sensitive"}


def delivery(month: int, rows: int = 300, marker: str = "") -> bytes:
    """Month ``month``'s file: seeded, the same columns every month (``marker`` in one diagnosis)."""
    rng = np.random.default_rng(1000 + month)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, rows),
            "sex": rng.choice(["F", "M"], rows),
            "zip": rng.choice(["37201", "37202", "37203", "37204", "37205"], rows),
            "dx": rng.choice(["flu", "asthma", "diabetes", "copd"], rows),
        }
    )
    if marker:
        frame.loc[0, "dx"] = marker
    return frame.to_csv(index=False).encode("utf-8")


def loaded(data: bytes, name: str = "survey.csv") -> tuple[Dataset, Reading]:
    table = load_table(data, name=name)
    return Dataset.from_frame(name, table.frame, ROLES, notes=table.notes), Reading.of(table, data)


def worked_copy(data: bytes, name: str = "survey.csv", k: int = 5, max_suppressed: float = 0.2) -> WorkingCopy:
    """The file with its roles, a target, age in 20-year bands, and the failing records suppressed."""
    dataset, reading = loaded(data, name)
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=k, max_suppressed=max_suppressed), reading=reading)
    ages = dataset.frame["age"]
    copy = copy.apply(BandsStep("age", 20, 0, int(ages.min()), int(ages.max()), True), "Individual privacy")
    return copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")


def patient_delivery(month: int, rows: int = 300) -> bytes:
    """Month ``month``'s file with a patient number (``pid``, from one pool of 150 patients, so
    deliveries share patients): what a project pseudonymizes under its key."""
    frame = pd.read_csv(io.BytesIO(delivery(month, rows)), dtype=str)
    rng = np.random.default_rng(2000 + month)
    frame.insert(0, "pid", [f"P{n:04d}" for n in rng.integers(0, 150, rows)])
    return frame.to_csv(index=False).encode("utf-8")


def drop_audit_triggers(url: str):
    """What whoever can write the database does first: the audit log's append-only triggers dropped
    (SQLite) or disabled (PostgreSQL); the engine, to go on writing with it."""
    engine = create_engine(url)
    with engine.begin() as c:
        if engine.dialect.name == "sqlite":
            c.execute(text("DROP TRIGGER IF EXISTS audit_no_update"))
            c.execute(text("DROP TRIGGER IF EXISTS audit_no_delete"))
        else:
            c.execute(text("ALTER TABLE audit DISABLE TRIGGER USER"))
    return engine


_CLASSIFIERS: dict[tuple, object] = {}


def _table_key(table: pd.DataFrame, weights) -> str:
    """The content of a table the classifier reads (its cells in order and each row's weight)."""
    import hashlib

    cells = pd.util.hash_pandas_object(table.astype(object), index=False).to_numpy().tobytes()
    return hashlib.sha256(
        cells + np.asarray(weights, dtype=float).tobytes() + repr(list(table.columns)).encode()
    ).hexdigest()


def _classified_once(known: dict[tuple, object]):
    """The release_view module and a ``compare_classifiers`` that cross-validates each pair of
    tables once into ``known`` (keyed by what it reads: the column, the features, both tables with
    their weights, the seed and the limits) and hands the same comparison again."""
    from anonlib.workflow import release_view as module

    computed = module.compare_classifiers

    def compare_classifiers(column, features, before, after, w_before, w_after, seed, time_limit, max_rows):
        read = [*features, column]
        key = (
            column,
            tuple(features),
            _table_key(before[read], w_before),
            _table_key(after[read], w_after),
            seed,
            time_limit,
            max_rows,
        )
        if key not in known:
            known[key] = computed(column, features, before, after, w_before, w_after, seed, time_limit, max_rows)
        return known[key]

    return module, compare_classifiers


def shared_release_views(monkeypatch) -> None:
    """A release package's report holds the release view, whose classifier is cross-validated
    (about a CPU-second for a delivery here, most of a package's cost); the project tests make
    dozens of packages of the same few releases (each from its own folder, so under another
    source name) and read only their digests, stamps and entries. From here on, the classifier
    of a release view is cross-validated once per process for the same tables and handed again;
    the rest of each view is computed as it is, and its bytes in the report are the same (a
    package's report leaves out the seconds it took)."""
    module, compare_classifiers = _classified_once(_CLASSIFIERS)
    monkeypatch.setattr(module, "compare_classifiers", compare_classifiers)


def known_release_views() -> dict[tuple, object]:
    """The classifiers this process has cross-validated (``shared_release_views``), for the command
    lines it runs in processes of their own (``cli_processes.run_in_processes(views=...)``)."""
    return dict(_CLASSIFIERS)


def use_release_views(known: dict[tuple, object]) -> None:
    """In a process of its own: the classifiers its parent cross-validated are handed for the same
    tables, the others cross-validated once (``shared_release_views``, for the rest of the process)."""
    module, compare_classifiers = _classified_once(dict(known))
    module.compare_classifiers = compare_classifiers
