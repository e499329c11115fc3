"""A package that states what it is, and an edited recipe that cannot pass silently.

- the recipe carries the SHA-256 of its own canonical content; an edit shows;
- ``apply`` refuses an edited recipe, or a recipe without digest, in one sentence
  (exit 2) unless ``--accept-edited``, which the output, the JSON and the package say;
- the package's README and report state the SHA-256 of ``released.csv`` and
  ``recipe.json`` (recomputed here with hashlib), the source's SHA-256, records and
  name, the target, the steps, the product version and the time;
- ``verify`` passes on packages made by the app's code path and by the command line,
  and fails naming the part after any byte of ``released.csv``, ``recipe.json`` or
  ``report.html`` changes (hypothesis flips random bytes); its target recount agrees
  with classes counted by hand on the released CSV."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import tomllib
import zipfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import PackageError, RecipeError
from anonlib.core.loading import load_table
from anonlib.core.samples import load_sample
from anonlib.core.version import PRODUCT, SOURCE_VERSION
from anonlib.workflow import (
    BandsStep,
    GeneralizationStep,
    Reading,
    Recipe,
    ReleaseTarget,
    SuppressionStep,
    WorkingCopy,
    release_package,
    verify_package,
)
from anonlib.workflow.recipe import DIGEST_FIELD, EDITED, INTACT, NO_DIGEST
from anonlib.workflow.report import build_report

ROOT = Path(__file__).resolve().parents[2]
CREATED = "2026-03-04T05:06:07Z"
FLIPPABLE = ("released.csv", "recipe.json", "report.html")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def one_sentence(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err[len("error: ") :].strip()


def adult_csv(rows: int = 800) -> bytes:
    frame = load_sample("adult").frame.head(rows)[["age", "sex", "race", "native-country", "occupation", "income"]]
    return frame.to_csv(index=False).encode()


def app_copy(data: bytes, name: str = "patients.csv") -> WorkingCopy:
    """A working copy as the app makes it: an upload read by ``load_table``, roles, a
    target, bands, a generalization and a suppression step."""
    table = load_table(data, name=name)
    loaded = Dataset.from_frame(
        name,
        table.frame,
        {
            "age": "quasi-identifier",
            "sex": "quasi-identifier",
            "native-country": "quasi-identifier",
            "race": "ignore",
            "occupation": "sensitive",
            "income": "ignore",
        },
    )
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=5, max_suppressed=0.05), reading=Reading.of(table, data))
    copy = copy.apply(BandsStep("age", 10, 7, 17, 90, True), "Individual privacy")
    h = default_hierarchy(loaded.frame["native-country"], "native-country")[1]
    top = h.shape[1] - 1  # native-country to its top level (*), so the release meets the target
    copy = copy.apply(GeneralizationStep((("native-country", top),), (("native-country", h),), "iab", 5), "Leakage")
    return copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")


@pytest.fixture(scope="module")
def app_package() -> tuple[bytes, bytes, WorkingCopy]:
    data = adult_csv()
    copy = app_copy(data)
    return release_package(copy, created=CREATED), data, copy


def members(package: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(package))
    return {name: archive.read(name) for name in archive.namelist()}


def rezip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# ------------------------------------------------------------------ the recipe's digest


def test_the_recipe_digest_is_the_sha256_of_its_canonical_content(app_package):
    text = members(app_package[0])["recipe.json"]
    data = json.loads(text)
    body = {k: v for k, v in data.items() if k != DIGEST_FIELD}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert data[DIGEST_FIELD] == sha(canonical)
    assert Recipe.loads(text).integrity == INTACT
    # layout is not content: re-indented, keys reordered, still intact
    shuffled = json.dumps(dict(reversed(list(data.items()))), indent=None)
    assert Recipe.loads(shuffled).integrity == INTACT


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["target"].update(k=1),
        lambda d: d["release"].update(records=d["release"]["records"] + 1),
        lambda d: d["steps"].pop(),
        lambda d: d["source"].update(name="other.csv"),
    ],
)
def test_any_edit_of_the_recipe_shows(app_package, edit):
    data = json.loads(members(app_package[0])["recipe.json"])
    edit(data)
    recipe = Recipe.loads(json.dumps(data))
    assert recipe.integrity == EDITED
    with pytest.raises(RecipeError, match="changed after it was written"):
        recipe.require_intact()
    recipe.require_intact(accept_edited=True)


def test_a_recipe_without_digest_is_unverifiable(app_package):
    data = json.loads(members(app_package[0])["recipe.json"])
    del data[DIGEST_FIELD]
    del data["source"]["reading"]["sha256"], data["release"]["loaded_records"]  # as written before this change
    recipe = Recipe.loads(json.dumps(data))
    assert recipe.integrity == NO_DIGEST and recipe.source.sha256 is None
    with pytest.raises(RecipeError, match="carries no digest"):
        recipe.require_intact()


# ------------------------------------------------------------------ apply and --accept-edited


@pytest.fixture
def cli_release(tmp_path, monkeypatch):
    """``anonymize --out --recipe --package`` on a file, from inside ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.csv").write_bytes(adult_csv(500))
    assert (
        main(
            [
                "anonymize",
                "in.csv",
                "--shield",
                "age,sex,race",
                "--keep",
                "native-country,occupation",
                "--k",
                "3",
                "--out",
                "out.csv",
                "--recipe",
                "recipe.json",
                "--package",
                "release.zip",
            ]
        )
        == 0
    )
    return tmp_path


