"""Nothing released that the target does not count (``linkable.md`` part 2, 6).

Every released column is counted by the target (a quasi-identifier of the shield, the person
or household column), a declared sensitive attribute, or kept by an explicit decision
(``--keep``, role ``keep``). ``unkept_columns`` names the columns a release would let out
unchanged without any of these: the product's own quasi-identifiers left out of the shield,
and released columns stable within a person (``anonlib.core.stability``) that nobody
declared sensitive or kept. ``refuse_unkept`` turns them into one sentence with the three
choices. ``kept_risk`` is what an attacker who knows the kept columns sees: the people (or
records) unique once the kept columns are added to the quasi-identifiers, counted on the
released table.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> df = pd.DataFrame({"pid": [1, 1, 2, 2], "age": [30, 31, 40, 41], "born": [51, 51, 60, 60],
    ...                    "dx": ["a", "b", "a", "c"]})
    >>> ds = Dataset.from_frame("p.csv", df, {"pid": "person", "age": "quasi-identifier",
    ...                                       "born": "quasi-identifier", "dx": "sensitive"})
    >>> unkept_columns(ds, ["age"], released=["age", "born", "dx"])
    ('born',)
    >>> refuse_unkept(ds, ["age", "born"], released=["age", "born", "dx"])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.equivalence import row_class_sizes
from ..core.errors import ParameterError, join_names
from ..core.stability import STABLE_SHARE, stable_columns
from ..measures.linkage import history_risk


def unkept_columns(
    dataset: Dataset,
    shield: Sequence[str],
    *,
    released: Iterable[str],
    declared: Iterable[str] = (),
    changed: Iterable[str] = (),
) -> tuple[str, ...]:
    """The columns of ``released`` that would go out unchanged although the target does not count
    them and nobody decided to keep them: the dataset's quasi-identifiers (guessed or given) not in
    ``shield``, and, with a person column, the released columns stable within a person that are
    neither in the shield, the person or household column, kept (role ``keep``), nor in
    ``declared`` (the sensitive attributes the user named). ``changed`` are released changed by
    another step (a pseudonym, dates shifted per person): not unchanged. ``dataset`` is a ``Dataset`` or an
    engine's table (its stable columns then counted by the engine, ``anonlib.engine.owners.stable_shares``)."""
    shield, declared = set(shield), set(declared)
    released = [c for c in released if c not in set(changed)]
    released = list(dict.fromkeys(released))
    person = getattr(dataset, "person", None)
    counted = shield | {c for c in (person, getattr(dataset, "household", None)) if c}
    kept = set(dataset.kept)
    out = [
        c
        for c in released
        if c in dataset.quasi_identifiers and c not in counted and c not in kept and c not in declared
    ]
    if person is not None:
        open_ = [c for c in released if c not in counted and c not in kept and c not in declared and c not in out]
        roles = dict(dataset.roles)
        open_ = [c for c in open_ if roles.get(c) not in (Role.IDENTIFIER, Role.COUNT, Role.PERSON, Role.HOUSEHOLD)]
        if open_:
            if hasattr(dataset, "frame"):
                stable = set(stable_columns(dataset.frame, dataset.person, open_))
            else:  # an engine's table: the same shares counted where the records are
                from ..engine.owners import stable_shares

                shares = stable_shares(dataset, dataset.person, open_)
                stable = {c for c, share in shares.items() if share > STABLE_SHARE}
            out += [c for c in open_ if c in stable]
    return tuple(c for c in released if c in out)


def refuse_unkept(
    dataset: Dataset,
    shield: Sequence[str],
    *,
    released: Iterable[str],
    declared: Iterable[str] = (),
    changed: Iterable[str] = (),
    leave_out: str = "--role COL=ignore",
) -> None:
    """One sentence (``ParameterError``) naming ``unkept_columns`` and the three choices: shield
    them, keep them, or leave them out (``leave_out`` names how)."""
    columns = unkept_columns(dataset, shield, released=released, declared=declared, changed=changed)
    if not columns:
        return
    names = ",".join(columns)
    one = len(columns) == 1
    raise ParameterError(
        f"{join_names(columns)} {'is' if one else 'are'} guessed as "
        f"{'a quasi-identifier or stable within a person' if one else 'quasi-identifiers or stable within a person'} "
        f"and would be released unchanged, not counted by the target: shield {'it' if one else 'them'} "
        f"(--shield ...,{names}), keep {'it' if one else 'them'} unchanged (--keep {names}), or leave "
        f"{'it' if one else 'them'} out ({leave_out.replace('COL', columns[0])}"
        f"{'' if one else ' for each'})."
    )


