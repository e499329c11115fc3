"""The recipe: a release written down so it can be re-applied without the app.

A recipe (JSON, ``"format": "anonlib-recipe"``, ``"version": 1``) holds

- ``source``: the loaded file's name, fingerprint, rows and records, how it was
  read (delimiter, encoding, header), the missing-value policy and every
  column with its type and role;
- ``target``: the release target (k, privacy models, suppression limit);
- ``steps``: every step in order, each with the page it came from;
- ``release``: the released columns, and the SHA-256 and records of the
  released table it produced (to confirm a reproduction), and the loaded
  file's assessed records (the base of the suppressed share);
- ``content_sha256``: the SHA-256 of the canonical JSON of everything else
  (keys sorted, no spaces, UTF-8). A recipe read back knows whether its content
  still matches (``integrity``: ``intact``, ``edited``, or ``no digest`` for a
  recipe written before digests); ``require_intact`` turns that into a sentence.
  The digest detects a change; it does not say who made the recipe (anyone can
  recompute it), see docs/workflow.md.

``apply_recipe(recipe, file)`` reads a file the way the source was read,
checks its layout, sets the recorded types and roles, applies the steps,
checks the target and builds the released table with the one writer
(``anonlib.workflow.release``). Applied to the file it was made from, the
bytes equal the ones recorded. Anything that does not fit (a damaged JSON, a
missing column, a value no step knows) is one ``AnonlibError`` sentence.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow.history import WorkingCopy
    >>> from anonlib.workflow.steps import BandsStep
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [31, 35, 38, 44, 41]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(BandsStep("age", 10, 1, 31, 44, True), "Individual privacy")
    >>> recipe = copy.recipe()
    >>> Recipe.loads(recipe.dumps()) == recipe
    True
    >>> replay = recipe.replay(ds)
    >>> replay.check.met, replay.reproduces, replay.table["age"].tolist()
    (True, True, ['31-39', '31-39', '31-39', '40-44', '40-44'])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.cells import records_in
from ..core.dataset import ROLE_VALUES, Dataset, Role, column_kind, convert_column
from ..core.errors import AnonlibError, ColumnError, KeyFileError, RecipeError, join_names
from ..core.fields import damaged, json_value, read_list, read_object, read_text, read_texts, read_whole
from ..core.hierarchy import SUPPRESSED
from ..core.histories import Earlier
from ..core.loading import load_table
from ..measures.target import ReleaseTarget, TargetCheck
from .health_steps import CapRecordsStep, needs_key
from .release import (
    check_release_columns,
    digest,
    file_digest,
    is_sha256,
    pseudonymized_columns,
    release_csv,
    release_table,
)
from .steps import Step, step_from_json

RECIPE_FORMAT = "anonlib-recipe"
RECIPE_VERSION = 1
TYPES = ("integer", "number", "category")
MAX_RECIPE_BYTES = 64 * 1024 * 1024
MAX_RECIPE_STEPS = 1_000  # a session's history is a few dozen steps; more is not a recipe anonlib wrote


@dataclass(frozen=True)
class Reading:
    """How a file was read: delimiter, encoding and header (None = detect, as the loader
    does), and the SHA-256 of the file's bytes (None when the table did not come from a
    file, e.g. a bundled sample).

    >>> Reading(",", "utf-8", True).to_json()
    {'delimiter': ',', 'encoding': 'utf-8', 'header': True, 'sha256': None}
    """

    delimiter: str | None = None
    encoding: str | None = None
    header: bool | None = None
    sha256: str | None = None

    @classmethod
    def of(cls, table, data: bytes | str | Path | None = None) -> Reading:
        """What ``load_table`` detected or was told (a ``LoadedTable``), with the
        SHA-256 of ``data`` (the bytes read, or the file's path) when given."""
        return cls(table.delimiter, table.encoding, table.header, None if data is None else file_digest(data))

    def to_json(self) -> dict[str, Any]:
        return {"delimiter": self.delimiter, "encoding": self.encoding, "header": self.header, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: Any, where: str = "the source's reading") -> Reading:
        read_object(data, where, required=("delimiter", "encoding", "header"), optional=("sha256",))
        header = data["header"]
        if header is not None and not isinstance(header, bool):
            raise damaged(f"'header' of {where} must be true, false or null.")
        sha256 = read_text(data, "sha256", where, optional=True)
        if sha256 is not None and not is_sha256(sha256):
            raise damaged(f"'sha256' of {where} must be 64 hexadecimal digits or null.")
        return cls(
            read_text(data, "delimiter", where, optional=True),
            read_text(data, "encoding", where, optional=True),
            header,
            sha256,
        )


@dataclass(frozen=True)
class SourceColumn:
    """One column of the loaded file: its name, type (integer, number, category) and role."""

    name: str
    type: str
    role: str


def absent_note(columns: Sequence[str], what: str = "The delivery") -> str:
    """The note for recorded columns a file lacks that the release never uses nor releases.

    >>> absent_note(["hhninc"])
    'The delivery lacks hhninc, which the release never uses nor releases (ignored or an identifier); it is released without it.'
    """
    return (
        f"{what} lacks {join_names(columns)}, which the release never uses nor releases (ignored or an identifier); "
        f"it is released without {'them' if len(columns) > 1 else 'it'}."
    )


@dataclass(frozen=True)
class Source:
    """The loaded file as the recipe remembers it."""

    name: str
    fingerprint: str
    rows: int
    records: int
    missing: str
    columns: tuple[SourceColumn, ...]
    reading: Reading = field(default_factory=Reading)

    @classmethod
    def of(cls, dataset: Dataset, reading: Reading | None = None) -> Source:
        """The source of a loaded dataset."""
        table = dataset.role_table()
        return cls(
            name=str(dataset.name),
            fingerprint=dataset.fingerprint,
            rows=dataset.n_rows,
            records=dataset.n_records,
            missing=dataset.missing,
            columns=tuple(
                SourceColumn(*map(str, row)) for row in table[["column", "type", "role"]].itertuples(index=False)
            ),
            reading=reading or Reading(),
        )

    @property
    def roles(self) -> dict[str, str]:
        return {c.name: c.role for c in self.columns}

    @property
    def sha256(self) -> str | None:
        """SHA-256 of the loaded file's bytes (None when it did not come from a file)."""
        return self.reading.sha256

    def needed(self, steps: Iterable[Step] = (), released: Iterable[str] = ()) -> tuple[str, ...]:
        """The columns a file must have to be released this way: every column the release
        analyses or may release (a role other than ignore or identifier), those ``steps`` use
        and those ``released``. An ignored or identifier column no step uses is never
        released: a delivery may lack it.

        >>> source = Source("d", "f", 1, 1, "category", (SourceColumn("age", "integer", "quasi-identifier"),
        ...                 SourceColumn("income", "number", "ignore"), SourceColumn("mrn", "category", "identifier")))
        >>> source.needed(), source.needed(released=["mrn"])
        (('age',), ('age', 'mrn'))
        """
        used = {c for step in steps for c in step.columns} | set(released)
        never = (Role.IGNORE.value, Role.IDENTIFIER.value)
        return tuple(c.name for c in self.columns if c.role not in never or c.name in used)

    def dataset(self, frame: pd.DataFrame, name: str | None = None, *, needed: Iterable[str] | None = None) -> Dataset:
        """``frame`` (a new delivery or the same file) as the recipe's dataset: every
        ``needed`` column (default: every recorded one; ``Source.needed``) must exist; a
        recorded column not needed may be absent (the dataset's notes say so); the recorded
        types are set (a value that does not convert is a sentence); extra columns are
        ignored and never released."""
        wanted = [c.name for c in self.columns]
        required = set(wanted if needed is None else needed)
        missing = [c for c in wanted if c in required and c not in frame.columns]
        if missing:
            raise ColumnError(
                f"This file lacks {join_names(missing)}, which the recipe needs: it was made for a file with the "
                f"columns {join_names(wanted, 12)}."
            )
        absent = [c.name for c in self.columns if c.name not in frame.columns]
        present = [c for c in self.columns if c.name in frame.columns]
        for column in present:
            if column_kind(frame[column.name]) != column.type:
                frame = convert_column(frame, column.name, column.type)
        roles = {c.name: c.role for c in present}
        roles.update({str(c): Role.IGNORE.value for c in frame.columns if c not in roles})
        return Dataset(
            name=name or self.name,
            frame=frame,
            roles={c: Role(r) for c, r in roles.items()},
            missing=self.missing,
            notes=(absent_note(absent, "This file"),) if absent else (),
        ).validated()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "fingerprint": self.fingerprint,
            "rows": self.rows,
            "records": self.records,
            "missing": self.missing,
            "reading": self.reading.to_json(),
            "columns": [{"name": c.name, "type": c.type, "role": c.role} for c in self.columns],
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "the source") -> Source:
        read_object(data, where, required=("name", "fingerprint", "rows", "records", "missing", "reading", "columns"))
        columns = []
        for item in read_list(data, "columns", where):
            read_object(item, f"a column of {where}", required=("name", "type", "role"))
            columns.append(
                SourceColumn(
                    read_text(item, "name", where),
                    read_text(item, "type", where, allowed=TYPES),
                    read_text(item, "role", where, allowed=ROLE_VALUES),
                )
            )
        names = [c.name for c in columns]
        if not columns or len(set(names)) != len(names):
            raise damaged(f"{where} must list each column once.")
        if sum(c.role == Role.COUNT.value for c in columns) > 1:
            raise damaged(f"{where} marks more than one column as the record count.")
        return cls(
            name=read_text(data, "name", where),
            fingerprint=read_text(data, "fingerprint", where),
            rows=read_whole(data, "rows", where, minimum=0),
            records=read_whole(data, "records", where, minimum=0),
            missing=read_text(data, "missing", where, allowed=("category", "drop")),
            columns=tuple(columns),
            reading=Reading.from_json(data["reading"]),
        )


