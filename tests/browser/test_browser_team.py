"""A team's dashboard in a real browser (``team.md``; marker ``team``): a real OpenID Connect
provider on localhost (``oidc-provider-mock``, which issues real signed tokens) and one dashboard
server with ``[auth]`` in its secrets.toml; five users, each in a browser context of their own.

Ann (the analyst, who uploads and so owns the project) sets a target and drafts the release; her
own approval is refused (four eyes) and the package does not download; Ben (approver) signs in
(an approver through his group at the provider) and approves, then withdraws his approval before the hand-out
(release 1 is never handed out); Ann drafts it again; Eve, an approver of the same group whose sign-in is an hour
old, is asked to sign in again instead of approving; Ben approves release 2, and only then the package downloads,
naming both, and the audit log shows drafter, approver and digest; Cay (viewer) sees the report, not the file; Dee (no member, claiming Cay's e-mail without
the provider verifying it) sees no trace
of the project, and signs out. Screenshots at 1440 and 1024 px go to ``test-artifacts/``.
"""

from __future__ import annotations

import io
import json
import secrets
import time
import zipfile
from pathlib import Path
from urllib.request import Request, urlopen

import pytest
from live_app import (
    ROOT,
    SMALL_SAMPLE,
    chromium,
    dashboard_server,
    enter_number,
    full_screenshot,
    open_page,
    press,
    upload,
    wait_idle,
)
from uploads import JOURNEY_CSV

from anonlib.projects import ProjectStore, audit_entries
from anonlib.projects.team import refusals

pytestmark = pytest.mark.team

ARTIFACTS = ROOT / "test-artifacts"
TIMEOUT = 300_000
# Nothing but this machine: the provider's form names a stylesheet on the internet, and every name but
# localhost resolves nowhere. Not a Playwright route that aborts it: routing turns the browser's HTTP
# cache off, so every page load of a context (the sign-in page, the page after the provider's redirect,
# a reload) fetched Streamlit's hundred scripts from the server again and compiled them again: a sign-in
# cost about 1.3 CPU-seconds more, and a reload 2.6 (7.4 against 4.8, measured)
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",)
USERS = {"ann": "Ann Analyst", "ben": "Ben Approver", "cay": "Cay Viewer", "dee": "Dee Outsider", "eve": "Eve Approver"}


def _email(user: str) -> str:
    return f"{user}@clinic.example"


@pytest.fixture(scope="module")
def provider():
    """The OpenID Connect provider on a free localhost port, with the four users' claims."""
    from oidc_provider_mock import run_server_in_thread

    with run_server_in_thread() as server:
        url = f"http://localhost:{server.server_port}"
        for user, name in USERS.items():
            # Dee claims Cay's e-mail, unverified: an e-mail counts only with email_verified
            email, verified = (_email("cay"), False) if user == "dee" else (_email(user), True)
            claims = {"email": email, "email_verified": verified, "name": name}
            if user in ("ben", "eve"):  # approvers through their group at the provider (roles from a groups claim)
                claims["groups"] = ["privacy-office"]
            if user == "eve":  # her sign-in is an hour old (the provider's auth_time): approving needs a fresh one
                claims["auth_time"] = int(time.time()) - 3600
            body = json.dumps(claims).encode()
            request = Request(f"{url}/users/{user}-sub", data=body, method="PUT")
            request.add_header("Content-Type", "application/json")
            with urlopen(request, timeout=10) as answer:
                assert answer.status == 204
        yield url


def _secrets(folder: Path, provider: str) -> Path:
    path = folder / "secrets.toml"
    path.write_text(
        "[auth]\n"
        'redirect_uri = "http://localhost:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "anonlib-dashboard"\n'
        f'client_secret = "{secrets.token_hex(16)}"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n'
        # the provider is plain http on this machine: no certificate to verify. Streamlit makes a new
        # OAuth client (an httpx client) for every sign-in request, and each loaded the whole CA bundle
        # into a new TLS context: 64 ms of CPU a client on a busy machine, 0.9 ms without (measured),
        # about 4 of the server's CPU-seconds in this test (sampled)
        "client_kwargs = { verify = false }\n",
        encoding="utf-8",
    )
    return path


