"""Widgets that build a hierarchy for each quasi-identifier: a builder (intervals, masking,
frequency, dates, a bundled taxonomy, named groups, flat, an ARX file), its parameters, an
editable table, the values it does not cover, its tree and a download in ARX layout.

The hierarchies themselves are built and validated by ``anonlib.core.hierarchy`` and
``anonlib.core.default_hierarchy``; these widgets only gather the choices and show the result.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from anonlib.core.default_hierarchy import bands_text, default_hierarchy, default_intervals
from anonlib.core.errors import HierarchyError, join_names
from anonlib.core.hierarchy import (
    cover_values,
    date_hierarchy,
    distinct_values,
    flat_hierarchy,
    frequency_hierarchy,
    hierarchy_csv,
    hierarchy_tree,
    interval_hierarchy,
    masking_hierarchy,
    parse_bands,
    parse_taxonomy,
    read_hierarchy_csv,
    taxonomy_hierarchy,
    uncovered_values,
    validate_hierarchy,
    value_key,
)
from anonlib.core.taxonomy import TAXONOMIES, taxonomy_match
from anonlib.transformations.anonymize_experiments import (
    ARCA_AC_GROUPS,
    ARCA_AGE_BANDS,
)
from dashboard import charts
from dashboard.glossary import term_help
from dashboard.ui import guarded, opened, plain

BUILDERS = ["intervals", "masking", "frequency", "dates", "bundled taxonomy", "taxonomy", "flat", "ARX file"]


def digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:12]


def initial_builder(attribute: str, values: list, example: bool, counts=None) -> str:
    if example and attribute in ("Zip", "Age", "AC"):
        return {"Zip": "masking", "Age": "intervals", "AC": "taxonomy"}[attribute]
    return default_hierarchy(values, attribute, counts=counts)[0]


def tail_limit(text: str, what: str) -> float | None:
    """A tail limit typed on the page (blank: none); a sentence when it is not a number."""
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise HierarchyError(
            f"The {what} limit '{text.strip()}' is not a number; type a number or leave it blank."
        ) from None


def hierarchy_editor(attribute: str, values: pd.Series, example: bool, scope: str) -> pd.DataFrame | None:
    """Builder, parameters, upload, editable table and download for one quasi-identifier."""
    key = f"{scope}-{attribute}"
    # every builder and check reads the column's distinct values and their records (a few
    # dozen at 10^5 records), never the records one by one, so a rerun costs milliseconds
    values, counts = distinct_values(values)
    builder = st.selectbox(
        "Build from",
        BUILDERS,
        index=BUILDERS.index(initial_builder(attribute, values, example, counts)),
        key=f"hb-{key}",
        help="intervals: nested numeric bands; masking: hide digits from the right; frequency: categories grouped "
        "in order of how many records hold them (4, 16, 64... per group); dates: month, quarter, year, decade; "
        "bundled taxonomy: US states, countries, race, ICD-10 or ICD-9 codes; taxonomy: named groups; flat: every value becomes *; "
        "ARX file: a hierarchy CSV exported from ARX (; or , separated, no header).",
    )
    if builder == "intervals":
        below = above = None
        try:
            if example and attribute == "Age":
                suggested = ARCA_AGE_BANDS
            else:
                bands, below, above = default_intervals(values, counts=counts, name=attribute)
                suggested = bands_text(bands)
        except HierarchyError:
            suggested = ""
        text = st.text_input(
            "Bands per level: low-high separated by commas; levels separated by |", suggested, key=f"hi-{key}"
        )
        tails = st.columns(3)
        low_text = tails[0].text_input(
            "Bottom-code values below",
            "" if below is None else value_key(below),
            key=f"hl-{key}",
            help="Every value under it becomes one value, <limit, at "
            "every level (blank: none). Suggested when 1% of the records stretch far.",
        )
        high_text = tails[1].text_input(
            "Top-code values above",
            "" if above is None else value_key(above),
            key=f"hh-{key}",
            help="Every value over it becomes one value, >limit, at "
            "every level (blank: none). Suggested when 1% of the records stretch far.",
        )
        top = tails[2].checkbox("Add a last level *", value=not (example and attribute == "Age"), key=f"ht-{key}")
        base = interval_hierarchy(
            values,
            parse_bands(text),
            top=top,
            below=tail_limit(low_text, "bottom-coding"),
            above=tail_limit(high_text, "top-coding"),
        )
    elif builder == "masking":
        base = masking_hierarchy(values)
    elif builder == "frequency":
        base = frequency_hierarchy(values, counts=counts)
    elif builder == "dates":
        base = date_hierarchy(values)
    elif builder == "bundled taxonomy":
        names = list(TAXONOMIES)
        guess = taxonomy_match(values)
        chosen = st.selectbox("Taxonomy", names, index=names.index(guess.name) if guess else 0, key=f"hk-{key}")
        match = taxonomy_match(values, name=chosen)
        st.caption(plain(match.summary()))
        base = match.table
    elif builder == "taxonomy":
        if example and attribute == "AC":
            suggested = "\n".join(f"{parent}: {', '.join(kids)}" for parent, kids in ARCA_AC_GROUPS.items())
        else:
            suggested = "*: " + ", ".join(flat_hierarchy(values)[0].tolist())
        text = st.text_area(
            "Groups, one per line: group: member, member (the top group last)", suggested, key=f"hx-{key}"
        )
        base = taxonomy_hierarchy(parse_taxonomy(text))
    elif builder == "flat":
        base = flat_hierarchy(values)
    else:
        upload = st.file_uploader("ARX hierarchy file (CSV, ; or ,)", type=["csv", "txt"], key=f"hu-{key}")
        if upload is None:
            st.info(f"Upload the hierarchy of {plain(attribute)}, or pick another builder.")
            return None
        base = read_hierarchy_csv(upload.getvalue())
    shown = base.copy()
    shown.columns = ["original"] + [f"level {j}" for j in range(1, base.shape[1])]
    edited = st.data_editor(
        shown, key=f"he-{key}-{digest(hierarchy_csv(base))}", num_rows="dynamic", hide_index=True, width="stretch"
    )
    table = pd.DataFrame(edited.to_numpy(dtype=object))
    missing = uncovered_values(table, values)
    if missing:
        st.warning(
            plain(f"The hierarchy does not list {len(missing):,} of the column's values: {join_names(missing, 10)}.")
        )
        if st.checkbox(
            "Put them under 'other'",
            value=True,
            key=f"hc-{key}",
            help="Adds a row for each: 'other' at every level below the top, the top value on top. "
            "Without it the hierarchy cannot be used on this column.",
        ):
            table = cover_values(table, values)
    table = validate_hierarchy(table, values, attribute)
    with opened(f"Tree of {attribute}", key=f"htree-open-{key}") as shown:
        if shown:
            st.plotly_chart(
                charts.hierarchy_figure(hierarchy_tree(table, values, counts=counts), attribute),
                width="stretch",
                key=f"htree-{key}",
            )
    st.download_button(
        f"Hierarchy of {attribute} (ARX CSV)",
        hierarchy_csv(table),
        file_name=f"hierarchy_{attribute}.csv",
        mime="text/csv",
        key=f"hd-{key}",
    )
    return table


def hierarchy_editors(
    quasi_identifiers: list[str], frame: pd.DataFrame, example: bool, scope: str
) -> dict[str, pd.DataFrame]:
    """One hierarchy editor per quasi-identifier, in tabs; only the valid ones are returned."""
    st.markdown(
        "**Hierarchies** (how each column is generalized level by level; edit cells, add rows, or upload ARX files)",
        help=term_help("hierarchy"),
    )
    hierarchies: dict[str, pd.DataFrame] = {}
    for attribute, tab in zip(quasi_identifiers, st.tabs([plain(a) for a in quasi_identifiers])):
        with tab, guarded(f"building the hierarchy of {attribute}"):
            built = hierarchy_editor(attribute, frame[attribute], example, scope)
            if built is not None:
                hierarchies[attribute] = built
    return hierarchies
