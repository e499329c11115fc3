"""Small building blocks every page uses: header, sidebar, errors, downloads.

Pages stay thin: widgets, one call into anonlib inside ``guarded``, rendering.
User-provided strings (column names, values, file names) are shown with
``plain`` (Markdown escaped) or in dataframes, never as HTML.
"""

from __future__ import annotations

import json
import logging
import re
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import pandas as pd
import streamlit as st

from anonlib.core.errors import AnonlibError
from anonlib.core.loading import to_safe_csv

from .state import active_dataset

log = logging.getLogger("dashboard")

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: object) -> str:
    """Escape Markdown so user text shows literally (no links, no formatting).

    >>> plain("**x** <b>")
    '\\\\*\\\\*x\\\\*\\\\* \\\\<b\\\\>'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def _leave_legacy_page_mode() -> None:
    """Run ``app.py``'s navigation even when a page's URL is opened first.

    Streamlit still treats a ``pages/`` folder as an old-style multipage app
    until ``st.navigation`` has run once in the server process: a first visitor
    who opens e.g. ``/frontier`` directly would get that script alone, without
    the app's navigation, layout and sidebar. Switch that mode off and rerun;
    the rerun goes through ``app.py`` and lands on the same page.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_header(title: str, question: str, how_to_read: str, paper: str | None = None) -> None:
    """Title, the question the page answers, the paper it follows, and a help expander."""
    _leave_legacy_page_mode()
    st.title(title)
    st.write(question)
    if paper:
        st.caption(f"Follows: {paper}")
    with st.expander("How to read this"):
        st.markdown(how_to_read)


def sidebar(container=None) -> None:
    """The active dataset at a glance, drawn into ``container`` (the sidebar when None)."""
    dataset = active_dataset()
    with container if container is not None else st.sidebar:
        st.subheader("Active dataset")
        st.text(dataset.name)
        st.text(f"{dataset.n_rows:,} rows, {dataset.frame.shape[1]} columns")
        if dataset.count:
            st.text(f"{dataset.n_records:,} records (count column: {dataset.count})")
        st.text("Quasi-identifiers: " + (", ".join(dataset.quasi_identifiers) or "none"))
        st.text("Sensitive: " + (", ".join(dataset.sensitive) or "none"))
        if dataset.missing == "drop":
            st.text("Rows with missing values: dropped")
        st.caption("Everything is computed on this computer; nothing is sent anywhere.")


def run_with_sidebar(pages: list) -> None:
    """Run the page chosen in ``st.navigation(pages)`` with the active-dataset sidebar.

    The sidebar is drawn before the page, so it is there even when the page
    stops early (``st.stop()`` drops everything drawn after it), and redrawn in
    the same place afterwards, because the page may have changed the dataset.
    """
    navigation = st.navigation(pages)
    slot = st.sidebar.empty()
    sidebar(slot.container())
    navigation.run()
    sidebar(slot.container())


@contextmanager
def guarded(what: str) -> Iterator[None]:
    """Show any failure inside as a sentence (``st.error``), never a traceback.

    ``AnonlibError`` messages are shown with their Markdown escaped (they name
    user columns and values; the escapes render invisibly); anything else gets
    a generic sentence and is logged to the server console only.
    """
    try:
        yield
    except AnonlibError as err:
        st.error(plain(str(err)))
    except Exception:  # noqa: BLE001 - the page must survive any failure
        log.exception("unexpected failure while %s", what)
        st.error(
            f"Something unexpected went wrong while {what}. Your data and settings are kept; "
            "try other settings, or report the steps that led here."
        )


def row(gap: str = "medium"):
    """A row for metrics or buttons that wraps onto more lines when the window is
    narrow: each keeps the width of its label and value, so nothing is cut to "32,…"
    at 1024 px (``st.columns`` gives each a fixed share and cuts what does not fit).

    Use as ``r = row(); r.metric(...)`` or ``with row(): st.download_button(...)``.
    """
    return st.container(horizontal=True, gap=gap)