@dataclass(frozen=True)
class KeptRisk:
    """What an attacker who knows the kept columns sees on the released table: ``unique`` owners
    (people, or records without a person column) alone on the quasi-identifiers plus the kept
    columns, of ``total``; ``unit`` names what is counted."""

    kept: tuple[str, ...]
    unit: str
    unique: int
    total: int

    def to_json(self) -> dict[str, object]:
        """``anonymize --json``'s keys: ``kept`` and, when something is kept, the unique count in its unit."""
        if not self.kept:
            return {"kept": []}
        return {
            "kept": list(self.kept),
            f"{self.unit}_unique_with_kept": self.unique,
            "kept_unit": self.unit,
        }

    def sentence(self) -> str:
        """The report's line on the kept columns."""
        if not self.kept:
            return "No column is released unchanged outside the target."
        return (
            f"Kept unchanged, not counted by the target: {join_names(self.kept)}; with them an attacker "
            f"finds {self.unique:,} of {self.total:,} {self.unit} unique"
            + (" on their history." if self.unit == "people" else ".")
        )


def kept_risk(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    kept: Sequence[str],
    *,
    person: str | None = None,
    count: str | None = None,
) -> KeptRisk:
    """The people unique on their history (``person`` given: its column released in ``table``) or
    the records unique (no person column) on ``quasi_identifiers`` plus ``kept``, counted on the
    released ``table`` (``count``: its column of records per row, as an engine's written rows).

    >>> t = pd.DataFrame({"p": ["x", "x", "y", "y"], "age": ["*"] * 4, "born": [51, 51, 60, 60]})
    >>> kept_risk(t, ["age"], ["born"], person="p")
    KeptRisk(kept=('born',), unit='people', unique=2, total=2)
    >>> kept_risk(t, ["age"], [], person="p").to_json()
    {'kept': []}
    """
    kept = tuple(kept)
    columns = [*quasi_identifiers, *(c for c in kept if c not in quasi_identifiers)]
    if not len(table) or not columns:
        return KeptRisk(kept, "people" if person else "records", 0, 0)
    if person is not None and person in table.columns:
        risk = history_risk(table, columns, person, count=count)
        return KeptRisk(kept, "people", risk.unique, risk.people)
    sizes = row_class_sizes(table, columns, count=count)
    total = int(table[count].sum()) if count else len(table)
    return KeptRisk(kept, "records", int((sizes == 1).sum()), total)


def released_kept_risk(recipe, table: pd.DataFrame) -> KeptRisk | None:
    """``kept_risk`` of a recipe's release ``table`` (None when the recipe keeps nothing): its
    quasi-identifiers, kept columns, count column and, when released, its person column, read
    off the recipe (``anonlib.workflow.recipe.Recipe``). The package states it and ``verify``
    recounts it on ``released.csv``."""
    kept = unchanged_kept(recipe.kept, [s.step for s in recipe.steps])
    if not kept:
        return None
    roles = recipe.source.roles
    qis = [c for c in recipe.columns if roles.get(c) == Role.QUASI_IDENTIFIER.value]
    count = next((c for c in recipe.columns if roles.get(c) == Role.COUNT.value), None)
    person = recipe.target.person if recipe.target.person in recipe.columns else None
    if count is not None:
        table = table.assign(**{count: pd.to_numeric(table[count])})
    return kept_risk(table, qis, kept, person=person, count=count)


def unchanged_kept(kept: Sequence[str], steps: Iterable = ()) -> tuple[str, ...]:
    """The ``kept`` columns no step of ``steps`` changes (dates shifted per person are kept by role
    but released changed): those an attacker may know as they are released.

    >>> from types import SimpleNamespace as S
    >>> unchanged_kept(("born", "visit"), [S(columns=("visit",))])
    ('born',)
    """
    changed = {c for step in steps for c in getattr(step, "columns", ())}
    return tuple(c for c in kept if c not in changed)