def _sign_in(browser, url: str, user: str, width: int = 1440, signed_out=None):
    """A browser context of its own, signed in as ``user`` through the provider's form
    (``signed_out``: called with the page while it shows the sign-in page)."""
    context = browser.new_context(viewport={"width": width, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.goto(url, wait_until="commit", timeout=TIMEOUT)
    page.get_by_role("button", name="Sign in").wait_for(timeout=TIMEOUT)
    wait_idle(page, TIMEOUT)
    if signed_out is not None:
        signed_out(page)
    page.get_by_role("button", name="Sign in").click()
    page.locator('input[name="sub"]').first.fill(f"{user}-sub")
    page.get_by_role("button", name="Authorize").click()
    page.get_by_role("button", name="Sign out").wait_for(timeout=TIMEOUT)
    wait_idle(page, TIMEOUT)
    return context, page


def _shot(page, name: str, widths=(1440, 1024)) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in widths:
        page.set_viewport_size({"width": width, "height": 1000})
        wait_idle(page, TIMEOUT)
        # the whole page, audit log and all; from the grown window straight to the next size
        full_screenshot(page, ARTIFACTS / f"team-{name}-{width}.png", put_back=False)
    page.set_viewport_size({"width": 1440, "height": 1000})


def _text(page) -> str:
    return page.locator('[data-testid="stApp"]').inner_text()


def test_a_team_drafts_approves_and_releases_with_four_eyes(tmp_path, provider) -> None:
    csv = tmp_path / "registry.csv"
    csv.write_bytes(JOURNEY_CSV)
    home = tmp_path / "home"
    errors: list[str] = []
    with (
        chromium(OFFLINE) as browser,
        dashboard_server(home, secrets=_secrets(tmp_path, provider), first_sample=SMALL_SAMPLE, preload=False) as url,
    ):
        # Ann uploads, sets the target, drafts the release
        def nothing_signed_out(page) -> None:  # the sign-in page and nothing else
            said = _text(page)
            assert "Sign in first: this dashboard belongs to a team, and shows nothing signed out." in said
            assert not page.locator('[data-testid="stSidebarNavLink"]').count() and "Dataset" not in said
            _shot(page, "signed-out")

        ann_context, ann = _sign_in(browser, url, "ann", signed_out=nothing_signed_out)
        ann.on("pageerror", lambda exc: errors.append(str(exc)))
        upload(ann, csv, "Read 400 rows and 6 columns")
        enter_number(ann, "target_k", "2")
        enter_number(ann, "target_suppressed", "20")
        assert "Signed in as ann@clinic.example (subject ann-sub); your role in this project: owner" in _text(ann)
        open_page(ann, "Risk report")
        press(ann, ann.get_by_role("button", name="Draft this release for approval"))
        ann.get_by_text("waiting for a second person's approval").first.wait_for(timeout=TIMEOUT)
        assert not ann.get_by_role("button", name="Release package (zip)").count()  # nothing to download yet
        # she makes the privacy office's group (Ben's) approver and Cay a viewer; her own approval is refused
        open_page(ann, "Projects")
        for login, role in (("group:privacy-office", "approver"), ("cay@clinic.example", "viewer")):
            ann.locator(".st-key-team_add_login input").fill(login)
            ann.locator(".st-key-team_add_login input").press("Enter")
            wait_idle(ann, TIMEOUT)
            box = ann.locator(".st-key-team_add_role input")
            box.click()
            box.press_sequentially(role)
            ann.get_by_role("option", name=role, exact=True).wait_for(timeout=TIMEOUT)
            box.press("Enter")
            wait_idle(ann, TIMEOUT)
            press(ann, ann.locator(".st-key-team_add button"))
            ann.get_by_text(f"{login} is now {role} of this project.").wait_for(timeout=TIMEOUT)
        press(ann, ann.locator('[class*="st-key-team_approve_"] button').first)
        refused = (
            "You drafted release 1 of project registry.csv; another member with the approver role must approve it "
            "(four eyes)."
        )
        ann.get_by_text(refused).wait_for(timeout=TIMEOUT)
        _shot(ann, "analyst-approval-refused")

        # Ben signs in and approves
        ben_context, ben = _sign_in(browser, url, "ben")
        open_page(ben, "Projects")
        assert "Waiting for you." in _text(ben)
        ben.locator('[class*="st-key-team_note_"] input').first.fill("k = 2 checked against the registry's policy")
        press(ben, ben.locator('[class*="st-key-team_approve_"] button').first)
        ben.get_by_text("approved by ben@clinic.example (subject ben-sub)").first.wait_for(timeout=TIMEOUT)
        _shot(ben, "approver-approved", widths=(1440,))

        # Ben withdraws his approval before the hand-out: release 1 is never handed out; Ann drafts it again
        press(ben, ben.get_by_role("button", name="Withdraw the approval of release 1 of registry.csv"))
        ben.get_by_text("then withdrawn (approval withdrawn by ben@clinic.example").first.wait_for(timeout=TIMEOUT)
        _shot(ben, "approval-withdrawn", widths=(1024,))
        open_page(ann, "Risk report")
        assert not ann.get_by_role("button", name="Release package (zip)").count()  # nothing approved to hand out
        press(ann, ann.get_by_role("button", name="Draft this release for approval"))
        ann.get_by_text("waiting for a second person's approval").first.wait_for(timeout=TIMEOUT)
        # Eve, an approver through the same group whose sign-in is an hour old, is asked to sign in again
        eve_context, eve = _sign_in(browser, url, "eve")
        open_page(eve, "Projects")
        eve.get_by_role("button", name="Sign in again to approve").first.wait_for(timeout=TIMEOUT)
        assert "Waiting for you." in _text(eve) and not eve.locator('[class*="st-key-team_approve_"] button').count()
        _shot(eve, "stale-sign-in", widths=(1024,))
        eve_context.close()
        # Ben (signed in minutes ago) approves release 2
        open_page(ben, "Projects")
        ben.locator('[class*="st-key-team_note_"] input').first.fill("k = 2 checked again")
        press(ben, ben.locator('[class*="st-key-team_approve_"] button').first)
        ben.get_by_text("Release 2 of project registry.csv").first.wait_for(timeout=TIMEOUT)
        ben.get_by_text("approved by ben@clinic.example (subject ben-sub)").first.wait_for(timeout=TIMEOUT)

        # only now the package downloads, stating both; the audit log shows drafter, approver and digest
        open_page(ann, "Risk report")
        with ann.expect_download(timeout=TIMEOUT) as download:
            ann.get_by_role("button", name="Release package (zip)").first.click()
        package = Path(download.value.path()).read_bytes()
        stamp = json.loads(zipfile.ZipFile(io.BytesIO(package)).read("audit.json"))
        assert stamp["drafted_by"] == "ann@clinic.example (subject ann-sub)"
        assert stamp["approved_by"] == "ben@clinic.example (subject ben-sub)"
        _shot(ann, "analyst-download", widths=(1024,))
        open_page(ann, "Projects")
        (entry,) = audit_entries(ProjectStore(f"sqlite:///{home / 'projects.sqlite'}"))
        assert (entry.drafted_by, entry.approved_by) == (stamp["drafted_by"], stamp["approved_by"])
        shown = _text(ann)
        assert f"drafted by {entry.drafted_by}, approved by {entry.approved_by}" in shown
        assert f"package SHA-256 {entry.package_sha256}" in shown
        _shot(ann, "audit-log")

        # Cay (viewer) sees the report, not the file: no Dataset page, no download, no change
        cay_context, cay = _sign_in(browser, url, "cay")
        links = [x.split("\n")[-1].strip() for x in cay.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()]
        assert links == ["Risk report", "Release", "Projects"], links
        cay.get_by_role("heading", name="Risk report").first.wait_for(timeout=TIMEOUT)
        assert "your role in this project: viewer" in _text(cay) and not cay.locator(".st-key-target_k").count()
        assert not cay.get_by_role("button", name="Release package (zip)").count()
        _shot(cay, "viewer-report")

        # Dee (no member, claiming Cay's e-mail unverified) sees no trace of the project, even asking for it by number
        dee_context, dee = _sign_in(browser, url, "dee")
        open_page(dee, "Projects")
        assert "registry.csv" not in _text(dee) and "No project yet." in _text(dee)
        dee.goto(f"{url}/?project=1", wait_until="commit", timeout=TIMEOUT)
        dee.get_by_role("button", name="Sign out").wait_for(timeout=TIMEOUT)
        wait_idle(dee, TIMEOUT)
        assert "registry.csv" not in _text(dee)
        assert "There is no project number 1 of which dee-sub is a member." in _text(dee)  # her e-mail unverified
        _shot(dee, "non-member")
        # sign-out is in the sidebar: the provider ends its session, and the dashboard asks for sign-in again
        dee.get_by_role("button", name="Sign out").click()
        dee.get_by_role("button", name="End session").click()
        dee.get_by_role("button", name="Sign in").wait_for(timeout=TIMEOUT)
        wait_idle(dee, TIMEOUT)
        assert "Sign in first" in _text(dee) and "dee-sub" not in _text(dee)
        for each in (ann_context, ben_context, cay_context, dee_context):
            each.close()

    logged = [(r.who, r.action, r.project) for r in refusals(ProjectStore(f"sqlite:///{home / 'projects.sqlite'}"))]
    signed_out = ("signed-out visitor", "open the dashboard", None)  # each user's first look, before signing in
    assert logged[:7] == [
        signed_out,
        ("ann@clinic.example (subject ann-sub)", "approve", "registry.csv"),
        signed_out,
        signed_out,  # Eve's first look
        signed_out,
        signed_out,
        ("dee-sub", "read", "registry.csv"),
    ]
    # Dee signed out: her session's run after the click, and the page she comes back to (one or both)
    assert logged[7:] and set(logged[7:]) == {signed_out}
    assert errors == []