MISSING_CELL = "–"  # what a results table shows where a value does not apply


def _cell_text(value: object, printf: str | None, data: bool) -> str:
    """One number of a column that also holds missing values, as the table shows it.

    >>> _cell_text(312462997, None, False), _cell_text(0.5, "%.4f", False), _cell_text(37010.0, None, True)
    ('312,462,997', '0.5000', '37010')
    """
    if printf:
        try:
            return printf % value
        except (TypeError, ValueError):
            pass
    whole = float(value).is_integer()
    if data:
        return str(int(value)) if whole else str(value)
    return f"{int(value):,}" if whole else f"{float(value):,.6g}"


def shown_table(frame: pd.DataFrame, column_config: dict | None = None, *, data: bool = False) -> tuple[pd.DataFrame, dict]:
    """The table and column settings ``table`` shows: whole-number columns of results
    with thousands separators ("312,462,997", never cut to "12462997"), and missing
    cells as ``MISSING_CELL`` in results or empty in data (``data=True``: a preview
    of the user's table, where ids and ZIP codes keep their digits), never "None".
    A numeric column with missing cells becomes right-aligned text in the same format.

    >>> t, config = shown_table(pd.DataFrame({"records": [312462997, 5], "gain": [None, 0.25], "who": ["a", None]}))
    >>> t.to_dict("list"), config["records"]["type_config"]["format"], config["gain"]["alignment"]
    ({'records': [312462997, 5], 'gain': ['–', '0.25'], 'who': ['a', '–']}, 'localized', 'right')
    """
    config = dict(column_config or {})
    shown = frame
    for column in frame.columns:
        values = frame[column]
        if isinstance(values, pd.DataFrame):  # duplicated column names: leave as they are
            continue
        missing = values.isna().to_numpy()
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        if missing.any():
            placeholder = "" if data else MISSING_CELL
            if numeric:
                given = config.get(column)
                type_config = (given or {}).get("type_config", {}) if isinstance(given, dict) else {}
                printf = type_config.get("format") if type_config.get("type") == "number" else None
                printf = printf if isinstance(printf, str) and printf.startswith("%") else None
                text = [placeholder if m else _cell_text(v, printf, data) for v, m in zip(values.tolist(), missing)]
                label = given.get("label") if isinstance(given, dict) else (given if isinstance(given, str) else None)
                config[column] = st.column_config.TextColumn(label, alignment="right")
            else:
                text = values.astype(object).where(~missing, placeholder)
            shown = shown.copy() if shown is frame else shown
            shown[column] = text
        elif numeric and not data and column not in config and pd.api.types.is_integer_dtype(values):
            config[column] = st.column_config.NumberColumn(format="localized")
    return shown, config


def show_table(frame: pd.DataFrame, column_config: dict | None = None, *, data: bool = False, **kwargs) -> None:
    """``st.dataframe`` of a results table (or, with ``data=True``, of the user's data)
    as ``shown_table`` prepares it; index hidden, full width unless ``kwargs`` say otherwise."""
    shown, config = shown_table(frame, column_config, data=data)
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    st.dataframe(shown, column_config=config, **kwargs)


def download_csv(
    label: str, frame: pd.DataFrame | Callable[[], pd.DataFrame], file_name: str, key: str | None = None
) -> None:
    """A CSV download with spreadsheet formulas neutralised. ``frame`` may be a
    function returning the table: it is then built only when the button is clicked
    (for large tables, so the page does not convert them on every rerun)."""
    data = (lambda: to_safe_csv(frame())) if callable(frame) else to_safe_csv(frame)
    st.download_button(label, data, file_name=file_name, mime="text/csv", key=key)


def download_json(label: str, payload: dict[str, Any], file_name: str, key: str | None = None) -> None:
    """A JSON download of parameters and results, so a run can be reproduced."""
    st.download_button(
        label,
        json.dumps(payload, indent=2, default=_json_default).encode("utf-8"),
        file_name=file_name,
        mime="application/json",
        key=key,
    )


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