@dataclass(frozen=True)
class RecipeStep:
    """A step of the recipe and the page it was applied from."""

    step: Step
    page: str = ""


@dataclass(frozen=True)
class Replay:
    """A recipe applied to a table: the final dataset, the target check, the released
    table and its bytes; ``same_file`` when the table is the one the recipe was
    made from, ``reproduces`` when the bytes equal the recorded ones (None when an engine wrote
    the recorded table, ``Recipe.written_by``: its order is the engine's, its bytes not this writer's)."""

    dataset: Dataset
    check: TargetCheck
    table: pd.DataFrame
    csv: bytes
    same_file: bool
    reproduces: bool | None


INTACT, EDITED, NO_DIGEST = "intact", "edited", "no digest"
DIGEST_FIELD = "content_sha256"


def content_digest(data: Mapping[str, Any]) -> str:
    """SHA-256 of a recipe's JSON without its digest field, in canonical form (keys
    sorted, no spaces, UTF-8): what ``content_sha256`` records and is checked against.

    >>> content_digest({"b": 1, "a": "é"}) == content_digest({"a": "é", "b": 1, DIGEST_FIELD: "x"})
    True
    """
    body = {key: value for key, value in data.items() if key != DIGEST_FIELD}
    # NaN is never written (``dumps`` refuses it); one typed in by hand just makes the digests differ
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return digest(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Recipe:
    """Source, target, steps and release of one release (see the module text).
    ``integrity`` says whether the recipe read back still matches its digest."""

    source: Source
    target: ReleaseTarget
    steps: tuple[RecipeStep, ...]
    columns: tuple[str, ...]
    released_sha256: str = ""
    released_records: int = 0
    loaded_records: int | None = None
    integrity: str = field(default=INTACT, compare=False)
    loaded_persons: int | None = None
    # the engine (duckdb, spark) that wrote the released table whose SHA-256 is recorded when its bytes
    # are not the in-memory release's (packages made before the engines wrote them, ``written_recipe``):
    # its rows are the in-memory release's in the engine's order, so a replay is compared with it as a table
    written_by: str | None = None
    # records a records-per-person cap left out before the target judged the rest: the officer's
    # decision, stated apart (capped_records), never counted as suppressed records
    capped_records: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "format": RECIPE_FORMAT,
            "version": RECIPE_VERSION,
            "source": self.source.to_json(),
            "target": self.target.to_json(),
            "steps": [{"page": s.page, "description": s.step.describe(), "step": s.step.to_json()} for s in self.steps],
            "release": {
                "columns": list(self.columns),
                "sha256": self.released_sha256,
                "records": self.released_records,
                **({} if self.loaded_records is None else {"loaded_records": self.loaded_records}),
                **({} if self.loaded_persons is None else {"loaded_persons": self.loaded_persons}),
                **({} if self.written_by is None else {"written_by": self.written_by}),
                **({} if self.capped_records is None else {"capped_records": self.capped_records}),
            },
        }
        data[DIGEST_FIELD] = content_digest(data)
        return data

    @property
    def digest(self) -> str:
        """The recipe's content digest (``content_sha256`` of the JSON it writes)."""
        return self.to_json()[DIGEST_FIELD]

    def require_intact(self, *, accept_edited: bool = False) -> None:
        """A ``RecipeError`` sentence when the recipe was edited after it was written or
        carries no digest, unless ``accept_edited`` (the caller then says so).

        >>> import dataclasses
        >>> recipe = Recipe.loads(Recipe(Source("d", "f", 1, 1, "category", (SourceColumn("a", "integer", "quasi-identifier"),)),
        ...                              ReleaseTarget(), (), ("a",)).dumps())
        >>> recipe.integrity, recipe.require_intact()
        ('intact', None)
        >>> dataclasses.replace(recipe, integrity=EDITED).require_intact()
        Traceback (most recent call last):
        ...
        anonlib.core.errors.RecipeError: This recipe was changed after it was written (its content no longer matches its digest); use the recipe of the release as it was made, or apply it anyway with --accept-edited.
        """
        if self.integrity == INTACT or accept_edited:
            return
        if self.integrity == EDITED:
            raise RecipeError(
                "This recipe was changed after it was written (its content no longer matches its "
                "digest); use the recipe of the release as it was made, or apply it anyway with "
                "--accept-edited."
            )
        raise RecipeError(
            "This recipe carries no digest (it was written before recipes had one, or the digest was "
            "removed), so a change to it cannot be detected; write it again, or apply it anyway with "
            "--accept-edited."
        )

    def dumps(self) -> str:
        """The recipe as indented JSON text (UTF-8 safe, keys in a fixed order)."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, data: Any) -> Recipe:
        """A recipe from parsed JSON; a ``RecipeError`` sentence when anything is off."""
        if not isinstance(data, Mapping) or data.get("format") != RECIPE_FORMAT:
            raise RecipeError(
                "This is not an anonlib recipe (a JSON file written by the dashboard or by "
                "`python -m anonlib anonymize --recipe`)."
            )
        version = data.get("version")
        if version != RECIPE_VERSION:
            raise RecipeError(
                f"This recipe has version {version!r}; this anonlib reads version {RECIPE_VERSION}. "
                "Use the anonlib version that wrote it."
            )
        read_object(
            data,
            "the recipe",
            required=("format", "version", "source", "target", "steps", "release"),
            optional=(DIGEST_FIELD,),
        )
        recorded = read_text(data, DIGEST_FIELD, "the recipe", optional=True)
        integrity = NO_DIGEST if recorded is None else INTACT if recorded == content_digest(data) else EDITED
        source = Source.from_json(data["source"])
        target = ReleaseTarget.from_json(data["target"])
        items = read_list(data, "steps", "the recipe")
        if len(items) > MAX_RECIPE_STEPS:
            raise RecipeError(
                f"The recipe has {len(items):,} steps, more than the {MAX_RECIPE_STEPS:,} a recipe "
                "can hold; it is not a recipe the dashboard or the command line wrote."
            )
        steps = []
        for i, item in enumerate(items, start=1):
            where = f"step {i}"
            read_object(item, where, required=("page", "step"), optional=("description",))
            steps.append(RecipeStep(step_from_json(item["step"], where), read_text(item, "page", where)))
        release = read_object(
            data["release"],
            "the release",
            required=("columns", "sha256", "records"),
            optional=("loaded_records", "loaded_persons", "written_by", "capped_records"),
        )
        columns = read_texts(release, "columns", "the release")
        roles = source.roles
        unknown = [c for c in columns if c not in roles]
        if unknown or not columns:
            raise damaged(f"the release names {join_names(unknown) or 'no column'}, which the source does not list.")
        named = set(pseudonymized_columns(s.step for s in steps))
        hidden = (Role.IDENTIFIER.value, Role.PERSON.value, Role.HOUSEHOLD.value)
        if any(roles[c] in hidden and c not in named for c in columns):
            raise damaged(
                "the release includes an identifier column (or the person or household column) not pseudonymised."
            )
        for i, s in enumerate(steps, start=1):
            absent = [c for c in s.step.columns if c not in roles]
            if absent:
                raise damaged(f"step {i} uses {join_names(absent)}, which the source does not list.")
        loaded = (
            read_whole(release, "loaded_records", "the release", minimum=0) if "loaded_records" in release else None
        )
        persons = (
            read_whole(release, "loaded_persons", "the release", minimum=0) if "loaded_persons" in release else None
        )
        return cls(
            source,
            target,
            tuple(steps),
            columns,
            read_text(release, "sha256", "the release"),
            read_whole(release, "records", "the release", minimum=0),
            loaded,
            integrity,
            persons,
            read_text(release, "written_by", "the release", allowed=("duckdb", "spark"), optional=True),
            read_whole(release, "capped_records", "the release", minimum=0) if "capped_records" in release else None,
        )

    @classmethod
    def loads(cls, text: str | bytes) -> Recipe:
        """A recipe from JSON text; one sentence when the text is not valid JSON."""
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise RecipeError(
                    "The recipe is not a UTF-8 text file; give the JSON file the dashboard wrote."
                ) from None
        return cls.from_json(json_value(text, "The recipe"))

    def extended(self, first: Sequence[Step], roles: Mapping[str, Role], page: str = "command line (apply)") -> Recipe:
        """The recipe with ``first`` applied before its own steps and ``roles`` set on its
        source (``apply --pseudonymize/--shift-dates/--keep/--person``); the release adds
        the kept and pseudonymised columns. It records no released digest (the release it
        makes is new) and no content digest of the recipe it came from.

        >>> recipe = Recipe(Source("d", "f", 1, 1, "category", (SourceColumn("a", "integer", "quasi-identifier"),
        ...                 SourceColumn("n", "category", "ignore"))), ReleaseTarget(), (), ("a",))
        >>> recipe.extended([], {"n": Role.KEEP}).columns
        ('a', 'n')
        """
        unknown = [c for c in roles if c not in self.source.roles]
        if unknown:
            raise ColumnError(f"The recipe's file has no column {join_names(unknown)}.")
        columns = tuple(
            SourceColumn(c.name, c.type, Role(roles[c.name]).value if c.name in roles else c.role)
            for c in self.source.columns
        )
        source = replace(self.source, columns=columns)
        steps = tuple(RecipeStep(step, page) for step in first) + self.steps
        named = set(pseudonymized_columns(s.step for s in steps))
        wanted = set(self.columns) | {c.name for c in columns if c.role == Role.KEEP.value} | named
        never = (Role.IDENTIFIER.value, Role.PERSON.value, Role.HOUSEHOLD.value)
        hidden = {c.name for c in columns if c.role in never} - named
        released = tuple(c.name for c in columns if c.name in wanted - hidden)
        return replace(
            self,
            source=source,
            steps=steps,
            columns=released,
            released_sha256="",
            released_records=0,
            loaded_persons=None,
            written_by=None,
            capped_records=None,
        )

    @property
    def kept(self) -> tuple[str, ...]:
        """The released columns kept unchanged by a decision (role ``keep`` in the source): the
        target does not count them; ``apply`` releases them as recorded."""
        roles = self.source.roles
        return tuple(c for c in self.columns if roles.get(c) == Role.KEEP.value)

    def column_account(self):
        """The columns the recipe releases and those it leaves out, with roles and reasons
        (``anonlib.workflow.release.ColumnAccount``)."""
        from .release import account_of

        return account_of(
            [c.name for c in self.source.columns], self.source.roles, self.columns, [s.step for s in self.steps]
        )

    @property
    def needed_columns(self) -> tuple[str, ...]:
        """The source's columns a file must have for this recipe (``Source.needed``): those it
        releases, those its steps use, and every column it analyses."""
        return self.source.needed((s.step for s in self.steps), self.columns)

    @property
    def key_ids(self) -> tuple[str, ...]:
        """Ids of the project keys the recipe's keyed steps were made with (pseudonyms, date shifts)."""
        return tuple(dict.fromkeys(s.step.key_id for s in self.steps if needs_key(s.step)))

    def with_key(self, key: bytes | None) -> Recipe:
        """The recipe with its keyed steps holding ``key`` (the recipe itself when it has none);
        a sentence when the recipe needs a key and none or another one is given."""
        if not self.key_ids:
            return self
        steps = []
        for i, s in enumerate(self.steps, start=1):
            step = s.step
            if needs_key(step):
                if key is None:
                    raise KeyFileError(
                        f"Step {i} ({step.describe()}) needs the project key it was made with (key id "
                        f"{step.key_id}); give its key file with --key-file."
                    )
                step = step.with_key(key)
            steps.append(RecipeStep(step, s.page))
        return replace(self, steps=tuple(steps))

    @property
    def earlier_deliveries(self) -> int:
        """Earlier deliveries of its project the recipe's suppression judged histories with (0: none)."""
        return max((getattr(s.step, "earlier_deliveries", 0) for s in self.steps), default=0)

    def with_earlier(self, earlier: Earlier | None) -> Recipe:
        """The recipe with its cumulative suppression holding the ``earlier`` deliveries' records
        (``SuppressionStep.with_earlier``) and its target judged on the cumulative history."""
        steps = tuple(
            RecipeStep(s.step.with_earlier(earlier), s.page) if hasattr(s.step, "with_earlier") else s
            for s in self.steps
        )
        return replace(self, steps=steps, target=self.target.after(earlier if self.target.linkable else None))

    @property
    def describe(self) -> tuple[str, ...]:
        """One line per step: its page and what it does."""
        return tuple(f"{s.page or 'command line'}: {s.step.describe()}" for s in self.steps)

    def replay(self, dataset: Dataset) -> Replay:
        """Apply the steps to ``dataset`` (built by ``Source.dataset``), check the target,
        and write the released table."""
        frame = dataset.assessed_only(self.target.sensitive).frame  # as a working copy starts (WorkingCopy.base)
        for i, s in enumerate(self.steps, start=1):
            try:
                frame = s.step.apply(frame)
            except (RecipeError, KeyFileError):
                raise
            except AnonlibError as err:
                raise type(err)(f"Step {i} ({s.step.describe()}) does not fit this file: {err}") from None
        final = Dataset(
            name=dataset.name, frame=frame, roles=dataset.roles, missing=dataset.missing, notes=dataset.notes
        ).validated()
        steps = [s.step for s in self.steps]
        # the records the target judges: those a records-per-person cap leaves out are not suppressed
        judged = analysed_records(dataset, self.target.sensitive) - (capped_records(dataset, self.target, steps) or 0)
        check = self.target.check(
            final,
            loaded_records=judged,
            wildcard=suppression_mark(s.step for s in self.steps),
            loaded_persons=analysed_persons(dataset, self.target.sensitive, self.target),
        )
        columns = check_release_columns(final, self.columns, steps)
        table = release_table(final, columns, extra=self.target.sensitive, steps=steps)
        data = release_csv(table)
        return Replay(
            final,
            check,
            table,
            data,
            dataset.fingerprint == self.source.fingerprint,
            None if self.written_by else bool(self.released_sha256) and digest(data) == self.released_sha256,
        )


