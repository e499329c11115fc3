"""``audit --head`` and ``audit --expect-head HEX`` (contract round 8; dp.md part 4, integrity.md
part 3): the chain's head printed to keep in a second place, and a later check that the log still
extends it. A writer of the SQLite file who removes a spend and rewrites the whole chain (digests
and head recomputed, so ``audit`` alone says "intact") is caught by the head kept elsewhere; and
the smallest total set over a file holds unless its owner raises it (``projects budget
--raise``), the raise an audit entry naming the earlier total."""

from __future__ import annotations

import json
import sqlite3

import pytest

from anonlib.cli import main
from anonlib.projects import ProjectStore, file_budget, set_budget, spend_privacy
from anonlib.projects.chain import GENESIS, entry_of, head_keys
from anonlib.projects.location import sqlite_path
from anonlib.projects.records import dumps
from anonlib.workflow.release import digest

SHA = "ab" * 32


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def spend(store: ProjectStore, epsilon: float, sha: str = SHA) -> None:
    spend_privacy(store, None, epsilon=epsilon, delta=0.0, source_name="panel.csv", source_sha256=sha, user="anna")


def rewrite_without(database, removed: int) -> None:
    """What a writer of the SQLite file can do: drop the triggers, delete an entry, and re-seal every
    entry after it in its project's chain and the project's head, so every chain in the file is
    whole again."""
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        db.execute("DROP TRIGGER audit_no_update")
        db.execute("DROP TRIGGER audit_no_delete")
        db.execute("DELETE FROM audit WHERE id = ?", (removed,))
        heads: dict[int, tuple[str, int, int]] = {}
        rows = [dict(r) for r in db.execute("SELECT * FROM audit ORDER BY id")]
        for number, row in enumerate(rows, start=1):
            previous, count, _ = heads.get(row["project_id"], (GENESIS, 0, 0))
            entry = entry_of({**row, "id": number, "user": row["username"]}, deleted=False)
            sealed = digest(dumps(entry.content() | {"previous": previous}).encode("utf-8"))
            db.execute(
                "UPDATE audit SET id = ?, previous = ?, entry_sha256 = ? WHERE id = ?",
                (number, previous, sealed, row["id"]),
            )
            heads[row["project_id"]] = (sealed, count + 1, number)
        for project, (sealed, count, last) in heads.items():
            for key, value in zip(head_keys(project), (sealed, str(count), str(last))):
                db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))


def test_the_head_kept_elsewhere_catches_a_spend_undone_by_a_writer_of_the_file(capsys):
    store = ProjectStore()
    for epsilon in (1.0, 2.0):
        spend(store, epsilon)
    code, out, err = run(capsys, "audit", "--head")
    kept = out.strip()
    assert code == 0 and len(kept) == 64 and "audit --expect-head" in err
    spend(store, 3.0)
    code, out, _ = run(capsys, "audit", "--expect-head", kept.upper())  # any case
    assert code == 0 and out.strip() == (
        f"head kept          The audit log extends the head kept ({kept[:16]}…, entry 2): 1 entry written after it, "
        "the chain intact."
    )
    code, out, _ = run(capsys, "audit", "--expect-head", kept, "--json")
    assert code == 0 and json.loads(out) == {
        "expected": kept,
        "extends": True,
        "entry": 2,
        "entries_after": 1,
        "problem": None,
    }
    assert file_budget(store, SHA).epsilon_spent == 6.0
    rewrite_without(sqlite_path(store.url), removed=2)  # the ε = 2 spend undone, the chain re-sealed
    assert file_budget(ProjectStore(), SHA).epsilon_spent == 4.0
    code, out, _ = run(capsys, "audit")
    assert code == 0 and "chain              intact (2 entries" in out  # the file alone cannot tell
    code, out, _ = run(capsys, "audit", "--expect-head", kept)
    assert code == 1 and out.strip() == (
        f"BROKEN             The audit log does not extend the head kept ({kept[:16]}…): it was not the log's head "
        "after any of its 2 entries, so entries were removed or the chain was rewritten since the head was kept."
    )
    code, out, _ = run(capsys, "audit", "--expect-head", kept, "--json")
    assert code == 1 and json.loads(out)["extends"] is False


