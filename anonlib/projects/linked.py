"""A project's deliveries linked by pseudonym: what it released before, judged with a new one.

A pseudonym lets a study link deliveries: the same person keeps the same pseudonym in every
delivery released under the project's key. So a new delivery whose person (or household) column
is released as such a pseudonym is protected only if each person's history across *everything*
the project released that way (the cumulative history) still meets the release target.
``linked_deliveries`` reads the project's earlier releases whose owner column was pseudonymised
under the same key (their released tables as written, from the package or the table the store
keeps) into one ``anonlib.core.histories.Earlier``, which the release target takes
(``ReleaseTarget.after``): the search of ``anonymize --project`` then keeps the earlier
deliveries as released and finds the least damaging release of the new one, and ``apply
--project`` checks the new one on the cumulative history before writing anything.

A release under another key (unlinked pseudonyms) is not joined: it is checked on its own, and
``LinkedDeliveries.note`` says so for its package.

Example:
    >>> import tempfile
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> from anonlib.measures.target import ReleaseTarget
    >>> linked_deliveries(store, "none yet", ReleaseTarget(person="pid", linked=("pid",)), {"pid": "66687aad"}).earlier
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import select

from ..core.dataset import Role
from ..core.errors import AnonlibError, ProjectError
from ..core.histories import Earlier
from ..core.loading import load_table
from ..core.masking import printable
from ..core.numbers import percent
from ..measures.target import ReleaseTarget, TargetCheck
from ..workflow.health_steps import PseudonymizeStep
from ..workflow.package import TABLE_FILE
from ..workflow.recipe import Recipe
from ..workflow.release import digest
from .schema import RELEASES
from .store import ProjectStore


@dataclass(frozen=True)
class LinkedDeliveries:
    """The earlier deliveries a new one links to (``earlier``: their records, None when none),
    how many link, and how many of the project's releases do not (another key, or the owner
    column not released)."""

    earlier: Earlier | None
    linked: int
    unlinked: int
    # the project as the check read it: (its number, None when there is none yet; the audit entries
    # of its releases). The release is recorded only if the project is still so (``Recording.seen``):
    # a delivery recorded meanwhile makes the check run again (``DeliveredMeanwhileError``)
    seen: tuple[int | None, tuple[int, ...]] | None = None

    def note(self, target: ReleaseTarget) -> str | None:
        """What the package of the new delivery says about its links (None when records do not link)."""
        if not target.linkable:
            return None
        if self.linked:
            n = self.linked
            return (
                f"Checked on each person's history across this delivery and the project's {n} earlier "
                f"deliver{'y' if n == 1 else 'ies'} released under the same key: their pseudonyms link."
            )
        if self.unlinked:
            return (
                "This delivery's pseudonyms do not link to the project's earlier releases (another key, or no "
                "pseudonym released): it is checked on its own."
            )
        return None


def owner_keys(recipe: Recipe, columns) -> dict[str, str]:
    """The key id each owner column of ``columns`` was pseudonymised under by ``recipe``'s steps."""
    return {
        s.step.column: s.step.key_id
        for s in recipe.steps
        if isinstance(s.step, PseudonymizeStep) and s.step.column in columns
    }


def linked_deliveries(
    store: ProjectStore,
    project: str,
    target: ReleaseTarget,
    keys: Mapping[str, str],
    *,
    before: int | None = None,
    lengths: Mapping[str, int] | None = None,
) -> LinkedDeliveries:
    """The earlier deliveries of ``project`` whose records link to a new release of ``target``:
    their person (household) column pseudonymised under the key id ``keys`` names for the new
    release's person (household) column, whatever either column is called (the link follows the
    key, not the spelling: the earlier tables are read with the new release's column names);
    ``before``: only releases recorded before that audit entry (a release verified again). No
    project of that name: none. ``lengths``: the new release's pseudonym length per owner column:
    a project fixes one length, so another one than its linked deliveries' is refused in one
    sentence (pseudonyms of other lengths never match)."""
    owners = tuple(c for c in target.linked if c in keys)
    if not target.linkable or not owners:
        return LinkedDeliveries(None, 0, 0)
    r = RELEASES
    with store._transaction() as c:  # the project and its releases as one state
        row = store._row(c, project, missing_ok=True)
        if row is None:
            return LinkedDeliveries(None, 0, 0, (None, ()))
        query = select(r.c.recipe, r.c.package_blob, r.c.table_blob, r.c.audit_id).where(
            r.c.project_id == int(row["id"])
        )
        if before is not None:
            query = query.where(r.c.audit_id < int(before))
        rows = c.execute(query.order_by(r.c.audit_id)).mappings().all()
    seen = (int(row["id"]), tuple(int(x["audit_id"]) for x in rows))
    tables, unlinked = [], 0
    for row in rows:
        recipe = Recipe.loads(row["recipe"])
        names = _linked_names(recipe, target, owners, keys)
        if names is None:
            unlinked += 1
            continue
        _same_length(recipe, names, lengths or {}, project, row["audit_id"])
        table = _released_table(store, row, recipe).rename(columns=names)
        roles = recipe.source.roles
        qis = [c for c in recipe.columns if roles.get(c) == Role.QUASI_IDENTIFIER.value]
        count = next((c for c in recipe.columns if roles.get(c) == Role.COUNT.value), None)
        tables.append((table, qis, count))
    if not tables:
        return LinkedDeliveries(None, 0, unlinked, seen)
    return LinkedDeliveries(Earlier.of(tables, owners), len(tables), unlinked, seen)


