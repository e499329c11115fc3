"""One truth about a release: what `anonymize` (CLI and library) states is what the written
file holds, recounted with plain pandas (and pycanon on a sample of cases).

RELEASE_EXAMPLES sets the number of random tables (default 120; e.g. 5000 for a long run)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd
import pycanon.anonymity as pycanon  # test-only peer (requirements-nodeps.txt)
import pytest
from arca_release import ARCA_RELEASE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.cli import main
from anonlib.core.dataset import Dataset
from anonlib.core.errors import ParameterError
from anonlib.core.hierarchy import SUPPRESSED, flat_hierarchy, hierarchy_csv, interval_hierarchy, taxonomy_hierarchy
from anonlib.core.samples import load_sample, sample_path
from anonlib.measures.models import ModelRequirement, acceptance
from anonlib.transformations.generalization import search
from anonlib.workflow import GeneralizationStep, ReleaseTarget, SuppressionStep, WorkingCopy, release_package
from anonlib.workflow.local_steps import LocalSuppressionStep
from anonlib.workflow.release import release_csv, release_table
from anonlib.workflow.verify import recount

EXAMPLES = int(os.environ.get("RELEASE_EXAMPLES", "120"))


def _json(capsys) -> dict:
    out = capsys.readouterr().out
    return json.loads(out[out.index("{") :])


def _pandas_sizes(frame: pd.DataFrame, qis, count=None) -> pd.Series:
    """Records in each record's class of the written cells, by plain pandas (blank cells a value)."""
    weights = frame[count] if count else pd.Series(1, index=frame.index)
    return weights.groupby([frame[q] for q in qis], dropna=False).transform("sum")


def test_the_issue_case_states_what_the_file_holds(tmp_path: Path, capsys) -> None:
    """native-country missing, the other columns generalized: every class of the written file has
    at least 5 records, and the k stated is the one pandas counts."""
    out, recipe = tmp_path / "a.csv", tmp_path / "r.json"
    argv = ["anonymize", str(sample_path("adult.csv.gz")), "--shield", "age,sex,race,native-country", "--k", "5"]
    argv += ["--keep", "education,education-num,marital-status,occupation"]  # released unchanged by a decision
    for method in ("optimal", "iab"):
        assert main([*argv, "--method", method, "--out", str(out), "--recipe", str(recipe), "--json"]) == 0
        stated = _json(capsys)
        written = pd.read_csv(out, dtype=str, keep_default_na=False)
        sizes = _pandas_sizes(written, ["age", "sex", "race", "native-country"])
        assert sizes.min() >= 5 and stated["k"] == sizes.min() and stated["met"] is True
        assert stated["suppressed"] == 32561 - len(written) == 0
        assert main(["apply", str(recipe), str(sample_path("adult.csv.gz")), "--out", str(tmp_path / "b.csv")]) == 0
        assert (tmp_path / "b.csv").read_bytes() == out.read_bytes()
        capsys.readouterr()


def test_dropping_records_with_missing_values_states_what_the_file_holds(tmp_path: Path, capsys) -> None:
    """--drop-missing with blanks in a shield column and in released columns outside the
    shield (native-country, occupation: quasi-identifiers of the file, released unchanged as
    kept by --keep): the records missing a shield value are not written, those with a blank
    elsewhere are written with the blank (the assessed records), and k, the records and the
    loss stated are those of the written file (it used to stop with an index error)."""
    frame = load_sample("adult").frame.head(3000)[["age", "sex", "race", "native-country", "occupation"]].copy()
    frame.loc[frame.index[:40], "sex"] = None
    frame.loc[frame.index[100:130], "occupation"] = None
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "out.csv"
    code = main(
        [
            "anonymize",
            str(source),
            "--shield",
            "age,sex,race",
            "--keep",
            "native-country,occupation",
            "--k",
            "5",
            "--drop-missing",
            "--out",
            str(out),
            "--json",
        ]
    )
    stated = _json(capsys)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert code == (0 if stated["met"] else 1)
    assert written[["age", "sex", "race"]].ne("").all().all()  # no record missing a shield value
    assessed = frame[["age", "sex", "race"]].notna().all(axis=1)
    assert stated["suppressed"] == 0 and stated["records"] == int(assessed.sum()) == 3000 - 40
    for column in ("occupation", "native-country"):  # blanks outside the shield are written, as blanks
        assert (written[column] == "").sum() == frame.loc[assessed, column].isna().sum() > 30 * (column == "occupation")
    assert stated["records"] == stated["released_records"] + stated["suppressed"] == len(written) + stated["suppressed"]
    assert stated["k"] == _pandas_sizes(written, ["age", "sex", "race"]).min()
    assert stated["rows_dropped"] == 3000 - int(assessed.sum())


