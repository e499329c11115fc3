"""AppTest of the Release page's private section on an uploaded-like file with a generalization
applied: the choices with their defaults (the typed hierarchy's first level as the cuts of a
number column), the plan's time estimate before running, the run refused until the lists and
cuts are confirmed public, a refusal in one sentence; a real release (OpenDP) made, shown and its
package verifying; the numbers a release holds shown beside the k-anonymous one (OpenDP's output
held); without the dp extra one sentence saying how to install it."""

from __future__ import annotations

import builtins
import io
import json
import re
import zipfile
from dataclasses import replace

import pytest
from page_cases import PAGE, TIMEOUT, generalized, page_with, unescaped
from private_cases import HeldRelease
from streamlit.testing.v1 import AppTest
from uploads import NAME

from anonlib.projects import ProjectState, ProjectStore, set_budget, spend_privacy
from anonlib.transformations import synthesis
from anonlib.transformations.synthesis import (
    INSTALL_SENTENCE,
    opendp_version,
    parse_cuts,
    privacy_budget,
    stated_budget,
)
from anonlib.workflow import ReleaseTarget, WorkingCopy, verify_package
from anonlib.workflow.private_release import plan_private
from dashboard.private_views import STATE

needs_opendp = pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")


def by_key(elements, key: str):
    return next(e for e in elements if e.key == key)


def captions(at) -> str:
    return "\n".join(unescaped(c.value) for c in at.caption)


@needs_opendp
def test_the_choices_default_to_the_roles_and_nothing_is_prefilled_from_the_records():
    """The page prefilled a number column's cuts from its range (one man's exact minimum wage): a
    number column is now preselected only with bounds the user types, and its box starts empty."""
    copy = generalized()
    at = page_with(copy)
    assert any(h.value == "Private release" for h in at.header)
    assert by_key(at.multiselect, "private_columns").value == ["sex", "zip", "diagnosis"]
    assert "age hold numbers and are not preselected" in captions(at)
    assert by_key(at.selectbox, "private_method").value == "mst"
    assert by_key(at.selectbox, "private_predict").value == "diagnosis"
    plan = plan_private(copy.loaded, ["sex", "zip", "diagnosis"], predict="diagnosis")
    shown = captions(at)
    assert f"estimated at about {plan.estimate:.0f} s" in shown and "ρ = 4.5" in shown
    assert by_key(at.button, "private_run").disabled  # the lists are not confirmed yet (δ = 0)
    by_key(at.checkbox, "private_confirmed").check().run()
    assert not by_key(at.button, "private_run").disabled  # the defaults complete
    by_key(at.multiselect, "private_columns").set_value(["age", "sex", "zip", "diagnosis"]).run()
    ages = copy.loaded.frame["age"]
    box = by_key(at.text_input, "private_cuts_age")
    assert box.value == "" and box.placeholder == "e.g. 0:120 or 0:20,40,60:120"  # nothing read from the records
    for extreme in (ages.min(), ages.max()):
        assert all(f"{extreme}" not in (t.value or "") for t in at.text_input)
    assert by_key(at.button, "private_run").disabled  # waiting for bounds the user knows
    assert "The release waits for the public bounds of age." in [unescaped(i.value) for i in at.info]
    box.set_value("0:120").run()  # bounds alone: round cuts inside them
    assert not by_key(at.button, "private_run").disabled
    plan = plan_private(copy.loaded, ["age", "sex", "zip", "diagnosis"], cuts=[parse_cuts("age", "0:120")])
    assert f"estimated at about {plan.estimate:.0f} s" in captions(at)


@needs_opendp
def test_a_budget_given_as_rho_is_stated_as_epsilon_at_delta():
    at = page_with(generalized())
    by_key(at.radio, "private_budget_as").set_value("ρ").run()
    by_key(at.number_input, "private_rho").set_value(0.5).run()
    found = stated_budget(privacy_budget(rho=0.5, delta=5e-7), finds_keys=True)  # δ of its own to find the lists
    assert found.delta == 1e-6 and found.sentence() in captions(at)
    by_key(at.checkbox, "private_confirmed").check().run()
    assert privacy_budget(rho=0.5, delta=5e-7).sentence() in captions(at)
    by_key(at.number_input, "private_delta_ρ").set_value(0.0).run()  # ρ needs δ > 0 to be stated as ε
    assert any("needs δ > 0" in unescaped(e.value) for e in at.error)
    assert by_key(at.button, "private_run").disabled


