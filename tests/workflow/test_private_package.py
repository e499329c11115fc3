"""The private release's package (anonlib.workflow.private_package) and its verification
(anonlib.workflow.verify.verify_package): the members, their SHA-256 digests recomputed
here, what the recipe and README state (nothing read from the records beyond the release),
what ships chosen rather than judged, the report outside the package, the DP tables, and a
changed, missing or foreign member failing its check. The package only writes what a release holds, so the release is
built here from a table (no OpenDP needed); the command-line test makes a real one."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import replace

import pandas as pd
import pytest

from anonlib.core.errors import PackageError, SynthesisError
from anonlib.transformations.synthesis import Budget, NumberCuts, Synthesis
from anonlib.workflow import verify_package
from anonlib.workflow.private_package import (
    NOT_REPRODUCIBLE,
    PRIVATE_KIND,
    dp_tables_csv,
    private_package,
    private_report,
)
from anonlib.workflow.private_release import FAILED_SENTENCE, compare_private, independent_columns
from anonlib.workflow.recipe import content_digest

SOURCE = b"age,sex,dx\n" + b"".join(
    f"{20 + 7 * i % 60},{'FM'[i % 2]},{'abc'[(7 * i % 60) // 20]}\n".encode() for i in range(300)
)  # the diagnosis follows the age band: a tree learns it
CUTS = (NumberCuts("age", (30, 50), 17, 90),)


def real() -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(SOURCE))


def a_release(table: pd.DataFrame, **changes) -> Synthesis:
    """A release as ``synthesize`` returns it, its DP tables counted from ``table`` (``changes``: other fields)."""
    bins = pd.Series(CUTS[0].bins(table["age"])).map(dict(enumerate(CUTS[0].labels)))
    shown = table.assign(age=bins.to_numpy())
    pairs = changes.get("pairs", (("age", "dx"), ("sex", "dx"))) + changes.get("chosen_pairs", ())
    marginals = tuple(
        (clique, shown.groupby(list(clique)).size().rename("records").reset_index())
        for clique in [("age",), ("sex",), ("dx",), *pairs]
    )
    return replace(
        Synthesis(
            table=table,
            method="pairs",
            budget=Budget(3.0, 0.0, 4.5, "Laplace"),
            columns=("age", "sex", "dx"),
            cuts=CUTS,
            pairs=(("age", "dx"), ("sex", "dx")),
            predict="dx",
            rows=len(table),
            records_estimate=301.7,
            library={"opendp": "0.16.0", "mbi": "1.1.0"},
            seconds=12.0,
            estimate=30.0,
            budget_spent=3.0,
            marginals=marginals,
            categories={"sex": ("F", "M"), "dx": ("a", "b", "c")},
        ),
        **changes,
    )


def package_of(table: pd.DataFrame, **kwargs) -> bytes:
    return private_package(a_release(table), **kwargs)


@pytest.fixture(scope="module")
def passed() -> bytes:
    return package_of(real())


def members(data: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name: archive.read(name) for name in archive.namelist()}


def rezip(contents: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_the_package_holds_the_table_the_dp_tables_and_their_digests(passed):
    files = members(passed)
    assert list(files) == ["synthetic.csv", "dp_tables.csv", "recipe.json", "README.txt", "SHA256SUMS"]
    sums = dict(reversed(line.split("  ")) for line in files["SHA256SUMS"].decode().splitlines())
    assert sums == {name: hashlib.sha256(data).hexdigest() for name, data in files.items() if name != "SHA256SUMS"}
    recipe = json.loads(files["recipe.json"])
    assert recipe["kind"] == PRIVATE_KIND and recipe["reproducible"] is False
    assert recipe["why_not_reproducible"] == NOT_REPRODUCIBLE
    assert recipe["content_sha256"] == content_digest({k: v for k, v in recipe.items() if k != "content_sha256"})
    assert recipe["privacy"] == {
        "epsilon": 3.0,
        "delta": 0.0,
        "rho": 4.5,
        "noise": "Laplace",
        "delta_to_find_value_lists": 0.0,
        "stated_as": "OpenDP's privacy map of the whole release (finding value lists included)",
        "unit": "record",
        "unit_described": "one record",
        "records_per_person": None,
        "budget_given_to_opendp": 3.0,
    }
    assert recipe["columns"] == ["age", "sex", "dx"] and recipe["library"]["opendp"] == "0.16.0"
    assert recipe["cuts"] == [
        {"column": "age", "lower": 17.0, "upper": 90.0, "cuts": [30.0, 50.0], "labels": ["17-30", "31-50", "51-90"]}
    ]
    assert recipe["release"]["table_sha256"] == hashlib.sha256(files["synthetic.csv"]).hexdigest()
    assert recipe["release"]["tables_sha256"] == hashlib.sha256(files["dp_tables.csv"]).hexdigest()
    readme = files["README.txt"].decode()
    for words in ("What differential privacy promises", "What it does not promise", NOT_REPRODUCIBLE, "ε = 3"):
        assert words in readme
    assert recipe["content_sha256"] in readme
    synthetic = pd.read_csv(io.BytesIO(files["synthetic.csv"]))
    assert synthetic.equals(real())


def test_the_package_holds_nothing_read_from_the_records_beyond_the_release():
    """No source digest or name, no record count (exact or DP estimate), no comparison, no report."""
    files = members(package_of(real()))
    recipe = json.loads(files["recipe.json"])
    assert "source" not in recipe and "records_estimate" not in recipe and "checks" not in recipe["release"]
    text = b"".join(files.values()).decode()
    assert "report.html" not in files and hashlib.sha256(SOURCE).hexdigest() not in text
    assert "clinic.csv" not in text and "301.7" not in text and "real records" not in text


def test_what_ships_is_chosen_not_judged():
    apart = independent_columns(real(), 300, seed=1)
    comparison = compare_private(real(), apart, ("age", "sex", "dx"), cuts=CUTS, predict="dx")
    assert not comparison.passed  # the checks fail, and the package is still the one chosen
    synthetic, tables = package_of(apart), package_of(apart, ship="tables")
    assert "synthetic.csv" in members(synthetic) and verify_package(synthetic).failed_parts == ()
    files = members(tables)
    assert "synthetic.csv" not in files and "dp_tables.csv" in files
    assert json.loads(files["recipe.json"])["release"]["table"] is None
    assert "the DP tables were chosen as the release before it was made" in files["README.txt"].decode()
    assert verify_package(tables).failed_parts == ()
    with pytest.raises(SynthesisError, match="synthetic table or the DP tables"):
        package_of(apart, ship="best")


def test_the_report_is_the_comparison_outside_the_package():
    table = independent_columns(real(), 300, seed=1)
    s = a_release(table)
    comparison = compare_private(real(), table, s.columns, cuts=s.cuts, predict="dx")
    report = private_report(s, comparison, source_name="clinic.csv").decode()
    assert "clinic.csv" in report and "outside the release's privacy guarantee" in report
    assert f"{comparison.twoway_mean:.4f}" in report and FAILED_SENTENCE in report
    assert "higher ε" not in FAILED_SENTENCE and "raise ε" not in FAILED_SENTENCE


def test_the_dp_tables_hold_every_table_of_the_release_cell_by_cell(passed):
    tables = pd.read_csv(io.BytesIO(members(passed)["dp_tables.csv"]), keep_default_na=False)
    assert list(tables.columns) == ["table", "column_1", "value_1", "column_2", "value_2", "records"]
    assert set(tables["table"]) == {"age", "sex", "dx", "age × dx", "sex × dx"}
    assert (tables.groupby("table")["records"].sum() == 300).all()
    frame = real()
    for (sex, dx), records in frame.groupby(["sex", "dx"]).size().items():
        cell = tables[(tables["table"] == "sex × dx") & (tables["value_1"] == sex) & (tables["value_2"] == dx)]
        assert cell["records"].tolist() == [records]
    young = tables[(tables["table"] == "age") & (tables["value_1"] == "17-30")]["records"].item()
    assert young == int((frame["age"] <= 30).sum())


def test_the_package_verifies_and_a_source_is_not_re_derived(passed):
    assert verify_package(passed).failed_parts == ()
    for source in (SOURCE, SOURCE + b"20,F,a\n"):
        checked = verify_package(passed, source)
        said = [c.sentence for c in checked.checks if c.part == "source"]
        assert checked.failed_parts == () and len(said) == 1 and "not re-derived from its source" in said[0]


def test_a_member_the_sums_list_beyond_the_release_fails(passed):
    files = members(passed)
    files["report.html"] = b"<p>5 real records</p>"
    files["SHA256SUMS"] += f"{hashlib.sha256(files['report.html']).hexdigest()}  report.html\n".encode()
    assert "SHA256SUMS" in verify_package(rezip(files)).failed_parts


@pytest.mark.parametrize("name", ["synthetic.csv", "dp_tables.csv", "README.txt"])
def test_a_changed_member_fails_its_check(passed, name):
    files = members(passed)
    files[name] = files[name].replace(b"e", b"E", 1)
    failed = verify_package(rezip(files)).failed_parts
    assert name in failed


def test_a_changed_recipe_fails_even_with_its_sums_rewritten(passed):
    files = members(passed)
    recipe = json.loads(files["recipe.json"])
    recipe["privacy"]["epsilon"] = 0.1  # a smaller ε claimed than was spent
    files["recipe.json"] = json.dumps(recipe).encode()
    files["SHA256SUMS"] = "".join(
        f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in files.items() if n != "SHA256SUMS"
    ).encode()
    checks = verify_package(rezip(files))
    assert "recipe.json" in checks.failed_parts
    assert any("no longer matches its digest" in c.sentence for c in checks.checks if not c.passed)


def test_a_missing_member_fails_and_a_stranger_zip_is_refused(passed):
    files = members(passed)
    del files["synthetic.csv"]
    assert "synthetic.csv" in verify_package(rezip(files)).failed_parts
    with pytest.raises(PackageError):
        verify_package(rezip({"notes.txt": b"hello"}))


def test_dp_tables_write_a_missing_value_as_blank():
    s = a_release(real())
    frame = pd.DataFrame({"sex": ["F", None], "records": [5, 2]})
    odd = Synthesis(**{**s.__dict__, "marginals": ((("sex",), frame),)})
    text = dp_tables_csv(odd).decode()
    assert "sex,sex,F,,,5" in text and "sex,sex,(blank),,,2" in text


def test_a_package_of_version_1_with_its_report_still_verifies(passed):
    files = members(passed)
    recipe = json.loads(files["recipe.json"])
    old = recipe.pop("content_sha256")
    recipe["version"] = 1
    recipe["content_sha256"] = content_digest(recipe)
    files["recipe.json"] = json.dumps(recipe).encode()
    files["README.txt"] = files["README.txt"].replace(old.encode(), recipe["content_sha256"].encode())
    files["report.html"] = b"<p>the comparison</p>"
    files["SHA256SUMS"] = "".join(
        f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in files.items() if n != "SHA256SUMS"
    ).encode()
    assert verify_package(rezip(files)).failed_parts == ()


def shipped_tables(package: bytes) -> list[str]:
    return list(dict.fromkeys(pd.read_csv(io.BytesIO(members(package)["dp_tables.csv"]))["table"]))


@pytest.mark.parametrize(
    "changes",
    [{}, {"method": "mst", "pairs": (), "chosen_pairs": (("age", "sex"), ("sex", "dx")), "predict": None}],
    ids=["pairs given", "pairs MST chose"],
)
def test_the_readme_and_recipe_list_exactly_the_tables_shipped(changes):
    """MST's README promised two-way tables when only one-way ones shipped: it now names each table
    of dp_tables.csv, the pairs given and those OpenDP chose, and no other."""
    package = private_package(a_release(real(), **changes))
    files = members(package)
    shipped = shipped_tables(package)
    line = next(x for x in files["README.txt"].decode().splitlines() if "tables in dp_tables.csv" in x)
    oneway, _, twoway = line.split("tables in dp_tables.csv")[1].strip().partition("; two-way tables of ")
    named = oneway.removeprefix("one-way tables of ").split(", ") + twoway.split("; ")
    assert named == shipped == json.loads(files["recipe.json"])["tables"]
    given = changes.get("pairs", (("age", "dx"), ("sex", "dx")))
    assert [t for t in shipped if " × " in t] == [" × ".join(p) for p in (*given, *changes.get("chosen_pairs", ()))]
    recipe = json.loads(files["recipe.json"])
    assert recipe["method"]["pairs_chosen_by_opendp"] == [list(p) for p in changes.get("chosen_pairs", ())]
