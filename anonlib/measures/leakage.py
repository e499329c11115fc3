"""Information leakage of attributes: Longpre et al.'s average information loss.

Arca & Hewett (2021), Section 3.1. An attacker looking for one of n individuals
learns the value of a query attribute (or of several); that splits the
individuals into partitions E_1..E_m. With a uniform prior over records:

- ``S_0 = log2 n`` is the attacker's uncertainty before the query;
- ``S_j`` is the uncertainty left inside partition E_j (``log2 |E_j|``);
- the average information loss is ``dS = sum_j p(E_j) (S_0 - S_j)``, normalized
  ``dS / S_0`` in [0, 1] (1: the attribute identifies everyone).

``dS`` equals the Shannon entropy of the partition, ``-sum_j p(E_j) log2 p(E_j)``
(substitute ``S_j = log2(n p(E_j))``); this module computes it that way, so a
table of all attributes and all pairs of a large dataset is instant. Partitions
come from the shared counting kernel (or a data engine's group-by, see
``anonlib.engine``); a record-count column weights each row.

Example (the paper's Table 2, Sex row):
    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> row = leakage_table(df, ["Sex"], count="#Rec.").iloc[0]
    >>> int(row.partitions), round(float(row.loss), 5), round(float(row.normalized), 5)
    (2, 0.99277, 0.16807)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from ..core.budget import WorkEstimate, check_work, subset_count
from ..core.equivalence import Classes, EncodedTable, combine, encode, size_histogram
from ..core.errors import ColumnError, EmptySelectionError, ParameterError
from ..core.numbers import shown, whole_number

LEAKAGE_COLUMNS = ["attribute", "partitions", "loss", "normalized"]

Attribute = str | tuple[str, ...]


@dataclass(frozen=True)
class Leakage:
    """Leakage of one query attribute (or combination): partitions, dS in bits, dS / S_0."""

    attribute: Attribute
    partitions: int
    loss: float
    normalized: float


def attribute_sets(columns: Sequence[str], sizes: Sequence[int] = (1,)) -> list[Attribute]:
    """All single attributes (as strings) and combinations (as tuples) of the given sizes.

    >>> attribute_sets(["a", "b", "c"], sizes=(1, 2))
    ['a', 'b', 'c', ('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    out: list[Attribute] = []
    for size in sizes:
        if size < 1:
            raise ParameterError(f"A combination needs at least one attribute; got size {size}.")
        if size == 1:
            out.extend(columns)
        else:
            out.extend(combinations(columns, size))
    return out


def partition_entropy(sizes: np.ndarray, classes: np.ndarray | None = None) -> float:
    """Shannon entropy (bits) of a partition given its part sizes; equals Longpre's dS.

    ``classes`` (optional) says how many parts have each size (``size_histogram``).
    The sum runs over the distinct sizes in ascending order, so the result is the
    same to the last bit whichever engine counted the parts.

    >>> round(partition_entropy(np.array([27, 33])), 5)
    0.99277
    >>> partition_entropy(np.array([1, 2]), classes=np.array([2, 1]))
    1.5
    """
    if classes is None:
        sizes, classes = size_histogram(sizes)
    sizes = np.asarray(sizes, dtype=np.int64)
    classes = np.asarray(classes, dtype=np.int64)
    keep = (sizes > 0) & (classes > 0)
    sizes, classes = sizes[keep], classes[keep]
    total = int((sizes * classes).sum())
    if total <= 0:
        return 0.0
    p = sizes / total
    return float(max(0.0, -(classes * p * np.log2(p)).sum()))


def leakage_from_histogram(attribute: Attribute, sizes: np.ndarray, classes: np.ndarray) -> Leakage:
    """Leakage of one attribute from the sizes of the partitions it makes
    (``classes[i]`` partitions of ``sizes[i]`` records; an engine's group-by gives the same).

    >>> leakage_from_histogram("a", np.array([1, 2]), np.array([2, 1])).normalized
    0.75
    """
    loss = partition_entropy(sizes, classes)
    records = int((np.asarray(sizes, dtype=np.int64) * np.asarray(classes, dtype=np.int64)).sum())
    s0 = float(np.log2(records)) if records > 1 else 0.0
    return Leakage(
        attribute=attribute if isinstance(attribute, str) else tuple(attribute),
        partitions=int(np.asarray(classes)[np.asarray(sizes) > 0].sum()),
        loss=loss,
        normalized=loss / s0 if s0 > 0 else 0.0,
    )


def attribute_names(attribute: Attribute) -> tuple[str, ...]:
    """The columns of one attribute or combination.

    >>> attribute_names("Age"), attribute_names(("Age", "Zip"))
    (('Age',), ('Age', 'Zip'))
    """
    names = (attribute,) if isinstance(attribute, str) else tuple(attribute)
    if not names:
        raise EmptySelectionError("A leakage query needs at least one attribute.")
    return names


def leakage_of(table: EncodedTable, attribute: Attribute) -> Leakage:
    """Leakage of one attribute or combination on an already encoded table.

    >>> t = encode(pd.DataFrame({"a": [1, 1, 2, 3]}))
    >>> leakage_of(t, "a").normalized
    0.75
    """
    positions = [table.position(name) for name in attribute_names(attribute)]
    ids, n = combine([table.codes[:, p] for p in positions], [table.cardinalities[p] for p in positions], table.n_rows)
    sizes = Classes.from_ids(ids, n, table.weights).sizes
    return leakage_from_histogram(attribute, *size_histogram(sizes))


def query_attributes(
    columns: Sequence[str],
    attributes: Sequence[Attribute] | None,
    *,
    count: str | None = None,
    sizes: Sequence[int] | None = None,
    n_rows: int = 0,
) -> tuple[list[Attribute], list[str]]:
    """The attributes a leakage table asks about, and the columns they use
    (``n_rows``, when known, sizes the work estimate of combinations by size).

    >>> query_attributes(["a", "b", "n"], None, count="n", sizes=(2,))
    ([('a', 'b')], ['a', 'b'])
    """
    if attributes is None:
        attributes = [c for c in columns if c != count]
    attributes = [attributes] if isinstance(attributes, str) else list(attributes)
    if sizes is not None:
        if any(isinstance(a, tuple) for a in attributes):
            raise ParameterError("Give single column names when asking for combinations by size.")
        sizes = _combination_sizes(sizes, len(attributes))
        check_work(
            estimate_leakage_table(n_rows, len(attributes), sizes),
            narrow="choose fewer attributes or smaller combinations",
        )
        attributes = attribute_sets(attributes, sizes)
    if not attributes:
        raise EmptySelectionError("Choose at least one attribute to measure its information leakage.")
    names = list(dict.fromkeys(n for a in attributes for n in attribute_names(a)))
    if count is not None and count in names:
        raise ColumnError(f"'{count}' is the record-count column; it cannot be a query attribute.")
    return attributes, names


def leakage_frame(rows: Sequence[Leakage]) -> pd.DataFrame:
    """The leakage table (columns ``LEAKAGE_COLUMNS``) of some measured attributes."""
    return pd.DataFrame(
        {
            "attribute": pd.Series([r.attribute for r in rows], dtype=object),
            "partitions": np.array([r.partitions for r in rows], dtype=np.int64),
            "loss": np.array([r.loss for r in rows], dtype=np.float64),
            "normalized": np.array([r.normalized for r in rows], dtype=np.float64),
        },
        columns=LEAKAGE_COLUMNS,
    )


def leakage_table(
    df: pd.DataFrame,
    attributes: Sequence[Attribute] | None = None,
    *,
    count: str | None = None,
    sizes: Sequence[int] | None = None,
    engine=None,
) -> pd.DataFrame:
    """Average information loss per attribute or combination (the paper's Table 2).

    ``attributes``: column names (one row each) and tuples of names (one row per
    combination); None = every column but the count column. ``sizes`` expands
    the given columns into all combinations of those sizes (e.g. ``(1, 2)``:
    singles and pairs). Columns: ``attribute``, ``partitions``, ``loss`` (bits),
    ``normalized`` (loss / log2 of the number of records).

    ``df`` may also be a path to CSV/Parquet files or a table on a data engine
    (``anonlib.engine.scan``); with such a source, or with ``engine="duckdb"``/
    ``"spark"``, the partitions are counted by that engine.

    >>> from anonlib.core.samples import load_sample
    >>> t = leakage_table(load_sample("arca_table1").frame, ["Age", "Zip"], count="#Rec.")
    >>> t.partitions.tolist(), truncated(t.loss), truncated(t.normalized)  # as printed in Table 2
    ([13, 8], [3.55, 2.75], [0.6, 0.46])
    """
    if engine is not None or not isinstance(df, pd.DataFrame):  # one group-by per attribute on the engine
        from ..engine import WEIGHT, as_engine_table, size_histograms

        source = as_engine_table(df, engine)
        count = count if count is not None else source.count
        attributes, names = query_attributes(source.columns, attributes, count=count, sizes=sizes)
        frame, _ = source.summary(names, count=count)
        histograms = size_histograms(
            frame, [attribute_names(a) for a in attributes], count=WEIGHT, engine=source.engine
        )
        return leakage_frame([leakage_from_histogram(a, *h) for a, h in zip(attributes, histograms)])
    attributes, names = query_attributes(list(df.columns), attributes, count=count, sizes=sizes, n_rows=len(df))
    table = encode(df, names, count=count)
    return leakage_frame([leakage_of(table, a) for a in attributes])


def _combination_sizes(sizes: Sequence[int], n_columns: int) -> list[int]:
    """Distinct combination sizes in increasing order, each from 1 to ``n_columns``."""
    checked = sorted({whole_number(size, "A combination size", minimum=None, maximum=None) for size in sizes})
    if checked and checked[0] < 1:
        raise ParameterError(f"A combination needs at least one attribute; got size {checked[0]}.")
    if checked and checked[-1] > n_columns:
        raise ParameterError(
            f"A combination of {shown(checked[-1])} attributes needs that many columns; "
            f"{n_columns:,} {'is' if n_columns == 1 else 'are'} chosen."
        )
    return checked


def estimate_leakage_table(n_rows: int, n_columns: int, sizes: Sequence[int]) -> WorkEstimate:
    """What a leakage table of every combination of ``sizes`` among ``n_columns``
    columns costs (measured on 2 cores: about 0.2 ms per combination plus 0.1 us
    per row and attribute; about 300 bytes per result row).

    >>> estimate_leakage_table(20, 36, [12]).operations
    1251677700
    """
    combinations_ = subset_count(n_columns, sizes)
    attribute_cells = sum(math.comb(n_columns, s) * s for s in sizes)
    return WorkEstimate(
        f"the leakage of {combinations_:,} attribute combinations",
        operations=combinations_,
        seconds=2e-4 * combinations_ + 1e-7 * n_rows * attribute_cells,
        peak_bytes=300 * combinations_ + 8 * n_rows * n_columns,
    )


def truncated(values: Sequence[float], decimals: int = 2) -> list[float]:
    """Values cut (not rounded) to ``decimals``, as the paper prints its tables.

    >>> truncated([0.16807, 3.558])
    [0.16, 3.55]
    """
    scale = 10.0**decimals
    return [float(np.floor(float(v) * scale + 1e-9) / scale) for v in values]


def attribute_label(attribute: Attribute) -> str:
    """Display text of an attribute or combination.

    >>> attribute_label(("Age", "Zip")), attribute_label("Sex")
    ('Age + Zip', 'Sex')
    """
    return " + ".join(map(str, attribute)) if isinstance(attribute, tuple) else str(attribute)


def compare_leakage(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Normalized leakage before and after anonymization side by side (the paper's Table 8).

    >>> b = pd.DataFrame({"attribute": ["Age"], "partitions": [4], "loss": [1.0], "normalized": [0.5]})
    >>> a = b.assign(partitions=1, loss=0.0, normalized=0.0)
    >>> compare_leakage(b, a).to_dict("records")
    [{'attribute': 'Age', 'before': 0.5, 'after': 0.0, 'change': -0.5}]
    """
    out = pd.DataFrame(
        {
            "attribute": [attribute_label(a) for a in before["attribute"]],
            "before": before["normalized"].to_numpy(),
            "after": after["normalized"].to_numpy(),
        }
    )
    out["change"] = out["after"] - out["before"]
    return out