@needs_opendp
def test_a_refused_plan_is_one_sentence_and_the_run_stays_disabled():
    at = page_with(generalized())
    by_key(at.checkbox, "private_confirmed").check().run()
    by_key(at.multiselect, "private_columns").set_value(["age", "sex", "zip", "diagnosis"]).run()
    by_key(at.text_input, "private_cuts_age").set_value("90:40:17").run()
    errors = [unescaped(e.value) for e in at.error]
    assert any("must lie between its bounds" in e for e in errors), errors
    assert by_key(at.button, "private_run").disabled
    by_key(at.text_input, "private_cuts_age").set_value("17:40,60:95").run()
    by_key(at.selectbox, "private_method").set_value("aim").run()
    assert not at.error and not by_key(at.button, "private_run").disabled
    copy = generalized()
    plan = plan_private(
        copy.loaded,
        ["age", "sex", "zip", "diagnosis"],
        method="aim",
        cuts=[parse_cuts("age", "17:40,60:95")],
        predict="diagnosis",
    )
    assert "AIM: two-way tables chosen privately, round by round: 4 columns" in captions(at)
    assert f"estimated at about {plan.estimate:.0f} s" in captions(at)


@needs_opendp
def test_found_lists_at_the_cap_and_rare_values_are_answered_before_a_run():
    """δ at the cap with lists found by OpenDP: refused at once, in the command line's sentence. Lists
    declared public that hold a value of few records: named, and a second confirmation asked."""
    at = page_with(generalized())
    by_key(at.number_input, "private_delta_ε").set_value(1e-6).run()
    assert any("past the cap of 1e-06" in unescaped(e.value) for e in at.error)
    assert by_key(at.button, "private_run").disabled
    by_key(at.number_input, "private_delta_ε").set_value(5e-7).run()
    assert "δ = 1e-06 (5e-07 for the noise, 5e-07 for OpenDP to find the value lists" in captions(at)
    assert not at.error and not by_key(at.button, "private_run").disabled
    copy = generalized()
    frame = copy.loaded.frame.copy()
    frame.loc[frame.index[:3], "diagnosis"] = "rare-disease"
    rare = WorkingCopy.start(replace(copy.loaded, frame=frame), ReleaseTarget(), reading=copy.reading)
    at = page_with(rare)
    by_key(at.checkbox, "private_confirmed").check().run()
    warned = [unescaped(w.value) for w in at.warning]
    assert any("held by fewer than 20 records each: diagnosis: rare-disease." in w for w in warned), warned
    assert by_key(at.button, "private_run").disabled
    by_key(at.checkbox, "private_confirmed_rare").check().run()
    assert not by_key(at.button, "private_run").disabled


