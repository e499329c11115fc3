"""``anonymize``: the generalization of a file with the least information loss that meets a
release target (k, privacy models, a suppression limit), written with its recipe and package;
every number it prints is measured on the table it writes."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.default_hierarchy import default_hierarchy
from ..core.equivalence import encode
from ..core.errors import EmptySelectionError, NoSolutionError, ParameterError, join_names
from ..core.hierarchy import SUPPRESSED, validate_hierarchy
from ..core.metrics import whole_k
from ..core.numbers import time_limit_seconds
from ..measures.models import MODELS, suppression_limit
from ..measures.target import ReleaseTarget, people_holding_records, unit_k
from ..measures.utility import MEASURES, check_measure, measure_value
from ..measures.wildcard import marked_codes, wildcard_matches
from ..transformations.generalization import SEARCH_METHODS, release_search
from ..workflow.engine_search import release_roles
from ..workflow.history import WorkingCopy
from ..workflow.kept import refuse_unkept, released_kept_risk
from ..workflow.local_steps import LocalSuppressionStep
from ..workflow.package import release_package
from ..workflow.power_choice import (
    weaker_power_sentence,
)
from ..workflow.recipe import Reading, Recipe
from ..workflow.release import pseudonymized_columns, release_csv
from ..workflow.steps import GeneralizationStep, SuppressionStep
from ..workflow.unseen import check_unseen, cover_hierarchy
from ..workflow.verify import recount
from .anonymize_engine import refuse_in_memory_options
from .anonymize_engine import run as anonymize_on_engine
from .common import (
    column_names,
    command,
    data_arguments,
    declared,
    engine_arguments,
    hierarchy_files,
    once,
    parse_requirement,
    read_dataset,
    real_argument,
    refuse_identifiers,
    report_release,
    split,
)
from .health import (
    cap_arguments,
    cap_step,
    household_argument,
    keep_argument,
    key_arguments,
    keyed_steps,
    person_argument,
    power_argument,
    power_notes,
    unseen_argument,
)
from .projects import in_turn, linked_to, project_argument, seen_project, write_or_record


def _anonymize(args: argparse.Namespace) -> int:
    on_engine = bool(args.engine or args.spark_master)
    if on_engine:
        refuse_in_memory_options(args)
    if args.project:  # the project as it is now: the release goes into this one, or into none
        seen_project(args)
    dataset, table = read_dataset(args)
    k = whole_k(args.k)
    qis = once(split(args.shield), "--shield")
    if not qis:
        raise EmptySelectionError(
            "Name the quasi-identifiers (the columns an attacker may know), e.g. --shield Zip,Age."
        )
    if dataset.count in qis:
        raise ParameterError(f"'{dataset.count}' is the record-count column; it cannot be a quasi-identifier.")
    given = hierarchy_files(args.hierarchy or [])
    requirements = [parse_requirement(r, given) for r in args.require or []]
    max_suppressed = suppression_limit(args.max_suppressed)
    measure = check_measure(args.measure)
    unseen_choice = check_unseen(args.unseen)
    args.time_limit = time_limit_seconds(args.time_limit)
    modelled = [r.sensitive for r in requirements]
    # the kept columns are searched beside the shield (distinct rows count them), never generalized
    wanted = set(qis) | set(dataset.quasi_identifiers + dataset.sensitive + dataset.kept) | set(modelled)
    names = column_names(dataset)
    columns = [c for c in names if c in wanted] + [c for c in qis if c not in names]
    columns += [c for c in dict.fromkeys(modelled) if c not in columns]
    target = ReleaseTarget(k=k, requirements=tuple(requirements), max_suppressed=max_suppressed, power=args.power)
    refuse_identifiers(dataset, columns, "--shield")
    # the release's roles (--shield names its quasi-identifiers, the other quasi-identifiers kept as
    # ignored columns): with --drop-missing, its assessed records are searched and released
    loaded = dataset.with_roles(release_roles(dataset, qis, target))

    def refuse_unshielded() -> None:
        """Nothing released unchanged that the target does not count, unless kept by a decision
        (--keep, role keep); asked after the options themselves are checked, so a wrong option is
        named first."""
        refuse_unkept(
            dataset,
            qis,
            released=[c for c in names if c in set(columns) | set(dataset.kept)],
            declared=declared(args, target),
            changed=[*split(getattr(args, "shift_dates", None)), *(c.strip() for c in args.pseudonymize or [])],
        )

    distances = {r.sensitive for r in requirements if r.model == "t_closeness"}
    unknown = [a for a in given if a not in qis and a not in distances]
    if unknown:
        raise ParameterError(
            f"Hierarchies were given for {join_names(unknown)}, which is not a quasi-identifier of --shield "
            "(nor the sensitive attribute of a --require t_closeness:...)."
        )
    if on_engine:  # the search on the file's class table, the release written and measured by the engine
        refuse_unshielded()
        before = _engine_pseudonyms(args, dataset)
        cap = cap_step(args, dataset)  # a person's records beyond N left out by the engine, as in memory
        if cap is not None:
            before.append(cap)
        return anonymize_on_engine(
            args,
            dataset,
            shield=qis,
            target=target,
            given=given,
            measure=measure,
            columns=columns,
            before=before,
        )
    # pseudonyms and date shifts come first: the search sees the dates as they are released
    reading = Reading.of(table, args.file) if table is not None else None
    # the steps judged on whole histories until the search has estimated its power's checks (each
    # compares every person's sub-multisets of records: refused before it starts when past the budget)
    judged = target
    start = WorkingCopy.start(loaded, _whole_histories(target), reading=reading)
    for step in keyed_steps(args, loaded):
        start = start.apply(step, PAGE)
    cap = cap_step(args, loaded)  # a person's records beyond N left out before the search sees them
    capped = None
    if cap is not None:
        dropped_by_cap = cap.capped(start.current.frame)
        capped = (dropped_by_cap.records, dropped_by_cap.people, cap.records)
        start = start.apply(cap, PAGE)
    prepared = start.current
    refuse_unshielded()
    owners = bool(loaded.owners)  # classes counted in people (households): the search sees whose records they are
    frame, dropped = loaded.assessed_frame(columns, target.sensitive, person=owners)
    if start.steps:  # the same assessed records, with their pseudonyms and shifted dates
        frame = prepared.assessed_frame(columns, target.sensitive, person=owners)[0].reset_index(drop=True)
    released_columns = [
        c
        for c in names
        if c in set(columns) | set(loaded.kept) | set(pseudonymized_columns(s.step for s in start.steps))
    ]
    # a person or household column released (as its pseudonym) links its records: the target counts histories
    target = target.in_unit_of(loaded, released=released_columns)
    if args.power is not None and not target.linkable:
        print(
            "note: --power counts only when records link (the person or household column released as a "
            "pseudonym); this release does not link them, so it is not used.",
            file=sys.stderr,
        )
    whole = target.unit_column  # the people (households) released, counted beside the records
    links = None
    if args.project:  # later deliveries: searched on each person's history across the project's linked releases
        links = linked_to(args.project, target, [s.step for s in start.steps])
        target = target.after(links.earlier)
        judged = target
        start = start.with_target(_whole_histories(target))
    hierarchies = {}
    # records per row (a frequency-ordered hierarchy orders by records, as on an engine)
    counts = prepared.frame[dataset.count].to_numpy() if dataset.count else None
    unseen = []  # values a given hierarchy does not list: numbers by its bands, categories by --unseen
    for attribute in qis:  # built on (and checked against) every value of the file, so a recipe covers it
        values = prepared.frame[attribute]
        if attribute in given:
            covered, placed = cover_hierarchy(
                given[attribute], values, attribute, unseen=unseen_choice, counts=counts, recipe=False
            )
            unseen.extend(placed)
            hierarchies[attribute] = validate_hierarchy(covered, values, attribute)
        else:
            hierarchies[attribute] = default_hierarchy(values, attribute, counts=counts)[1]
    try:
        result = release_search(
            frame,
            qis,
            hierarchies,
            args.method,
            target=target,
            count=dataset.count,
            measure=measure,
            time_limit=args.time_limit,
        )
    except NoSolutionError as refused:
        if not target.linkable or target.power == 1:
            raise
        # the figure that would meet it: the strongest weaker adversary power that releases something
        weaker = weaker_power_sentence(
            frame, qis, hierarchies, target, method=args.method, count=dataset.count, measure=measure
        )
        raise NoSolutionError(f"{refused} {weaker}") from None
    if cap is None and loaded.person is not None and target.linkable and (result.utility or 0.0) >= 0.999:
        print(_cap_offer(frame, loaded.person), file=sys.stderr)
    start = start.with_target(judged)  # the search's estimate passed: the steps judged at its power
    release = _release(start, qis, released_columns, target, result, hierarchies, local=args.local_suppression)
    linked_note = links.note(target) if links is not None else None
    notes = [n for n in (linked_note, *(u.sentence() for u in unseen)) if n]
    notes.extend(power_notes(frame, loaded.person, dataset.count, target, links))
    package = release_package(release.copy, columns=release.recipe.columns, notes=notes) if args.package else None
    outputs = [(args.out, release.csv), (args.recipe, release.recipe.dumps().encode("utf-8"))]
    outputs = [(path, data) for path, data in outputs if path]
    # with --project: the files and the audit entry as one unit (written under temporary names, then renamed)
    source = Path(args.file).read_bytes() if args.file and args.project else None
    write_or_record(
        args,
        release.copy,
        release.recipe,
        table=release.csv,
        package=package,
        outputs=outputs,
        source=source,
        links=links,
    )
    # Every number below is measured on the released table (what --out writes), not taken from the search:
    # the target recounted on its bytes as a reader gets them (``verify``'s recount).
    check = recount(release.recipe, release.csv)
    # the assessed records under the file's row labels, as release.rows
    original = prepared.frame.loc[prepared.assessed(target.sensitive), list(frame.columns)]
    measured = _measured(original, release, qis, hierarchies, measure, dataset.count, target, whole)
    # the distinct rows before, counted over the same written columns as "rows" (one count, _distinct_rows)
    before = _distinct_rows(start.release(release.recipe.columns), release.recipe.columns, dataset.count)
    account = release.copy.column_account(release.recipe.columns)
    # what an attacker who knows the kept columns sees, counted on the released table (none kept: nothing)
    kept = released_kept_risk(release.recipe, release.copy.release(release.recipe.columns)) or ()
    return report_release(
        args,
        dataset=dataset.name,
        dropped=dropped,
        shield=qis,
        given=given,
        result=result,
        target=target,
        check=check,
        measure=measure,
        rows=(measured["rows"], before),
        k=measured["k"],
        utility=measured["utility"],
        steps=[s.step.describe() for s in release.copy.steps],
        seconds=f"{result.seconds:.4f}",
        cells=(release.cells, release.cell_records),
        account=account,
        people=(people_holding_records(frame, whole, dataset.count), measured.get("released_persons", 0))
        if whole is not None
        else None,
        earlier=links.linked if links is not None else 0,
        capped=capped,
        kept=kept,
        unseen=unseen,
    )


def _engine_pseudonyms(args: argparse.Namespace, table) -> list:
    """``--pseudonymize`` and ``--shift-dates`` on an engine (``keyed_steps``, as in memory): only the
    person (household) column is pseudonymized, its keyed pseudonyms made in memory for its distinct
    values and written by the engine (any other column refused in one sentence); dates are shifted
    by the engine (``anonlib.workflow.engine_health``)."""
    owners = {table.person, table.household} - {None}
    others = [c.strip() for c in args.pseudonymize or [] if c.strip() not in owners]
    if others:
        raise ParameterError(
            f"On an engine only the person or household column is released as a pseudonym; {join_names(others)} "
            "is not it: leave out --engine, or name the column with --person."
        )
    return keyed_steps(args, table)


def _cap_offer(frame: pd.DataFrame, person: str) -> str:
    """The note offering a records-per-person cap when the release keeps nothing: the longest
    histories are the rarest, and a cap at the median number of records per person shortens them.

    >>> _cap_offer(pd.DataFrame({"pid": ["a"] * 5 + ["b", "b", "c"]}), "pid")
    'note: this release keeps nothing of the quasi-identifiers (loss 1): long histories are unique whatever the generalization; 1 of 3 people have more than 2 records: --cap-records 2 releases at most 2 records per person (the earliest with --time COL), counted and stated.'
    """
    sizes = frame.groupby(person, dropna=False).size()
    median = max(int(sizes.median()), 1)
    longer = int((sizes > median).sum())
    return (
        "note: this release keeps nothing of the quasi-identifiers (loss 1): long histories are unique whatever the "
        f"generalization; {longer:,} of {len(sizes):,} people have more than {median:,} records: --cap-records "
        f"{median} releases at most {median} records per person (the earliest with --time COL), counted and stated."
    )


@dataclass(frozen=True, eq=False)
class _Release:
    """What ``anonymize`` releases: the working copy, its recipe, the bytes of --out, and the
    released rows under the loaded file's row labels (for the utility measured on them)."""

    copy: WorkingCopy
    recipe: Recipe
    csv: bytes
    rows: pd.DataFrame
    cells: int
    cell_records: int


