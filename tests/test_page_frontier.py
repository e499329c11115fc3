"""AppTest of the risk-utility frontier page: default example, controls, orders, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from anonlib.core.equivalence import class_sizes
from anonlib.frontier import dominating, explore, prepare, safe_harbor_policy
from anonlib.core.samples import load_sample
from anonlib.synthetic import adult_with_zip, zip3_populations

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "frontier.py")
TIMEOUT = 240
EXAMPLE_QIS = ["age", "sex", "race", "zip"]


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _by_label(elements, label):
    return next(e for e in elements if e.label == label)


@pytest.fixture(scope="module")
def example_space():
    return prepare(adult_with_zip(), EXAMPLE_QIS)


def test_default_example_shows_the_library_frontier_and_safe_harbor(example_space):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error
    expected = explore(example_space, "shs", 1000, seed=1)
    metrics = _metrics(at)
    assert metrics["policies evaluated"] == "1,000"
    assert metrics["frontier policies"] == f"{len(expected.frontier):,}"
    assert metrics["area"] == f"{expected.area:.4f}"
    harbor = safe_harbor_policy(example_space, zip3_population=zip3_populations())
    risk, loss = example_space.evaluate(example_space.bits_of(harbor.bits))
    n_better = len(dominating(expected.frontier, risk, loss))
    line = next(m.value for m in at.markdown if m.value.startswith("Safe Harbor:"))
    assert f"risk {risk:.4f}" in line and f"{n_better} of {len(expected.frontier)} frontier" in line
    # the comparison run (RCS) is reported next to SHS after 100 policies
    rcs = explore(example_space, "rcs", 1000, seed=1)
    assert any(f"RCS {rcs.area_after(100):.4f}" in c.value for c in at.caption)


def test_budget_seed_and_method_controls_update_the_numbers(example_space):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.slider(key="fr_budget").set_value(300)
    at.number_input(key="fr_seed").set_value(7)
    at.selectbox(key="fr_method").set_value("rcs")
    at.checkbox(key="fr_compare").uncheck()
    at.run()
    assert not at.exception and not at.error
    expected = explore(example_space, "rcs", 300, seed=7)
    metrics = _metrics(at)
    assert metrics["policies evaluated"] == "300"
    assert metrics["area"] == f"{expected.area:.4f}"


def test_exhaustive_on_two_attributes_and_policy_inspection():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.multiselect(key="fr_qis_adult+tn-zip:2013").set_value(["sex", "race"])
    at.selectbox(key="fr_method").set_value("exhaustive")
    at.run()
    assert not at.exception and not at.error
    metrics = _metrics(at)
    assert metrics["policies in the lattice"] == "32" and metrics["policies evaluated"] == "32"
    expected = explore(prepare(adult_with_zip(), ["sex", "race"]), "exhaustive")
    assert metrics["frontier policies"] == str(len(expected.frontier))
    pick = _by_label(at.selectbox, "Frontier policy to inspect (or click a point of the frontier line)")
    pick.set_value(len(expected.frontier) - 1).run()  # the last one: the original data
    metrics = _metrics(at)
    rarest = int(class_sizes(adult_with_zip(), ["sex", "race"]).min())
    assert metrics["risk"] == "1.0000" and metrics["k"] == f"{rarest:,}"  # the original data
    intervals = next(d.value for d in at.dataframe if "intervals in order" in d.value.columns)
    assert intervals.set_index("attribute").loc["race", "intervals"] == 5


def test_small_lattices_show_the_exhaustive_optimum_next_to_the_heuristic():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.multiselect(key="fr_qis_adult+tn-zip:2013").set_value(["sex", "race", "income"])
    at.run()
    assert not at.exception and not at.error
    space = prepare(adult_with_zip(), ["sex", "race", "income"])
    optimum = explore(space, "exhaustive").area
    shs = explore(space, "shs", 1000, seed=1)  # budget above the 64-policy lattice: SHS stops when all is pruned
    line = next(c.value for c in at.caption if "exhaustive optimum" in c.value)
    assert f"{optimum:.4f}" in line and f"{shs.area / optimum:.3f} times" in line


def test_editing_a_category_order_and_a_bad_order():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.multiselect(key="fr_qis_adult+tn-zip:2013").set_value(["race"])
    at.selectbox(key="fr_method").set_value("exhaustive")
    at.run()
    order_box = at.text_area(key="fr_order_adult+tn-zip:2013_race")
    assert order_box.value.splitlines()[0] == "Amer-Indian-Eskimo"
    order_box.set_value("White\nBlack\nAsian-Pac-Islander\nAmer-Indian-Eskimo\nOther").run()
    assert not at.exception and not at.error
    _by_label(at.selectbox, "Frontier policy to inspect (or click a point of the frontier line)").set_value(0).run()  # top: one interval
    intervals = next(d.value for d in at.dataframe if "intervals in order" in d.value.columns)
    assert intervals.loc[0, "intervals in order"].startswith("White / ")
    at.text_area(key="fr_order_adult+tn-zip:2013_race").set_value("White\nBlack").run()
    assert not at.exception
    assert any("does not contain" in e.value and "'Other'" in e.value for e in at.error)


@pytest.mark.parametrize(
    "sample, evaluated, note",
    [("heart_cleveland", "100", "Ages 90 and over"), ("caballero_table2b", "8", "holds text")],
)
def test_active_dataset_runs_on_its_own_quasi_identifiers(sample, evaluated, note):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample(sample)
    at.session_state["active_source"] = f"sample:{sample}"
    at.run()
    at.radio(key="fr_source").set_value(at.radio(key="fr_source").options[1]).run()
    at.slider(key="fr_budget").set_value(100).run()
    assert not at.exception and not at.error
    assert _metrics(at)["policies evaluated"] == evaluated  # at most the whole lattice (2^3 for caballero)
    assert any(note in c.value.replace("\\", "") for c in at.caption)


def test_app_navigation_reaches_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page("pages/frontier.py").run()
    assert not at.exception
    assert any(t.value == "Risk-utility frontier" for t in at.title)