def suppression_mark(steps: Iterable[Step]) -> str | None:
    """``*`` when a step suppresses single cells (the target then reads it as any value), else None.

    >>> from .local_steps import LocalSuppressionStep
    >>> suppression_mark([]), suppression_mark([LocalSuppressionStep(("age",), 2)])
    (None, '*')
    """
    return SUPPRESSED if any(getattr(step, "marks_cells", False) for step in steps) else None


def analysed_persons(dataset: Dataset, extra: Sequence[str] = (), target: ReleaseTarget | None = None) -> int | None:
    """People the target's share is counted against (with a person column, else None):
    the distinct persons of the loaded table's assessed records; households when ``target``
    counts households (its household column's records link)."""
    column = dataset.household if target is not None and target.unit == "households" else dataset.person
    if column is None or column not in dataset.frame.columns:
        return None
    return int(dataset.frame[column][dataset.assessed(extra)].nunique(dropna=True))


def analysed_records(dataset: Dataset, extra: Sequence[str] = ()) -> int:
    """Records the target's share is counted against: the loaded table's assessed records
    (``Dataset.assessed``; ``extra``: the columns the target's privacy models read)."""
    assessed = dataset.assessed(extra)
    if not dataset.count:
        return int(assessed.sum())
    return int(pd.to_numeric(dataset.frame[dataset.count][assessed]).sum())


