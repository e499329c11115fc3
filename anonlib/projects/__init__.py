"""Projects that last: the project store, the audit log, deliveries, export and import (``projects.md``).

A privacy officer's work on a file (roles, target, steps, releases) is kept in a
real database, so a reload, a second tab or a restarted server opens it as it was,
next month's delivery is released the same way, and every release is on record.

- ``budget``: the privacy budget of a file, kept by its SHA-256 across every project;
- ``state``: a project's working copy as data (``ProjectState``) and rebuilt from it;
- ``store``: the store (SQLite by default, PostgreSQL for a team), projects, files, keys;
- ``audit``: the append-only log of releases and its head, recorded and verified again;
- ``releasing``, ``pending``: a release into a project as one unit (its files and its entry
  together or not at all), and the releases a dead process left, finished or undone;
- ``deliveries``: a new delivery checked against the project's layout and released;
- ``transfer``: a project exported as one file and imported on another machine;
- ``team``, ``drafts``, ``team_postgres``, ``team_schema``: a team on one store: members and roles,
  refusals on record; releases drafted and approved by a second person; row-level security on
  PostgreSQL; their tables (``team.md``);
- ``schema``, ``location``, ``records``: tables and migrations, where the store is, the values it hands out.

The workflow does not import this room: it sits beside the command line and the
dashboard, on top of the workflow, and stores the workflow's own objects (sources,
targets, steps through their ``to_json``, recipes, packages).

Example:
    >>> import tempfile
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> copy = WorkingCopy.start(load_sample("caballero_table2b"), ReleaseTarget(k=2))
    >>> ref = store.create("clinic", ProjectState.of(copy, "sample:caballero_table2b"))
    >>> store.load(ref).state.restore().check.sentence() == copy.check.sentence()
    True
"""

from .audit import (
    audit_entries,
    package_log_problems,
    record_package,
    record_stamped_package,
    record_table,
    verify_entry,
)
from .budget import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    Charge,
    PrivacyBudget,
    budget_of,
    charges,
    file_budget,
    project_file,
    set_budget,
    spend_privacy,
    spending_refusal,
)
from .chain import LogHead, log_head, verify_chain
from .deliveries import Delivery, continue_from_release, deliver, layout_differences
from .location import store_url
from .records import AuditEntry, Project, ProjectRef, ProjectSummary, StoreUsage
from .state import ProjectState
from .store import ProjectStore
from .transfer import export_project, import_project

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_EPSILON",
    "PrivacyBudget",
    "budget_of",
    "file_budget",
    "project_file",
    "set_budget",
    "Charge",
    "charges",
    "spend_privacy",
    "spending_refusal",
    "AuditEntry",
    "Delivery",
    "LogHead",
    "Project",
    "ProjectRef",
    "ProjectState",
    "ProjectStore",
    "ProjectSummary",
    "StoreUsage",
    "audit_entries",
    "continue_from_release",
    "deliver",
    "export_project",
    "import_project",
    "layout_differences",
    "log_head",
    "package_log_problems",
    "record_package",
    "record_stamped_package",
    "record_table",
    "store_url",
    "verify_chain",
    "verify_entry",
]