PAGE = "command line (anonymize)"


def _release(start: WorkingCopy, qis, columns, target, result, hierarchies, *, local=False) -> _Release:
    """The working copy of a command-line generalization: ``start`` is the loaded dataset
    (with the release's roles, ``release_roles``: --shield names the quasi-identifiers) and
    its pseudonyms and date shifts; the target is k (and the models and the suppression
    limit), the next step the search's levels with the hierarchies used, then, for the
    records still failing, local suppression of cells (``--local-suppression``) or the
    suppression of their records (whole people, with a person column); ``columns`` are
    released."""
    step = GeneralizationStep.from_search(result, hierarchies)
    copy = start.apply(step, PAGE)
    rows = copy.current.frame
    cells = cell_records = 0
    if copy.check.failing_records:
        if local:
            suppress = LocalSuppressionStep.from_target(target, copy.current)
            before = copy.current.frame
            copy = copy.apply(suppress, PAGE)
            rows = copy.current.frame
            marked = (rows[list(qis)].astype(object) == SUPPRESSED) & (before[list(qis)].astype(object) != SUPPRESSED)
            cells, cell_records = int(marked.to_numpy().sum()), int(marked.any(axis=1).sum())
        else:
            suppress = SuppressionStep.from_target(target, copy.current)
            rows = rows[suppress.kept(rows)]
            copy = copy.apply(suppress, PAGE)
    recipe = copy.recipe(columns)
    rows = rows[copy.current.assessed(target.sensitive)]  # the assessed records are released (release_table)
    return _Release(copy, recipe, release_csv(copy.release(recipe.columns)), rows, cells, cell_records)


