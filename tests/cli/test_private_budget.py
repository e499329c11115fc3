"""A privacy budget that belongs to the data (dp.md parts 2 and 3; contract: ``projects budget``,
``synthesize --project``, ``audit --json`` ``epsilon``/``delta``): each private release's ε and δ
recorded in the audit log before it measures, against the SHA-256 of the file it reads, summed
over every project of the store; a release past the file's total refused in one sentence with
nothing written. Every way around it the audit found is tried here and refused: a new project over
the same file, a total raised behind the log's back, a project deleted and made again, an older
audit entry edited, a release without ``--project`` (the file's default budget), and no store to
record the spend. A change of a total is an audit entry; the schema is migrated to version 4.

The releases here hold OpenDP's output fixed (``HeldRelease``): what is tested is the bookkeeping
around OpenDP, not OpenDP, and a real release would take a minute each on this machine."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from private_cases import HeldRelease
from streamlit.testing.v1 import AppTest

from anonlib.cli import main
from anonlib.core.samples import load_sample
from anonlib.projects import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    ProjectState,
    ProjectStore,
    audit_entries,
    budget_of,
    file_budget,
    set_budget,
    spend_privacy,
    verify_chain,
)
from anonlib.projects.location import sqlite_path
from anonlib.projects.schema import SCHEMA_VERSION, VERSION_2_COLUMNS, VERSION_4_COLUMNS, VERSION_5_COLUMNS
from anonlib.transformations import synthesis
from anonlib.transformations.synthesis import privacy_budget
from anonlib.workflow import WorkingCopy
from anonlib.workflow.release import digest

ROWS = "".join(f"{'FM'[i % 2]},{'abc'[i % 3]},{20 + i % 50}\n" for i in range(60))

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def held(monkeypatch):
    """OpenDP's release held fixed; the number of times it was asked for."""
    calls = []

    def release(data, plan, keys, *args, **kwargs):
        calls.append(len(data))
        return HeldRelease(plan, keys)

    monkeypatch.setattr(synthesis, "opendp_release", release)
    monkeypatch.setattr(synthesis, "_fresh_rng", lambda: np.random.default_rng(0))
    return calls


@pytest.fixture
def clinic(tmp_path) -> Path:
    path = tmp_path / "clinic.csv"
    path.write_text("sex,dx,age\n" + ROWS)
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def release(capsys, clinic: Path, name: str, *options: str, project: str | None = "clinic") -> tuple[int, str, str]:
    out = clinic.with_name(f"{name}.csv")
    where = ("--project", project) if project else ()
    return run(
        capsys, "synthesize", clinic, "--columns", "sex,dx", "--values-from-data", *options,
        "--out", out, "--package", clinic.with_name(f"{name}.zip"), *where,
    )  # fmt: skip


def refused(attempt, clinic: Path, name: str, held: list, before: int, words: str) -> str:
    """A refusal of ``attempt()``: exit 2, one sentence, OpenDP never asked, nothing written (no file,
    no audit entry)."""
    logged = len(entries()) if store_usable() else None
    code, out, err = attempt()
    if logged is not None:
        assert len(entries()) == logged
    lines = err.strip().splitlines()
    assert code == 2 and len(held) == before, err
    assert lines[-1].startswith("error: ") and words in lines[-1] and lines[-1].endswith("."), lines
    assert not clinic.with_name(f"{name}.csv").exists() and not clinic.with_name(f"{name}.zip").exists()
    return lines[-1]


def entries() -> list:
    return audit_entries(ProjectStore())


def store_usable() -> bool:
    try:
        ProjectStore()
    except Exception:  # noqa: BLE001 - the test of a store that cannot be used
        return False
    return True


