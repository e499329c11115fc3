"""``verify`` of pseudonymized releases: with ``--key-file`` or ``--project``
the pseudonym and date-shift steps are replayed under the key, so re-applying the
recipe to the source gives ``released.csv`` byte for byte; a wrong key or no key fails
the source check (exit 1, the part named); the key is never printed; and the Projects
page's "Verify again" replays them under the project's key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from anonlib.__main__ import main
from anonlib.projects import ProjectStore, audit_entries, verify_entry
from anonlib.workflow import verify_package
from tests.health_data import visits

ROOT = Path(__file__).resolve().parents[2]
KEY, OTHER = "0f" * 32, "a5" * 32
KEYED = [
    "--shield", "age,sex,zip", "--k", "2", "--role", "mrn=person", "--pseudonymize", "mrn",
    "--shift-dates", "visit_date,discharge_date", "--shift-days", "60", "--max-suppressed", "0.6",
]  # fmt: skip


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def released(tmp_path, monkeypatch, capsys) -> Path:
    """``anonymize --pseudonymize --shift-dates --person --key-file --project`` writing a package."""
    monkeypatch.chdir(tmp_path)
    visits(11, 150, names=True).to_csv("visits.csv", index=False)
    Path("project.key").write_text(KEY + "\n")
    Path("project.key").chmod(0o600)  # a key file is its owner's only
    Path("other.key").write_text(OTHER + "\n")
    Path("other.key").chmod(0o600)  # a key file is its owner's only
    code, _, err = _run(
        ["anonymize", "visits.csv", *KEYED, "--key-file", "project.key", "--project", "study",
         "--out", "out.csv", "--package", "release.zip"], capsys)  # fmt: skip
    assert code == 0, err
    return tmp_path


def test_verify_with_the_key_file_or_the_project_passes_byte_for_byte(released, capsys):
    code, out, err = _run(["verify", "release.zip", "visits.csv", "--key-file", "project.key"], capsys)
    assert code == 0, out + err
    # ten checks and the package's own statement of its audit entry (audit.json)
    assert "source gives released.csv byte for byte" in out and "all 11 checks passed" in out
    assert KEY not in out + err
    code, out, err = _run(["verify", "release.zip", "visits.csv", "--project", "study", "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["passed"] and result["failed_parts"] == [], out + err
    assert {"part": "audit log", "passed": True, "sentence": "the project's audit log records this package"} in (
        result["checks"]
    )
    assert result["key_id"] == "9b68d49b" and KEY not in out + err  # the key's id only
    source = next(c for c in result["checks"] if c["part"] == "source")
    assert source["passed"] and "byte for byte" in source["sentence"]


def test_verify_without_the_key_or_with_another_key_fails_the_source(released, capsys):
    code, out, _ = _run(["verify", "release.zip", "visits.csv", "--key-file", "other.key", "--json"], capsys)
    result = json.loads(out)
    assert code == 1 and result["failed_parts"] == ["source"]
    sentence = next(c["sentence"] for c in result["checks"] if c["part"] == "source")
    assert "made with the key 9b68d49b" in sentence and OTHER not in out
    code, out, _ = _run(["verify", "release.zip", "visits.csv"], capsys)
    assert code == 1 and "FAILED source" in out and "--key-file FILE or --project NAME" in out
    assert "checks failed: source" in out
    # the target and digests do not need the key: without the source every check passes
    assert _run(["verify", "release.zip", "--key-file", "project.key"], capsys)[0] == 0


def test_key_file_and_project_are_one_or_the_other_and_bad_keys_are_one_sentence(released, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["verify", "release.zip", "visits.csv", "--key-file", "project.key", "--project", "study"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "not allowed with" in err
    for argv, words in (
        (["--key-file", "missing.key"], "does not exist"),
        (["--key-file", "visits.csv"], "not a project key"),
        (["--project", "nobody"], "no project named 'nobody'"),
    ):
        code, out, err = _run(["verify", "release.zip", "visits.csv", *argv], capsys)
        assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1 and words in err, err
    assert not Path("missing.key").exists()  # verify reads a key file, never creates one


def test_a_project_made_with_a_key_file_keeps_that_key(released, capsys):
    """``anonymize --key-file F --project NEW`` creates the project with F's key (it was given a new
    random one, so the project could not verify its own release); another key file for an
    existing project is refused in one sentence."""
    store = ProjectStore()
    assert store.key(store.summary("study").ref) == bytes.fromhex(KEY)
    code, out, err = _run(
        ["anonymize", "visits.csv", *KEYED, "--key-file", "other.key", "--project", "study", "--out", "o2.csv"], capsys
    )
    assert code == 2 and not Path("o2.csv").exists() and "is not the key of the project" in err and OTHER not in err


def test_verify_entry_replays_the_keyed_steps_under_the_projects_key(released):
    store = ProjectStore()
    (entry,) = audit_entries(store)
    result = verify_entry(store, entry.id)
    assert result.passed, [c for c in result.checks if not c.passed]
    assert any(c.part == "source" and "byte for byte" in c.sentence for c in result.checks)
    package = (released / "release.zip").read_bytes()
    assert not verify_package(package, released / "visits.csv").passed  # the key is what makes it pass


def test_the_projects_page_verify_again_passes_on_a_pseudonymized_release(released):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/projects.py").run()
    assert not at.exception
    at.button(key="audit_verify").click().run()
    assert not at.exception
    checks = next(d.value for d in at.main.dataframe if "check" in d.value.columns)
    assert set(checks["result"]) == {"ok"}, checks.to_dict("records")
    source = checks[checks["part"] == "source"]["check"].tolist()
    assert source and "byte for byte" in source[0]
    assert "Every check passed." in [s.value for s in at.success]


def test_verify_again_on_a_dashboard_release_with_pseudonyms_and_date_shifts(tmp_path):
    """The dashboard's path: a project made from an upload, its steps made under the project's key,
    its package recorded with the file kept; "Verify again" (verify_entry) replays them under it."""
    from anonlib.core.dataset import Dataset
    from anonlib.core.loading import load_table
    from anonlib.projects import ProjectState, record_package
    from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    from anonlib.workflow.health_steps import PseudonymizeStep, ShiftDatesStep
    from anonlib.workflow.recipe import Reading

    data = visits(5, 40).to_csv(index=False).encode()
    table = load_table(data, name="visits.csv")
    roles = {"mrn": "person", "visit_date": "keep", "discharge_date": "keep", "age": "quasi-identifier"}
    loaded = Dataset.from_frame("visits.csv", table.frame, roles)
    store = ProjectStore()
    ref = store.create("clinic", ProjectState.of(WorkingCopy.start(loaded, ReleaseTarget(k=1)), "upload:visits.csv"),
                       data)  # fmt: skip
    key = store.key(ref)  # the project's own key, as the dashboard uses it
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=1), reading=Reading.of(table, data))
    copy = copy.apply(PseudonymizeStep.made("mrn", key), "Dataset")
    copy = copy.apply(ShiftDatesStep.made(("visit_date", "discharge_date"), "mrn", key), "Dataset")
    package = release_package(copy)
    entry = record_package(store, ref, package, source=data)
    result = verify_entry(store, entry.id)
    assert result.passed, [c for c in result.checks if not c.passed]
    source = [c for c in result.checks if c.part == "source"]
    assert source and source[-1].passed and "byte for byte" in source[-1].sentence
    (tmp_path / "visits.csv").write_bytes(data)
    (tmp_path / "release.zip").write_bytes(package)  # the package the log records (a new one states another time)
    assert main(["verify", str(tmp_path / "release.zip"), str(tmp_path / "visits.csv"), "--project", "clinic"]) == 0


def test_verify_project_names_a_package_its_audit_log_does_not_record(released, capsys):
    """``verify --project`` checks the package against the project's audit log: a package of
    another project (or one newer than the log's head) fails the 'audit log' part."""
    code, _, err = _run(
        ["anonymize", "visits.csv", *KEYED, "--key-file", "other.key", "--project", "other",
         "--out", "o2.csv", "--package", "other.zip"], capsys)  # fmt: skip
    assert code == 0, err
    code, out, _ = _run(["verify", "release.zip", "--project", "other", "--json"], capsys)
    result = json.loads(out)
    assert code == 1 and result["failed_parts"] == ["audit log"], out
    assert _run(["verify", "other.zip", "--project", "other"], capsys)[0] == 0
