"""What a private release states is OpenDP's privacy map of the whole release (dp.md part 3):
rebuilt here from the OpenDP context each release actually made (over its prepared records), with
OpenDP's own combinators, for declared lists, found lists (finding them spends δ of its own), a
person unit and a budget given as ρ; and equal to what the recipe, the README, ``--json`` and the
audit entry state. Found lists whose δ would pass the cap are refused before the file is read.

OpenDP's fit is held fixed (``HeldRelease``): the context is OpenDP's own, made by the release's
own code from the records it reads; only the minute of fitting is skipped."""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
from private_cases import HeldRelease

from anonlib.cli import main
from anonlib.cli import synthesize as command
from anonlib.projects import ProjectStore, audit_entries
from anonlib.transformations import synthesis
from anonlib.transformations.synthesis import MAX_DELTA, Budget, opendp_version, privacy_budget, require_opendp

pytestmark = pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")

ROWS = "".join(f"P{i // 3},{'FM'[i % 2]},{'abc'[i % 3]}\n" for i in range(90))  # 30 people, 3 records each


@pytest.fixture
def contexts(monkeypatch):
    """Each release's OpenDP context, made by the release's own code over the records it read."""
    made = []

    def release(data, plan, keys, budget, *, person=None, records_per_person=1):
        context, d_in = synthesis.opendp_context(data, budget.stated, person=person)
        made.append((context, d_in, budget, person, len(data)))
        return HeldRelease(plan, keys)

    monkeypatch.setattr(synthesis, "opendp_release", release)
    monkeypatch.setattr(synthesis, "_fresh_rng", lambda: np.random.default_rng(0))
    return made


def rebuilt(context, d_in, noise_delta: float) -> tuple[float, float]:
    """OpenDP's map of the whole measurement, converted by OpenDP's own combinators: ε when pure,
    else the zCDP (or approximate zCDP: finding value lists) map stated at its own δ plus the noise's."""
    dp = require_opendp()
    loss = context.accountant.map(d_in)
    if context.accountant.output_measure == dp.max_divergence():
        return float(loss), 0.0
    keys_delta = loss[1] if isinstance(loss, tuple) else 0.0
    profile = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(context.accountant), keys_delta + noise_delta)
    epsilon, delta = profile.map(d_in)
    return float(epsilon), float(delta)


MODES = {
    "declared lists": (["--values-from-data", "--epsilon", "1"], 0.0),
    "declared lists, Gaussian": (["--values-from-data", "--epsilon", "1", "--delta", "1e-6"], 1e-6),
    "found lists": (["--epsilon", "1", "--delta", "4e-7"], 4e-7),
    "per person": (["--values-from-data", "--epsilon", "2", "--person", "pid", "--records-per-person", "3"], 0.0),
    "rho given": (["--values-from-data", "--rho", "0.5", "--delta", "1e-7"], 1e-7),
}


@pytest.mark.parametrize("mode", list(MODES))
def test_the_stated_budget_is_opendps_map_of_the_whole_release(mode, contexts, tmp_path, capsys):
    argv, noise_delta = MODES[mode]
    clinic = tmp_path / "clinic.csv"
    clinic.write_text("pid,sex,dx\n" + ROWS)
    out, package = tmp_path / "out.csv", tmp_path / "p.zip"
    code = main(
        ["synthesize", str(clinic), "--columns", "sex,dx", *argv, "--method", "pairs", "--predict", "dx"]
        + ["--out", str(out), "--package", str(package), "--json"]
    )
    assert code in (0, 1), capsys.readouterr().err
    stated = json.loads(capsys.readouterr().out)
    ((context, d_in, budget, person, records),) = contexts
    epsilon, delta = rebuilt(context, d_in, noise_delta)
    assert records == 90 and (person is not None) == (mode == "per person")
    if mode == "found lists":  # finding the lists spends the noise's δ again: twice the δ asked
        assert delta == 2 * noise_delta and stated["delta_to_find_value_lists"] == noise_delta
    else:
        assert delta == noise_delta and stated["delta_to_find_value_lists"] == 0.0
    asked = privacy_budget(
        epsilon=None if mode == "rho given" else float(argv[argv.index("--epsilon") + 1]),
        delta=noise_delta,
        rho=0.5 if mode == "rho given" else None,
    )
    assert epsilon == pytest.approx(asked.epsilon, rel=1e-9) and epsilon <= asked.epsilon + 1e-12
    # the same two numbers wherever the release states them
    assert (stated["epsilon"], stated["delta"]) == (epsilon, delta)
    recipe = json.loads(zipfile.ZipFile(package).read("recipe.json"))
    assert (recipe["privacy"]["epsilon"], recipe["privacy"]["delta"]) == (epsilon, delta)
    readme = zipfile.ZipFile(package).read("README.txt").decode()
    said = Budget(epsilon, delta, budget.stated.rho, budget.stated.noise, budget.stated.delta_keys).sentence()
    assert re.search(r"  privacy budget +(.+)", readme).group(1) == said
    (entry,) = [e for e in audit_entries(ProjectStore()) if e.epsilon is not None]
    assert (entry.epsilon, entry.delta) == (epsilon, delta)
    if mode == "rho given":
        assert context.accountant.map(d_in) == 0.5 and stated["rho"] == 0.5
    if mode == "per person":  # one person's three records at distance d_in: the map is per person
        assert stated["unit"] == "person" and recipe["privacy"]["unit"] == "person"


def test_found_lists_whose_delta_passes_the_cap_are_refused_before_the_file_is_read(
    contexts, tmp_path, capsys, monkeypatch
):
    """δ at the cap asked for the noise: finding the lists would take the release to twice the cap."""
    read = []
    monkeypatch.setattr(command, "read_dataset", lambda args: read.append(args) or pytest.fail("the file was read"))
    clinic = tmp_path / "clinic.csv"
    clinic.write_text("pid,sex,dx\n" + ROWS)
    out = tmp_path / "out.csv"
    argv = ["synthesize", str(clinic), "--columns", "sex,dx", "--epsilon", "1", "--delta", str(MAX_DELTA)]
    code = main([*argv, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [
        "error: OpenDP finding the value lists spends δ of its own: this release would state δ = 2e-06 (1e-06 for "
        "the noise and 1e-06 to find the lists), past the cap of 1e-06; give δ at most 5e-07, or give or declare "
        "the value lists."
    ]
    assert not read and not contexts and not out.exists()
    assert audit_entries(ProjectStore()) == []  # nothing spent either


def test_the_page_states_the_same_map_before_a_run():
    """The Release page settles its budget with the same function: found lists at the cap are refused
    there too, before anything runs (the sentence is the command line's)."""
    from anonlib.core.errors import SynthesisError

    with pytest.raises(SynthesisError, match="past the cap of 1e-06"):
        synthesis.plan_budget(["sex", "dx"], epsilon=1.0, delta=MAX_DELTA)
    found = synthesis.plan_budget(["sex", "dx"], epsilon=1.0, delta=5e-7)
    assert (found.stated.delta, found.stated.delta_keys) == (MAX_DELTA, 5e-7)
