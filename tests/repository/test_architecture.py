"""The layout's rules, read from the source with ``ast`` (imports inside functions count):
the engine is a counting backend under the measures and imports nothing above ``core``;
the measures and the transformations live in their own folders, and the contract's
top-level paths are re-exports nothing inside the package imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "anonlib"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every anonlib module ``path`` imports, anywhere in the file, as absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)  # "from . import models"
    return {m for m in out if m == "anonlib" or m.startswith("anonlib.")}


GROUPS = ("measures", "transformations")  # folders whose modules and packages are rooms of their own


def room(module: str) -> str:
    """anonlib.<room>...: a subpackage or a top-level module; inside ``measures`` and
    ``transformations`` each module or package is a room (``measures.models``)."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in GROUPS:
        return f"{parts[1]}.{parts[2]}"
    return parts[1] if len(parts) > 1 else ""


def exists(name: str) -> bool:
    """Whether a room is a folder or a module of anonlib."""
    path = PACKAGE.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").exists()


def rooms_imported(folder: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        others = {room(m) for m in imported(path)} - {folder, ""}
        others = {r for r in others if exists(r)}
        if others:
            found[str(path.relative_to(ROOT))] = others
    return found


def test_the_engine_imports_nothing_above_core():
    assert {f: r for f, r in rooms_imported("engine").items() if r - {"core"}} == {}


def test_the_reader_sees_relative_and_lazy_imports():
    # a relative import inside a function is found and named absolutely
    found = imported(PACKAGE / "measures" / "profile.py")
    assert "anonlib.engine" in found and "anonlib.core.dataset" in found


def room_graph() -> dict[str, set[str]]:
    """Which rooms each room imports (rooms: ``anonlib``'s subpackages and top-level modules)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = room(module_name(path))
        if not source:
            continue
        targets = {room(m) for m in imported(path)} - {source, ""}
        graph.setdefault(source, set()).update(r for r in targets if exists(r))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of rooms that import each other, directly or through others (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_between_rooms():
    assert circles(room_graph()) == []


def module_graph() -> dict[str, set[str]]:
    """Which modules of ``anonlib`` each module imports (a package is its ``__init__``; a name
    imported from a package counts as importing the package, as Python runs it)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for target in imported(path):
            while target and target not in modules:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def test_no_import_circle_between_modules():
    assert circles(module_graph()) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_over_1000_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for folder in ("anonlib", "dashboard", "pages")
        for p in (ROOT / folder).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 1000
    }
    assert long == {}


# The layers of docs/architecture.md, bottom up; a room imports only its own layer or those below.
MEASURES = (
    "profile",
    "power",
    "linkage",
    "avector",
    "risk",
    "models",
    "leakage",
    "peers",
    "metrics",
    "utility",
    "identifiers",
    "target",
    "wildcard",
)
TRANSFORMATIONS = (
    "generalization",
    "capping",
    "anonymize_experiments",
    "frontier",
    "geo",
    "schedule",
    "schedule_experiments",
    "suppression",
    "microaggregation",
    "coding",
    "synthetic",
    "pseudonyms",
    "hipaa",
    "synthesis",
)
CONTRACT_PATHS = (
    "avector",
    "schedule",
    "leakage",
    "peers",
    "anonymize",
    "suppression",
    "microaggregation",
    "utility",
    "metrics",
    "geo",
    "frontier",
    "models",
    "risk",
)  # top-level re-exports, imported by nobody inside
LAYERS = {
    "core": 0,
    "engine": 1,
    "measures": 2,
    **{f"measures.{m}": 2 for m in MEASURES},
    "transformations": 3,
    **{f"transformations.{t}": 3 for t in TRANSFORMATIONS},
    "workflow": 4,
    "projects": 4,  # beside the workflow, storing its objects; the workflow never imports it
    **dict.fromkeys(("cli", "__main__"), 5),
    **dict.fromkeys(CONTRACT_PATHS, 6),
}


def test_the_workflow_does_not_import_the_project_store():
    assert {f: r for f, r in rooms_imported("workflow").items() if "projects" in r} == {}


def test_every_room_has_a_layer_and_imports_run_downwards():
    graph = room_graph()
    rooms = {room(module_name(p)) for p in PACKAGE.rglob("*.py")} - {""}
    assert sorted(rooms - set(LAYERS)) == []
    upwards = sorted((a, b) for a, targets in graph.items() for b in targets if LAYERS[b] > LAYERS[a])
    assert upwards == []


# Every public path of the API contract outside checks rely on, imported as an outside check would.
CONTRACT = {
    "anonlib.avector": ("anonymity_vector", "partition_count", "lex_index", "improvement"),
    "anonlib.schedule": ("assign", "schedule_rank"),
    "anonlib.leakage": ("leakage_table",),
    "anonlib.peers": ("ppp", "poac", "min_ppp"),
    "anonlib.anonymize": ("search",),
    "anonlib.suppression": ("local_suppression",),
    "anonlib.microaggregation": ("mdav",),
    "anonlib.utility": ("loss",),
    "anonlib.metrics": ("discernibility", "nonuniform_entropy"),
    "anonlib.geo": ("aggregate",),
    "anonlib.frontier": ("evaluate", "search_frontier"),
    "anonlib.models": (
        "alpha",
        "l_diversity",
        "entropy_l_diversity",
        "recursive_c",
        "t_closeness",
        "delta_disclosure",
        "beta_likeness",
    ),
    "anonlib.risk": ("reidentification",),
}


def test_every_path_of_the_contract_imports():
    import importlib

    missing = [
        f"{module}.{name}"
        for module, names in CONTRACT.items()
        for name in names
        if not callable(getattr(importlib.import_module(module), name, None))
    ]
    assert missing == []


def test_the_contract_paths_are_re_exports_of_the_rooms():
    import importlib

    rooms = {"anonymize": "generalization"}  # the contract's path, and the room it re-exports
    for name in CONTRACT_PATHS:
        shim = importlib.import_module(f"anonlib.{name}")
        layer = "measures" if name in MEASURES else "transformations"
        real = importlib.import_module(f"anonlib.{layer}.{rooms.get(name, name)}")
        assert all(getattr(shim, n) is getattr(real, n) for n in CONTRACT[f"anonlib.{name}"])
        assert len((PACKAGE / f"{name}.py").read_text(encoding="utf-8").splitlines()) <= 5