def test_every_search_judges_a_release_by_its_records_as_written(tmp_path: Path, capsys) -> None:
    """At the finest level, suppressing the failing classes changes the table's distribution and
    the release fails 0.4-closeness once measured on itself. Every search applies the one rule
    (the generalization space measures t on the records released), so IAB and the optimal
    search both release a table that meets it, measured on the file written."""
    frame = pd.DataFrame(
        {
            "q0": list("aaaaaaaaabcba"),
            "dx": ["flu", "hiv", "flu", "flu", "flu", "none", "none", "none", "none", "flu", "flu", "hiv", "none"],
        }
    )
    file = tmp_path / "t.csv"
    frame.to_csv(file, index=False)
    argv = [
        "anonymize",
        str(file),
        "--shield",
        "q0",
        "--k",
        "1",
        "--require",
        "t_closeness:dx=0.4",
        "--max-suppressed",
        "0.1",
    ]
    t = [ModelRequirement("t_closeness", "dx", 0.4)]
    finest = acceptance(frame, ["q0"], requirements=t, max_suppressed=0.1)  # level 0: one record suppressed
    assert finest.acceptable and finest.suppressed_records == 1
    assert acceptance(frame[finest.kept], ["q0"], requirements=t).suppressed_records == 2  # its release fails
    assert main([*argv, "--method", "iab", "--out", str(tmp_path / "iab.csv")]) == 0
    printed = capsys.readouterr().out
    assert "Met: all 13 records" in printed
    written = pd.read_csv(tmp_path / "iab.csv")
    assert (
        acceptance(written, ["q0"], requirements=[ModelRequirement("t_closeness", "dx", 0.4)]).suppressed_records == 0
    )
    assert main([*argv, "--out", str(tmp_path / "best.csv"), "--json"]) == 0
    stated = _json(capsys)
    assert stated["met"] is True and stated["failing_records"] == 0 and stated["optimal"] is True
    written = pd.read_csv(tmp_path / "best.csv")
    assert (
        acceptance(written, ["q0"], requirements=[ModelRequirement("t_closeness", "dx", 0.4)]).suppressed_records == 0
    )


def test_json_states_the_contract_fields(capsys) -> None:
    assert (
        main(
            [
                *ARCA_RELEASE,
                "--k",
                "3",
                "--max-suppressed",
                "0.1",
                "--json",
            ]
        )
        == 0
    )
    stated = _json(capsys)
    for key in ("levels", "measure", "utility", "optimal", "suppressed", "k"):
        assert key in stated
    frame = load_sample("arca_table1").frame
    assert stated["measure"] == "loss" and stated["k"] >= 3
    assert stated["suppressed"] == int(frame["#Rec."].sum()) - stated["released_records"]