def test_a_total_of_one_and_a_half_refuses_a_second_one_and_accepts_a_half(clinic, capsys, held):
    code, _, err = release(capsys, clinic, "first", "--epsilon", "1")
    assert code in (0, 1) and "ε = 1, δ = 0 spent" in err and len(held) == 1
    code, out, _ = run(capsys, "projects", "budget", "clinic", "--epsilon", "1.5", "--json")
    assert code == 0 and json.loads(out)["epsilon_left"] == 0.5 and json.loads(out)["default"] is False
    line = refused(
        lambda: release(capsys, clinic, "second", "--epsilon", "1"), clinic, "second", held, 1, "past its total"
    )
    assert line == (
        "error: This release would spend ε = 1 of the privacy budget of clinic.csv, past its total: ε = 1 of 1.5 is "
        "spent and 0.5 is left; choose ε at most 0.5, or raise the total with projects budget --file clinic.csv "
        "--epsilon E."
    )
    code, _, _ = release(capsys, clinic, "third", "--epsilon", "0.5")
    assert code in (0, 1) and clinic.with_name("third.zip").exists() and len(held) == 2
    code, out, _ = run(capsys, "audit", "--json")
    listed = json.loads(out)
    spends = [e for e in listed if e["epsilon"] is not None]
    assert code == 0 and [e["epsilon"] for e in spends] == [1.0, 0.5] and [e["delta"] for e in spends] == [0, 0]
    assert [(e["records"], e["source_name"], e["source_sha256"]) for e in spends] == [
        (60, "clinic.csv", digest(clinic.read_bytes()))
    ] * 2
    (total,) = [e for e in listed if e["total_epsilon"] is not None]  # the change of total is on record
    assert (total["total_epsilon"], total["total_delta"], total["project"]) == (1.5, DEFAULT_DELTA, "clinic")
    code, out, _ = run(capsys, "projects", "budget", "clinic")
    assert out.strip() == (
        "privacy budget     clinic.csv: ε = 1.5 of 1.5 spent (0 left) by 2 private releases; δ = 0 of 1e-05 spent."
    )
    code, out, _ = run(capsys, "audit")
    assert "private release  ε = 1  δ = 0" in out and "privacy budget set  ε = 1.5" in out
    assert "chain              intact" in out


def test_a_new_project_over_the_same_file_shares_its_budget(clinic, capsys, held):
    assert release(capsys, clinic, "first", "--epsilon", "1")[0] in (0, 1)
    run(capsys, "projects", "budget", "clinic", "--epsilon", "1.5")
    copy = clinic.with_name("copy-of-clinic.csv")  # the same bytes under another name: the same data
    copy.write_bytes(clinic.read_bytes())
    refused(
        lambda: release(capsys, copy, "other", "--epsilon", "1", project="another name"), copy, "other", held, 1, "past"
    )
    assert [p.name for p in ProjectStore().summaries()] == ["clinic"]  # refused before the project was made
    # its budget is the file's: shown the same under either project, and set through either
    code, out, _ = run(capsys, "projects", "budget", "--file", copy, "--json")
    assert json.loads(out)["epsilon_spent"] == 1.0 and json.loads(out)["projects"] == ["clinic"]


def test_a_total_raised_behind_the_logs_back_changes_nothing(clinic, capsys, held):
    """The total is read from the audit log only: a version-2 project column raised in the database
    is at most a ceiling, and a total entry edited in the database breaks the chain."""
    assert release(capsys, clinic, "first", "--epsilon", "1")[0] in (0, 1)
    run(capsys, "projects", "budget", "clinic", "--epsilon", "1.5")
    database = sqlite_path(ProjectStore().url)
    with sqlite3.connect(database) as db:
        db.execute("UPDATE projects SET budget_epsilon = 100, budget_delta = 1")
    refused(
        lambda: release(capsys, clinic, "second", "--epsilon", "1"), clinic, "second", held, 1, "ε = 1 of 1.5 is spent"
    )
    with sqlite3.connect(database) as db:
        db.execute("DROP TRIGGER audit_no_update")
        db.execute("UPDATE audit SET total_epsilon = 100 WHERE total_epsilon IS NOT NULL")
    count = len(entries())
    line = refused(
        lambda: release(capsys, clinic, "third", "--epsilon", "1"), clinic, "third", held, 1, "fails its check"
    )
    assert line == (
        "error: Audit entry 2 was changed after it was written (its digest does not match); no private release is "
        "made, and no budget changed, while the audit log fails its check."
    )
    assert len(entries()) == count
    code, _, err = run(capsys, "projects", "budget", "clinic", "--epsilon", "200")  # nor can a total be set
    assert code == 2 and "fails its check" in err and len(entries()) == count


def test_deleting_and_making_a_project_again_returns_no_spend(clinic, capsys, held):
    assert release(capsys, clinic, "first", "--epsilon", "1")[0] in (0, 1)
    run(capsys, "projects", "budget", "clinic", "--epsilon", "1.5")
    assert run(capsys, "projects", "delete", "clinic", "--yes")[0] == 0
    refused(
        lambda: release(capsys, clinic, "again", "--epsilon", "1"), clinic, "again", held, 1, "ε = 1 of 1.5 is spent"
    )
    code, out, _ = run(capsys, "audit", "--project", "clinic", "--json")
    assert [e["epsilon"] for e in json.loads(out) if e["epsilon"] is not None] == [1.0]
    assert all(e["project_deleted"] for e in json.loads(out))


