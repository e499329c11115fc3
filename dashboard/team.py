"""Sign-in where there is a team (``team.md``), in Streamlit's own way: an OpenID Connect
provider in ``[auth]`` of ``.streamlit/secrets.toml`` (``st.login`` / ``st.user`` /
``st.logout``, Streamlit's Authlib-based flow). Without ``[auth]`` nothing changes: one user on
localhost, no sign-in, every function here says so (``team_mode`` False, ``member`` None).

With it, every page asks for sign-in first (``dashboard.ui.run_with_sidebar`` shows only the
sign-in page to a signed-out visitor, and logs the attempt), and the signed-in user (the
provider's subject and e-mail: ``member``) is the user of every audit entry, approval and
privacy budget spent. The store is a team's (``anonlib.projects.team.mark_team``): releases are
drafted and approved by a second person, and every call into a project checks the user's role
(``role``; ``anonlib.projects.team.require``).

Which pages a role sees (``PAGES_BY_ROLE``): a viewer sees the Risk report, the Release view and
the Projects page (with the audit log), never the pages that show the raw file's rows.

Example:
    >>> team_pages("viewer", ["Dataset", "Risk report", "Release", "Projects", "Leakage & anonymization"])
    ['Risk report', 'Release', 'Projects']
    >>> team_pages("analyst", ["Dataset", "Risk report"])
    ['Dataset', 'Risk report']
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from anonlib.projects.team import Member

VIEWER_PAGES = ("Risk report", "Release", "Projects")  # what a viewer may open: no row of the raw file


def team_mode() -> bool:
    """Whether the app signs users in (``[auth]`` in secrets.toml: ``st.user`` then says whether
    one is logged in)."""
    try:
        return "is_logged_in" in st.user
    except Exception:  # noqa: BLE001 - no script context (a bare import): single-user
        return False


def member() -> Member | None:
    """The signed-in user (subject and e-mail), None when signed out or without a team."""
    if not team_mode() or not st.user.get("is_logged_in"):
        return None
    subject = str(st.user.get("sub") or st.user.get("email") or "")
    email = st.user.get("email")
    return Member(subject, str(email) if email else None) if subject else None


def user_label() -> str | None:
    """Who the audit log names for what this session does: the signed-in user, or None (the
    operating-system user, as in single-user mode)."""
    who = member()
    return None if who is None else who.label


def team_pages(role: str | None, titles: Sequence[str]) -> list[str]:
    """The page titles a role may open (every page for any other role, or without a team)."""
    return [t for t in titles if t in VIEWER_PAGES] if role == "viewer" else list(titles)


__all__ = ["VIEWER_PAGES", "member", "team_mode", "team_pages", "user_label"]