def test_head_of_a_broken_chain_and_bad_digests(capsys):
    store = ProjectStore()
    code, out, _ = run(capsys, "audit", "--head")
    assert code == 0 and out.strip() == GENESIS  # the empty log's head: every log extends it
    spend(store, 1.0)
    assert run(capsys, "audit", "--expect-head", GENESIS)[0] == 0
    code, out, _ = run(capsys, "audit", "--head", "--json")
    head = json.loads(out)
    assert code == 0 and (head["entries"], head["last_entry"], len(head["sha256"])) == (1, 1, 64)
    for bad in ("abc", "g" * 64, "ab" * 33, "", "²" * 64):
        code, out, err = run(capsys, "audit", "--expect-head", bad)
        assert code == 2 and out == "" and err.startswith("error: --expect-head takes the 64 hexadecimal digits")
        assert len(err.strip().splitlines()) == 1
    assert run(capsys, "audit", "--head", "--expect-head", GENESIS)[0] == 2
    with sqlite3.connect(sqlite_path(store.url)) as db:
        db.execute("DROP TRIGGER audit_no_update")
        db.execute("UPDATE audit SET epsilon = 0.01")
    code, out, err = run(capsys, "audit", "--head")
    assert code == 1 and out == "" and "Audit entry 1 was changed" in err and "no head worth keeping" in err
    code, out, _ = run(capsys, "audit", "--expect-head", head["sha256"])
    assert code == 1 and "Audit entry 1 was changed after it was written" in out and "cannot extend" in out


def test_the_smallest_total_holds_unless_its_owner_raises_it(capsys, tmp_path):
    panel = tmp_path / "panel.csv"
    panel.write_text("id,year\n1,2000\n")
    sha = digest(panel.read_bytes())
    store = ProjectStore()
    set_budget(store, sha256=sha, source_name="panel.csv", epsilon=2.0)
    assert set_budget(store, sha256=sha, source_name="panel.csv", epsilon=1.5).epsilon_total == 1.5  # lowering
    spend(store, 1.0, sha)
    # another project (or anyone) setting a larger total: refused, nothing recorded, the smallest holds
    code, _, err = run(capsys, "projects", "budget", "--file", panel, "--epsilon", "10")
    assert code == 2 and err.strip() == (
        "error: The privacy budget of panel.csv keeps the smallest total set over it (ε = 1.5, δ = 1e-05); a larger "
        "total is set only by raising it on purpose: projects budget --file panel.csv --epsilon 10 --raise (an audit "
        "entry naming the earlier total)."
    )
    code, _, err = run(capsys, "projects", "budget", "--file", panel, "--epsilon", "1.5", "--delta", "1e-4")
    assert code == 2 and "--delta 0.0001 --raise" in err  # a larger δ alone is a raise too
    assert file_budget(store, sha).epsilon_total == 1.5
    code, out, _ = run(capsys, "projects", "budget", "--file", panel, "--epsilon", "4", "--raise", "--json")
    assert code == 0 and (json.loads(out)["epsilon_total"], json.loads(out)["epsilon_left"]) == (4.0, 3.0)
    code, out, _ = run(capsys, "audit", "--json")
    raised = json.loads(out)[-1]
    assert raised["total_raised"] is True and raised["total_epsilon"] == 4.0
    assert raised["target"] == "privacy budget of the file raised: ε = 4, δ = 1e-05 (was ε = 1.5, δ = 1e-05)"
    # after the raise the smallest set since it holds again
    set_budget(store, sha256=sha, source_name="panel.csv", epsilon=3.0)
    with pytest.raises(Exception, match="keeps the smallest total set over it"):
        set_budget(store, sha256=sha, source_name="panel.csv", epsilon=3.5)
    assert file_budget(store, sha).epsilon_total == 3.0
    code, _, err = run(capsys, "projects", "budget", "--file", panel, "--raise")
    assert code == 2 and "give the new total" in err
