"""OpenDP, loaded lazily (the optional ``dp`` extra), and the budget of a private release:
ε and δ, or ρ, converted by OpenDP's own maps (``privacy_budget``), and what a release
states: OpenDP's privacy map of the whole measurement, finding the value lists included
(``stated_budget``, ``opendp_guarantee``). Part of ``anonlib.transformations.synthesis``.

What the user gives (``privacy_budget``) is the noise's budget: ε (with the δ at which it
is stated) or ρ. When OpenDP finds the value lists itself, its threshold spends δ of its own
(OpenDP's ``loss_of(rho=ρ, delta=δ)``: approximate zCDP); OpenDP's conversion of that to
(ε, δ) then holds at the two δ added (``stated_budget``: δ = 2e-6 for a noise δ of 1e-6), and
a release whose stated δ passes ``MAX_DELTA`` is refused before any record is read.

Example:
    >>> privacy_budget(epsilon=1.0).sentence()
    'ε = 1 (pure differential privacy, δ = 0; Laplace noise; ρ = 0.5 in zero-concentrated terms)'
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata

import numpy as np

from ...core.errors import PrivacyExtraMissingError, SynthesisError

INSTALL_SENTENCE = (
    "The private release needs OpenDP, an optional part of this tool: install it with "
    "pip install '.[dp]' (python3 tasks.py run and python3 tasks.py test install it)."
)
MIN_EPSILON, MAX_EPSILON = 1e-3, 100.0
MAX_DELTA = 1e-6  # above it, a δ is refused (1/n for files of a million records)


# --------------------------------------------------------------------------- OpenDP, lazily


def opendp_version() -> str | None:
    """OpenDP's version when it is installed, else None.

    >>> opendp_version() is None or opendp_version().count(".") >= 1
    True
    """
    try:
        return metadata.version("opendp")
    except metadata.PackageNotFoundError:
        return None


def require_opendp():
    """OpenDP's ``prelude`` with its contributed features on; ``PrivacyExtraMissingError``
    (``INSTALL_SENTENCE``) when OpenDP, Polars or mbi is not installed."""
    try:
        import mbi  # noqa: F401 - the synthesis backend
        import opendp.prelude as dp
        import polars  # noqa: F401 - OpenDP's data frames
    except ImportError:
        raise PrivacyExtraMissingError(INSTALL_SENTENCE) from None
    dp.enable_features("contrib")
    _search_from_zero()
    return dp


ZERO_STANDINS = (2.0**-1000, 2.0**-500, 2.0**-200)  # far below any noise scale or budget OpenDP searches for


def _search_from_zero() -> None:
    """Spare OpenDP 0.16's searches of a noise scale some thousand needless evaluations (docs/dp.md).

    Its unbounded search (``binary_search``: every scale of the one-way tables, of MST's and AIM's
    measurements, of ``Sequential``'s split) asks first at 0, where a scale raises; it then bisects
    down from 0.5 to the smallest float that does not raise (about 1,070 halvings, each building the
    whole measurement: 95% of a two-column release's time) before searching for the scale. Here a
    search's predicate raising at exactly 0 answers as at the first of ``ZERO_STANDINS`` where it does
    not raise: a monotone predicate, extended to 0 by its value just above it, has the same boundary,
    and the search goes straight to it (found bit for bit the same; OpenDP's composition checks every
    measurement it returns in any case). Installed once per process; a search whose predicate raises
    at every stand-in too raises its first error, as before."""
    import opendp.mod as mod

    search = mod._call_rust_search
    if getattr(search, "anonlib_from_zero", False):
        return

    def call(predicate, T, run, bounds=(None, None)):
        at_zero: list = []  # the answer at 0 when the predicate raises there (None: no stand-in answers)

        def extended(x):
            zero = isinstance(x, float) and x == 0.0
            if zero and at_zero and at_zero[0] is not None:
                return at_zero[0]
            try:
                return predicate(x)
            except Exception:
                if not zero:
                    raise
                if not at_zero:
                    at_zero.append(_first_answer(predicate))
                if at_zero[0] is None:
                    raise
                return at_zero[0]

        return search(extended, T, run, bounds)

    call.anonlib_from_zero = True
    call.opendp_search = search  # OpenDP's own, for comparison
    mod._call_rust_search = call


def _first_answer(predicate) -> bool | None:
    for standin in ZERO_STANDINS:
        try:
            return bool(predicate(standin))
        except Exception:  # noqa: BLE001 - OpenDP's error at this stand-in: the next one
            continue
    return None


def library_versions() -> dict[str, str]:
    """The versions of the libraries that made a private release (stated in its package)."""
    out = {}
    for name in ("opendp", "mbi", "polars", "jax"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def jax_cache_folder() -> str:
    """Where JAX keeps the programs it compiles for mbi, reused by later runs (a fifth
    faster): ``ANONLIB_JAX_CACHE`` when set, else a folder of this user's in the
    temporary folder. It holds compiled programs over the released (noisy) tables, never
    a record of the data."""
    chosen = os.environ.get("ANONLIB_JAX_CACHE")
    if chosen:
        return chosen
    user = re.sub(r"[^A-Za-z0-9_.-]", "_", os.environ.get("USER") or str(os.getuid() if hasattr(os, "getuid") else ""))
    return os.path.join(tempfile.gettempdir(), f"anonlib-jax-cache-{user or 'user'}")


def use_jax_cache() -> None:
    """Point JAX's compilation cache at ``jax_cache_folder`` (MST's and AIM's models compile once)."""
    try:
        import jax

        if not jax.config.jax_compilation_cache_dir:
            folder = jax_cache_folder()
            os.makedirs(folder, mode=0o700, exist_ok=True)
            jax.config.update("jax_compilation_cache_dir", folder)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    except (ImportError, OSError, AttributeError):  # no cache: slower, nothing else
        pass


# --------------------------------------------------------------------------- the budget


@dataclass(frozen=True)
class Budget:
    """A privacy budget: ε and δ, and ρ (zCDP). ``noise``: Laplace (pure ε-DP, δ = 0) or
    Gaussian (ρ-zCDP, which implies (ε, δ)-DP). ``delta_keys``: the part of δ OpenDP spends
    finding value lists itself (0 when every list is given or declared); the rest is the
    noise's δ, at which ρ is converted to ε."""

    epsilon: float
    delta: float
    rho: float
    noise: str
    delta_keys: float = 0.0

    @property
    def pure(self) -> bool:
        return self.noise == "Laplace"

    @property
    def finds_keys(self) -> bool:
        """OpenDP finds value lists itself (its threshold spends ``delta_keys``)."""
        return self.delta_keys > 0

    @property
    def delta_noise(self) -> float:
        """The δ at which the noise's ρ is stated as ε (δ less what finding the value lists spends)."""
        return self.delta - self.delta_keys

    def sentence(self) -> str:
        """The budget in words.

        >>> Budget(1.0, 0.0, 0.5, "Laplace").sentence()
        'ε = 1 (pure differential privacy, δ = 0; Laplace noise; ρ = 0.5 in zero-concentrated terms)'
        >>> Budget(1.0, 2e-6, 0.03, "Gaussian", 1e-6).sentence()
        'ε = 1 with δ = 2e-06 (1e-06 for the noise, 1e-06 for OpenDP to find the value lists; ρ = 0.03 zero-concentrated; Gaussian noise)'
        """
        if self.pure:
            return (
                f"ε = {self.epsilon:g} (pure differential privacy, δ = 0; Laplace noise; "
                f"ρ = {self.rho:.4g} in zero-concentrated terms)"
            )
        parts = (
            f"{self.delta_noise:g} for the noise, {self.delta_keys:g} for OpenDP to find the value lists; "
            if self.finds_keys
            else ""
        )
        return (
            f"ε = {self.epsilon:.4g} with δ = {self.delta:g} ({parts}ρ = {self.rho:.4g} zero-concentrated; "
            "Gaussian noise)"
        )


def finite_number(value, what: str) -> float:
    """``value`` as a finite float, or a sentence naming ``what``.

    >>> finite_number("0.5", "ε")
    0.5
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SynthesisError(f"{what} must be a number; got {value!r}.") from None
    if not math.isfinite(number):
        raise SynthesisError(f"{what} must be a finite number; got {value!r}.")
    return number


def privacy_budget(epsilon: float | None = None, delta: float = 0.0, *, rho: float | None = None) -> Budget:
    """The budget of a release from ε (with δ) or from ρ (with the δ at which ε is stated).

    δ = 0 with ε: pure ε-DP, ρ = ε²/2. δ > 0 with ε: ρ is the largest whose zCDP guarantee
    implies (ε, δ)-DP, found by OpenDP's conversion. ρ (with δ > 0): OpenDP gives ε at δ.
    A budget outside 0.001 ≤ ε ≤ 100 or δ above 1e-6 is refused in a sentence.

    >>> privacy_budget(epsilon=3).rho
    4.5
    >>> privacy_budget(epsilon=-1)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.SynthesisError: ε must be between 0.001 and 100; got -1.
    """
    delta = finite_number(delta, "δ")
    if not 0 <= delta <= MAX_DELTA:
        raise SynthesisError(
            f"δ must be 0 (pure differential privacy) or a small probability at most {MAX_DELTA:g} (the chance the "
            f"guarantee fails must stay far below one in the number of people); got {delta:g}."
        )
    if (epsilon is None) == (rho is None):
        raise SynthesisError("Give the budget as ε (with δ) or as ρ, one of them.")
    if rho is not None:
        rho = finite_number(rho, "ρ")
        if not 1e-7 <= rho <= MAX_EPSILON:
            raise SynthesisError(f"ρ must be between 1e-07 and {MAX_EPSILON:g}; got {rho:g}.")
        if delta == 0:
            raise SynthesisError("A budget given as ρ needs δ > 0 (such as 1e-6) to be stated as ε.")
        return Budget(_epsilon_at(rho, delta), delta, rho, "Gaussian")
    epsilon = finite_number(epsilon, "ε")
    if not MIN_EPSILON <= epsilon <= MAX_EPSILON:
        raise SynthesisError(f"ε must be between {MIN_EPSILON:g} and {MAX_EPSILON:g}; got {epsilon:g}.")
    if delta == 0:
        return Budget(epsilon, 0.0, epsilon * epsilon / 2, "Laplace")
    return Budget(epsilon, delta, _rho_for(epsilon, delta), "Gaussian")


def _gaussian(dp, scale: float):
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    return dp.m.make_gaussian(*space, scale)


@lru_cache(maxsize=256)
def _rho_for(epsilon: float, delta: float) -> float:
    """The largest ρ whose zCDP guarantee implies (ε, δ)-DP: OpenDP's conversion, found
    through a Gaussian mechanism of sensitivity 1 (ρ = 1 / (2 scale²)). OpenDP's search takes
    about a tenth of a second and depends only on ε and δ: remembered per process (a page
    asks at every rerun)."""
    dp = require_opendp()

    def approx(scale: float):
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(_gaussian(dp, scale)), delta)

    try:
        scale = dp.binary_search_param(approx, d_in=1.0, d_out=(epsilon, delta), T=float)
    except dp.OpenDPException as err:
        raise SynthesisError(
            f"OpenDP could not convert ε = {epsilon:g}, δ = {delta:g} ({innermost_error(err)})."
        ) from None
    return float(_gaussian(dp, scale).map(1.0))


@lru_cache(maxsize=256)
def _epsilon_at(rho: float, delta: float) -> float:
    """ε at δ of ρ-zCDP, by OpenDP's conversion."""
    dp = require_opendp()
    scale = math.sqrt(1.0 / (2.0 * rho))
    return float(dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(_gaussian(dp, scale)), delta).map(1.0)[0])


# --------------------------------------------------------------------------- what a release states


def opendp_loss(dp, budget: Budget):
    """The privacy loss a release's OpenDP context holds: ε (pure), ρ (zCDP), or ρ with the
    δ OpenDP's threshold spends finding value lists (approximate zCDP)."""
    if budget.pure:
        return dp.loss_of(epsilon=budget.epsilon)
    if budget.finds_keys:
        return dp.loss_of(rho=budget.rho, delta=budget.delta_keys)
    return dp.loss_of(rho=budget.rho)


def query_loss(budget: Budget, spend: float) -> dict[str, float]:
    """The loss of the one query a release makes (``spend``: ε or ρ, at most the context's, a
    few units in the last place lower for MST), as OpenDP's ``Context.query`` takes it."""
    if budget.pure:
        return {"epsilon": float(spend)}
    if budget.finds_keys:
        return {"rho": float(spend), "delta": budget.delta_keys}
    return {"rho": float(spend)}


def opendp_guarantee(dp, accountant, d_in, budget: Budget) -> tuple[float, float]:
    """(ε, δ) by OpenDP's own privacy map of ``accountant`` (the whole measurement a release's
    context makes, every query and finding the value lists included), for a unit at distance
    ``d_in``: its ε when pure, else OpenDP's conversion of its zCDP (or approximate zCDP) to
    (ε, δ), fixed at ``budget.delta`` (the noise's δ plus what finding the lists spends)."""
    if budget.pure:
        return float(accountant.map(d_in)), 0.0
    profile = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(accountant), budget.delta)
    epsilon, delta = profile.map(d_in)
    return float(epsilon), float(delta)