def test_an_older_entry_edited_refuses_every_private_release(clinic, capsys, held):
    """Only the log's head was checked before spending: an edit of an older entry went through."""
    for name in ("a", "b", "c"):
        assert release(capsys, clinic, name, "--epsilon", "1")[0] in (0, 1)
    with sqlite3.connect(sqlite_path(ProjectStore().url)) as db:
        db.execute("DROP TRIGGER audit_no_update")
        db.execute("UPDATE audit SET epsilon = 0.01 WHERE id = 1")  # cheaper in hindsight
    line = refused(lambda: release(capsys, clinic, "d", "--epsilon", "1"), clinic, "d", held, 3, "Audit entry 1")
    assert "no private release is made" in line and len(entries()) == 3


def test_without_project_the_file_spends_its_default_budget(clinic, capsys, held):
    for name in ("a", "b", "c"):
        code, _, err = release(capsys, clinic, name, "--epsilon", "3", project=None)
        assert code in (0, 1) and "(no project)" in err
    line = refused(
        lambda: release(capsys, clinic, "d", "--epsilon", "3", project=None), clinic, "d", held, 3, "9 of 10"
    )
    assert "raise the total with projects budget --file clinic.csv --epsilon E" in line
    assert file_budget(ProjectStore(), digest(clinic.read_bytes())).default
    assert (DEFAULT_EPSILON, DEFAULT_DELTA) == (10.0, 1e-5)
    code, out, _ = run(capsys, "projects", "budget", "--file", clinic, "--epsilon", "12")  # settable, on record
    assert code == 0 and "ε = 9 of 12 spent (3 left)" in out
    assert release(capsys, clinic, "d", "--epsilon", "3", project=None)[0] in (0, 1)
    code, out, _ = run(capsys, "audit")
    assert "(no project)  private release  ε = 3" in out and "(no project)  privacy budget set  ε = 12" in out


def test_no_store_to_record_the_spend_refuses_the_release(clinic, capsys, held, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the store's folder should be")
    monkeypatch.setenv("ANONLIB_HOME", str(blocked / "home"))
    line = refused(
        lambda: release(capsys, clinic, "a", "--epsilon", "1", project=None), clinic, "a", held, 0, "recorded"
    )
    assert line.startswith("error: No private release is made while its spend cannot be recorded (")


def test_a_rho_release_counts_at_its_stated_epsilon_and_delta_totals_refuse(clinic, capsys, held):
    code, _, err = release(capsys, clinic, "rho", "--rho", "0.5", "--delta", "1e-7")
    assert code == 1 and "fails a check" in err  # the held output is nothing like the records
    spent = budget_of(ProjectStore(), "clinic")
    assert spent.epsilon_spent == privacy_budget(rho=0.5, delta=1e-7).epsilon
    assert spent.delta_spent == 1e-7 and spent.releases == 1
    assert run(capsys, "projects", "budget", "clinic", "--epsilon", "50", "--delta", "1.5e-7")[0] == 0
    refused(
        lambda: release(capsys, clinic, "d2", "--epsilon", "0.1", "--delta", "1e-7"),
        clinic,
        "d2",
        held,
        1,
        "δ = 1e-07 of",
    )
    for argv, words in [
        (("--epsilon", "0"), "must be a positive number"),
        (("--delta", "1e-6"), "Give the total ε"),
    ]:
        code, _, err = run(capsys, "projects", "budget", "clinic", *argv)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "projects", "budget", "nobody", "--epsilon", "1")
    assert code == 2 and "nobody" in err