def read_recipe(path: str | Path) -> Recipe:
    """A recipe file; a sentence when it cannot be read.

    >>> read_recipe("no-such-recipe.json")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe file 'no-such-recipe.json' does not exist or is not a file.
    """
    file = Path(path)
    if not file.is_file():
        raise RecipeError(f"The recipe file '{file.name}' does not exist or is not a file.")
    if file.stat().st_size > MAX_RECIPE_BYTES:
        raise RecipeError(
            f"The recipe file '{file.name}' is larger than {MAX_RECIPE_BYTES // 2**20} MB; "
            "it is not a recipe the dashboard wrote."
        )
    return Recipe.loads(file.read_bytes())


def apply_recipe(recipe: Recipe, source: str | Path | bytes, *, name: str | None = None) -> Replay:
    """Read ``source`` (a path or bytes) as the recipe's file was read and replay the recipe."""
    return recipe.replay(read_for_recipe(recipe, source, name=name)[0])


def read_for_recipe(recipe: Recipe, source: str | Path | bytes, *, name: str | None = None) -> tuple[Dataset, Reading]:
    """``source`` (a path or bytes) read as the recipe's file was read, as the recipe's
    dataset, and how it was read (with the SHA-256 of its bytes)."""
    reading = recipe.source.reading
    table = load_table(source, name=name, delimiter=reading.delimiter, encoding=reading.encoding, header=reading.header)
    dataset = recipe.source.dataset(table.frame, name=name or table.name, needed=recipe.needed_columns)
    return dataset, Reading.of(table, source)


