"""No module imports another's private name (``docs/architecture.md``): a helper two modules
need is a public name of the module that defines it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def private_imports(source: str) -> list[str]:
    """The ``from module import _name`` of ``source`` (dunder names and ``__future__`` aside)."""
    return [
        f"{node.module or '.'}.{alias.name}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_module_imports_another_s_private_name() -> None:
    files = [*ROOT.glob("anonlib/**/*.py"), *ROOT.glob("dashboard/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    found = [f"{p.relative_to(ROOT)}: {name}" for p in sorted(files) for name in private_imports(p.read_text())]
    assert found == []


def test_a_private_import_is_found() -> None:
    source = (
        "from __future__ import annotations\nfrom .classifier import MAX_ROWS, _classifier\nfrom . import __version__\n"
    )
    assert private_imports(source) == ["classifier._classifier"]
