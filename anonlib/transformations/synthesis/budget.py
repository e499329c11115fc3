"""OpenDP, loaded lazily (the optional ``dp`` extra), and the budget of a private release:
ε and δ, or ρ, converted by OpenDP's own maps (``privacy_budget``). Part of
``anonlib.transformations.synthesis``.

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
    return dp


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
    Gaussian (ρ-zCDP, which implies (ε, δ)-DP)."""

    epsilon: float
    delta: float
    rho: float
    noise: str

    @property
    def pure(self) -> bool:
        return self.noise == "Laplace"

    def sentence(self) -> str:
        """The budget in words.

        >>> Budget(1.0, 0.0, 0.5, "Laplace").sentence()
        'ε = 1 (pure differential privacy, δ = 0; Laplace noise; ρ = 0.5 in zero-concentrated terms)'
        """
        if self.pure:
            return (
                f"ε = {self.epsilon:g} (pure differential privacy, δ = 0; Laplace noise; "
                f"ρ = {self.rho:.4g} in zero-concentrated terms)"
            )
        return f"ε = {self.epsilon:.4g} with δ = {self.delta:g} (ρ = {self.rho:.4g} zero-concentrated; Gaussian noise)"


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
