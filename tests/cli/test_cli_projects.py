"""``projects``, ``audit`` and ``--project`` on ``anonymize`` and ``apply`` (contract.md,
"Projects and audit"): every table or package written is in the audit log with digests
that match the files on disk; bad input is one sentence and exit code 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from project_files import delivery

from anonlib.cli import main

CONTRACT_KEYS = {
    "time",
    "project",
    "source_sha256",
    "released_sha256",
    "package_sha256",
    "target",
    "met",
    "records",
    "suppressed",
    "user",
}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    for month in range(3):
        (tmp_path / f"month{month}.csv").write_bytes(delivery(month))
    return tmp_path


def test_anonymize_and_apply_with_a_project_are_on_record(files, capsys):
    t = files
    code, out, _ = run(
        capsys, "anonymize", t / "month0.csv", "--shield", "age,sex,zip", "--k", "5", "--max-suppressed", "0.1",
        "--out", t / "r0.csv", "--recipe", t / "r0.json", "--package", t / "p0.zip", "--project", "survey",
    )  # fmt: skip
    assert code == 0 and "audit log          entry 1 of project survey" in out
    code, out, _ = run(capsys, "apply", t / "r0.json", t / "month1.csv", "--out", t / "r1.csv", "--project", "survey")
    assert code in (0, 1) and "entry 2 of project survey" in out
    code, out, _ = run(capsys, "audit", "--json")
    entries = json.loads(out)
    assert code == 0 and [e["project"] for e in entries] == ["survey", "survey"]
    assert all(CONTRACT_KEYS <= set(e) for e in entries)
    first, second = entries
    assert first["released_sha256"] == sha(t / "r0.csv") and first["package_sha256"] == sha(t / "p0.zip")
    assert first["source_sha256"] == sha(t / "month0.csv") and first["records"] == 300
    assert second["released_sha256"] == sha(t / "r1.csv") and second["package_sha256"] is None
    assert second["source_sha256"] == sha(t / "month1.csv") and second["source_name"] == "month1.csv"
    assert second["released"] + second["suppressed"] == 300 and second["user"]
    code, out, _ = run(capsys, "projects", "list", "--json")
    listed = json.loads(out)
    assert code == 0 and [(p["name"], p["records"], p["releases"]) for p in listed] == [("survey", 300, 2)]
    code, out, _ = run(capsys, "projects", "show", "survey", "--json")
    shown = json.loads(out)
    assert shown["target"] == "k = 5, at most 10% of records suppressed" and len(shown["audit"]) == 2
    assert [c["role"] for c in shown["columns"]] == ["quasi-identifier"] * 3 + ["ignore"]


def test_json_output_stays_one_document_with_a_project(files, capsys):
    t = files
    code, out, err = run(
        capsys, "anonymize", t / "month0.csv", "--shield", "age,sex", "--keep", "zip", "--k", "3", "--out", t / "r.csv",
        "--project", "p", "--json",
    )  # fmt: skip
    assert "audit log" in err and "audit log" not in out
    assert json.loads(out[out.index("{") :])["k"] >= 3


def test_export_import_delete_and_the_audit_log_after(files, capsys, tmp_path, monkeypatch):
    t = files
    run(capsys, "anonymize", t / "month0.csv", "--shield", "age,sex,zip", "--k", "5", "--max-suppressed", "0.1",
        "--package", t / "p.zip", "--project", "survey")  # fmt: skip
    code, out, _ = run(capsys, "projects", "export", "survey", "--out", t / "survey.zip")
    assert code == 0 and (t / "survey.zip").is_file()
    code, _, err = run(capsys, "projects", "import", t / "survey.zip")
    assert code == 2 and err == "error: There is already a project named 'survey'; choose another name.\n"
    code, out, _ = run(capsys, "projects", "import", t / "survey.zip", "--name", "survey 2")
    assert code == 0 and "imported           survey 2" in out
    code, _, err = run(capsys, "projects", "delete", "survey")
    assert code == 2 and "add --yes to confirm" in err
    assert run(capsys, "projects", "delete", "survey", "--yes")[0] == 0
    code, out, _ = run(capsys, "audit", "--project", "survey")
    assert code == 0 and "survey (project deleted)" in out and "chain              intact" in out
    code, _, err = run(capsys, "projects", "show", "nobody")
    assert code == 2 and err.startswith("error: There is no project named 'nobody'; projects: survey 2")
    # the imported project lives in another store just as well
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path / "other"))
    assert run(capsys, "projects", "import", t / "survey.zip")[0] == 0
    code, out, _ = run(capsys, "projects", "list")
    assert code == 0 and out.splitlines()[1].startswith("survey ")


def test_bad_input_is_one_sentence(files, capsys, monkeypatch, tmp_path):
    t = files
    code, _, err = run(capsys, "projects", "import", t / "month0.csv")
    assert code == 2 and err == "error: This is not a project export (not a readable zip file).\n"
    code, _, err = run(capsys, "anonymize", t / "month0.csv", "--shield", "age", "--k", "2", "--engine", "duckdb",
                       "--out", t / "x.parquet", "--project", "p")  # fmt: skip
    assert code == 2 and "--project records the released table as CSV" in err and not (t / "x.parquet").exists()
    monkeypatch.setenv("ANONLIB_STORE", "mysql://somewhere/db")
    code, _, err = run(capsys, "projects", "list")
    assert code == 2 and err == "error: The project store runs on SQLite or PostgreSQL; ANONLIB_STORE names mysql.\n"
    monkeypatch.delenv("ANONLIB_STORE")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "projects.sqlite").write_bytes(b"garbage" * 2000)
    monkeypatch.setenv("ANONLIB_HOME", str(broken))
    code, _, err = run(capsys, "audit")
    assert (
        code == 2 and "is damaged (it is not a readable database)" in err and "\n" == err[-1] and err.count("\n") == 1
    )


def test_the_store_on_postgresql_from_the_command_line(files, capsys, monkeypatch, postgresql):
    from postgres_server import new_database

    monkeypatch.setenv("ANONLIB_STORE", new_database(postgresql).replace("postgresql+psycopg://", "postgresql://"))
    t = files
    code, out, _ = run(capsys, "anonymize", t / "month0.csv", "--shield", "age,sex,zip", "--k", "5",
                       "--max-suppressed", "0.1", "--out", t / "r.csv", "--project", "team survey")  # fmt: skip
    assert code == 0 and "of project team survey (postgresql://postgres@127.0.0.1" in out
    code, out, _ = run(capsys, "audit", "--json")
    assert [e["released_sha256"] for e in json.loads(out)] == [sha(t / "r.csv")]