def test_the_issue_edited_recipe_k3_to_k1_is_refused(cli_release, capsys):
    capsys.readouterr()
    text = (cli_release / "recipe.json").read_text()
    assert '"k": 3' in text
    (cli_release / "edited.json").write_text(text.replace('"k": 3', '"k": 1'))
    source = (cli_release / "in.csv").read_bytes()
    assert main(["apply", "edited.json", "in.csv", "--out", "again.csv"]) == 2
    assert "--accept-edited" in one_sentence(capsys)
    assert not (cli_release / "again.csv").exists() and (cli_release / "in.csv").read_bytes() == source


def test_accept_edited_applies_and_every_output_says_so(cli_release, capsys):
    text = (cli_release / "recipe.json").read_text()
    (cli_release / "edited.json").write_text(text.replace('"k": 3', '"k": 1'))
    capsys.readouterr()
    assert (
        main(["apply", "edited.json", "in.csv", "--out", "again.csv", "--package", "again.zip", "--accept-edited"]) == 0
    )
    printed = capsys.readouterr().out
    assert "recipe             The recipe was changed after it was written" in printed
    files = members((cli_release / "again.zip").read_bytes())
    for part in ("README.txt", "report.html"):
        assert "applied because of --accept-edited" in files[part].decode(), part
    assert main(["apply", "edited.json", "in.csv", "--json", "--accept-edited"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["recipe_digest"] == "edited" and result["accepted_edited"] is True
    assert main(["apply", "recipe.json", "in.csv", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["recipe_digest"] == "intact" and result["accepted_edited"] is False


def test_an_old_recipe_without_digest_needs_accept_edited(cli_release, capsys):
    data = json.loads((cli_release / "recipe.json").read_text())
    del data[DIGEST_FIELD]
    (cli_release / "old.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["apply", "old.json", "in.csv"]) == 2
    assert "carries no digest" in one_sentence(capsys)
    assert main(["apply", "old.json", "in.csv", "--out", "old.csv", "--accept-edited"]) == 0
    assert "carries no digest" in capsys.readouterr().out
    assert (cli_release / "old.csv").read_bytes() == (cli_release / "out.csv").read_bytes()


# ------------------------------------------------------------------ what the package states


def test_the_package_states_digests_source_target_steps_version_and_time(app_package):
    package, data, copy = app_package
    files = members(package)
    assert list(files) == ["released.csv", "report.html", "recipe.json", "README.txt", "SHA256SUMS"]
    readme, report = files["README.txt"].decode(), files["report.html"].decode()
    recipe = Recipe.loads(files["recipe.json"])
    stated = [
        sha(files["released.csv"]),
        sha(files["recipe.json"]),
        sha(data),
        "patients.csv",
        "800",
        copy.target.describe(),
        PRODUCT,
        CREATED,
        *recipe.describe,
    ]
    for text in (readme, report):
        for value in stated:
            assert value in text, value
    assert "Bands" in readme or "bands" in readme
    with open(ROOT / "pyproject.toml", "rb") as file:
        assert tomllib.load(file)["project"]["version"] == SOURCE_VERSION
    sums = dict(reversed(line.split("  ")) for line in files["SHA256SUMS"].decode().splitlines())
    assert sums == {name: sha(files[name]) for name in ("released.csv", "report.html", "recipe.json", "README.txt")}
    assert recipe.source.sha256 == sha(data) and recipe.loaded_records == 800


def test_a_package_is_deterministic_at_a_given_time(app_package):
    package, _, copy = app_package
    assert release_package(copy, created=CREATED) == package
    assert release_package(copy, created="2026-03-04T05:06:08Z") != package


# ------------------------------------------------------------------ verify


def test_verify_passes_on_a_package_made_by_the_app_code_path(app_package, tmp_path, capsys):
    package, data, _ = app_package
    (tmp_path / "release.zip").write_bytes(package)
    (tmp_path / "patients.csv").write_bytes(data)
    result = verify_package(package, data, source_name="patients.csv")
    assert result.passed and [c.part for c in result.checks].count("source") == 1
    assert main(["verify", str(tmp_path / "release.zip"), str(tmp_path / "patients.csv")]) == 0
    printed = capsys.readouterr().out
    assert "all 10 checks passed" in printed and "byte for byte" in printed


def test_verify_passes_on_packages_made_by_the_command_line(cli_release, capsys):
    assert main(["verify", "release.zip", "in.csv"]) == 0
    assert members((cli_release / "release.zip").read_bytes())["released.csv"] == (cli_release / "out.csv").read_bytes()
    assert main(["apply", "recipe.json", "in.csv", "--package", "applied.zip"]) == 0
    assert main(["verify", "applied.zip", "in.csv"]) == 0
    assert main(["verify", "applied.zip"]) == 0
    capsys.readouterr()


def test_verify_reads_locally_suppressed_cells_as_any_value(tmp_path, capsys):
    """A release finished by local suppression meets k only when a * matches any value; the
    package's target recount reads released.csv that way (as the working copy did), and a
    release whose * cells do not make k is still refused."""
    from anonlib.measures.wildcard import marked_codes, wildcard_matches
    from anonlib.workflow.local_steps import LocalSuppressionStep

    data = adult_csv(2000)
    table = load_table(data, name="patients.csv")
    loaded = Dataset.from_frame(
        "patients.csv",
        table.frame,
        {
            "age": "quasi-identifier",
            "sex": "quasi-identifier",
            "native-country": "quasi-identifier",
            "race": "ignore",
            "occupation": "sensitive",
            "income": "ignore",
        },
    )
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=5), reading=Reading.of(table, data))
    copy = copy.apply(BandsStep("age", 10, 7, 17, 90, True), "Individual privacy")
    assert copy.check.failing_records > 0
    copy = copy.apply(LocalSuppressionStep.from_target(copy.target, copy.current), "Sidebar")
    assert copy.check.met
    package = release_package(copy, created=CREATED)
    released = pd.read_csv(io.BytesIO(members(package)["released.csv"]), dtype=str, keep_default_na=False)
    qis = ["age", "sex", "native-country"]
    assert (released[qis] == "*").any(axis=1).sum() > 0
    plain = released.groupby(qis)["occupation"].transform("size")
    assert (plain < 5).any()  # as ordinary values the * cells leave classes below k ...
    assert wildcard_matches(marked_codes(released, qis, "*"), qis).min() >= 5  # ... as any value, none
    result = verify_package(package, data, source_name="patients.csv")
    assert result.passed, result.checks
    (tmp_path / "release.zip").write_bytes(package)
    (tmp_path / "patients.csv").write_bytes(data)
    assert main(["verify", str(tmp_path / "release.zip"), str(tmp_path / "patients.csv")]) == 0
    capsys.readouterr()


def test_verify_names_another_source_and_a_source_that_does_not_reproduce(app_package, tmp_path):
    package, data, _ = app_package
    other = data.replace(b"\n39,", b"\n40,", 1)
    assert other != data
    result = verify_package(package, other)
    assert result.failed_parts == ("source",)
    assert any("not the file the release was made from" in c.sentence for c in result.checks)
    assert any("first difference at byte" in c.sentence for c in result.checks)


def _flipped(files: dict[str, bytes], part: str, flips: list[tuple[int, int]]) -> dict[str, bytes]:
    data = bytearray(files[part])
    for position, mask in flips:
        data[position % len(data)] ^= mask
    return {**files, part: bytes(data)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    part=st.sampled_from(FLIPPABLE),
    flips=st.lists(st.tuples(st.integers(0, 10**7), st.integers(1, 255)), min_size=1, max_size=4),
)
def test_verify_fails_naming_the_part_after_any_byte_changes(app_package, part, flips):
    files = members(app_package[0])
    changed = _flipped(files, part, flips)
    if changed[part] == files[part]:  # two flips of the same byte cancel out
        return
    result = verify_package(rezip(changed))
    assert not result.passed and part in result.failed_parts, result.checks


def _with_sums(files: dict[str, bytes]) -> bytes:
    """The package with SHA256SUMS rewritten to match its members (what a forger would do)."""
    sums = "".join(f"{sha(files[n])}  {n}\n" for n in ("released.csv", "report.html", "recipe.json", "README.txt"))
    return rezip({**files, "SHA256SUMS": sums.encode()})


def test_rewriting_sha256sums_does_not_hide_a_changed_table_recipe_or_swapped_report(app_package):
    """The cross-checks catch a forger who only rewrites SHA256SUMS; one who also rewrites
    the recipe's digest and the statements is not caught: digests are not a signature
    (docs/workflow.md), which the last case shows."""
    files = members(app_package[0])
    table = _flipped(files, "released.csv", [(200, 4)])
    assert verify_package(_with_sums(table)).failed_parts[0] == "released.csv"
    recipe = {**files, "recipe.json": files["recipe.json"].replace(b'"k": 5', b'"k": 2', 1)}
    assert "recipe.json" in verify_package(_with_sums(recipe)).failed_parts
    swapped = {**files, "report.html": build_report_html_of_another_release()}
    assert verify_package(_with_sums(swapped)).failed_parts == ("report.html",)
    reworded = {**files, "report.html": files["report.html"].replace(b"Risk report", b"Risk rapport", 1)}
    assert reworded["report.html"] != files["report.html"] and verify_package(_with_sums(reworded)).passed


def build_report_html_of_another_release() -> bytes:
    ds = Dataset.from_frame("other.csv", pd.DataFrame({"age": [1, 1, 2, 2]}), {"age": "quasi-identifier"})
    return members(release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)), created=CREATED))["report.html"]


