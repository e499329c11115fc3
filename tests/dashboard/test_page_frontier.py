"""AppTest of the risk-utility frontier page on an uploaded-like file: the working copy by
default, a policy applied as a step (cost first), Safe Harbor dominance claimed only for
policies meeting the target k, and the paper's example behind its toggle."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from uploads import put_upload, uploaded

from anonlib.transformations.frontier import dominating, explore, prepare, safe_harbor_policy
from anonlib.transformations.synthetic import adult_with_zip, zip3_populations
from anonlib.workflow import PolicyStep, ReleaseTarget, step_cost

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "frontier.py")
TIMEOUT = 240
QIS = ["sex", "zip", "diagnosis"]  # 1 + 7 + 4 bits: the exhaustive frontier is exact and quick
ROLES = {
    "patient_id": "identifier",
    "age": "ignore",
    "sex": "quasi-identifier",
    "zip": "quasi-identifier",
    "diagnosis": "quasi-identifier",
}
K = 20  # the file's smallest class on these holds 15 records
PICK = "Frontier policy to inspect (or click a point of the frontier line)"


def words(elements) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def picker(at: AppTest):
    return next(s for s in at.selectbox if s.label == PICK)


@pytest.fixture(scope="module")
def upload():
    return uploaded(roles=ROLES)


_REFERENCES: dict[tuple, dict] = {}


def reference(dataset, k: int) -> dict:
    """The library's frontier on the same file, each policy's k, and the Safe Harbor claim
    restricted to policies meeting ``k`` (slow, written out here; computed once per file and k)."""
    key = (dataset.fingerprint, dataset.missing, tuple(dataset.quasi_identifiers), k)
    if key not in _REFERENCES:
        _REFERENCES[key] = _reference(dataset, k)
    return _REFERENCES[key]


def _reference(dataset, k: int) -> dict:
    frame, _ = dataset.analysis_frame(QIS)
    space = prepare(frame, QIS)
    result = explore(space, "exhaustive")
    frontier = list(result.frontier)
    ks = [int(space.class_sizes(space.bits_of(e.bits)).min()) for e in frontier]
    removed = [any(not any(b) and len(b) > 0 for b in e.bits.values()) for e in frontier]
    harbor = safe_harbor_policy(space, zip3_population=zip3_populations())
    risk, loss = space.evaluate(space.bits_of(harbor.bits))
    lower = dominating(frontier, risk, loss)
    better = [e for e in lower if ks[frontier.index(e)] >= k]
    keeps = [i for i in range(len(frontier)) if ks[i] >= k and not removed[i]]
    dominant = [i for i in keeps if frontier[i] in better]
    default = min(dominant or keeps, key=lambda i: frontier[i].loss) if keeps else None
    return dict(space=space, frame=frame, frontier=frontier, ks=ks, better=better, lower=lower, default=default)


def open_page(upload, k: int) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.session_state["release_target"] = ReleaseTarget(k=k)
    at.run()
    at.selectbox(key="fr_method").set_value("exhaustive").run()
    assert not at.exception and not at.error
    return at


def test_opens_on_the_working_copy_preselects_a_policy_meeting_k_and_applying_it_generalizes(upload):
    """The page as opened, then its policy applied (one walk: the page opened once)."""
    dataset, _ = upload
    at = open_page(upload, K)
    ref = reference(dataset, K)
    assert any(c.startswith("Working copy patients.csv: 2,000 records.") for c in words(at.caption))
    assert at.multiselect(key=f"fr_qis_{dataset.fingerprint}:{dataset.missing}").value == QIS
    assert metrics(at)["frontier policies"] == f"{len(ref['frontier']):,}"
    i = ref["default"]
    assert i is not None and picker(at).value == i
    assert min(ref["ks"]) < K <= ref["ks"][i] and metrics(at)["k"] == f"{ref['ks'][i]:,}"
    assert f"#{i + 1}: k = {ref['ks'][i]:,}," in picker(at).options[i] and "removes" not in picker(at).options[i]
    line = next(m for m in words(at.markdown) if m.startswith("Safe Harbor:"))
    assert (
        f"{len(ref['better'])} of {len(ref['frontier'])} frontier policies meet k = {K} and strictly dominate it"
        in line
    )
    # the cost is said before the button, and the verdict is in records
    cost = step_cost(PolicyStep.from_space(ref["space"], ref["frontier"][i].bits), dataset)
    assert "What it does to the working copy:\n" + "\n".join(f"- {c}" for c in cost.sentences()) in words(at.markdown)
    assert any(
        s.startswith("This policy against the release target. Met: all 2,000 records") for s in words(at.success)
    )
    # applying the policy generalizes the working copy
    chosen = ref["frontier"][ref["default"]]
    at.button(key="fr_apply").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert len(copy.steps) == 1 and copy.steps[0].page == "Frontier"
    assert copy.steps[0].step == PolicyStep.from_space(ref["space"], chosen.bits)
    expected = ref["space"].generalize(ref["frame"], ref["space"].bits_of(chosen.bits))
    for column in QIS:
        assert copy.current.frame[column].astype(str).tolist() == expected[column].astype(str).tolist()
    assert copy.current.frame["age"].tolist() == dataset.frame["age"].tolist()  # not a quasi-identifier here
    assert copy.check.met and copy.check.records == 2000


def test_safe_harbor_is_not_beaten_by_policies_failing_k(upload):
    dataset, _ = upload
    at = open_page(upload, 5000)  # more than the file's records: no policy can meet it
    ref = reference(dataset, 5000)
    assert ref["better"] == [] and ref["default"] is None
    line = next(m for m in words(at.markdown) if m.startswith("Safe Harbor:"))
    assert f"0 of {len(ref['frontier'])} frontier policies meet k = 5000" in line
    assert not any("dominates" in o for o in picker(at).options)
    assert picker(at).value is None
    assert any("No frontier policy found meets the release target (k = 5000" in w for w in words(at.warning))
    if ref["lower"]:
        assert any(
            f"{len(ref['lower'])} more frontier policies are lower on both axes but leave classes smaller "
            "than k = 5000" in c
            for c in words(at.caption)
        )
    assert "fr_apply" not in [b.key for b in at.button]


def test_a_file_without_quasi_identifiers_asks_for_them():
    dataset, reading = uploaded(
        roles={c: "ignore" for c in ["age", "sex", "zip", "diagnosis"]} | {"patient_id": "identifier"}
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, dataset, reading)
    at.run()
    assert not at.exception
    assert any("Mark the quasi-identifiers" in i for i in words(at.info))
    assert not at.metric
    assert not at.toggle(key="frontier_paper").value


def test_paper_example_behind_its_toggle():
    dataset, reading = uploaded(
        roles={c: "ignore" for c in ["age", "sex", "zip", "diagnosis"]} | {"patient_id": "identifier"}
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, dataset, reading)
    at.run()
    at.toggle(key="frontier_paper").set_value(True).run()
    assert not at.exception and not at.error
    space = prepare(adult_with_zip(), ["age", "sex", "race", "zip"])
    expected = explore(space, "shs", 1000, seed=1)
    shown = metrics(at)
    assert shown["policies evaluated"] == "1,000"
    assert shown["frontier policies"] == f"{len(expected.frontier):,}"
    assert shown["area"] == f"{expected.area:.4f}"
    rcs = explore(space, "rcs", 1000, seed=1)
    assert any(f"RCS {rcs.area_after(100):.4f}" in c for c in words(at.caption))
    assert not at.session_state["working_copy"].steps  # the example never touches the working copy


def test_app_navigation_reaches_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page("pages/frontier.py").run()
    assert not at.exception
    assert any(t.value == "Risk-utility frontier" for t in at.title)


def test_frontier_checks_are_judged_once_per_target_and_kept_when_k_comes_back(upload, monkeypatch):
    """Changing k judges the frontier policies again (with a progress bar); k back to a value already
    seen reads the kept checks: no policy is judged again."""
    from anonlib.workflow.history import WorkingCopy
    from dashboard.memo import memo

    memo("frontier.checks").clear()
    calls = []
    original = WorkingCopy.checks_after

    def counted(self, steps, progress=None):
        if len(steps) > 1:  # the whole frontier judged (one policy alone: timed to estimate the whole)
            calls.append(self.target.k)
        return original(self, steps, progress=progress)

    monkeypatch.setattr(WorkingCopy, "checks_after", counted)
    at = open_page(upload, K)
    assert calls == [K, K]  # the default search's frontier, then the exhaustive one
    del calls[:]
    for k in (K + 5, K, K + 5, K):
        at.session_state["release_target"] = ReleaseTarget(k=k)
        at.run()
        assert not at.exception and not at.error
    assert calls == [K + 5]
    assert picker(at).value == reference(upload[0], K)["default"]


def test_searches_estimated_too_long_for_a_slider_wait_for_their_button_and_are_kept(upload, monkeypatch):
    """At about 10^5 records the default searches are estimated over SEARCH_INSTANT_SECONDS: the page
    says how long they take behind a button instead of making every slider wait; pressed, they run,
    and the same settings show at once afterwards (kept), while a new budget asks again."""
    import anonlib.transformations.frontier as frontier
    from anonlib.core.budget import WorkEstimate
    from dashboard.memo import memo

    real = frontier.estimate_explore

    def slow(space, method="shs", budget=1000):
        found = real(space, method, budget)
        return WorkEstimate(found.what, found.operations, 100.0, found.peak_bytes)

    monkeypatch.setattr(frontier, "estimate_explore", slow)
    for name in ("frontier.searches", "frontier.search"):
        memo(name).clear()  # searched here, not kept from another test of the same file
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    assert not at.exception and not at.error
    button = at.button(key="Frontier_run_searches")
    assert button.label == "Compute the frontier (about 5 minutes)"  # 100 s for each of SHS, RCS and the optimum
    assert "frontier policies" not in metrics(at)
    button.click().run()
    assert not at.exception and not at.error
    shown = metrics(at)["frontier policies"]
    at.run()  # a rerun with the same settings: kept, no button
    assert metrics(at)["frontier policies"] == shown
    assert not [b for b in at.button if b.key == "Frontier_run_searches"]
    at.slider(key="fr_budget").set_value(1100).run()  # a new budget: a new search, asked for again
    assert at.button(key="Frontier_run_searches").label.startswith("Compute the frontier")


def trial_csv(people: int = 312, seed: int = 5) -> bytes:
    """A sequential trial's shape (pbcseq): 1 to 9 visits per patient, the visit day since enrolment
    (about a thousand distinct days) and the stage."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        stage, day = int(rng.integers(1, 5)), 0
        for _ in range(int(rng.integers(1, 10))):
            rows.append((p + 1, day, stage))
            day += int(rng.integers(150, 400))
            stage = min(4, stage + int(rng.random() < 0.2))
    return pd.DataFrame(rows, columns=["id", "day", "stage"]).to_csv(index=False).encode()


def test_a_panel_s_frontier_is_judged_on_request_and_the_page_answers_at_once():
    """On a trial panel with a person column (a thousand visit days: each policy's step and check cost
    about 30 ms, the frontier holds hundreds) the frontier shows at once and its policies wait for a
    button that says how long judging them takes (pressing it judges all of them, for seconds: not here)."""
    from dashboard.memo import memo

    memo("frontier.checks").clear()
    panel = uploaded(trial_csv(), roles={"id": "person", "day": "quasi-identifier", "stage": "quasi-identifier"})
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *panel)
    at.run()
    assert not at.exception and not at.error
    button = at.button(key="Frontier_judge_policies")
    assert re.fullmatch(r"Judge the [\d,]+ frontier policies against the release target \(about .+\)", button.label)
    assert any("not yet judged against the release target" in i for i in words(at.info))
    assert picker(at).value is not None  # the least loss keeping every quasi-identifier, judged below
    assert not any("fails the target" in o for o in picker(at).options)