def _measured(frame: pd.DataFrame, release: _Release, qis, hierarchies, measure: str, count, target, whole) -> dict:
    """k and the utility of the released rows as written (a suppressed cell, ``*``, matches any value);
    k in the ``target``'s unit, the ``whole`` column's owners (people, households) released beside it."""
    rows = release.rows
    if rows.empty:
        return {"k": 0, "utility": 1.0, "rows": 0}
    marked = [c for c in qis if (rows[c].astype(object) == SUPPRESSED).any()]
    if whole is not None:  # k in people or histories, as the target is (local suppression is refused then)
        sizes = np.array([unit_k(rows, list(qis), target, count)])
    elif marked:
        sizes = wildcard_matches(marked_codes(rows, list(qis), SUPPRESSED, count=count), list(qis), count=count)
    else:
        sizes = encode(rows, list(qis), count=count).classes().row_sizes
    value = measure_value(
        frame, rows[[c for c in frame.columns if c in rows.columns]], list(qis), hierarchies, measure, count=count
    )
    distinct = _distinct_rows(release.copy.release(release.recipe.columns), release.recipe.columns, count)
    measured = {"k": int(np.min(sizes)), "utility": value, "rows": distinct}
    if whole is not None:  # the people (households) released, read off the released records
        measured["released_persons"] = people_holding_records(rows, whole, count)
    return measured