def test_verify_cli_exit_codes_and_which_part(app_package, tmp_path, capsys):
    files = members(app_package[0])
    (tmp_path / "bad.zip").write_bytes(rezip(_flipped(files, "released.csv", [(100, 1)])))
    assert main(["verify", str(tmp_path / "bad.zip")]) == 1
    printed = capsys.readouterr().out
    assert "FAILED released.csv" in printed and "checks failed: released.csv" in printed
    missing = {k: v for k, v in files.items() if k != "report.html"}
    (tmp_path / "missing.zip").write_bytes(rezip(missing))
    assert main(["verify", str(tmp_path / "missing.zip"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["failed_parts"] == ["report.html"]
    (tmp_path / "not.zip").write_bytes(b"released.csv")
    for argv, words in (
        (["verify", str(tmp_path / "not.zip")], "not a zip"),
        (["verify", str(tmp_path / "nothing.zip")], "does not exist"),
        (["verify", str(tmp_path / "missing.zip"), str(tmp_path / "nothing.csv")], "does not exist"),
    ):
        assert main(argv) == 2
        assert words in one_sentence(capsys)
    (tmp_path / "empty.zip").write_bytes(rezip({"a.txt": b"x"}))
    with pytest.raises(PackageError, match="not a release package"):
        verify_package(tmp_path / "empty.zip")


def _min_class(released: bytes, quasi_identifiers: list[str]) -> int:
    """The smallest class of the released CSV, counted by hand (the slow reference)."""
    rows = list(csv.DictReader(io.StringIO(released.decode())))
    return min(Counter(tuple(r[q] for q in quasi_identifiers) for r in rows).values())


@settings(max_examples=25, deadline=None)
@given(
    values=st.lists(st.tuples(st.integers(0, 3), st.sampled_from("ab")), min_size=2, max_size=30), k=st.integers(1, 4)
)
def test_the_target_recount_agrees_with_classes_counted_by_hand(values, k):
    frame = pd.DataFrame(values, columns=["age", "sex"])
    ds = Dataset.from_frame("t.csv", frame, {"age": "quasi-identifier", "sex": "quasi-identifier"})
    report = build_report(Dataset.from_frame("tiny", pd.DataFrame({"a": [1, 1]})), k=1)
    package = release_package(WorkingCopy.start(ds, ReleaseTarget(k=k)), report=report, created=CREATED)
    result = verify_package(package)
    target = next(c for c in result.checks if c.part == "target")
    assert target.passed == (_min_class(members(package)["released.csv"], ["age", "sex"]) >= k)
    assert result.passed == target.passed
    assert re.search(r"recounted on released.csv as written", target.sentence)


def test_a_release_counted_in_people_without_its_person_column_is_never_left_without_a_target_line():
    """``released.csv`` holds no person column, so the target is recounted in people on the source's
    replay. When the replay differs from the table (another source), the source fails in its own
    line and the target says it was not recounted; the differing source was once reported only as
    a failed target."""
    frame = pd.DataFrame({"pid": ["p1", "p1", "p2", "p2", "p3", "p4"], "a": [1, 1, 1, 2, 2, 2], "b": ["x"] * 6})
    roles = {"pid": "person", "a": "quasi-identifier", "b": "quasi-identifier"}
    copy = WorkingCopy.start(Dataset.from_frame("t.csv", frame, roles), ReleaseTarget(k=2))
    package = release_package(copy, created="2026-01-01T00:00:00Z")
    assert copy.recipe().columns == ("a", "b")  # the person column is not released
    same = verify_package(package, source=frame.to_csv(index=False).encode())
    assert [(c.part, c.passed) for c in same.checks if c.part in ("source", "target")] == [
        ("source", True),
        ("target", True),
    ]
    other = frame.assign(b=["x"] * 5 + ["y"]).to_csv(index=False).encode()
    checks = verify_package(package, source=other).checks
    lines = {c.part: c for c in checks if c.part in ("source", "target")}
    assert not lines["source"].passed and "different released.csv" in lines["source"].sentence
    assert not lines["target"].passed and "was not recounted in people" in lines["target"].sentence


# ------------------------------------------------------------------ the whole zip, within its sizes


def _crafted(files: dict[str, bytes], *extra) -> bytes:
    """The package's members in order, then ``extra`` members (``crafted_zips.Member``): names may repeat."""
    from crafted_zips import Member, crafted_zip

    return crafted_zip([*(Member(name, data) for name, data in files.items()), *extra])


def test_verify_fails_a_package_holding_anything_it_does_not_state(app_package, tmp_path, capsys):
    """Each of these passed "all 11 checks": the raw source added (listed or not), a second
    released.csv before the real one (a reader opening the first gets the raw records), a member
    under an absolute or '..' path, a SHA256SUMS line for a member that is not there."""
    from crafted_zips import Member

    package, source, _ = app_package
    files = members(package)
    listed_source = {**files, "SHA256SUMS": files["SHA256SUMS"] + f"{sha(source)}  source.csv\n".encode()}
    cases = {
        "unlisted raw source": (_crafted(files, Member("source.csv", source)), "source.csv",
                                "is not a part of a release package and SHA256SUMS does not list it; it was added "
                                "after the release was made"),
        "listed raw source": (_crafted(listed_source, Member("source.csv", source)), "source.csv",
                              "is not a part of a release package; it was added after the release was made"),
        "two released.csv": (_crafted(files, Member("released.csv", source)), "released.csv",
                              "appears 2 times in the package; a release package holds each part once (a reader "
                              "could open another copy than the one checked)"),
        "dot-dot path": (_crafted(files, Member("../released.csv", source)), "../released.csv",
                         "is stored under a path that leaves the package's folder (absolute, or with '..'); a release "
                         "package holds plain file names only"),
        "absolute path": (_crafted(files, Member("/tmp/released.csv", source)), "/tmp/released.csv",
                          "is stored under a path that leaves the package's folder (absolute, or with '..'); a "
                          "release package holds plain file names only"),
        "listed but absent": (_crafted({**files, "SHA256SUMS": files["SHA256SUMS"] + f"{sha(b'')}  notes.txt\n".encode()}),
                              "SHA256SUMS", "lists notes.txt, which the package does not hold"),
    }  # fmt: skip
    from crafted_zips import crafted_zip

    first_raw = crafted_zip([Member("released.csv", source), *(Member(n, d) for n, d in files.items())])
    assert "released.csv" in verify_package(first_raw).failed_parts  # the first copy is the raw source
    for case, (data, part, sentence) in cases.items():
        result = verify_package(data)
        assert not result.passed and part in result.failed_parts, case
        assert sentence in [c.sentence for c in result.checks if c.part == part and not c.passed], case
    (tmp_path / "extra.zip").write_bytes(cases["dot-dot path"][0])
    assert main(["verify", str(tmp_path / "extra.zip")]) == 1
    printed = capsys.readouterr().out
    assert "FAILED ../released.csv" in printed and "checks failed: ../released.csv" in printed
    assert verify_package(_crafted(files)).passed  # the same members, written byte by byte: nothing added


def test_verify_inflates_a_member_only_as_far_as_it_declares(app_package):
    """A member declaring 1,000 bytes that inflates to 600 MB peaked at 1.3 GB before failing."""
    import time
    import tracemalloc

    from crafted_zips import Member

    files = members(app_package[0])
    bomb = Member("report.html", repeat=(b"<p>" * 350_000, 600), declared=1000)
    data = _crafted({k: v for k, v in files.items() if k != "report.html"}, bomb)
    assert len(data) < 2 * 1024**2
    tracemalloc.start()
    started = time.perf_counter()
    result = verify_package(data)
    seconds, peak = time.perf_counter() - started, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 5 and peak < 64 * 1024**2, (seconds, peak)
    assert "report.html" in result.failed_parts and not result.passed
    assert any(c.part == "report.html" and "is damaged inside the zip" in c.sentence for c in result.checks)


def test_a_released_table_past_the_loaders_size_limit_is_still_recounted(app_package, monkeypatch):
    """The released table's bytes are in memory already: the loader's limit on a file's size (200 MB)
    does not refuse them. A release of 5·10^6 records made in memory from a 17 MB Parquet file is a
    347 MB CSV, which ``anonymize`` refused after its search (bench/NOTES.md); here the limit is
    lowered below this table's size instead."""
    from anonlib.core import loading
    from anonlib.workflow.package import RECIPE_FILE, TABLE_FILE
    from anonlib.workflow.recipe import Recipe
    from anonlib.workflow.verify import recount

    files = members(app_package[0])
    recipe, table = Recipe.from_json(json.loads(files[RECIPE_FILE])), files[TABLE_FILE]
    expected = recount(recipe, table)
    monkeypatch.setitem(loading.load_table.__kwdefaults__, "max_bytes", len(table) // 2)
    with pytest.raises(loading.FileTooLargeError):  # the lowered limit holds for a file to read
        load_table(table, name=TABLE_FILE)
    assert recount(recipe, table) == expected and expected.met
