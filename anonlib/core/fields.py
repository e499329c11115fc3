"""Reading recipe JSON strictly: every field is checked for presence and type.

A recipe travels outside the app (e-mailed, versioned, edited by hand). A
field that is missing, of the wrong type, unknown, or out of range gets one
sentence naming where it is (``RecipeError``), never a ``KeyError`` deep in a
step. The helpers take the object being read and a ``where`` text ("step 2",
"the target") used in the sentence.

Example:
    >>> read_whole({"k": 5}, "k", "the target", minimum=1)
    5
    >>> read_whole({"k": "5"}, "k", "the target")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe is damaged or was edited by hand: 'k' of the target must be a whole number, not '5'.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import AnonlibError, ColumnError, HierarchyError, ParameterError, RecipeError
from .numbers import MAX_COUNT, whole_number

DAMAGED = "The recipe is damaged or was edited by hand: "


def damaged(text: str) -> RecipeError:
    """A ``RecipeError`` whose sentence starts by saying the recipe is damaged.

    >>> str(damaged("step 1 has no kind."))
    'The recipe is damaged or was edited by hand: step 1 has no kind.'
    """
    return RecipeError(DAMAGED + text)


def json_value(text: str | bytes, what: str, error: type[AnonlibError] = RecipeError) -> Any:
    """``text`` (UTF-8 bytes, a BOM allowed, or text) parsed as JSON, or one sentence (``error``)
    naming ``what``: not UTF-8, not JSON (with its line), or brackets nested so deep that Python's
    parser gives up (a RecursionError, which must not end as "something unexpected"). Every JSON
    a user can hand anonlib (a recipe, a project export, a package's audit.json) is read here.

    >>> json_value(b'{"k": 5}', "The recipe")
    {'k': 5}
    >>> json_value("[" * 200_000 + "]" * 200_000, "The recipe")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe is not valid JSON (it is nested too deeply); it may be damaged.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise error(f"{what} is not UTF-8 text; it may be damaged.") from None
    try:
        return json.loads(text)
    except RecursionError:  # brackets nested thousands deep
        raise error(f"{what} is not valid JSON (it is nested too deeply); it may be damaged.") from None
    except ValueError as err:
        line = getattr(err, "lineno", None)
        raise error(
            f"{what} is not valid JSON" + (f" (line {line})" if line else "") + "; it may be cut short or damaged."
        ) from None


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 40 else text[:37] + "..."


def read_object(
    value: Any, where: str, *, required: Iterable[str] = (), optional: Iterable[str] = ()
) -> Mapping[str, Any]:
    """``value`` as a JSON object with exactly the ``required`` keys and some of ``optional``.

    >>> read_object({"a": 1}, "the target", required=["a"])
    {'a': 1}
    >>> read_object({"a": 1, "b": 2}, "the target", required=["a"])
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe is damaged or was edited by hand: the target has an unknown field 'b'.
    """
    if not isinstance(value, Mapping):
        raise damaged(f"{where} must be a JSON object, not {_shown(value)}.")
    required, optional = tuple(required), tuple(optional)
    absent = [key for key in required if key not in value]
    if absent:
        raise damaged(f"{where} lacks the field '{absent[0]}'.")
    unknown = [key for key in value if key not in required and key not in optional]
    if unknown:
        raise damaged(f"{where} has an unknown field '{unknown[0]}'.")
    return value


def read_list(obj: Mapping[str, Any], key: str, where: str) -> list:
    """A JSON array field.

    >>> read_list({"steps": []}, "steps", "the recipe")
    []
    """
    value = obj.get(key)
    if not isinstance(value, list):
        raise damaged(f"'{key}' of {where} must be a list, not {_shown(value)}.")
    return value


def read_text(
    obj: Mapping[str, Any], key: str, where: str, *, allowed: Iterable[str] | None = None, optional: bool = False
) -> str | None:
    """A text field (None allowed when ``optional``), one of ``allowed`` when given.

    >>> read_text({"kind": "bands"}, "kind", "step 1", allowed=["bands"])
    'bands'
    """
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise damaged(f"'{key}' of {where} must be text, not {_shown(value)}.")
    if allowed is not None:
        allowed = tuple(allowed)
        if value not in allowed:
            raise damaged(f"'{key}' of {where} is {_shown(value)}; it must be one of {', '.join(allowed)}.")
    return value


def read_number(
    obj: Mapping[str, Any],
    key: str,
    where: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    optional: bool = False,
) -> float | None:
    """A finite number field within [``minimum``, ``maximum``].

    >>> read_number({"width": 10}, "width", "step 1", minimum=0)
    10.0
    """
    value = obj.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise damaged(f"'{key}' of {where} must be a number, not {_shown(value)}.")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = (
            f"at least {minimum:g}"
            if maximum is None
            else f"at most {maximum:g}"
            if minimum is None
            else f"between {minimum:g} and {maximum:g}"
        )
        raise damaged(f"'{key}' of {where} is {value:g}; it must be {bounds}.")
    return float(value)


def read_whole(
    obj: Mapping[str, Any],
    key: str,
    where: str,
    *,
    minimum: int | None = None,
    maximum: int = MAX_COUNT,
    optional: bool = False,
) -> int | None:
    """A whole-number field (a JSON number, not text) from ``minimum`` to ``maximum`` (by default
    the largest number counted exactly), checked by the one parser (``numbers.whole_number``).

    >>> read_whole({"level": 2}, "level", "step 1", minimum=0)
    2
    >>> read_whole({"k": 10**30}, "k", "the target", minimum=1)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe is damaged or was edited by hand: 'k' of the target must be a whole number from 1 to 9,007,199,254,740,992; got 1e+30.
    """
    value = obj.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise damaged(f"'{key}' of {where} must be a whole number, not {_shown(value)}.")
    if minimum is not None and value < minimum and maximum >= MAX_COUNT:
        raise damaged(f"'{key}' of {where} is {value}; it must be at least {minimum}.")
    try:
        return whole_number(value, f"'{key}' of {where}", minimum=minimum, maximum=maximum)
    except ParameterError as err:
        raise damaged(str(err)) from None


def read_flag(obj: Mapping[str, Any], key: str, where: str) -> bool:
    """A true/false field.

    >>> read_flag({"integer": True}, "integer", "step 1")
    True
    """
    value = obj.get(key)
    if not isinstance(value, bool):
        raise damaged(f"'{key}' of {where} must be true or false, not {_shown(value)}.")
    return value


def read_texts(obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    """A list of texts.

    >>> read_texts({"columns": ["age", "sex"]}, "columns", "the release")
    ('age', 'sex')
    """
    values = read_list(obj, key, where)
    bad = [v for v in values if not isinstance(v, str)]
    if bad:
        raise damaged(f"'{key}' of {where} must list texts; {_shown(bad[0])} is not one.")
    return tuple(values)


def built(where: str, build):
    """Run a step's constructor on recipe values; its refusal becomes a recipe sentence.

    >>> built("step 1", lambda: int("x"))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe is damaged or was edited by hand: step 1 cannot be read.
    """
    try:
        return build()
    except RecipeError:
        raise
    except (ParameterError, HierarchyError, ColumnError) as err:
        raise damaged(f"{where} is inconsistent: {err}") from None
    except Exception:  # noqa: BLE001 - whatever a hand edit broke, one sentence
        raise damaged(f"{where} cannot be read.") from None
