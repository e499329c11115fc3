"""Population uniqueness estimated from a sample: Zayatz, Pitman, SNB and Dankar et al.'s rule.

The file holds n records drawn from a population of N = n / f people (f the
sampling fraction). A record unique in the file (a class of size 1, a "sample
unique") may or may not be unique in the population. Each model estimates the
number U of population uniques from the file's class-size frequencies
(c_j = number of classes of size j, u = number of classes); the reported value
is U / N, the share of the population that is unique, which is also the
expected share of the file's records that are population uniques (each of the
U is in the file with probability f, and n = f N).

- **Zayatz** (Zayatz 1991, "Estimation of the percent of unique population
  elements on a microdata file using the sample", US Census Bureau SRD report
  RR-91/08): the probability that a sample unique is a population unique,
  P = π_1 h(1) / Σ_j π_j h(j), with π_j = c_j / u the sample's class-size
  distribution standing in for the population's and h(j) the hypergeometric
  probability of drawing exactly one of j people in n draws out of N;
  U = c_1 P / f.
- **Pitman** (Hoshino 2001, "Applying Pitman's sampling formula to microdata
  disclosure risk assessment", J. Official Statistics 17(4)): class sizes follow
  Pitman's sampling formula with parameters θ > -α, 0 < α < 1, fitted by maximum
  likelihood on the c_j; U = Γ(θ + 1) / Γ(θ + α) N^α.
- **SNB** (Chen & Keller-McNulty 1998, "Estimation of identification disclosure
  risk in microdata", J. Official Statistics 14(1)): population class sizes are
  1 + a negative binomial NB(a, b) over K classes; a Bernoulli(f) sample of a
  class of such a size has 1 record with probability
  f (b/(1-d))^a (1 + a d / (1-d)) and 2 with probability
  a b^a f² (1-b) (2 - (1-a) d) / (2 (1-d)^(a+2)), d = (1-f)(1-b) (derived from
  the thinned negative binomial; the test checks both against a direct sum).
  K is Shlosser's estimator (Haas, Naughton, Seshadri & Stokes 1995); a, b solve
  K P(1) = c_1, K P(2) = c_2; U = K b^a.
- **Dankar** (Dankar, El Emam, Neisa & Roffey 2012, "Estimating the
  re-identification risk of clinical data sets", BMC Med. Inform. Decis. Mak.
  12:66): Pitman when f <= 0.1 (Zayatz if Pitman has no estimate), else the
  smaller of Zayatz and SNB (Zayatz if SNB has none), as ARX applies it.

Numerical safeguards (as ARX has them, our own code): no sample uniques gives 0
for every model; at f = 1 the file is the population and every model returns
the exact share c_1 / n; the hypergeometric terms are summed in log space; a
model whose fit fails or leaves [0, N] has no estimate (None) rather than a
made-up number; estimates are clipped to [0, 1].

Example:
    >>> u = population_uniqueness([1, 1, 2, 3, 5], sampling_fraction=1.0)
    >>> u.zayatz, u.pitman, u.snb, u.dankar
    (0.16666666666666666, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...core.errors import EmptySelectionError, ParameterError
from ...core.numbers import MAX_COUNT, whole_numbers

POPULATION_MODELS = ("zayatz", "pitman", "snb", "dankar")
DANKAR_SMALL_SAMPLE = 0.1  # Dankar et al.: Pitman at or below this sampling fraction


@dataclass(frozen=True)
class PopulationUniqueness:
    """Estimated share of the population that is unique, per model (None: no estimate),
    and the model Dankar et al.'s rule picked."""

    sampling_fraction: float
    records: int
    population: float
    sample_uniques: int
    zayatz: float | None
    pitman: float | None
    snb: float | None
    dankar: float | None
    dankar_model: str | None

    def as_dict(self) -> dict[str, float | None]:
        """Model name -> share (the contract's ``population_uniques``)."""
        return {m: getattr(self, m) for m in POPULATION_MODELS}


def sampling_fraction_checked(value: object) -> float:
    """The sampling fraction as a float in (0, 1], or a sentence.

    >>> sampling_fraction_checked(0.5)
    0.5
    """
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"The sampling fraction must be a number above 0 and at most 1; got '{value}'.") from None
    if not (0.0 < f <= 1.0):
        raise ParameterError(
            f"The sampling fraction is the share of the population that is in the file, above 0 and at most 1; got {f:g}."
        )
    return f