def _distinct_rows(table: pd.DataFrame, columns, count: str | None) -> int:
    """The distinct rows of a released table over its written columns (the record count left out):
    the one count ``anonymize`` states as rows, for the table written and for the file before."""
    written = [c for c in columns if c != count]
    if count is not None and count in table.columns and len(table):  # a row of no records is no row of records
        table = table[table[count].to_numpy(dtype=np.int64) > 0]
    return encode(table, written).n_distinct() if len(table) else 0


def _whole_histories(target: ReleaseTarget) -> ReleaseTarget:
    """``target`` with an adversary who knows whole histories (one pass) instead of any ``power``
    of a person's records (every sub-multiset): how the steps are judged before the search."""
    return replace(target, power=None) if target.power is not None and target.power > 1 else target


def register(commands) -> None:
    anonymize = command(
        commands,
        "anonymize",
        "the generalization losing the least information that meets k, privacy models and a suppression limit",
        "python -m anonlib anonymize --sample arca_table1 --shield Zip,Age,AC --k 3 --hierarchy Age=age.csv "
        "--out anonymized.csv --recipe recipe.json",
        in_turn(_anonymize),
    )
    data_arguments(anonymize)
    keep_argument(anonymize)
    unseen_argument(anonymize)
    person_argument(anonymize)
    household_argument(anonymize)
    power_argument(anonymize)
    cap_arguments(anonymize)
    key_arguments(anonymize)
    anonymize.add_argument(
        "--shield", required=True, help="comma-separated quasi-identifiers (the columns an attacker may know)"
    )
    anonymize.add_argument(
        "--k",
        required=True,
        help="smallest allowed group, a whole number of at least 1: records, or people with --person (their whole "
        "histories when the person column is released as a pseudonym), or households with --household",
    )
    anonymize.add_argument(
        "--method",
        choices=list(SEARCH_METHODS),
        default="optimal",
        help="search method (default optimal: the generalization losing the least information "
        "that meets the target, proven; iab, exhaustive and greedy are the Arca & Hewett paper's)",
    )
    anonymize.add_argument(
        "--measure",
        choices=list(MEASURES),
        default="loss",
        help="the information loss the optimal search minimizes (default loss: Iyengar's loss metric)",
    )
    anonymize.add_argument(
        "--time-limit",
        type=real_argument,
        default=None,
        metavar="SECONDS",
        help="stop the optimal search after this many seconds with the best found, said to be not proven optimal",
    )
    anonymize.add_argument(
        "--local-suppression",
        action="store_true",
        help="blank the fewest quasi-identifier cells (written *) of the records still failing k, "
        "instead of suppressing those records",
    )
    anonymize.add_argument(
        "--hierarchy",
        action="append",
        metavar="ATTR=FILE",
        help="ARX hierarchy CSV of a quasi-identifier (repeatable; default: built from the values)",
    )
    anonymize.add_argument(
        "--require",
        action="append",
        metavar="MODEL:SENSITIVE=VALUE",
        help=f"a privacy model every class must also meet ({', '.join(MODELS)}), e.g. "
        "distinct_l:diagnosis=3 or recursive_cl:diagnosis=3,c=2, as `models` takes it; repeat "
        "for several (a --hierarchy of the sensitive attribute gives t_closeness the "
        "hierarchical distance)",
    )
    anonymize.add_argument(
        "--max-suppressed",
        default=0.0,
        type=real_argument,
        help="share of records (people with --person, households with a released --household) that fail k or a "
        "model and may be suppressed (default 0), e.g. 0.01",
    )
    anonymize.add_argument(
        "--out",
        metavar="CSV",
        help="write the generalized table to this CSV file "
        "(with --engine: written by the engine; a .parquet name writes Parquet)",
    )
    anonymize.add_argument(
        "--recipe",
        metavar="JSON",
        help="write the recipe of this generalization (re-apply it with `python -m anonlib apply`)",
    )
    anonymize.add_argument(
        "--package",
        metavar="ZIP",
        help="also write the release package (released.csv, report.html, "
        "recipe.json, README.txt, SHA256SUMS); check it with `python -m anonlib verify`",
    )
    anonymize.set_defaults(outputs=("out", "recipe", "package"))
    anonymize.add_argument("--json", action="store_true", help="print the result as JSON")
    project_argument(anonymize)
    engine_arguments(anonymize)
