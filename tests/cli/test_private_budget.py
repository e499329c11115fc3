"""A privacy budget per project (dp.md part 2; contract: ``projects budget``, ``synthesize
--project``, ``audit --json`` ``epsilon``/``delta``): each private release's ε and δ recorded
in the audit log before it measures, a release past the total refused in one sentence with
nothing written, a failed check still spending, a ρ release counted at its ε, and the
schema migrated from version 1 to 2, and the Projects page showing spent / total.

The releases here hold OpenDP's output fixed (``HeldRelease``, the stub of the neighbouring
files test): what is tested is the bookkeeping around OpenDP, not OpenDP, and a real release
would take a minute each on this machine."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from private_cases import HeldRelease
from streamlit.testing.v1 import AppTest

from anonlib.cli import main
from anonlib.core.errors import PrivacyBudgetError
from anonlib.core.samples import load_sample
from anonlib.projects import ProjectState, ProjectStore, budget_of, set_budget, spend_privacy, verify_chain
from anonlib.projects.schema import SCHEMA_VERSION, VERSION_2_COLUMNS
from anonlib.transformations import synthesis
from anonlib.transformations.synthesis import privacy_budget
from anonlib.workflow import WorkingCopy

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


def release(capsys, clinic: Path, name: str, *budget: str) -> tuple[int, str, str]:
    out = clinic.with_name(f"{name}.csv")
    return run(
        capsys, "synthesize", clinic, "--columns", "sex,dx", "--values-from-data", *budget,
        "--out", out, "--package", clinic.with_name(f"{name}.zip"), "--project", "clinic",
    )  # fmt: skip


@pytest.mark.slow
def test_a_budget_of_one_and_a_half_refuses_a_second_one_and_accepts_a_half(clinic, capsys, held):
    code, _, err = release(capsys, clinic, "first", "--epsilon", "1")
    assert code in (0, 1) and "ε = 1, δ = 0 spent" in err and len(held) == 1
    code, out, _ = run(capsys, "projects", "budget", "clinic", "--epsilon", "1.5", "--json")
    assert code == 0 and json.loads(out)["epsilon_left"] == 0.5
    code, _, err = release(capsys, clinic, "second", "--epsilon", "1")
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1] == (
        "error: This release would spend ε = 1 of project clinic's privacy budget, past its total: ε = 1 of 1.5 is "
        "spent and 0.5 is left; choose ε at most 0.5, or raise the total with projects budget clinic --epsilon E."
    )
    assert len(held) == 1  # refused before OpenDP read the records
    assert not clinic.with_name("second.csv").exists() and not clinic.with_name("second.zip").exists()
    code, _, err = release(capsys, clinic, "third", "--epsilon", "0.5")
    assert code in (0, 1) and clinic.with_name("third.zip").exists() and len(held) == 2
    code, out, _ = run(capsys, "audit", "--json")
    entries = json.loads(out)
    assert code == 0 and [e["epsilon"] for e in entries] == [1.0, 0.5] and [e["delta"] for e in entries] == [0, 0]
    assert sum(e["epsilon"] for e in entries) == 1.5
    assert [(e["records"], e["source_name"]) for e in entries] == [(60, "clinic.csv")] * 2
    code, out, _ = run(capsys, "projects", "budget", "clinic")
    assert out.strip() == (
        "privacy budget     clinic: ε = 1.5 of 1.5 spent (0 left) by 2 private releases; δ not capped (0 spent)."
    )
    code, out, _ = run(capsys, "audit")
    assert "private release  ε = 1  δ = 0" in out and "chain              intact" in out


def test_a_failed_check_still_spends_and_a_rho_release_counts_at_its_epsilon(clinic, capsys, held):
    code, _, err = release(capsys, clinic, "rho", "--rho", "0.5", "--delta", "1e-6")
    assert code == 1 and "fails a check" in err  # the held output is nothing like the records
    spent = budget_of(ProjectStore(), "clinic")
    assert spent.epsilon_spent == pytest.approx(privacy_budget(rho=0.5, delta=1e-6).epsilon)
    assert spent.delta_spent == 1e-6 and spent.releases == 1


def test_the_delta_total_refuses_too_and_bad_budgets_are_one_sentence(clinic, capsys, held):
    assert release(capsys, clinic, "first", "--epsilon", "0.1")[0] in (0, 1)  # creates the project
    code, _, err = run(capsys, "projects", "budget", "clinic", "--epsilon", "5", "--delta", "1e-6")
    assert code == 0
    assert release(capsys, clinic, "d1", "--epsilon", "0.1", "--delta", "1e-6")[0] in (0, 1)
    code, _, err = release(capsys, clinic, "d2", "--epsilon", "0.1", "--delta", "1e-6")
    assert code == 2 and "δ = 1e-06 of 1e-06 is spent and 0 is left" in err
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
    set_budget(store, "clinic", epsilon=1.2)
    with pytest.raises(PrivacyBudgetError):
        spend_privacy(store, "clinic", epsilon=0.3, delta=0.0, source_name="x.csv")
    entry = spend_privacy(store, "clinic", epsilon=0.2, delta=0.0, source_name="x.csv", records=3, user="anna")
    assert (entry.epsilon, entry.user, entry.released_sha256) == (0.2, "anna", "")
    assert verify_chain(store) == [] and budget_of(store, "clinic").releases == 2


def test_a_version_1_store_is_migrated_to_the_newest_version(tmp_path):
    url = f"sqlite:///{tmp_path}/projects.sqlite"
    ProjectStore(url)
    with sqlite3.connect(tmp_path / "projects.sqlite") as db:  # as version 1 wrote it: without the new columns
        for table, column in VERSION_2_COLUMNS:
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    store = ProjectStore(url)
    assert store.schema_version == SCHEMA_VERSION >= 2
    with sqlite3.connect(tmp_path / "projects.sqlite") as db:
        for table, column in VERSION_2_COLUMNS:
            assert column in [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_the_projects_page_shows_spent_over_total():
    store = ProjectStore()
    sample = load_sample("caballero_table2b")
    ref = store.create("clinic", ProjectState.of(WorkingCopy.start(sample), "sample:caballero_table2b"))
    store.create("survey", ProjectState.of(WorkingCopy.start(sample), "sample:caballero_table2b"))
    set_budget(store, ref.id, epsilon=1.5)
    spend_privacy(store, ref.id, epsilon=1.0, delta=0.0, source_name="x.csv")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["active_dataset"] = sample
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.switch_page("pages/projects.py").run()
    assert not at.exception
    table = next(d.value for d in at.main.dataframe if "privacy budget (ε spent / total)" in d.value.columns)
    shown = dict(zip(table["project"], table["privacy budget (ε spent / total)"]))
    assert shown["clinic"] == "1 / 1.5" and shown["survey"] == ""