def test_spending_is_chained_and_refusing_records_nothing(clinic, capsys, held):
    assert release(capsys, clinic, "first", "--epsilon", "1")[0] in (0, 1)
    store = ProjectStore()
    sha = digest(clinic.read_bytes())
    set_budget(store, "clinic", epsilon=1.2)
    assert set_budget(store, "clinic", epsilon=1.2).epsilon_total == 1.2 and len(entries()) == 2  # unchanged: no entry
    with pytest.raises(Exception, match="past its total"):
        spend_privacy(store, "clinic", epsilon=0.3, delta=0.0, source_name="clinic.csv", source_sha256=sha)
    entry = spend_privacy(
        store, None, epsilon=0.2, delta=0.0, source_name="clinic.csv", source_sha256=sha, records=3, user="anna"
    )
    assert (entry.epsilon, entry.user, entry.released_sha256, entry.project) == (0.2, "anna", "", "")
    assert verify_chain(store) == [] and budget_of(store, "clinic").releases == 2


def test_a_version_2_store_is_migrated_to_the_newest_version_and_its_total_is_a_ceiling(tmp_path):
    url = f"sqlite:///{tmp_path}/projects.sqlite"
    store = ProjectStore(url)
    sample = load_sample("caballero_table2b")
    ref = store.create("clinic", ProjectState.of(WorkingCopy.start(sample), "sample:caballero_table2b"))
    with sqlite3.connect(tmp_path / "projects.sqlite") as db:  # as version 2 wrote it: a total on the project
        for table, column in VERSION_4_COLUMNS:  # (version 3's released tables stay: a column with a foreign key)
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("UPDATE projects SET budget_epsilon = 2, budget_delta = 1e-6")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    store = ProjectStore(url)
    assert store.schema_version == SCHEMA_VERSION == 5
    held = budget_of(store, ref.id)
    assert (held.epsilon_total, held.delta_total, held.default) == (2.0, 1e-6, False)
    with sqlite3.connect(tmp_path / "projects.sqlite") as db:
        for table, column in VERSION_2_COLUMNS + VERSION_4_COLUMNS + (("releases", "table_blob"),):
            assert column in [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("5",)


def test_a_version_4_store_is_migrated_to_version_5_its_entries_and_totals_kept(tmp_path):
    url = f"sqlite:///{tmp_path}/projects.sqlite"
    store = ProjectStore(url)
    sha = "cd" * 32
    set_budget(store, sha256=sha, source_name="panel.csv", epsilon=3.0)
    spend_privacy(store, None, epsilon=1.0, delta=0.0, source_name="panel.csv", source_sha256=sha)
    with sqlite3.connect(tmp_path / "projects.sqlite") as db:  # as version 4 wrote it
        for table, column in VERSION_5_COLUMNS:
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("DROP TABLE fingerprints")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    store = ProjectStore(url)
    assert store.schema_version == SCHEMA_VERSION == 5 and verify_chain(store) == []  # old digests hold
    budget = file_budget(store, sha)
    assert (budget.epsilon_total, budget.epsilon_spent, budget.releases) == (3.0, 1.0, 1)
    with sqlite3.connect(tmp_path / "projects.sqlite") as db:
        for table, column in VERSION_5_COLUMNS:
            assert column in [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        assert [r[1] for r in db.execute("PRAGMA table_info(fingerprints)")][:3] == [
            "audit_id",
            "source_sha256",
            "source_name",
        ]
    with pytest.raises(Exception, match="keeps the smallest total"):  # the migrated store reads raises
        set_budget(store, sha256=sha, source_name="panel.csv", epsilon=5.0)
    assert set_budget(store, sha256=sha, source_name="panel.csv", epsilon=5.0, raise_total=True).epsilon_left == 4.0


def test_the_projects_page_shows_the_files_spent_over_total():
    store = ProjectStore()
    sample = load_sample("caballero_table2b")
    ref = store.create("clinic", ProjectState.of(WorkingCopy.start(sample), "sample:caballero_table2b"))
    store.create("survey", ProjectState.of(WorkingCopy.start(sample), "sample:caballero_table2b"))
    other = load_sample("caballero_table3")
    store.create("other", ProjectState.of(WorkingCopy.start(other), "sample:caballero_table3"))
    set_budget(store, ref.id, epsilon=1.5)
    sha = budget_of(store, ref.id).sha256
    spend_privacy(store, ref.id, epsilon=1.0, delta=0.0, source_name="x.csv", source_sha256=sha)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["active_dataset"] = sample
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.switch_page("pages/projects.py").run()
    assert not at.exception
    column = "privacy budget of its file (ε spent / total)"
    table = next(d.value for d in at.main.dataframe if column in d.value.columns)
    shown = dict(zip(table["project"], table[column]))
    assert shown == {"clinic": "1 / 1.5", "survey": "1 / 1.5", "other": "0 / 10 (default)"}
