"""Privacy-risk dashboard: entry point (``streamlit run app.py``).

Declares the pages; each page file in ``pages/`` is thin (widgets, one call
into anonlib, rendering). Only pages that work are registered here.
"""

from __future__ import annotations

import streamlit as st

from dashboard.ui import sidebar

PAGES = [
    st.Page("pages/dataset.py", title="Dataset", icon=":material/table:", default=True),
    st.Page("pages/frontier.py", title="Risk-utility frontier", icon=":material/query_stats:"),
]

st.set_page_config(page_title="Privacy-risk dashboard", page_icon=":material/shield:", layout="wide")
navigation = st.navigation(PAGES)
sidebar()
navigation.run()