def _linked_names(recipe: Recipe, target: ReleaseTarget, owners, keys: Mapping[str, str]) -> dict[str, str] | None:
    """An earlier release's owner columns as the new release names them ({earlier's: new}), when
    each of the new release's owner columns (``owners``) has its counterpart of the same role
    (person, household) pseudonymised there under the same key; else None (they do not link)."""
    theirs = owner_keys(recipe, recipe.target.linked)
    names = {}
    for column in owners:
        counterpart = recipe.target.person if column == target.person else recipe.target.household
        if counterpart is None or theirs.get(counterpart) != keys[column]:
            return None
        names[counterpart] = column
    return names


def _same_length(recipe: Recipe, names: Mapping[str, str], lengths: Mapping[str, int], project: str, entry) -> None:
    """A sentence when the new release makes pseudonyms of another length than a linked one did."""
    for s in recipe.steps:
        step = s.step
        if isinstance(step, PseudonymizeStep) and step.column in names:
            wanted = lengths.get(names[step.column])
            if wanted is not None and int(wanted) != int(step.length):
                raise ProjectError(
                    f"The project '{printable(project)}' releases pseudonyms of {step.length} hexadecimal characters "
                    f"(audit entry {entry}), and this release would make them {wanted} long, so they would not "
                    f"link: a project fixes one length; give --pseudonym-length {step.length}."
                )


def _released_table(store: ProjectStore, row, recipe: Recipe):
    """A release's table as written: ``released.csv`` of its package, or the table the store kept."""
    if row["package_blob"] is not None:
        with zipfile.ZipFile(io.BytesIO(store.blob(row["package_blob"]))) as archive:
            data = archive.read(TABLE_FILE)
    else:
        data = store.blob(row["table_blob"])
    if data is None:
        raise ProjectError(
            f"The table of audit entry {row['audit_id']} was not kept (it was recorded before this version kept "
            "released tables), so the deliveries linked to it cannot be judged together; release into a new project."
        )
    try:
        frame = load_table(
            data, name=TABLE_FILE, delimiter=",", encoding="utf-8", header=True, missing_markers=("",), allow_empty=True
        ).frame
    except AnonlibError as err:
        raise ProjectError(f"The table of audit entry {row['audit_id']} cannot be read: {err}") from None
    frame.columns = list(recipe.columns)
    return frame


def cumulative_refusal(check: TargetCheck, project: str) -> str:
    """The sentence refusing a delivery whose release would break the target on the cumulative
    history (``check``: the delivery as the recipe releases it, judged with the earlier ones): how
    many people, and what would meet it."""
    target = check.target
    limit = percent(target.max_suppressed, compact=True)
    across = f"{target.power_text()}{target.cumulative}"
    if check.stuck:
        return (
            f"Refused, nothing written: released this way, {check.unit_noun(check.stuck)} of the project's earlier "
            f"deliveries would be left with no record in this one (theirs fail and are suppressed) and a history "
            f"fewer than {target.k} share ({across.strip()}): suppressing people in a later delivery sets their "
            f"history apart; search it again under the cumulative target with `anonymize --project {printable(project)}`."
        )
    failing = check.persons_in_failing or 0
    removed = check.failing_persons or 0
    if not failing:  # every history holds, but this delivery suppresses more people than the limit allows
        return (
            f"Refused, nothing written: released this way, this delivery suppresses "
            f"{check.unit_noun(check.suppressed_persons)} ({percent(check.suppressed_share, compact=True)} of its "
            f"{target.whole}), more than the limit of {limit}, to meet k = {target.k} {across}: search it again "
            f"under the cumulative target with `anonymize --project {printable(project)}`."
        )
    # the share the limit is judged on: these people with those suppressed so far (met_after_suppression)
    share = percent(check.share_after_suppression, compact=True)
    so_far = " with those suppressed so far" if check.suppressed_persons else ""
    fix = (
        f"suppressing {check.unit_noun(removed)} from it ({share} of its {target.whole}{so_far}) would meet it, "
        f"within the limit of {limit}"
        if check.met_after_suppression
        else f"suppressing them would take out {check.unit_noun(removed)} ({share} of its {target.whole}{so_far}), "
        f"more than the limit of {limit}"
    )
    return (
        f"Refused, nothing written: released this way, {failing:,} of its {check.unit_noun(check.persons)} would "
        f"fail k = {target.k} {across}; {fix}: search it again under the cumulative target with "
        f"`anonymize --project {printable(project)}`."
    )


def package_earlier(store: ProjectStore, project: str, package: bytes) -> Earlier | None:
    """The earlier deliveries a package released into ``project`` was judged with: those recorded
    before its audit entry (``audit.json``'s entry, or the entry recording its digest), linked to it."""
    from ..workflow.package import package_stamp
    from .audit import audit_entries, package_parts

    try:
        recipe = package_parts(package)[2]
    except AnonlibError:
        return None
    if not recipe.earlier_deliveries:
        return None
    stamp = package_stamp(package)
    entry = stamp.get("entry") if isinstance(stamp, dict) else None
    if entry is None:
        entry = next((e.id for e in audit_entries(store, project) if e.package_sha256 == digest(package)), None)
    keys = owner_keys(recipe, recipe.target.linked)
    return linked_deliveries(store, project, recipe.target, keys, before=entry).earlier
