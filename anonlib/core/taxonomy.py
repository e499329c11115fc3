"""Bundled taxonomies for common fields, chosen for a column when its values match:
US state -> census division -> region, country -> continent, race (OMB, Adult's and
the diabetes file's spellings) -> a coarser group, ICD-10 code -> 3-character category
-> block -> chapter, ICD-9-CM code (as in the diabetes file: 250.83, 8 for 008, V27, E909) ->
3-character category -> chapter. The tables are CSV files in ``anonlib/core/taxonomies`` (public facts,
written for this package); values a taxonomy does not know go under ``other``.

ICD-10 blocks (``icd10_blocks.csv``) are the 263 innermost groups of 3-character
categories of the WHO's ICD-10, 2019 edition (A00-A09 Intestinal infectious diseases,
E10-E14 Diabetes mellitus, ...; where the WHO nests groups, as in neoplasms, joints,
burns and external causes, the innermost ones), with short titles. The chapters
(``icd10_chapters.csv``) use some ICD-10-CM ranges (C00-D49, K00-K95, O00-O9A), so a
column of ICD-10-CM codes has categories no WHO block holds: D49, E08, K95, O9A, the
other categories with a letter in third place (C4A, D3A, M1A, Z3A, ...), which sort
among WHO categories without belonging to their blocks, and numbered ones between two
WHO blocks (A90, B10, I16, Y37, ...). Such a category's block is its chapter's label
repeated (D49 -> C00-D49 Neoplasms -> C00-D49 Neoplasms): the code is known to its
chapter and no finer, and the levels still nest (a block-level ``other`` shared by
several chapters would not). We do not borrow the ICD-10-CM blocks, whose ranges differ
from the WHO's (the CM's chapter 20, say), so one column never mixes two editions' blocks.
"""

from __future__ import annotations

import bisect
import csv
import io
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

import pandas as pd

from .errors import HierarchyError, join_names
from .hierarchy import OTHER, SUPPRESSED, distinct_texts, text_frame

COVERAGE = 0.9  # share of a column's distinct values a bundled taxonomy must know


# --- bundled taxonomies ------------------------------------------------------------


def normalized(text: str) -> str:
    """A value as taxonomies compare it: lower case, letters and digits only.

    >>> normalized("United-States"), normalized("united states"), normalized("Trinadad&Tobago")
    ('unitedstates', 'unitedstates', 'trinadadtobago')
    """
    return re.sub(r"[^0-9a-z]", "", str(text).lower())


def _bundled_rows(file: str) -> list[dict[str, str]]:
    """The rows of a CSV file in ``core/taxonomies`` as dictionaries."""
    text = resources.files(__package__).joinpath("taxonomies", file).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@cache
def _lookup(name: str) -> dict[str, tuple[str, ...]]:
    """A lookup taxonomy: normalized value -> its generalizations below ``*``."""
    if name == "US states":
        rows = _bundled_rows("us_states.csv")
        paths = {normalized(r[field]): (r["division"], r["region"]) for r in rows for field in ("state", "code")}
    elif name == "countries":
        paths = {normalized(r["country"]): (r["continent"],) for r in _bundled_rows("countries.csv")}
    else:
        paths = {normalized(r["value"]): (r["group"],) for r in _bundled_rows("race_omb.csv")}
    return paths


_ICD10 = re.compile(r"^([A-Z]\d[0-9A-Z])(?:\.?[0-9A-Z]{1,4})?$")


