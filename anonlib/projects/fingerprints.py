"""The budget follows the people: with each private release's spend the store keeps its file's
fingerprint (``anonlib.core.fingerprint``: MinHash sketches of its people and records, and its
column names; never in a package), and a release over a file whose people overlap a spent
file's by more than half is charged against that file's budget too (``overlapping`` finds them;
``anonlib.projects.budget`` charges them and says so).

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.fingerprint import fingerprint
    >>> from anonlib.projects.budget import spend_privacy
    >>> from anonlib.projects.store import ProjectStore
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> panel = pd.DataFrame({"id": [1, 1, 2, 3, 4], "year": [2000, 2001, 2000, 2003, 2001]})
    >>> _ = spend_privacy(store, None, epsilon=1.0, delta=0.0, source_name="panel.csv", source_sha256="a" * 64,
    ...                   fingerprint=fingerprint(panel, "id"), user="anna")
    >>> again = panel.iloc[::-1].rename(columns={"id": "patient"})
    >>> with store._transaction() as c:
    ...     overlapping(c, "b" * 64, fingerprint(again, "patient"))
    [('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'panel.csv', 1.0, 'people')]
"""

from __future__ import annotations

import json

from sqlalchemy import Connection, func, insert, select, text

from ..core.fingerprint import Fingerprint, Sketch
from .schema import FINGERPRINTS
from .store import through_functions

OVERLAP = 0.5  # more than this share of the smaller file's people in common: charged against the spent file


def overlapping(c: Connection, sha256: str, fingerprint: Fingerprint) -> list[tuple[str, str, float, str]]:
    """(SHA-256, name, overlap, compared by) of every spent file other than ``sha256`` whose
    latest fingerprint overlaps ``fingerprint`` by more than ``OVERLAP``, read in ``c``."""
    if through_functions(c):  # a member's login: every project's fingerprints, through the team's function
        rows = c.execute(text("SELECT * FROM public.anonlib_spent_fingerprints(:sha)"), {"sha": sha256}).mappings()
    else:
        f = FINGERPRINTS.c
        latest = select(func.max(f.audit_id)).where(f.source_sha256 != sha256).group_by(f.source_sha256)
        rows = c.execute(select(FINGERPRINTS).where(f.audit_id.in_(latest)).order_by(f.audit_id)).mappings()
    out = []
    for row in rows:
        overlap, by = fingerprint.overlap(stored(row))
        if overlap > OVERLAP:
            out.append((str(row["source_sha256"]), str(row["source_name"]), overlap, by))
    return out


def stored(row) -> Fingerprint:
    """A fingerprint as the store keeps it."""
    people = None if row["people"] is None else Sketch.from_bytes(row["people"], row["people_count"])
    return Fingerprint(
        tuple(json.loads(row["columns"])), row["person"], people, Sketch.from_bytes(row["rows"], row["rows_count"])
    )


def keep_fingerprint(c: Connection, audit_id: int, sha256: str, name: str, fingerprint: Fingerprint) -> None:
    """Keep ``fingerprint`` with the spend of audit entry ``audit_id`` (in its transaction ``c``)."""
    p = fingerprint.people
    values = dict(
        audit_id=int(audit_id),
        source_sha256=sha256,
        source_name=name,
        columns=json.dumps(list(fingerprint.columns), ensure_ascii=False),
        person=fingerprint.person,
        people=None if p is None else p.to_bytes(),
        people_count=None if p is None else p.count,
        rows=fingerprint.rows.to_bytes(),
        rows_count=fingerprint.rows.count,
    )
    if through_functions(c):  # a member's login writes no table: the team's function checks the spend is theirs
        c.execute(
            text(
                "SELECT public.anonlib_add_fingerprint(:audit_id, :source_sha256, :source_name, :columns, :person, "
                ":people, :people_count, :rows, :rows_count)"
            ),
            values,
        )
        return
    c.execute(insert(FINGERPRINTS).values(**values))


__all__ = ["OVERLAP", "keep_fingerprint", "overlapping", "stored"]