def key_delta_refusal(asked: Budget) -> str | None:
    """The sentence refusing a release whose value lists OpenDP would find when finding them
    takes its stated δ past ``MAX_DELTA`` (None when it fits).

    >>> print(key_delta_refusal(Budget(1.0, 1e-6, 0.03, "Gaussian")))
    OpenDP finding the value lists spends δ of its own: this release would state δ = 2e-06 (1e-06 for the noise and 1e-06 to find the lists), past the cap of 1e-06; give δ at most 5e-07, or give or declare the value lists.
    """
    total = asked.delta + asked.delta
    if total <= MAX_DELTA:
        return None
    return (
        f"OpenDP finding the value lists spends δ of its own: this release would state δ = {total:g} "
        f"({asked.delta:g} for the noise and {asked.delta:g} to find the lists), past the cap of {MAX_DELTA:g}; "
        f"give δ at most {MAX_DELTA / 2:g}, or give or declare the value lists."
    )


def stated_budget(asked: Budget, *, finds_keys: bool = False, person: bool = False) -> Budget:
    """What a release states: OpenDP's privacy map of its whole measurement, computed before
    any record is read on a context of the same unit and loss over an empty table (the map
    depends on neither). ``finds_keys``: OpenDP finds some value list itself, and its threshold
    spends δ of its own (as much as the noise's): the stated δ is both, and a release past
    ``MAX_DELTA`` is refused in a sentence (``key_delta_refusal``). ``person``: the unit is a
    person (a context bounding each person's records).

    >>> stated_budget(privacy_budget(epsilon=1.0)) == privacy_budget(epsilon=1.0)
    True
    >>> found = stated_budget(privacy_budget(epsilon=1.0, delta=4e-7), finds_keys=True)
    >>> found.delta, found.delta_keys, round(found.epsilon, 6)
    (8e-07, 4e-07, 1.0)
    """
    if finds_keys:
        if asked.pure:
            raise SynthesisError(
                "OpenDP finds value lists only with δ > 0 (such as 5e-7): give δ, or give or declare the value lists."
            )
        refusal = key_delta_refusal(asked)
        if refusal is not None:
            raise SynthesisError(refusal)
        asked = Budget(asked.epsilon, asked.delta + asked.delta, asked.rho, asked.noise, asked.delta)
    epsilon, delta = _mapped(asked.epsilon, asked.delta, asked.rho, asked.noise, asked.delta_keys, person)
    return Budget(epsilon, delta, asked.rho, asked.noise, asked.delta_keys)