@needs_opendp
@pytest.mark.slow
def test_a_real_release_is_made_shown_and_verifies():
    """The page's one real release (OpenDP), on two columns (each column adds seconds of OpenDP's
    noise-scale searches); the test below shows the page's numbers with OpenDP's output held."""
    copy = generalized()
    at = page_with(copy)
    # the three choices in one run of the page (each run draws the whole Release page)
    by_key(at.multiselect, "private_columns").set_value(["sex", "diagnosis"])
    by_key(at.checkbox, "private_confirmed").check()
    by_key(at.number_input, "private_rows").set_value(300).run()
    by_key(at.button, "private_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    made = at.session_state[STATE]
    s = made["release"].synthesis
    assert (s.rows, s.columns, s.method, s.predict) == (300, ("sex", "diagnosis"), "mst", "diagnosis")
    assert s.pairs == (("sex", "diagnosis"),) and s.unit == "record"
    assert set(s.table["sex"].dropna()) <= set(copy.loaded.frame["sex"].dropna())
    assert abs(s.records_estimate - len(copy.loaded.frame)) < 0.1 * len(copy.loaded.frame) + 60  # the DP count
    shown = {m.label: m.value for m in at.metric}
    assert shown["synthetic records"] == "300" and shown["ρ"] == "4.5" and shown["ε"] == "3"
    assert verify_package(made["packages"]["synthetic"]).failed_parts == ()


@needs_opendp
@pytest.mark.slow
def test_a_private_release_is_shown_with_its_numbers_beside_the_k_anonymous_one(monkeypatch):
    """What the page shows of a release and holds in its package, OpenDP's output held fixed
    (``HeldRelease``: the numbers shown are the release's and its comparison's, whatever they are)."""
    monkeypatch.setattr(synthesis, "opendp_release", lambda data, plan, keys, *a, **k: HeldRelease(plan, keys))
    copy = generalized()
    at = page_with(copy)
    by_key(at.checkbox, "private_confirmed").check()
    by_key(at.number_input, "private_rows").set_value(3000).run()  # both choices in one run of the page
    by_key(at.button, "private_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    made = at.session_state[STATE]
    release = made["release"]
    s, c = release.synthesis, release.comparison
    assert s.rows == 3000 and s.columns == ("sex", "zip", "diagnosis") and s.method == "mst"
    assert s.value_sources["sex"] == "declared" and s.unit == "record"
    shown = {m.label: m.value for m in at.metric}
    assert shown["synthetic records"] == "3,000" and shown["ρ"] == "4.5" and shown["ε"] == "3"
    assert shown["largest one-way total variation"] == f"{c.oneway_max:.4f}"
    assert shown["mean two-way total variation"] == f"{c.twoway_mean:.4f}"
    side = next(t.value for t in at.table if "k-anonymous release" in t.value.columns)
    assert list(side.columns) == ["k-anonymous release", "private release"]
    privacy = side.loc["privacy"]
    assert "k = 5" in privacy["k-anonymous release"] and "ε = 3" in privacy["private release"]
    assert side.loc["records"]["private release"].startswith("3,000 synthetic")
    tree = side.loc["a tree predicting diagnosis"]
    assert f"{100 * c.tree.released.accuracy:.1f}% of real records right" in tree["private release"]
    # the charts hold the comparison's numbers
    charts = {
        json.loads(chart.proto.spec)["layout"]["title"]["text"].split("<br>")[0]: chart
        for chart in at.get("plotly_chart")
    }
    marginals = json.loads(next(v for k, v in charts.items() if k.startswith("Total variation")).proto.spec)
    one_way = dict(zip(marginals["data"][0]["y"], marginals["data"][0]["x"]))
    assert one_way == {m.columns[0]: m.release for m in c.marginals if len(m.columns) == 1}
    assert "sex: % of records per value" in charts  # the private distribution, in shares
    assert "sex: records per value" in charts  # the k-anonymous one beside it
    # the package holds what was chosen before the run, and verifies
    package = made["packages"]["synthetic"]
    assert verify_package(package).failed_parts == ()
    assert made["sha256"] == copy.reading.sha256  # kept for the officer, never in the package
    inside = zipfile.ZipFile(io.BytesIO(package))
    assert all(copy.reading.sha256.encode() not in inside.read(n) for n in inside.namelist())
    # a rerun keeps the same release (fresh noise only on the button)
    at.run()
    assert at.session_state[STATE]["release"] is release


def test_without_the_dp_extra_one_sentence_says_how_to_install_it(monkeypatch):
    real_import = builtins.__import__

    def no_opendp(name, *args, **kwargs):
        if name.split(".")[0] in ("opendp", "mbi", "polars"):
            raise ImportError(f"No module named '{name}'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_opendp)
    at = page_with(generalized())
    infos = [re.sub(r"\\(.)", r"\1", i.value) for i in at.info]
    assert INSTALL_SENTENCE in infos
    assert not [b for b in at.button if b.key == "private_run"]
    assert any(m.label == "records in the release" for m in at.metric)  # the k-anonymous release is still shown


@needs_opendp
@pytest.mark.slow
def test_the_files_budget_is_shown_and_a_release_past_it_is_refused():
    copy = generalized()
    store = ProjectStore()
    ref = store.create("clinic", ProjectState.of(copy, f"upload:{NAME}"), exact_name=True)
    set_budget(store, ref.id, epsilon=1.5)
    other = store.create("other name", ProjectState.of(copy, f"upload:{NAME}"), exact_name=True)
    sha = copy.reading.sha256
    spend_privacy(store, other.id, epsilon=1.0, delta=0.0, source_name=NAME, source_sha256=sha, records=2000)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = copy.loaded
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["working_copy"] = copy
    at.session_state["project"] = ref
    at.run()
    by_key(at.checkbox, "private_confirmed").check().run()
    assert f"Privacy budget of {NAME}: ε = 1 of 1.5 spent (0.5 left) by 1 private release" in captions(at)
    errors = [unescaped(e.value) for e in at.error]
    assert errors == [
        f"This release would spend ε = 3 of the privacy budget of {NAME}, past its total: ε = 1 of 1.5 is spent and "
        f"0.5 is left; choose ε at most 0.5, or raise the total with projects budget --file {NAME} --epsilon E."
    ]
    assert by_key(at.button, "private_run").disabled
    by_key(at.number_input, "private_epsilon").set_value(0.5).run()
    assert not at.error and not by_key(at.button, "private_run").disabled


@needs_opendp
def test_without_a_store_to_record_the_spend_the_page_refuses(tmp_path, monkeypatch):
    """The spend step did nothing when the store could not be used, and the release went ahead
    unrecorded: the page now refuses in one sentence, and nothing is written anywhere."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the store's folder should be")
    monkeypatch.setenv("ANONLIB_HOME", str(blocked / "home"))
    at = page_with(generalized())
    by_key(at.checkbox, "private_confirmed").check().run()
    refusals = [unescaped(e.value) for e in at.error if "spend cannot be recorded" in e.value]
    assert len(refusals) == 1 and refusals[0].startswith(
        "No private release is made while its spend cannot be recorded ("
    )
    assert by_key(at.button, "private_run").disabled
    assert STATE not in at.session_state and not (blocked.parent / "home").exists()