def recipe_of(
    loaded: Dataset,
    target: ReleaseTarget,
    steps: Sequence[RecipeStep],
    final: Dataset,
    columns: Sequence[str] | None = None,
    reading: Reading | None = None,
) -> Recipe:
    """The recipe of a release: ``loaded`` turned into ``final`` by ``steps``, releasing
    ``columns`` (default: all but identifiers and ignored columns)."""
    from .release import default_release_columns

    made = [s.step for s in steps]
    chosen = check_release_columns(final, default_release_columns(final, made) if columns is None else columns, made)
    target = target.released_as(final, chosen)  # a person or household column released links its records
    table = release_table(final, chosen, extra=target.sensitive, steps=made)
    data = release_csv(table)
    records = records_in(table, final.count)
    return Recipe(
        Source.of(loaded, reading),
        target,
        tuple(steps),
        chosen,
        digest(data),
        records,
        analysed_records(loaded, target.sensitive),
        loaded_persons=analysed_persons(loaded, target.sensitive, target),
        capped_records=capped_records(loaded, target, made),
    )


def capped_records(loaded: Dataset, target: ReleaseTarget, steps: Sequence[Step]) -> int | None:
    """The assessed records of ``loaded`` a records-per-person cap among ``steps`` leaves out
    (None without a cap): how many depends only on each person's number of records, which the
    steps before it (pseudonyms, date shifts) do not change.

    >>> import pandas as pd
    >>> ds = Dataset.from_frame("v", pd.DataFrame({"pid": list("aaab"), "age": [1, 2, 3, 4]}), {"pid": "person"})
    >>> capped_records(ds, ReleaseTarget(k=1), [CapRecordsStep("pid", 2)])
    1
    """
    caps = [s for s in steps if isinstance(s, CapRecordsStep)]
    if not caps:
        return None
    frame = loaded.assessed_only(target.sensitive).frame
    left = 0
    for cap in caps:
        capped = cap.capped(frame)
        left += int(capped.records)
        frame = frame[capped.kept]
    return left