def test_local_suppression_in_anonymize_is_measured_with_the_wildcard_reading(tmp_path: Path, capsys) -> None:
    out = tmp_path / "a.csv"
    assert (
        main(
            [
                "anonymize",
                str(sample_path("adult.csv.gz")),
                "--shield",
                "age,sex,race,native-country,education",
                "--keep",
                "education-num,marital-status,occupation",
                "--k",
                "5",
                "--max-suppressed",
                "0.02",
                "--local-suppression",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    stated = _json(capsys)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    qis = ["age", "sex", "race", "native-country", "education"]
    assert len(written) == 32561 and stated["suppressed"] == 0 and stated["cells_suppressed"] > 0
    # Plain reference: a record's matches are the records agreeing wherever neither cell is *.
    # Counted over the distinct rows with their record counts.
    distinct = written.groupby(qis, dropna=False).size().reset_index(name="records")
    values, weights = distinct[qis].to_numpy(), distinct["records"].to_numpy()
    star = values == SUPPRESSED
    failing = [i for i in range(len(values)) if weights[((values == values[i]) | star | star[i]).all(axis=1)].sum() < 5]
    assert failing == [] and stated["k"] >= 5


# --------------------------------------------------------------------------- random tables through library and CLI

TAXONOMY = taxonomy_hierarchy({"ab": ["a", "b"], "cde": ["c", "d", "e"], "*": ["ab", "cde"]})


@st.composite
def tables(draw):
    n = draw(st.integers(3, 30))
    frame, hierarchies = {}, {}
    for j in range(draw(st.integers(1, 3))):
        name = f"q{j}"
        if draw(st.booleans()):
            frame[name] = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
            depth = draw(st.integers(1, 4))
            bands = [[(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)], [(0, 3), (4, 7), (8, 9)], [(0, 9)]][: max(depth - 1, 1)]
            hierarchies[name] = interval_hierarchy(range(10), bands, top=depth > 1 and depth - 1 < 3)
        else:
            frame[name] = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e", None]), min_size=n, max_size=n))
            hierarchies[name] = TAXONOMY.iloc[:, : draw(st.integers(2, 3))] if draw(st.booleans()) else TAXONOMY
    frame["dx"] = ["flu", "hiv"] + draw(
        st.lists(st.sampled_from(["flu", "hiv", "none"]), min_size=n - 2, max_size=n - 2)
    )
    count = None
    if draw(st.booleans()):
        frame["n"] = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
        count = "n"
    model = draw(
        st.sampled_from(
            [
                None,
                "distinct_l:dx=2",
                "entropy_l:dx=1.5",
                "t_closeness:dx=0.5",
                "alpha:dx=0.8",
                "delta_disclosure:dx=2",
                "beta_likeness:dx=2",
                "recursive_cl:dx=2,c=2",
            ]
        )
    )
    return (
        pd.DataFrame(frame),
        hierarchies,
        count,
        model,
        draw(st.integers(1, 4)),
        draw(st.sampled_from([0.0, 0.05, 0.2])),
        draw(st.sampled_from(["optimal", "iab", "greedy"])),
    )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=tables())
def test_what_anonymize_states_is_what_the_file_holds(case, tmp_path: Path, capsys) -> None:
    frame, hierarchies, count, model, k, limit, method = case
    qis = [c for c in frame.columns if c.startswith("q")]
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    file, out = folder / "in.csv", folder / "out.csv"
    frame.to_csv(file, index=False)
    argv = [
        "anonymize",
        str(file),
        "--shield",
        ",".join(qis),
        "--k",
        str(k),
        "--max-suppressed",
        str(limit),
        "--method",
        method,
        "--out",
        str(out),
        "--json",
        "--role",
        "dx=sensitive",
    ]
    if count:
        argv += ["--count", count]
    if model:
        argv += ["--require", model]
    for q, h in hierarchies.items():
        path = folder / f"{q}.csv"
        path.write_bytes(hierarchy_csv(h))
        argv += ["--hierarchy", f"{q}={path}"]
    code = main(argv)
    captured = capsys.readouterr()
    if code == 2:  # a sentence, no traceback (no generalization meets it, a model cannot be measured, ...)
        assert captured.err.strip().splitlines()[-1].startswith("error: ") and "Traceback" not in captured.err
        return
    stated = json.loads(captured.out[captured.out.index("{") :])
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    weights = written[count].astype(int) if count else pd.Series(1, index=written.index)
    records = int(frame[count].sum()) if count else len(frame)
    assert stated["suppressed"] == records - int(weights.sum())
    if len(written):
        sizes = _pandas_sizes(written.assign(**({count: weights} if count else {})), qis, count)
        assert stated["k"] == sizes.min()
    assert stated["met"] == (code == 0)
    if code == 0:
        assert (len(written) == 0 or stated["k"] >= k) and stated["suppressed"] <= limit * records + 1e-9
        if model and len(written):  # the models as the one measurement reads the written file
            typed = pd.read_csv(out)
            from anonlib.cli.common import parse_requirement

            verdict = acceptance(typed, qis, k=k, requirements=[parse_requirement(model, {})], count=count)
            assert verdict.suppressed_records == 0
    else:
        assert stated["failing_records"] > 0 or stated["suppressed"] > limit * records
    if not count and len(written) and code == 0 and not model:  # pycanon on the same file
        assert pycanon.k_anonymity(written, qis) == stated["k"]


def test_library_search_states_what_its_table_holds() -> None:
    """search(method="optimal").table is the release: its k and suppressed records, recounted."""
    frame = load_sample("adult").frame
    qis = ["age", "sex", "race", "native-country"]
    from anonlib.core.default_hierarchy import default_hierarchy

    hierarchies = {q: default_hierarchy(frame[q], q)[1] for q in qis}
    r = search(frame, qis, 5, hierarchies, "optimal", max_suppressed=0.01)
    sizes = _pandas_sizes(r.table, qis)
    assert sizes.min() == r.released_k >= 5 and r.suppressed == len(frame) - len(r.table) <= 0.01 * len(frame)
    assert r.violations == 0 and r.rows == r.table.drop_duplicates().shape[0]


# --------------------------------------------------------------------------- missing values dropped: one set of records

# The decision (docs/workflow.md): with missing="drop" the assessed records are those with a value in
# every quasi-identifier, every sensitive column and every column a privacy model reads; only they are
# judged and only they are released. Blanks in other released columns are written as blanks.

ISSUE_FRAME = pd.DataFrame(
    {
        "age": ["30"] * 5 + ["40"] * 5,
        "sex": ["F"] * 10,
        "dx": ["a", "b", "c", "d", "e"] * 2,
        "note": [None, "x", "x", "x", "x"] * 2,
    }
)
ISSUE_ROLES = {"age": "quasi-identifier", "sex": "quasi-identifier", "dx": "sensitive", "note": "sensitive"}


def test_the_issue_case_checks_the_records_it_releases() -> None:
    """A second sensitive column without a model has blanks: the check used to state 10 records in
    classes of 5 (met) while the file held 8 records in classes of 4."""
    ds = Dataset.from_frame("d", ISSUE_FRAME, ISSUE_ROLES).with_missing("drop")
    check = ReleaseTarget(k=5).check(ds)
    released = release_table(ds)
    sizes = released.groupby(["age", "sex"], dropna=False).size()
    assert len(released) == check.records == 8 and sizes.min() == 4
    assert check.failing_records == 8 and not check.met and check.failing == (("k = 5", 8),)
    assert ReleaseTarget(k=4).check(ds).met
    # a model on the column reads it too; with "category" nothing changes (10 records, blanks a value)
    on_note = ReleaseTarget(k=4, requirements=(ModelRequirement("distinct_l", "note", 1),)).check(ds)
    assert on_note.records == 8 and on_note.met
    kept = Dataset.from_frame("d", ISSUE_FRAME, ISSUE_ROLES)
    assert ReleaseTarget(k=5).check(kept).met and len(release_table(kept)) == 10


def test_a_kept_ignored_column_with_blanks_does_not_leave_records_out() -> None:
    ds = Dataset.from_frame("d", ISSUE_FRAME, {**ISSUE_ROLES, "note": "ignore"}).with_missing("drop")
    check = ReleaseTarget(k=5).check(ds)
    released = release_table(ds, ["age", "sex", "dx", "note"])
    assert check.records == len(released) == 10 and check.met
    assert released["note"].isna().sum() == 2  # written as blanks
    assert released.groupby(["age", "sex"], dropna=False).size().min() == 5


def test_the_issue_case_through_anonymize_apply_and_verify(tmp_path: Path, capsys) -> None:
    """The command states what its file holds (pandas recount), the recipe re-applies to the same
    bytes with the same statement, and the package verifies (target recounted, source reproduces)."""
    source = tmp_path / "in.csv"
    ISSUE_FRAME.to_csv(source, index=False)
    out, recipe, package = tmp_path / "out.csv", tmp_path / "r.json", tmp_path / "p.zip"
    argv = [
        "anonymize",
        str(source),
        "--shield",
        "age,sex",
        "--role",
        "dx=sensitive",
        "--role",
        "note=sensitive",
        "--drop-missing",
        "--out",
        str(out),
        "--recipe",
        str(recipe),
        "--package",
        str(package),
        "--json",
    ]
    for k, level in ((4, 0), (5, 1)):
        code = main([*argv, "--k", str(k)])
        stated = _json(capsys)
        written = pd.read_csv(out, dtype=str, keep_default_na=False)
        sizes = written.groupby(["age", "sex"], dropna=False).size()
        assert code == 0 and stated["met"] is True
        assert stated["records"] == stated["released_records"] == len(written) == 8 and stated["rows_dropped"] == 2
        assert stated["k"] == sizes.min() == (4 if level == 0 else 8) and stated["levels"]["age"] == level
        assert written.ne("").all().all()
        assert main(["apply", str(recipe), str(source), "--out", str(tmp_path / "again.csv"), "--json"]) == 0
        applied = _json(capsys)
        assert (tmp_path / "again.csv").read_bytes() == out.read_bytes() and applied["records"] == 8
        assert main(["verify", str(package), str(source)]) == 0
        assert "all 10 checks passed" in capsys.readouterr().out
    # the issue's working copy (k = 5, no step) as a recipe: `apply` writes 8 records in classes of 4
    # and says "not met" (exit 1); the package's recount says the same (the old check said met)
    copy = WorkingCopy.start(
        Dataset.from_frame("in.csv", ISSUE_FRAME, ISSUE_ROLES).with_missing("drop"), ReleaseTarget(k=5)
    )
    assert copy.check.records == 8 and not copy.check.met
    recipe.write_text(copy.recipe().dumps())
    assert main(["apply", str(recipe), str(source), "--out", str(out), "--json"]) == 1
    applied = _json(capsys)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert applied["met"] is False and applied["records"] == len(written) == 8
    assert written.groupby(["age", "sex"], dropna=False).size().max() == 4
    package.write_bytes(release_package(copy, created="2026-01-01T00:00:00Z"))
    assert main(["verify", str(package), str(source)]) == 1
    printed = capsys.readouterr().out
    assert "1 of 10 checks failed: target" in printed
    target_line = next(line for line in printed.splitlines() if line.startswith("FAILED target"))
    assert "Not met: 8 of 8 records" in target_line


@st.composite
def tables_with_blanks(draw):
    """QIs q0..q2 with blanks, a sensitive column with a model (s1) and one without (s2), an ignored
    column kept in the release (note), all with blanks; maybe a count column."""
    n = draw(st.integers(2, 40))

    def cells(values, blank):
        return st.lists(st.sampled_from(values + [None] * blank), min_size=n, max_size=n)

    frame = {
        f"q{j}": draw(cells(["a", "b", "c"][: draw(st.integers(1, 3))], draw(st.integers(0, 2))))
        for j in range(draw(st.integers(1, 3)))
    }
    frame["s1"] = draw(cells(["flu", "hiv", "none"], draw(st.integers(0, 2))))
    frame["s2"] = draw(cells(["x", "y"], draw(st.integers(0, 2))))
    frame["note"] = draw(cells(["p", "q"], draw(st.integers(0, 2))))
    count = None
    if draw(st.booleans()):
        frame["n"] = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
        count = "n"
    model = draw(st.sampled_from([None, ("distinct_l", 2.0), ("alpha", 0.7)]))
    return (
        pd.DataFrame(frame),
        count,
        model,
        draw(st.integers(1, 4)),
        draw(st.sampled_from([0.0, 0.1, 0.5])),
        draw(st.sampled_from(["none", "records", "cells"])),
    )


def _plain_failing(frame: pd.DataFrame, qis, k, model, weights: pd.Series) -> pd.Series:
    """Per row of the released table: its class (plain pandas, dropna=False) fails k or the model."""
    groups = [frame[q] for q in qis]
    failing = weights.groupby(groups, dropna=False).transform("sum") < k
    if model is not None:
        name, value = model
        if name == "distinct_l":
            distinct = frame["s1"].groupby(groups, dropna=False).transform("nunique")
            failing |= distinct < value
        else:  # alpha: no value of s1 above a share of alpha of its class (records)
            per_value = weights.groupby([*groups, frame["s1"]], dropna=False).transform("sum")
            share = per_value / weights.groupby(groups, dropna=False).transform("sum")
            worst = share.groupby(groups, dropna=False).transform("max")
            failing |= worst > value + 1e-12
    return failing


def _plain_wildcard_failing(frame: pd.DataFrame, qis, k, weights: pd.Series) -> pd.Series:
    """Per row: fewer than k records agree with it wherever neither cell is * (sdcMicro's reading)."""
    values = frame[qis].astype(object).to_numpy()
    star = values == SUPPRESSED
    w = weights.to_numpy()
    return pd.Series(
        [w[((values == values[i]) | star | star[i]).all(axis=1)].sum() < k for i in range(len(values))],
        index=frame.index,
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tables_with_blanks())
def test_with_missing_dropped_the_check_counts_the_released_table(case) -> None:
    """The check's records, failing records and met are a plain-pandas recount of release_table
    (assessed rows only), with no step, a record suppression step or a local suppression step, and
    the package's recount of the written bytes says the same."""
    frame, count, model, k, limit, step = case
    qis = [c for c in frame.columns if c.startswith("q")]
    roles = {
        **{q: "quasi-identifier" for q in qis},
        "s1": "sensitive",
        "s2": "sensitive",
        "note": "ignore",
        **({count: "count"} if count else {}),
    }
    loaded = Dataset.from_frame("t.csv", frame, roles).with_missing("drop")
    requirements = (ModelRequirement(model[0], "s1", model[1]),) if model else ()
    target = ReleaseTarget(k=k, requirements=requirements, max_suppressed=limit)
    copy = WorkingCopy.start(loaded, target)
    if step == "records":
        copy = copy.apply(SuppressionStep.from_target(target, copy.current), "test")
    elif step == "cells":
        if (
            loaded.assessed().sum()
            and (int(frame[count][loaded.assessed()].sum()) if count else int(loaded.assessed().sum())) < k
        ):
            with pytest.raises(ParameterError, match="fewer than k"):  # said, as on any table that small
                copy.apply(LocalSuppressionStep.from_target(target, copy.current), "test")
            return
        copy = copy.apply(LocalSuppressionStep.from_target(target, copy.current), "test")
    check = copy.check
    columns = [*qis, "s1", "s2", "note", *([count] if count else [])]
    released = copy.release(columns)

    def weight(table):
        return table[count].astype(int) if count else pd.Series(1, index=table.index)

    assessed = frame[[*qis, "s1", "s2"]].notna().all(axis=1)
    loaded_records = int(weight(frame)[assessed].sum())
    assert released[[*qis, "s1", "s2"]].notna().all().all()
    if step != "records":  # nothing removed: the released records are the assessed ones, blanks in note kept
        assert int(weight(released).sum()) == loaded_records
        assert released["note"].isna().any() == bool(frame.loc[assessed, "note"].isna().any())
    records = int(weight(released).sum())
    weights = weight(released)
    if step == "cells":
        failing = _plain_wildcard_failing(released, qis, k, weights)
        if model:
            failing |= _plain_failing(released, qis, 1, model, weights)
    else:
        failing = _plain_failing(released, qis, k, model, weights)
    failing_records = int(weights[failing].sum())
    suppressed = loaded_records - records
    assert (check.records, check.loaded_records, check.failing_records) == (records, loaded_records, failing_records)
    share = suppressed / loaded_records if loaded_records else 0.0
    assert check.met == (failing_records == 0 and share <= limit)
    if step == "records":  # what the step judged is what the check judges: nothing it kept fails k
        assert int(weights[weights.groupby([released[q] for q in qis], dropna=False).transform("sum") < k].sum()) == 0
    if records:  # the written bytes recounted as `verify` does agree
        again = recount(copy.recipe(columns), release_csv(released))
        assert (again.records, again.failing_records, again.met) == (records, failing_records, check.met)


def test_a_blank_a_generalization_fills_leaves_its_record_out(tmp_path: Path, capsys) -> None:
    """With missing values dropped, the assessed records are fixed on the loaded file: the
    hierarchy's top level sends a blank age to '*', yet that record is neither judged nor
    written (it crashed the command before), in the library, the command and the recipe."""
    frame = pd.DataFrame({"age": [30, 31, 32, None, 33, 34], "sex": ["F", "M", "F", "M", "F", "M"]})
    source = tmp_path / "fill.csv"
    frame.to_csv(source, index=False)
    out, recipe = tmp_path / "out.csv", tmp_path / "r.json"
    code = main(
        [
            "anonymize",
            str(source),
            "--shield",
            "age,sex",
            "--k",
            "5",
            "--drop-missing",
            "--out",
            str(out),
            "--recipe",
            str(recipe),
            "--json",
        ]
    )
    stated = _json(capsys)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert code == 0 and stated["met"] is True and stated["records"] == len(written) == 5
    assert written.groupby(["age", "sex"]).size().min() >= 5 and stated["checked"] <= stated["lattice_size"]
    assert main(["apply", str(recipe), str(source), "--out", str(tmp_path / "again.csv"), "--json"]) == 0
    assert _json(capsys)["records"] == 5 and (tmp_path / "again.csv").read_bytes() == out.read_bytes()
    ds = Dataset.from_frame("fill.csv", frame, {"age": "quasi-identifier", "sex": "quasi-identifier"})
    copy = WorkingCopy.start(ds.with_missing("drop"), ReleaseTarget(k=5))
    step = GeneralizationStep(
        {"age": 1, "sex": 1}, {"age": flat_hierarchy([30, 31, 32, 33, 34]), "sex": flat_hierarchy(["F", "M"])}
    )
    after = copy.apply(step, "test")
    assert after.check is not None and after.check.records == after.check.loaded_records == 5 and after.check.met
    assert len(after.release()) == 5


def test_a_release_with_every_record_suppressed_is_measured_as_empty(tmp_path: Path, capsys) -> None:
    """k larger than the file with 100% allowed: the file holds a header and no record; the
    command, apply in memory and on DuckDB, and the recount all say 0 released, 4 suppressed."""
    from anonlib.core.loading import load_table

    def header_only(data: bytes) -> list[str] | None:
        frame = load_table(data, header=True, allow_empty=True).frame
        return list(frame.columns) if frame.empty else None

    source = tmp_path / "cnt.csv"
    source.write_text("age,sex,n\n30,F,1\n31,M,2\n32,F,1\n")
    out, recipe = tmp_path / "out.csv", tmp_path / "r.json"
    code = main(
        [
            "anonymize",
            str(source),
            "--shield",
            "age,sex",
            "--k",
            "50",
            "--max-suppressed",
            "1",
            "--out",
            str(out),
            "--recipe",
            str(recipe),
            "--json",
        ]
    )
    stated = _json(capsys)
    assert code == 0 and stated["met"] is True and stated["released_records"] == 0 and stated["suppressed_records"] == 4
    assert header_only(out.read_bytes()) == ["age", "sex", "n"]
    for engine in ([], ["--engine", "duckdb"]):
        again = tmp_path / f"again{len(engine)}.csv"
        assert main(["apply", str(recipe), str(source), "--out", str(again), "--json", *engine]) == 0
        applied = _json(capsys)
        assert applied["met"] is True and applied["released_records"] == 0
        assert (applied["records"], applied["suppressed"]) == (stated["records"], stated["suppressed"]) == (4, 4)
        assert header_only(again.read_bytes()) == ["age", "sex", "n"]


def test_a_target_reading_another_column_replays_the_steps_on_its_assessed_records() -> None:
    """With missing values dropped, a model on a column with blanks changes which records are
    assessed: the steps are replayed from them, and the check counts what the release holds."""
    frame = pd.DataFrame(
        {
            "age": [30, 31, 32, 33, 34, 35, 36, 37],
            "sex": ["F", "M"] * 4,
            "dx": ["a", "b", None, "a", "b", "a", None, "b"],
            "lab": ["x", None, "y", "x", "y", "x", "y", "x"],
        }
    )
    ds = Dataset.from_frame(
        "d", frame, {"age": "quasi-identifier", "sex": "quasi-identifier", "dx": "ignore", "lab": "ignore"}
    ).with_missing("drop")
    step = GeneralizationStep({"age": 1}, {"age": flat_hierarchy(list(range(30, 38)))})
    copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(step, "test")
    assert copy.check.records == len(copy.release()) == 8
    for column, left in (("dx", 6), ("lab", 7)):
        target = ReleaseTarget(k=2, requirements=(ModelRequirement("distinct_l", column, 1),))
        moved = copy.with_target(target)
        released = moved.release(["age", "sex", column])
        assert moved.check.records == moved.check.loaded_records == len(released) == left
        assert released[column].notna().all() and moved.steps[0].step == step


def test_a_target_whose_replay_does_not_fit_keeps_the_steps_and_judges_the_assessed_records() -> None:
    """Bands built on the records a model column left (30-44): without that model a record of
    age 90 is assessed again and the bands do not fit it; changing the target must not fail
    (every page reads the working copy), the steps stay and the check counts the release."""
    from anonlib.workflow import BandsStep

    df = pd.DataFrame(
        {"age": [30, 35, 41, 44, 90], "sex": ["F", "F", "M", "M", "F"], "inc": ["l", "h", "l", "h", None]}
    )
    ds = Dataset.from_frame(
        "d", df, {"age": "quasi-identifier", "sex": "quasi-identifier", "inc": "ignore"}, missing="drop"
    )
    strict = ReleaseTarget(k=2, requirements=(ModelRequirement("distinct_l", "inc", 2),))
    copy = WorkingCopy.start(ds, strict)
    copy = copy.apply(SuppressionStep.from_target(strict, copy.current), "p")
    copy = copy.apply(BandsStep("age", 10, 0, 30, 44, True), "p")
    moved = copy.with_target(ReleaseTarget(k=2))
    assert len(moved.steps) == 2 and moved.check is not None
    # the strict step suppressed the four records holding an income, so nothing is released
    assert (moved.check.records, moved.check.loaded_records, len(moved.release())) == (0, 5, 0)


def test_step_costs_are_measured_on_the_records_a_step_starts_from() -> None:
    """With missing values dropped, a preview counts the assessed records, as the applied step."""
    from anonlib.workflow import BandsStep
    from anonlib.workflow.cost import step_cost

    df = pd.DataFrame({"age": [30, 35, 41, 44, 50], "dx": ["a", None, "b", None, "a"]})
    ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "dx": "sensitive"}, missing="drop")
    step = BandsStep("age", 10, 0, 30, 50, True)
    preview = step_cost(step, ds)
    applied = WorkingCopy.start(ds, ReleaseTarget(k=1)).apply(step, "p").steps[-1].cost
    assert preview.records_before == applied.records_before == 3


def test_local_suppression_stars_count_as_suppressed_cells_whatever_the_hierarchy_top(tmp_path: Path, capsys) -> None:
    """ZIP codes masked to '*****' at the top: a '*' written by local suppression is a suppressed
    cell for the loss (it stopped anonymize with 'not a generalization')."""
    import numpy as np

    rng = np.random.default_rng(1)
    rows = [
        (int(rng.integers(20, 80)), str(rng.choice(["10011", "10012", "20011", "20012"])), str(rng.choice(["F", "M"])))
        for _ in range(300)
    ]
    frame = pd.DataFrame(rows, columns=["age", "zip", "sex"])
    source = tmp_path / "ls.csv"
    frame.to_csv(source, index=False)
    code = main(
        [
            "anonymize",
            str(source),
            "--shield",
            "age,zip,sex",
            "--k",
            "5",
            "--max-suppressed",
            "0.1",
            "--local-suppression",
            "--out",
            str(tmp_path / "out.csv"),
            "--json",
        ]
    )
    stated = _json(capsys)
    written = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert code == 0 and stated["met"] is True and (written == "*").to_numpy().sum() > 0
    assert 0 < stated["utility"] < 1