@lru_cache(maxsize=256)
def _mapped(epsilon: float, delta: float, rho: float, noise: str, delta_keys: float, person: bool):
    dp = require_opendp()
    import polars as pl

    budget = Budget(epsilon, delta, rho, noise, delta_keys)
    columns = {"value": pl.Series([], dtype=pl.String)}
    if person:
        columns["person"] = pl.Series([], dtype=pl.String)
    unit = dp.unit_of(contributions=1, identifier=pl.col("person")) if person else dp.unit_of(contributions=1)
    try:
        context = dp.Context.compositor(
            data=pl.LazyFrame(columns), privacy_unit=unit, privacy_loss=opendp_loss(dp, budget)
        )
        return opendp_guarantee(dp, context.accountant, unit[1], budget)
    except dp.OpenDPException as err:
        raise SynthesisError(f"OpenDP could not state this budget ({innermost_error(err)}).") from None


# --------------------------------------------------------------------------- MST's split, replayed


def _prior(x: float) -> float:
    return float(np.nextafter(x, -np.inf))


MST_CANDIDATES = 64  # budgets tried a little below the one given (relative steps of 2^-44) for each number of pairs


def mst_split(noise: str, budget: float, columns: int, *, share: float | None = None) -> tuple[float, int]:
    """The budget (ε, or ρ for Gaussian noise) OpenDP 0.16's MST can spend of ``budget`` on
    ``columns`` columns, and the number of pairs it chooses. Found from the budget and the number
    of columns alone, before any record is read (remembered per process).

    MST splits its selection budget into one equal part per pair chosen, and OpenDP's sum of the
    parts, rounded up, can pass the budget they were cut from ("insufficient budget for query"),
    after the one-way tables were measured. The split is replayed here with OpenDP's own
    composition: the budget is lowered by steps of 2^-44 of itself (at most 64 steps, 4e-12 of
    it) until it fits. With 8, 12, 16 or 20 pairs (9, 13, 17 or 21 columns) no budget fits: the
    rounding is the same whatever the budget. MST then chooses one pair fewer, and says so (the
    tree leaves one pair of its parts unconnected). ``share``: MST runs after the fixed pairs in
    OpenDP's ``Sequential`` with weights ``share, 1 - share`` (the default method with a column
    to predict); its part is replayed through ``Sequential``'s own search too.

    >>> mst_split("Laplace", 3.0, 8)
    (3.0, 7)
    >>> spend, pairs = mst_split("Laplace", 3.0, 9)
    >>> pairs, 3.0 - 1e-11 < spend <= 3.0
    (7, True)
    """
    return _mst_split(str(noise), float(budget), int(columns), None if share is None else float(share))


