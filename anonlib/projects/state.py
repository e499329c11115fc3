"""What a project holds about its working copy, and the working copy rebuilt from it.

A ``ProjectState`` is the working copy written down the way a recipe writes a
release (``anonlib.workflow.recipe``): the loaded file as a ``Source`` (name,
fingerprint, rows, records, how it was read, every column's type and role, the
missing-value policy), the release target, and every step in order with the page it
came from (each step's own ``to_json``, hierarchies embedded in a generalization
step). Where the table came from is its ``origin``: ``upload:<file name>`` (the
file's bytes are kept beside the state, or only its SHA-256 when the user chose
not to keep them) or ``sample:<key>`` (a bundled sample, read again from the
package). Roles are kept as their strings, so a new role needs no schema change.

``restore(data)`` reads the file again as it was read, sets the recorded types
and roles, and replays the steps: the working copy as it was, table for table.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import BandsStep, ReleaseTarget, WorkingCopy
    >>> from anonlib.core.loading import load_table
    >>> from anonlib.workflow.recipe import Reading
    >>> data = b"age,sex\\n31,F\\n35,M\\n38,F\\n44,M\\n41,F\\n"
    >>> table = load_table(data, name="d.csv")
    >>> ds = Dataset.from_frame("d.csv", table.frame, {"sex": "ignore"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2), reading=Reading.of(table, data))
    >>> copy = copy.apply(BandsStep("age", 10, 1, 31, 44, True), "Individual privacy")
    >>> state = ProjectState.of(copy, "upload:d.csv")
    >>> again = ProjectState.loads(state.dumps()).restore(data)
    >>> again.current.frame["age"].tolist() == copy.current.frame["age"].tolist(), again.check.met
    (True, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from ..core.errors import AnonlibError, ProjectError, RecipeError
from ..core.fields import json_value, read_list, read_object, read_text
from ..core.loading import load_table
from ..core.samples import SAMPLES, load_sample
from ..measures.target import ReleaseTarget
from ..workflow.health_steps import needs_key
from ..workflow.history import WorkingCopy
from ..workflow.recipe import Recipe, RecipeStep, Source
from ..workflow.release import digest
from ..workflow.steps import step_from_json

STATE_FORMAT = "anonlib-project-state"
STATE_VERSION = 1
UPLOAD, SAMPLE = "upload:", "sample:"


@dataclass(frozen=True)
class ProjectState:
    """The working copy of a project as data: origin, source, target and steps."""

    origin: str
    source: Source
    target: ReleaseTarget
    steps: tuple[RecipeStep, ...] = ()

    @classmethod
    def of(cls, copy: WorkingCopy, origin: str) -> ProjectState:
        """The state of a working copy loaded from ``origin`` (``upload:<name>`` or ``sample:<key>``)."""
        return cls(origin, Source.of(copy.loaded, copy.reading), copy.target, copy.recipe_steps)

    @classmethod
    def of_recipe(cls, recipe: Recipe, origin: str | None = None) -> ProjectState:
        """The state a recipe describes (its source, target and steps)."""
        return cls(origin or f"{UPLOAD}{recipe.source.name}", recipe.source, recipe.target, recipe.steps)

    @property
    def is_sample(self) -> bool:
        return self.origin.startswith(SAMPLE)

    @property
    def sample_key(self) -> str | None:
        return self.origin[len(SAMPLE) :] if self.is_sample else None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "origin": self.origin,
            "source": self.source.to_json(),
            "target": self.target.to_json(),
            "steps": [{"page": s.page, "step": s.step.to_json()} for s in self.steps],
        }

    def dumps(self) -> str:
        """Compact JSON (keys in a fixed order), as the store keeps it."""
        return json.dumps(self.to_json(), ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: Any) -> ProjectState:
        """A state from ``to_json``'s output; a ``ProjectError`` sentence when it is damaged."""
        try:
            read_object(data, "the project", required=("format", "version", "origin", "source", "target", "steps"))
            if data["format"] != STATE_FORMAT or data["version"] != STATE_VERSION:
                raise ProjectError(
                    f"This project was saved in format {data['format']!r} version {data['version']!r}; "
                    f"this anonlib reads {STATE_FORMAT!r} version {STATE_VERSION}."
                )
            steps = []
            for i, item in enumerate(read_list(data, "steps", "the project"), start=1):
                read_object(item, f"step {i}", required=("page", "step"))
                steps.append(
                    RecipeStep(step_from_json(item["step"], f"step {i}"), read_text(item, "page", f"step {i}"))
                )
            return cls(
                read_text(data, "origin", "the project"),
                Source.from_json(data["source"]),
                ReleaseTarget.from_json(data["target"]),
                tuple(steps),
            )
        except RecipeError as err:
            raise ProjectError(f"The saved project cannot be read: {err}") from None

    @classmethod
    def loads(cls, text: str) -> ProjectState:
        return cls.from_json(json_value(text, "The saved project", ProjectError))

    def recipe(self) -> Recipe:
        """A recipe of this state (no release recorded yet): what re-applies its steps to a delivery."""
        roles = self.source.roles
        columns = tuple(c.name for c in self.source.columns if roles[c.name] not in ("identifier", "ignore"))
        return Recipe(self.source, self.target, self.steps, columns or tuple(roles)[:1])

    def keyed_steps(self, key: bytes | None) -> tuple[RecipeStep, ...]:
        """The steps, those made with a key (pseudonyms, date shifts) holding ``key`` (the
        project's, which the store keeps: a saved state names only its id). One sentence when a
        step needs a key and none, or another one, is given.

        >>> import pandas as pd
        >>> from anonlib.core.dataset import Dataset
        >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
        >>> from anonlib.workflow.health_steps import PseudonymizeStep
        >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"mrn": ["a1", "b2"], "age": [31, 35]}), {"mrn": "identifier"})
        >>> key = bytes(32)
        >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=1)).apply(PseudonymizeStep.made("mrn", key), "Dataset")
        >>> saved = ProjectState.loads(ProjectState.of(copy, "upload:d.csv").dumps())
        >>> saved.keyed_steps(key)[0].step.key == key
        True
        >>> saved.keyed_steps(None)
        Traceback (most recent call last):
        anonlib.core.errors.ProjectError: This project's pseudonyms or date shifts need its key, which was not given.
        """
        if not any(needs_key(s.step) for s in self.steps):
            return self.steps
        if key is None:
            raise ProjectError("This project's pseudonyms or date shifts need its key, which was not given.")
        return tuple(RecipeStep(s.step.with_key(key), s.page) if needs_key(s.step) else s for s in self.steps)

    def restore(self, data: bytes | None = None, key: bytes | None = None) -> WorkingCopy:
        """The working copy this state describes: the file (``data``, its bytes; a sample is read
        from the package) read as it was, the recorded types and roles set, the steps replayed
        (``key``: the project's, for pseudonyms and date shifts). One sentence when the bytes are
        not the project's file or a step no longer applies."""
        if self.is_sample:
            key = self.sample_key
            if key not in SAMPLES:
                raise ProjectError(f"This project was made on the sample '{key}', which this anonlib no longer has.")
            sample = load_sample(key)
            frame, name, notes, texts = sample.frame, sample.name, sample.notes, sample.missing_texts
        else:
            if data is None:
                raise ProjectError(
                    f"This project keeps only the fingerprint of {self.source.name}; give the file to continue."
                )
            recorded = self.source.sha256
            if recorded is not None and digest(bytes(data)) != recorded:
                raise ProjectError(
                    f"This file is not {self.source.name} as the project read it (its SHA-256 differs); "
                    "give the file the project was made from."
                )
            reading = self.source.reading
            table = load_table(
                bytes(data),
                name=self.source.name,
                delimiter=reading.delimiter,
                encoding=reading.encoding,
                header=reading.header,
            )
            frame, name, notes, texts = table.frame, self.source.name, table.notes, table.missing_texts
        loaded = replace(self.source.dataset(frame, name=name), notes=tuple(notes), missing_texts=dict(texts))
        if loaded.fingerprint != self.source.fingerprint:
            raise ProjectError(
                f"The file no longer reads as the table of this project ({self.source.name}: its content differs)."
            )
        copy = WorkingCopy.start(loaded, self.target, reading=self.source.reading)
        for i, s in enumerate(self.keyed_steps(key), start=1):
            try:
                copy = copy.apply(s.step, s.page)
            except AnonlibError as err:
                raise ProjectError(f"Step {i} of the project ({s.step.describe()}) no longer applies: {err}") from None
        return copy
