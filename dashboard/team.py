"""Sign-in where there is a team (``team.md``), in Streamlit's own way: an OpenID Connect
provider in ``[auth]`` of ``.streamlit/secrets.toml`` (``st.login`` / ``st.user`` /
``st.logout``, Streamlit's Authlib-based flow). Without ``[auth]`` nothing changes: one user on
localhost, no sign-in, every function here says so (``team_mode`` False, ``member`` None).

With it, every page asks for sign-in first (``dashboard.ui.run_with_sidebar`` shows only the
sign-in page to a signed-out visitor, and logs the attempt), and the signed-in user (the
provider's subject and e-mail: ``member``) is the user of every audit entry, approval and
privacy budget spent. Members are matched on the subject; an e-mail counts only when the
provider verified it; a member row ``group:NAME`` gives its role to everyone whose ``groups``
claim holds NAME (roles from the provider's groups, mapped per project beside those the owner sets). The session ends when the provider's token expires (``exp``), and
approving needs a sign-in within ``REAUTH_SECONDS`` (``fresh_sign_in``). The store is a team's (``anonlib.projects.team.mark_team``): releases are
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

import time
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


REAUTH_SECONDS = 300  # approving needs a sign-in at most this old (a fresh sign-in within minutes)


def claims_member(claims: dict, now: float | None = None) -> Member | None:
    """Who the provider's claims name: matched on the subject; the e-mail counts only when the
    provider verified it (``email_verified``); None without a subject, or once the provider's
    token has expired (``exp``: the session ends with it).

    >>> claims_member({"sub": "s1", "email": "ann@x.example", "email_verified": True}, now=0)
    Member(login='s1', email='ann@x.example', groups=())
    >>> claims_member({"sub": "s1", "email": "ann@x.example", "groups": ["privacy-office"]}, now=0)
    Member(login='s1', email=None, groups=('privacy-office',))
    >>> claims_member({"sub": "s1", "exp": 100}, now=101) is None, claims_member({"email": "a@x"}, now=0)
    (True, None)
    """
    now = time.time() if now is None else now
    subject = str(claims.get("sub") or "")
    if not subject or expired(claims, now):
        return None
    email = claims.get("email") if claims.get("email_verified") is True else None
    groups = claims.get("groups")
    groups = tuple(str(g) for g in groups if str(g).strip()) if isinstance(groups, list | tuple) else ()
    return Member(subject, str(email) if email else None, groups)


def expired(claims: dict, now: float | None = None) -> bool:
    """Whether the provider's token behind the session has expired (its ``exp``, seconds)."""
    exp = claims.get("exp")
    try:
        return exp is not None and float(exp) <= (time.time() if now is None else now)
    except (TypeError, ValueError):
        return True


def fresh_sign_in(claims: dict, now: float | None = None, seconds: float = REAUTH_SECONDS) -> bool:
    """Whether the sign-in is recent enough to approve a release (``auth_time``, else ``iat``).

    >>> fresh_sign_in({"iat": 1000}, now=1200), fresh_sign_in({"iat": 1000}, now=1400), fresh_sign_in({}, now=0)
    (True, False, False)
    """
    when = claims.get("auth_time", claims.get("iat"))
    try:
        return when is not None and (time.time() if now is None else now) - float(when) <= seconds
    except (TypeError, ValueError):
        return False


def provider_problem(metadata_url: str | None, timeout: float = 3.0) -> str | None:
    """The sentence saying the sign-in provider cannot be reached (its OpenID configuration at
    ``metadata_url`` does not answer), or None when it answers. Asked before the sign-in button is
    offered, so a provider that is down gives a clear page rather than a bare authentication error.

    >>> provider_problem(None) is None
    True
    >>> provider_problem("http://127.0.0.1:9/.well-known/openid-configuration", timeout=1)[:47]
    'The sign-in provider at 127.0.0.1:9 cannot be r'
    """
    if not metadata_url:
        return None
    from urllib.error import URLError
    from urllib.parse import urlsplit
    from urllib.request import urlopen

    try:
        with urlopen(str(metadata_url), timeout=timeout) as answer:  # noqa: S310 - the configured provider only
            if answer.status == 200:
                return None
    except (URLError, OSError, ValueError):
        pass
    where = urlsplit(str(metadata_url)).netloc or str(metadata_url)
    return (
        f"The sign-in provider at {where} cannot be reached, so nobody can sign in right now; try again in a "
        "moment, or ask your administrator whether the provider is down. Nothing of your projects is shown meanwhile."
    )


def metadata_url() -> str | None:
    """The provider's OpenID configuration URL from ``[auth]`` of secrets.toml (None when not set)."""
    try:
        auth = st.secrets.get("auth", {})
        return auth.get("server_metadata_url") if hasattr(auth, "get") else None
    except Exception:  # noqa: BLE001 - no secrets file
        return None


def _claims() -> dict:
    try:
        return {k: st.user.get(k) for k in st.user}  # st.user is read-only and not a dict
    except Exception:  # noqa: BLE001 - no script context
        return {}


def member() -> Member | None:
    """The signed-in user (the provider's subject, and the e-mail when verified), None when signed
    out, once the provider's token has expired, or without a team."""
    if not team_mode() or not st.user.get("is_logged_in"):
        return None
    return claims_member(_claims())


def session_expired() -> bool:
    """Signed in, but the provider's token behind the session has expired."""
    return team_mode() and bool(st.user.get("is_logged_in")) and expired(_claims())


def may_approve_now() -> bool:
    """Whether the signed-in user signed in within ``REAUTH_SECONDS`` (approving needs it)."""
    return fresh_sign_in(_claims())


def user_label() -> str | None:
    """Who the audit log names for what this session does: the signed-in user, or None (the
    operating-system user, as in single-user mode)."""
    who = member()
    return None if who is None else who.label


def team_pages(role: str | None, titles: Sequence[str]) -> list[str]:
    """The page titles a role may open (every page for any other role, or without a team)."""
    return [t for t in titles if t in VIEWER_PAGES] if role == "viewer" else list(titles)


__all__ = [
    "REAUTH_SECONDS",
    "VIEWER_PAGES",
    "claims_member",
    "expired",
    "fresh_sign_in",
    "may_approve_now",
    "member",
    "metadata_url",
    "provider_problem",
    "session_expired",
    "team_mode",
    "team_pages",
    "user_label",
]
