"""Numeric inputs, checked once: finite, whole where they must be, and within the
range the code computes exactly.

Every count, k, threshold, capacity, seed, time limit and size that reaches
anonlib from outside (a CLI option, a page widget, a record-count column, a
library call) passes through one of these functions, so a value the code
cannot compute with exactly is refused with one sentence instead of being
silently wrapped to a negative number, rounded, or turned into a traceback.

The limits:

- ``MAX_COUNT = 2**53``: records, class sizes, capacities and their totals.
  Record counts are summed per class in float64 (``np.bincount`` with weights),
  which is exact for every whole number up to 2**53; int64 sums of values below
  it cannot wrap as long as their total stays below it too, which is checked.
- ``MAX_SEED = 2**32 - 1``: a seed of any of the random generators used here.
- time limits are seconds above 0 and at most ``budget.MAX_SECONDS``.

Example:
    >>> whole_number(4.0, "k", minimum=1)
    4
    >>> whole_number(float("inf"), "k", minimum=1)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: k must be a whole number of at least 1; got inf.
    >>> whole_numbers([1, 2**70], "The capacities").tolist()
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The capacities must be at most 9,007,199,254,740,992 (the largest number counted exactly); found 1.18e+21.
"""

from __future__ import annotations

import math
import numbers as _abc

import numpy as np
import pandas as pd

from .budget import MAX_SECONDS
from .errors import ParameterError

MAX_COUNT = 2**53
MAX_SEED = 2**32 - 1


