"""A team on one store from the command line (``team.md``, ``anonlib.projects.team``):

- ``projects team-setup [--members LOGIN,...]``: run once by a database administrator against
  ``ANONLIB_STORE=postgresql://...``: row-level security, the members' group role (granted to
  the listed logins); the store's releases are drafted and approved from then on;
- ``projects members NAME [--add LOGIN=ROLE ...] [--remove LOGIN ...] [--json]``;
- ``projects drafts [--json]``: the drafts of the member's projects, those waiting for them first;
- ``projects approve NAME --release ID [--comment TEXT]``, ``projects reject NAME --release ID
  --reason TEXT``: a member other than the drafter decides;
- ``projects withdraw NAME --release ID [--reason TEXT]``: an approval withdrawn before its
  hand-out (by its approver or an owner); the draft is never handed out;
- ``projects members NAME --history``: who added, removed or changed the role of whom, when;
- ``projects release NAME --release ID --out ZIP``: the approved package, recorded in the audit
  log at its first hand-out (exit 2, nothing written, before approval).

The member is the database login of ``ANONLIB_STORE`` (``acting_member``). Every refusal is one
sentence, exit 2, and logged.
"""

from __future__ import annotations

import argparse
import json

from ..core.errors import ParameterError
from ..projects.drafts import approve, drafts, hand_out, reject, waiting_for, withdraw
from ..projects.team import (
    ROLES,
    Member,
    acting_member,
    is_team,
    member_history,
    members_of,
    remove_member,
    require,
    set_member,
)
from ..projects.team_postgres import team_setup
from .common import print_json, whole_argument, write


def team_member(store) -> Member | None:
    """The member running this command when ``store`` is a team's (None: a single user's store)."""
    return acting_member(store) if is_team(store) else None


_OPENED: dict = {}  # ``register_actions`` hands in how ``projects`` opens the store and prints a line


def _store():
    return _OPENED["store"]()


def say(line: str) -> None:
    _OPENED["say"](line)


def _setup(args: argparse.Namespace) -> int:
    store = _store()
    granted = team_setup(store, [x for x in (args.members or "").split(",") if x.strip()])
    say(f"team store         {store.where}: row-level security on, releases need a second person's approval")
    for login in granted:
        say(f"member login       {login}")
    return 0


def _pairs(values: list[str]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        login, sep, role = value.partition("=")
        if not sep or not login.strip() or role.strip() not in ROLES:
            raise ParameterError(f"--add takes LOGIN=ROLE with a role among {', '.join(ROLES)}; got '{value}'.")
        out.append((login.strip(), role.strip()))
    return out


def _members(args: argparse.Namespace) -> int:
    store = _store()
    member = acting_member(store)
    for login, role in _pairs(args.add or []):
        set_member(store, args.name, login, role, by=member)
    for login in args.remove or []:
        remove_member(store, args.name, login, by=member)
    require(store, args.name, member, "read")
    listed = members_of(store, args.name)
    if args.history:
        changes = member_history(store, args.name)
        if args.json:
            print_json(args, json.dumps([c.to_json() for c in changes], indent=2))
            return 0
        for change in changes:
            say(change.sentence())
        return 0
    if args.json:
        print_json(args, json.dumps([{"login": login, "role": role} for login, role in listed], indent=2))
        return 0
    for login, role in listed:
        say(f"{role:<10} {login}")
    return 0


def _drafts(args: argparse.Namespace) -> int:
    store = _store()
    member = acting_member(store)
    waiting = {d.id for d in waiting_for(store, member)}
    found = sorted(drafts(store, member), key=lambda d: (d.id not in waiting, -d.id))
    if args.json:
        print_json(args, json.dumps([d.to_json() | {"waiting_for_you": d.id in waiting} for d in found], indent=2))
        return 0
    if not found:
        say("no draft in your projects")
    for d in found:
        say(("WAITING FOR YOU   " if d.id in waiting else "") + d.sentence())
    return 0


def _approve(args: argparse.Namespace) -> int:
    store = _store()
    done = approve(store, args.name, args.release, acting_member(store), comment=args.comment)
    say(done.sentence())
    return 0


def _reject(args: argparse.Namespace) -> int:
    store = _store()
    done = reject(store, args.name, args.release, acting_member(store), reason=args.reason)
    say(done.sentence())
    return 0


def _withdraw(args: argparse.Namespace) -> int:
    store = _store()
    done = withdraw(store, args.name, args.release, acting_member(store), reason=args.reason)
    say(done.sentence())
    return 0


def _release(args: argparse.Namespace) -> int:
    store = _store()
    write(args.out, hand_out(store, args.name, args.release, acting_member(store)))
    return 0


def register_actions(sub, store, say_line) -> None:
    """The team's actions under ``projects`` (``store``: how it opens the store; ``say_line``: how
    it prints a line naming projects)."""
    _OPENED.update(store=store, say=say_line)
    setup = sub.add_parser(
        "team-setup",
        help="make a PostgreSQL store a team's (run once by an administrator login): row-level security, "
        "the members' group role, four-eyes releases",
    )
    setup.add_argument("--members", metavar="LOGIN,...", help="database logins to grant the members' group role")
    setup.set_defaults(handler=_setup, outputs=(), inputs=())
    members = sub.add_parser("members", help="a project's members and roles (owner, analyst, approver, viewer)")
    members.add_argument("name")
    members.add_argument("--add", action="append", metavar="LOGIN=ROLE", help="add a member or change their role")
    members.add_argument("--remove", action="append", metavar="LOGIN", help="take a member out")
    members.add_argument("--json", action="store_true", help="print the members as JSON")
    members.add_argument(
        "--history", action="store_true", help="who added, removed or changed the role of whom, and when"
    )
    members.set_defaults(handler=_members, outputs=(), inputs=())
    listing = sub.add_parser("drafts", help="the release drafts of your projects, those waiting for you first")
    listing.add_argument("--json", action="store_true", help="print the drafts as JSON")
    listing.set_defaults(handler=_drafts, outputs=(), inputs=())
    approving = sub.add_parser("approve", help="approve another member's release draft (its SHA-256 as drafted)")
    approving.add_argument("name")
    approving.add_argument(
        "--release", type=whole_argument("The release number", minimum=1), required=True, metavar="ID"
    )
    approving.add_argument("--comment", metavar="TEXT")
    approving.set_defaults(handler=_approve, outputs=(), inputs=())
    rejecting = sub.add_parser("reject", help="reject another member's release draft, saying why")
    rejecting.add_argument("name")
    rejecting.add_argument(
        "--release", type=whole_argument("The release number", minimum=1), required=True, metavar="ID"
    )
    rejecting.add_argument("--reason", required=True, metavar="TEXT")
    rejecting.set_defaults(handler=_reject, outputs=(), inputs=())
    withdrawing = sub.add_parser("withdraw", help="withdraw an approval before its hand-out (its approver or an owner)")
    withdrawing.add_argument("name")
    withdrawing.add_argument("--release", type=int, required=True, metavar="ID")
    withdrawing.add_argument("--reason", metavar="TEXT")
    withdrawing.set_defaults(handler=_withdraw, outputs=(), inputs=())
    releasing = sub.add_parser("release", help="write an approved release's package (exit 2 before approval)")
    releasing.add_argument("name")
    releasing.add_argument(
        "--release", type=whole_argument("The release number", minimum=1), required=True, metavar="ID"
    )
    releasing.add_argument("--out", required=True, metavar="ZIP")
    releasing.set_defaults(handler=_release, outputs=("out",), inputs=())