@lru_cache(maxsize=256)
def _mst_split(noise: str, budget: float, columns: int, share: float | None) -> tuple[float, int]:
    dp = require_opendp()
    measure = dp.max_divergence() if noise == "Laplace" else dp.zero_concentrated_divergence()
    domain, metric = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()

    def composed(parts) -> float:
        return dp.c.make_adaptive_composition(domain, metric, measure, d_in=1, d_mids=list(parts)).map(1)

    def mst_part(total: float) -> float:
        """MST's budget inside the contingency table (after the one-way tables, and the fixed pairs)."""
        multiway = _prior(_prior(total - total * 0.5))
        if share is None:
            return multiway
        weights = (share, 1.0 - share)

        def composition(scale: float):
            return dp.c.make_adaptive_composition(domain, metric, measure, d_in=1, d_mids=[w * scale for w in weights])

        return weights[1] * dp.binary_search_param(composition, d_in=1, d_out=multiway, T=float)

    def fits(part: float, pairs: int) -> bool:
        measured = part * 0.9  # MST's measure_split
        select = _prior(_prior(part - measured))
        return composed([select, measured]) <= part and composed([_prior(select / pairs)] * pairs) <= select

    candidates = [budget * (1 - k * 2.0**-44) for k in range(MST_CANDIDATES)]
    try:
        first = mst_part(budget)
    except dp.OpenDPException:
        first = None
    for pairs in range(max(columns - 1, 1), 0, -1):
        # the rounding is the same for every budget with some numbers of pairs: tried on MST's part alone first
        if first is None or not any(fits(first * (1 - k * 2.0**-44), pairs) for k in range(MST_CANDIDATES)):
            continue
        for total in candidates:
            try:
                if fits(mst_part(total), pairs):
                    return total, pairs
            except dp.OpenDPException:
                continue
    raise SynthesisError(
        f"MST cannot split a budget of {budget:g} over {columns} columns in OpenDP 0.16; use the pairs method or "
        "change the budget slightly."
    )