def shown(value: object) -> str:
    """A value as a message shows it: exact when short, scientific when long.

    >>> shown(-2), shown(10**22), shown(2.5), shown("x"), shown(float("nan"))
    ('-2', '1e+22', '2.5', "'x'", 'nan')
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, _abc.Integral):
        value = int(value)
        return f"{value:,}" if abs(value) < 10**16 else f"{float(value):.3g}"
    if isinstance(value, _abc.Real):
        return f"{float(value):.3g}" if abs(float(value)) >= 1e15 else f"{float(value):g}"
    if isinstance(value, str) and value.isascii():
        try:
            float(value)
            return shown_text(value.strip())  # a number typed as text (a CLI option) shows as typed
        except ValueError:
            pass
    text = repr(value) if isinstance(value, str) else str(value)
    return shown_text(text)


def shown_text(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _range_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is None:
        return "" if maximum is None else f"of at most {maximum:,}"
    if maximum is None or maximum >= MAX_COUNT:
        return f"of at least {minimum:,}"
    return f"from {minimum:,} to {maximum:,}"


def whole_number(
    value: object,
    what: str,
    *,
    minimum: int | None = 0,
    maximum: int | None = MAX_COUNT,
    error: type = ParameterError,
) -> int:
    """``value`` as a Python int, or ``error`` with one sentence unless it is a
    whole number from ``minimum`` to ``maximum`` (None: unbounded; floats such
    as 4.0 are fine; booleans, NaN, infinity and fractions are not; text only in
    ASCII digits: no superscripts, no other scripts' digits). The one parser of
    every whole number a user or a recipe gives (``anonlib.cli.common.whole_argument``
    for options, ``anonlib.core.fields.read_whole`` for recipe fields).

    >>> whole_number("12", "The seed")
    12
    >>> whole_number("²", "The power", minimum=1)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The power must be a whole number of at least 1; got '²'.
    >>> whole_number(-1, "The seed", maximum=MAX_SEED)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The seed must be a whole number from 0 to 4,294,967,295; got -1.
    """
    number: int | None = None
    if isinstance(value, (bool, np.bool_)):
        number = None
    elif isinstance(value, _abc.Integral):
        number = int(value)
    elif isinstance(value, _abc.Real):
        as_float = float(value)
        number = int(value) if math.isfinite(as_float) and as_float.is_integer() else None
    elif isinstance(value, str) and value.isascii():  # "²" or "١٢" is no number typed here
        text = value.strip().replace("_", "")
        try:
            number = int(text)
        except ValueError:
            try:
                as_float = float(text)
            except ValueError:
                as_float = math.nan
            number = int(as_float) if math.isfinite(as_float) and as_float.is_integer() else None
    below = number is not None and minimum is not None and number < minimum
    above = number is not None and maximum is not None and number > maximum
    if number is None or below or above:
        allowed = _range_text(minimum, maximum)
        if above and minimum is not None:
            allowed = f"from {minimum:,} to {maximum:,}"
        raise error(f"{what} must be a whole number{' ' if allowed else ''}{allowed}; got {shown(value)}.")
    return number


def whole_numbers(
    values: object,
    what: str,
    *,
    minimum: int = 0,
    maximum: int = MAX_COUNT,
    total: int | None = MAX_COUNT,
    error: type = ParameterError,
    text: bool = True,
) -> np.ndarray:
    """A flat sequence of whole numbers as an int64 array, each from ``minimum``
    to ``maximum`` and (unless ``total`` is None) adding up to at most ``total``;
    else ``error`` naming the first bad value. ``what`` is the sentence's
    subject ("The capacities"); ``text=False`` refuses numbers written as text.

    >>> whole_numbers([3, 4.0], "The capacities").tolist()
    [3, 4]
    >>> whole_numbers([3, -2], "The capacities")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The capacities cannot be negative; found -2.
    >>> whole_numbers([2**52, 2**52, 1], "The frequencies")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The frequencies add up to 9,007,199,254,740,993, more than 9,007,199,254,740,992 (the largest number counted exactly).
    """
    if values is None or isinstance(values, (str, bytes)) or np.ndim(values) == 0:
        raise error(f"{what} must be a list of whole numbers; got {shown(values)}.")
    if isinstance(values, (list, tuple)) and not {bool, np.bool_}.isdisjoint(map(type, values)):
        raise error(f"{what} must be whole numbers; found True or False.")
    if isinstance(values, pd.Series):
        array = values.to_numpy()
    else:
        try:
            array = np.asarray(values)
        except (OverflowError, ValueError, TypeError):
            array = np.asarray(list(values), dtype=object)  # type: ignore[call-overload]
    if array.ndim != 1:
        raise error(f"{what} must be a flat list of numbers.")
    if array.dtype.kind not in "iuf":
        array = _numeric(array, what, error, text)
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (np.floor(array) != array)
        if bad.any():
            raise error(f"{what} must be whole numbers; found {shown(array[bad][0])}.")
    if array.size:
        low, high = array.min(), array.max()
        if low < minimum:
            bad_low = array[array < minimum][0]
            rule = "cannot be negative" if minimum == 0 else f"must be at least {minimum:,}"
            raise error(f"{what} {rule}; found {shown(bad_low.item())}.")
        if high > maximum:
            why = " (the largest number counted exactly)" if maximum >= MAX_COUNT else ""
            raise error(f"{what} must be at most {maximum:,}{why}; found {shown(high.item())}.")
    array = array.astype(np.int64)
    if total is not None and array.size:
        approximate = float(array.sum(dtype=np.float64))  # cannot wrap; exact to 1e-16 relative
        exact = int(array.sum()) if approximate < 2.0**62 else None  # int64 sum cannot wrap then
        if exact is None or exact > total:
            raise error(
                f"{what} add up to {shown(exact if exact is not None else approximate)}, more than "
                f"{total:,} (the largest number counted exactly)."
            )
    return array


def _numeric(array: np.ndarray, what: str, error: type, text: bool) -> np.ndarray:
    """Booleans refused; Python ints kept exact (int64, or float64 past its range,
    which the range check then refuses); text and other objects through
    ``pd.to_numeric``."""
    items = array.tolist()
    if array.dtype.kind == "b" or any(isinstance(x, (bool, np.bool_)) for x in items):
        raise error(f"{what} must be whole numbers; found True or False.")
    if all(isinstance(x, _abc.Integral) for x in items):
        ints = [int(x) for x in items]
        if all(-(2**63) <= x < 2**63 for x in ints):
            return np.array(ints, dtype=np.int64)
        return np.array([float(x) for x in ints], dtype=np.float64)
    if array.dtype.kind not in "OUS" or not text:
        if all(isinstance(x, _abc.Real) for x in items):
            return np.array(items, dtype=np.float64)
        bad = next(x for x in items if not isinstance(x, _abc.Real))
        raise error(f"{what} must be whole numbers; found {shown(bad)}.")
    series = pd.Series(items, dtype=object)
    numbers = pd.to_numeric(series, errors="coerce")
    missing = numbers.isna().to_numpy()
    if missing.any():
        raise error(f"{what} must be whole numbers; found {shown(series[missing].iloc[0])}.")
    return numbers.to_numpy()


def real_number(
    value: object,
    what: str,
    *,
    minimum: float,
    maximum: float,
    above: bool = False,
    below: bool = False,
    error: type = ParameterError,
) -> float:
    """``value`` as a finite float within ``[minimum, maximum]`` (``above``/``below``
    exclude the bound), else ``error`` with one sentence.

    >>> real_number(0.2, "The threshold p", minimum=0, maximum=1, below=True)
    0.2
    >>> real_number(float("nan"), "The threshold p", minimum=0, maximum=1, below=True)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The threshold p must be at least 0 and below 1; got nan.
    """
    number: float | None = None
    if isinstance(value, _abc.Real) and not isinstance(value, (bool, np.bool_)):
        number = float(value)
    elif isinstance(value, str) and value.isascii():
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    ok = (
        number is not None
        and math.isfinite(number)
        and (number > minimum if above else number >= minimum)
        and (number < maximum if below else number <= maximum)
    )
    if not ok:
        low = f"above {minimum:g}" if above else f"at least {minimum:g}"
        high = f"below {maximum:g}" if below else f"at most {maximum:g}"
        raise error(f"{what} must be {low} and {high}; got {shown(value)}.")
    return float(number)  # type: ignore[arg-type]


def seed_number(seed: object) -> int | None:
    """A random seed: None (fresh randomness) or a whole number from 0 to ``MAX_SEED``.

    >>> seed_number(7), seed_number(None)
    (7, None)
    """
    return None if seed is None else whole_number(seed, "The seed", maximum=MAX_SEED)


def time_limit_seconds(value: object, what: str = "The time limit") -> float | None:
    """A time limit in seconds: None (the default) or a number above 0 and at
    most ``budget.MAX_SECONDS``.

    >>> time_limit_seconds(-5)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The time limit must be above 0 and at most 600 seconds; got -5.
    """
    if value is None:
        return None
    try:
        return real_number(value, what, minimum=0.0, maximum=MAX_SECONDS, above=True)
    except ParameterError:
        raise ParameterError(
            f"{what} must be above 0 and at most {MAX_SECONDS:g} seconds; got {shown(value)}."
        ) from None


def percent(share: float, *, compact: bool = False) -> str:
    """A share as a percentage: one decimal (``33.3%``, ``25.0%``), or ``compact`` as short
    as it reads (``0%``, ``0.02%``, ``33.3%``, ``25%``).

    >>> percent(1 / 3), percent(0.25), percent(0.0), percent(0.0002, compact=True), percent(0.25, compact=True)
    ('33.3%', '25.0%', '0.0%', '0.02%', '25%')
    """
    if not compact:
        return f"{100 * share:.1f}%"
    if share == 0:
        return "0%"
    value = 100 * share
    text = f"{value:.2g}" if value < 1 else f"{value:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"