def class_sizes_checked(class_sizes: Iterable[int], what: str = "The class sizes") -> np.ndarray:
    """Class sizes (records or people per class) as int64, or a sentence naming the first
    value that is not a whole number from 0 to ``MAX_COUNT``.

    >>> class_sizes_checked([3, 1.0]).tolist()
    [3, 1]
    """
    values = class_sizes if isinstance(class_sizes, np.ndarray) else list(class_sizes)
    return whole_numbers(values, what, text=False)


def population_uniqueness(class_sizes: Iterable[int], sampling_fraction: float) -> PopulationUniqueness:
    """Zayatz, Pitman, SNB and Dankar estimates from the file's class sizes (records per class).

    >>> u = population_uniqueness([1] * 50 + [2] * 30 + [3] * 20 + [10] * 5, 0.05)
    >>> u.dankar_model, 0 < u.dankar < 1
    ('pitman', True)
    """
    f = sampling_fraction_checked(sampling_fraction)
    sizes = class_sizes_checked(class_sizes)
    sizes = sizes[sizes > 0]
    n = int(sizes.sum())
    if n == 0:
        raise EmptySelectionError("The table has no records, so population uniqueness cannot be estimated.")
    if n / f > MAX_COUNT:
        raise ParameterError(
            f"A sampling fraction of {f:g} makes the {n:,} records a sample of a population of about {n / f:.3g} people, more than "
            f"{MAX_COUNT:,} (the largest number counted exactly); check the sampling fraction."
        )
    size_values, frequencies = np.unique(sizes, return_counts=True)
    c1 = int(frequencies[0]) if size_values[0] == 1 else 0
    population = n / f
    if c1 == 0 or f == 1.0:
        share = c1 / n
        model = "exact" if f == 1.0 else "no sample uniques"
        return PopulationUniqueness(f, n, population, c1, share, share, share, share, model)
    zayatz = _share(_zayatz(size_values, frequencies, n, f), population)
    pitman = _share(_pitman(size_values, frequencies, n, population), population)
    snb = _share(_snb(size_values, frequencies, f), population)
    if f <= DANKAR_SMALL_SAMPLE:
        dankar, model = (pitman, "pitman") if pitman is not None else (zayatz, "zayatz")
    elif snb is not None and zayatz is not None and snb <= zayatz:
        dankar, model = snb, "snb"
    else:
        dankar, model = zayatz, "zayatz"
    return PopulationUniqueness(
        f, n, population, c1, zayatz, pitman, snb, dankar, model if dankar is not None else None
    )


def _share(uniques: float | None, population: float) -> float | None:
    if uniques is None or not math.isfinite(uniques) or uniques < 0 or uniques > population * (1 + 1e-9):
        return None
    return float(min(max(uniques / population, 0.0), 1.0))


def _zayatz(sizes: np.ndarray, frequencies: np.ndarray, n: int, f: float) -> float:
    """Zayatz's number of population uniques (hypergeometric terms in log space)."""
    from scipy import special, stats  # imported when estimated: opening a page needs no scipy

    population = max(int(round(n / f)), n)
    log_h = stats.hypergeom.logpmf(1, population, sizes, n)  # P(exactly 1 of j people drawn)
    log_terms = np.log(frequencies) + log_h
    log_p = log_terms[0] - special.logsumexp(log_terms) if sizes[0] == 1 else -np.inf
    return float(frequencies[0] * math.exp(log_p) / f)


