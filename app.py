"""Privacy-risk dashboard: entry point (``streamlit run app.py``).

Declares the pages; each page file in ``pages/`` is thin (widgets, one call
into anonlib, rendering). Only pages that work are registered here.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.preload import preload
from dashboard.ui import run_with_sidebar

PAGES = [
    st.Page("pages/dataset.py", title="Dataset", icon=":material/table:", default=True),
    st.Page("pages/individuals.py", title="Individual privacy", icon=":material/person_search:"),
    st.Page("pages/leakage.py", title="Leakage & anonymization", icon=":material/account_tree:"),
    st.Page("pages/frontier.py", title="Risk-utility frontier", icon=":material/query_stats:"),
    st.Page("pages/geography.py", title="Geographic aggregation", icon=":material/map:"),
    st.Page("pages/screening.py", title="Screening schedules", icon=":material/event_available:"),
    st.Page("pages/report.py", title="Risk report", icon=":material/summarize:"),
    st.Page("pages/release.py", title="Release", icon=":material/inventory_2:"),
    st.Page("pages/projects.py", title="Projects", icon=":material/folder_open:"),
]

# A local file, sent inline as a data URL: a ":material/...:" page icon would make every page
# load its favicon from a Google font host, and nothing may leave this machine.
ICON = Path(__file__).resolve().parent / "dashboard" / "static" / "shield.svg"
st.set_page_config(page_title="Privacy-risk dashboard", page_icon=str(ICON), layout="wide")
preload()  # the Release page's libraries, imported while the user looks at the first page
run_with_sidebar(PAGES)