@cache
def _icd10_ranges(file: str, column: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The first categories (sorted) and (first, last, label) of the ranges in an ICD-10
    table: the chapters or the blocks."""
    ranges = [(r["first"], r["last"], r[column]) for r in _bundled_rows(file)]
    return [first for first, _, _ in ranges], ranges


def _icd10_range(category: str, file: str, column: str) -> str | None:
    """The label of the range in an ICD-10 table that holds a 3-character category, or None."""
    firsts, ranges = _icd10_ranges(file, column)
    at = bisect.bisect_right(firsts, category) - 1
    if at >= 0 and ranges[at][0] <= category <= ranges[at][1]:
        return ranges[at][2]
    return None


def icd10_path(code: str) -> tuple[str, str, str] | None:
    """The 3-character category, block and chapter of an ICD-10 code, or None. A category
    in no WHO block (ICD-10-CM's D49, E08, O9A, ...) has its chapter as its block.

    >>> icd10_path("E11.9"), icd10_path("i10"), icd10_path("250.83")
    (('E11', 'E10-E14 Diabetes mellitus', 'E00-E90 Endocrine and metabolic'), ('I10', 'I10-I15 Hypertensive diseases', 'I00-I99 Circulatory system'), None)
    >>> icd10_path("D49.2")
    ('D49', 'C00-D49 Neoplasms', 'C00-D49 Neoplasms')
    """
    match = _ICD10.match(str(code).strip().upper())
    if not match:
        return None
    category = match.group(1)
    chapter = _icd10_range(category, "icd10_chapters.csv", "chapter")
    if chapter is None:
        return None
    block = _icd10_range(category, "icd10_blocks.csv", "block") if category[2].isdigit() else None
    return category, block or chapter, chapter


_ICD9 = re.compile(r"^(?:(\d{1,3})(?:\.\d{1,2})?|V(\d{1,2})(?:\.\d{1,2})?|E(\d{3})(?:\.\d)?)$")


@cache
def _icd9_chapters() -> list[tuple[str, str, str]]:
    """(first category, last category, chapter label) of each ICD-9-CM chapter."""
    return [(r["first"], r["last"], r["chapter"]) for r in _bundled_rows("icd9_chapters.csv")]


def icd9_path(code: str) -> tuple[str, str] | None:
    """The 3-character category (zero-padded, as ICD-9-CM writes it) and chapter of an
    ICD-9-CM diagnosis code, or None. Leading zeros may be missing, as in the diabetes file.

    >>> icd9_path("250.83"), icd9_path("8"), icd9_path("V27"), icd9_path("E909")[1]
    (('250', '240-279 Endocrine, metabolic and immunity'), ('008', '001-139 Infectious and parasitic'), ('V27', 'V01-V91 Health status and services (V codes)'), 'E000-E999 External causes (E codes)')
    >>> icd9_path("E11.9"), icd9_path("0")
    (None, None)
    """
    match = _ICD9.match(str(code).strip().upper())
    if not match:
        return None
    number, v_code, e_code = match.groups()
    if number is not None:
        if int(number) == 0:
            return None
        category = f"{int(number):03d}"
    elif v_code is not None:
        category = f"V{int(v_code):02d}"
    else:
        category = f"E{e_code}"
    for first, last, chapter in _icd9_chapters():
        if first[0] == category[0] or (first[0].isdigit() and category[0].isdigit()):
            if len(first) == len(category) and first <= category <= last:
                return category, chapter
    return None


def _icd9_like(keys: list[str]) -> bool:
    """Whether a column looks like ICD-9-CM codes rather than plain numbers: it holds at
    least one supplementary code (V or E), which a column of measurements never does."""
    return any(re.match(r"^[VE]\d", key.strip().upper()) for key in keys)


def _taxonomies() -> dict[str, Callable[[str], tuple[str, ...] | None]]:
    """Each bundled taxonomy as a function from a value to its path below ``*`` (None:
    unknown), in the order ties are settled."""
    return {
        "ICD-10 chapters": icd10_path,
        "ICD-9 chapters": icd9_path,
        "US states": lambda key: _lookup("US states").get(normalized(key)),
        "countries": lambda key: _lookup("countries").get(normalized(key)),
        "race (OMB)": lambda key: _lookup("race (OMB)").get(normalized(key)),
    }


TAXONOMIES = tuple(_taxonomies())


@dataclass(frozen=True)
class TaxonomyMatch:
    """A bundled taxonomy chosen for a column: its name, the hierarchy covering every
    value, the values it did not know (put under ``other``) and the share it knew."""

    name: str
    table: pd.DataFrame
    other: list[str]
    coverage: float

    def summary(self) -> str:
        """One sentence on what the taxonomy knew (plain text, data values included).

        >>> taxonomy_match(["Ohio", "Utah", "Mars"], name="US states").summary()
        "The bundled taxonomy 'US states' knows 2 of the column's 3 distinct values (67%); under 'other': Mars."
        """
        values = len(self.table)
        known = values - len(self.other)
        return (
            f"The bundled taxonomy '{self.name}' knows {known:,} of the column's {values:,} distinct values "
            f"({self.coverage:.0%})"
            + (f"; under '{OTHER}': {join_names(self.other)}." if self.other else "; every value is in it.")
        )


def taxonomy_match(values: Iterable, name: str | None = None) -> TaxonomyMatch | None:
    """The bundled taxonomy knowing the most of a column's distinct values (at least
    90% and two values), or the one called ``name``; None when none fits (and an
    error when the one called ``name`` knows none of them).

    Unknown values get ``other`` at every level below ``*``, so the hierarchy covers
    the whole column.

    >>> match = taxonomy_match(["Tennessee", "TN", "Ohio", "Atlantis"] * 10)
    >>> match is None  # 3 of 4 values known: below 90%
    True
    >>> match = taxonomy_match(["Tennessee", "TN", "Ohio", "Atlantis"], name="US states")
    >>> match.table.values.tolist()[-1], match.other
    (['Atlantis', 'other', 'other', '*'], ['Atlantis'])
    """
    keys = distinct_texts(values)
    if not keys:
        return None
    candidates = _taxonomies()
    if name is None and not _icd9_like(keys):
        del candidates["ICD-9 chapters"]  # numbers alone are measurements, not ICD-9 codes
    lettered = sum(any(ch.isalpha() for ch in key) for key in keys)
    if name is None and lettered < max(COVERAGE * len(keys), 2) and "ICD-9 chapters" not in candidates:
        return None  # every other bundled value has a letter: numbers match nothing
    if name is not None:
        if name not in candidates:
            raise HierarchyError(f"There is no bundled taxonomy called '{name}'; there are {join_names(TAXONOMIES)}.")
        candidates = {name: candidates[name]}
    best: tuple[str, list] | None = None
    best_known = 0
    for taxonomy, path_of in candidates.items():
        paths = [path_of(key) for key in keys]
        known = sum(path is not None for path in paths)
        if known > best_known:
            best, best_known = (taxonomy, paths), known
    if best is None:
        if name is not None:
            raise HierarchyError(f"The bundled taxonomy '{name}' knows none of this column's values; pick another one.")
        return None
    coverage = best_known / len(keys)
    if name is None and (coverage < COVERAGE or best_known < 2):
        return None
    taxonomy, paths = best
    depth = max(len(path) for path in paths if path is not None)
    rows = [[key, *(path if path is not None else (OTHER,) * depth), SUPPRESSED] for key, path in zip(keys, paths)]
    other = [key for key, path in zip(keys, paths) if path is None]
    return TaxonomyMatch(taxonomy, text_frame(rows), other, coverage)


def taxonomy_for(values: Iterable) -> tuple[str, pd.DataFrame] | None:
    """The name and hierarchy of the bundled taxonomy matching a column, or None.

    >>> name, table = taxonomy_for(["White", "Black", "Asian-Pac-Islander", "Other"])
    >>> name, table.iloc[2].tolist()
    ('race (OMB)', ['Asian-Pac-Islander', 'Asian or Pacific Islander', '*'])
    """
    match = taxonomy_match(values)
    return None if match is None else (match.name, match.table)