def _pitman(sizes: np.ndarray, frequencies: np.ndarray, n: int, population: float) -> float | None:
    """Hoshino's estimate U = Γ(θ+1)/Γ(θ+α) N^α with (θ, α) the maximum-likelihood
    parameters of Pitman's sampling formula for the observed class sizes."""
    from scipy import optimize, special  # imported when estimated: opening a page needs no scipy

    u = int(frequencies.sum())
    c1 = float(frequencies[0]) if sizes[0] == 1 else 0.0
    c2 = float(frequencies[sizes == 2].sum()) or 1.0

    def negative_log_likelihood(x: np.ndarray) -> float:
        a = special.expit(x[0])
        if not 0.0 < a < 1.0:  # expit rounded to 0 or 1 far out: the likelihood is not defined there
            return 1e300
        t = -a + math.exp(x[1])
        # Π_{i=1}^{u-1} (θ + iα) / Π_{i=1}^{n-1} (θ + i) · Π_j [Π_{i=1}^{j-1} (i - α)]^{c_j}
        value = (u - 1) * math.log(a) + special.gammaln(t / a + u) - special.gammaln(t / a + 1)
        value -= special.gammaln(t + n) - special.gammaln(t + 1)
        value += float(np.dot(frequencies, special.gammaln(sizes - a) - special.gammaln(1 - a)))
        return -value if math.isfinite(value) else 1e300

    starts = [(0.5, 1.0)]
    c = c1 * (c1 - 1) / c2  # Hoshino's moment-type starting values (as ARX uses them)
    denominator = 2 * c1 * u + c1 * c - n * c
    if denominator != 0:
        t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / denominator
        a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
        if 0 < a0 < 1 and t0 > -a0:
            starts.insert(0, (a0, t0))
    best = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a0, t0 in starts:
            x0 = np.array([special.logit(a0), math.log(t0 + a0)])
            result = optimize.minimize(
                negative_log_likelihood,
                x0,
                method="Nelder-Mead",
                options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000},
            )
            if best is None or result.fun < best.fun:
                best = result
    if best is None or not np.all(np.isfinite(best.x)) or best.fun >= 1e299:
        return None
    a = float(special.expit(best.x[0]))
    t = -a + math.exp(best.x[1])
    log_u = special.gammaln(t + 1) - special.gammaln(t + a) + a * math.log(population)
    return math.exp(log_u) if math.isfinite(log_u) else None


def snb_probabilities(a: float, b: float, f: float) -> tuple[float, float]:
    """P(a class has 1 record in the sample), P(2 records), for a population class size of
    1 + NB(a, b) and Bernoulli(f) sampling (Chen & Keller-McNulty 1998).

    >>> [round(x, 6) for x in snb_probabilities(1.0, 1.0, 0.3)]   # every class has one person
    [0.3, 0.0]
    """
    d = (1 - f) * (1 - b)
    p1 = f * (b / (1 - d)) ** a * (1 + a * d / (1 - d))
    p2 = a * b**a * f * f * (1 - b) * (2 - (1 - a) * d) / (2 * (1 - d) ** (a + 2))
    return p1, p2


def shlosser(sizes: np.ndarray, frequencies: np.ndarray, f: float) -> float:
    """Shlosser's estimate of the number of classes in the population.

    >>> round(shlosser(np.array([1, 2]), np.array([10, 5]), 0.5), 4)
    23.3333
    """
    u = float(frequencies.sum())
    c1 = float(frequencies[0]) if sizes[0] == 1 else 0.0
    q = 1.0 - f
    numerator = float(np.dot(frequencies, np.power(q, sizes.astype(np.float64))))
    denominator = float(np.dot(frequencies, sizes * f * np.power(q, sizes.astype(np.float64) - 1)))
    return u + c1 * numerator / denominator if denominator > 0 else u


def _snb(sizes: np.ndarray, frequencies: np.ndarray, f: float) -> float | None:
    """U = K b^a with (a, b) solving K P(1) = c_1, K P(2) = c_2."""
    from scipy import optimize, special  # imported when estimated: opening a page needs no scipy

    k = shlosser(sizes, frequencies, f)
    c1 = float(frequencies[0]) if sizes[0] == 1 else 0.0
    c2 = float(frequencies[sizes == 2].sum())
    if c2 == 0:
        return None  # two equations need both counts

    def residuals(x: np.ndarray) -> np.ndarray:
        a, b = math.exp(x[0]), special.expit(x[1])
        p1, p2 = snb_probabilities(a, b, f)
        return np.array([k * p1 / c1 - 1.0, k * p2 / c2 - 1.0])

    best = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a0, b0 in ((1.0, 0.5), (0.1, 0.1), (5.0, 0.9), (0.01, 0.01)):
            try:
                result = optimize.least_squares(
                    residuals, [math.log(a0), special.logit(b0)], xtol=1e-14, ftol=1e-14, gtol=1e-14
                )
            except (ValueError, FloatingPointError, OverflowError):
                continue
            if best is None or result.cost < best.cost:
                best = result
    if best is None or not np.all(np.isfinite(best.fun)) or np.max(np.abs(best.fun)) > 1e-6:
        return None
    a, b = math.exp(best.x[0]), float(special.expit(best.x[1]))
    return k * b**a