def innermost_error(err) -> str:
    """OpenDP wraps an error raised inside its callbacks as FFI("...Traceback...Variant(\"...\")"):
    the innermost ``Variant: message``."""
    message = getattr(err, "message", None) or str(err)
    found = [(v, m) for v, m in re.findall(r'([A-Za-z]+)\("([^"\n]*)"\)', message) if v != "FFI"]
    if found:
        variant, text = found[-1]
    else:
        variant = getattr(err, "variant", type(err).__name__)
        lines = [line for line in message.strip().splitlines() if line.strip()]
        text = lines[-1].strip() if lines else ""
    return f"{variant}: {text}"[:200]


AIM_REMAINDER = 1e-11  # an AIM round's budget below it is what floating-point accounting left over


def guard_aim_remainder(module=None) -> None:
    """Let OpenDP 0.16's AIM stop on the budget its own accounting leaves over, as it intends to.

    AIM spends its budget round by round and gives the last round what is left,
    ``prior(d_out - d_spent)``; that is often a remainder of rounding (5.6e-17 of ε = 1 on two
    columns). OpenDP then searches a noise scale for it, the search fails with
    ``MakeMeasurement("scale (-0.5) must not be finite and non-negative")``, and AIM, which stops
    without a round when "d_out is so small that no scale is suitable", catches only a
    ``ValueError``: the whole release failed. Here a round whose budget is below ``AIM_REMAINDER``
    is not made, which is AIM's own stop (its ``_make_aim_marginal`` returning None). A remainder
    is a few units in the last place of the budget (ε or ρ at most 100: below 1e-13); a real
    round is at least the smallest budget over AIM's rounds (ρ = 1e-7 over 48 rounds: 2e-9).
    Stopping spends less than stated, never more. Installed once, on OpenDP's AIM module
    (``module``: that module, or a stand-in).

    >>> import types
    >>> fake = types.SimpleNamespace(_make_aim_marginal=lambda *args, **kw: "a round")
    >>> guard_aim_remainder(fake)
    >>> fake._make_aim_marginal("domain", "metric", "measure", {}, 5.6e-17), fake._make_aim_marginal(0, 0, 0, {}, 0.1)
    (None, 'a round')
    """
    if module is None:
        require_opendp()
        import importlib

        # OpenDP's own AIM module, patched where it is (like ``opendp.mod`` above), not imported from
        module = importlib.import_module("opendp.extras.mbi._aim")
    made = module._make_aim_marginal
    if getattr(made, "anonlib_guard", False):
        return

    def guarded(input_domain, input_metric, output_measure, d_in, d_out, *args, **kwargs):
        if float(d_out) < AIM_REMAINDER:
            return None  # AIM's own stop: no round for a remainder of rounding
        return made(input_domain, input_metric, output_measure, d_in, d_out, *args, **kwargs)

    guarded.anonlib_guard = True  # type: ignore[attr-defined]
    module._make_aim_marginal = guarded
