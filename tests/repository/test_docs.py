"""The docs explain the code; the development history stays in commit messages.

No line of a doc (``README.md``, ``docs/*.md``, ``data/samples/README.md``) and no
docstring or comment of the code (``anonlib``, ``dashboard``, ``pages``, ``bench``,
``tests``, the scripts at the top) may carry a work-session number ("stop 32",
"since stops 30–31"), an issue number ("issue 22"), a commit hash ("on 858c86d"), a reference
to a planning document ("the PLAN's interface 3") or a path to files outside the
repository (``../shared/spec/release.md``). A SHA-256 digest (64 hex digits), a colour
(``#1f77b4``) and a hexadecimal constant (``0x9E37...``) are not commit hashes.

Nor is a doc line a dated log: the docs are reference, and the bench's dated runs, what was
tried and not kept and what was measured "today" or "this round" go to ``bench/NOTES.md``.
A date in a code span (an example of a format, ``2020-01-31``) is not a log.

The docs also name files of the repository by path (``anonlib/workflow/cost.py``); every
such path must exist, so a doc cannot describe a module that has moved or gone.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", ROOT / "data" / "samples" / "README.md", *(ROOT / "docs").glob("*.md")])
CODE_FOLDERS = ("anonlib", "dashboard", "pages", "bench", "tests")
SCRIPTS = ("app.py", "tasks.py")

HISTORY = [
    ("a work-session number", re.compile(r"\bstops?\s+\d+", re.IGNORECASE)),
    ("an issue number", re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)),
    ("a planning document", re.compile(r"\bPLAN\b")),
    ("a path outside the repository", re.compile(r"\.\./shared\b|\bshared/spec\b|(?<![\w/.-])spec/[\w-]+\.md\b")),
]
HEX = r"(?<![#\w])(?!0x)[0-9a-f]{7,40}(?![\w])"
# A commit hash named as one (after commit, rev, on, at, code, stop, ...), or any token of
# 7 to 12 hex digits holding both a digit and a letter (git's short hashes) in prose; not a
# quoted string (a doctest's output) nor the first digits of a digest ("sha256 c5b994c4…").
NAMED_HASH = re.compile(
    r"\b(?:commits?|revision|rev|hash|HEAD|on|at|code|stop|in|of|from|before|after)[\s:(,]+" + HEX, re.IGNORECASE
)
BARE_HASH = re.compile(r"(?<![#\w./'\"-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}(?![\w'\"-]|…|\.\.\.)")
# a digest's first digits, or a key's id (the first digits of its SHA-256)
DIGEST_WORDS = re.compile(r"(?:sha-?256|sha256sum|digest|key id|key)\W{0,3}$", re.IGNORECASE)


def history_in(text: str) -> list[str]:
    """What in ``text`` narrates development: each finding as "what: the words found"."""
    found = [f"{what}: {m.group(0)}" for what, pattern in HISTORY for m in pattern.finditer(text)]
    found += [f"a commit hash: {m.group(0)}" for m in NAMED_HASH.finditer(text) if _hashlike(m.group(0).split()[-1])]
    found += [
        f"a commit hash: {m.group(0)}"
        for m in BARE_HASH.finditer(text)
        if not DIGEST_WORDS.search(text[max(m.start() - 12, 0) : m.start()])
    ]
    return found


def _hashlike(token: str) -> bool:
    """A token after a naming word is a hash only if it mixes digits and letters (not "decade", not "1000000")."""
    token = token.strip("(:,")
    return bool(re.search(r"[0-9]", token) and re.search(r"[a-f]", token))


def doc_lines() -> list[tuple[str, int, str]]:
    return [
        (str(path.relative_to(ROOT)), number, line)
        for path in DOCS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
    ]


def code_files() -> list[Path]:
    """The Python files whose prose is checked (not this one: it quotes what it looks for)."""
    files = [p for folder in CODE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py")) if p != Path(__file__)]
    return files + [ROOT / s for s in SCRIPTS] + sorted((ROOT / "docs").glob("*.py"))


def prose_of(path: Path) -> list[tuple[int, str]]:
    """Every docstring (module, class, function) and comment of a Python file, with its first line."""
    source = path.read_text(encoding="utf-8")
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    out.append((body[0].lineno, body[0].value.value))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            out.append((token.start[0], token.string))
    return out


def module_docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""


def test_no_doc_line_narrates_development():
    found = [f"{name}:{number}: {hit}" for name, number, line in doc_lines() for hit in history_in(line)]
    assert found == []


DATED_LOG = [
    ("a date", re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")),
    (
        "a diary's words",
        re.compile(
            r"\b(?:this round|today|tonight|yesterday|the same day|tried and not kept|in this run|"
            r"in the runs? before)\b",
            re.IGNORECASE,
        ),
    ),
]


def dated_log_in(line: str) -> list[str]:
    """What in a doc line reads as a dated log or a diary, outside code spans."""
    prose = re.sub(r"`[^`]*`", "", line)
    return [f"{what}: {m.group(0)}" for what, pattern in DATED_LOG for m in pattern.finditer(prose)]


def test_no_doc_line_is_a_dated_log():
    found = [f"{name}:{number}: {hit}" for name, number, line in doc_lines() for hit in dated_log_in(line)]
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        "`python -m bench scale:`, run on 2026-11-26, 2-core machine, shared (load average 6–21",
        "state of that page (which this round did not change) and are not saved.",
        "Tried and not kept: pyarrow's reader from the path (0.24-0.28 s, 0.52 CPU-seconds: no",
        "wall time (0.079x here; 0.084-0.095x in other runs the same day); its CPU time (0.114x)",
        "target is met in this run (1.41x on the medians; single rounds ranged 1.13-1.77x, in one",
        "measured today on the 2-core machine",
    ],
)
def test_a_dated_log_line_is_found(line):
    assert dated_log_in(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "- Dates are ISO 8601 (`2020-01-31`, optionally with a time) or of a date type; anything else is",
        "| dates (YYYY-MM-DD, optional time) | month, quarter, year | `2021-05-17` → `2021-05` → `2021` |",
        "The latest measured run of `python -m bench peers:` is kept in `bench/NOTES.md`",
        "a round of the walk; the year 2026; 10,013,784 records; the runs of the bench",
    ],
)
def test_a_reference_line_is_not_a_dated_log(line):
    assert dated_log_in(line) == []


def test_no_docstring_or_comment_narrates_development():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {hit}"
        for path in code_files()
        for number, text in prose_of(path)
        for hit in history_in(text)
    ]
    assert found == []


# Lines of the docs as they read while they narrated development, and lines that must pass.
NARRATING = [
    "| k = 5, ≤ 4% and 0% (stop 32, a fourth run, on 858c86d) | 0.0649 s, 0.0271 s |",
    "| k = 5, ≤ 4% and 0% (stop 33, final code 337c517; two more runs) |",
    "| k = 5, ≤ 4% and 0% (after the read-through, 37f8898; its last row: 110×) |",
    "Stop 31 changed how a count rolls a table up.",
    "numbers stay as written since stops 30–31",
    "`../shared/spec/release.md` parts 1–3 (issue 22). Code: `anonlib/measures/utility.py`,",
    "Follows Xia et al., as read by `spec/frontier.md`.",
    "Computation (the PLAN's interface 3). The counting kernel turns the table into",
    "what ``apply_recipe`` does in memory (PLAN interface 4):",
    "## Trust in a release (issue 26)",
    "fixed in commit a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0",
]
PLAIN = [
    "7f55c0deb72d8197c794c6456c216d785e7d27dfc66480d8eaa46e68fb95e2e2  released.csv",
    "the palette's vermillion #d55e00 and blue #0072b2, with alpha #0072b2cc",
    "a byte-identical copy of the shared fixture (sha256 c5b994c4…0999); SHA-256 e3b0c44298fc",
    "_SPREAD = 0x9E3779B97F4A7C15, 2**64 divided by the golden ratio, made odd",
    "ZIP 37201 → 3720* → …; 10,013,784 records; seed 20261123; 1e400",
    "the walk stops at subsets of that size; a level stopped by the limit",
    "the issue of a release package is its statement; decades 2020s; browser session 3",
    ">>> digest(b'')[:12] gives 'e3b0c44298fc'",
    "Adult's capital gain 99999 → >15999; the plan of the walk",
]


def test_each_finding_says_what_it_is():
    assert history_in("| k = 5, 4% (stop 32, a fourth run, on 858c86d) |") == [
        "a work-session number: stop 32",
        "a commit hash: on 858c86d",
        "a commit hash: 858c86d",
    ]
    assert history_in("colour #1f77b4, digest e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == []


@pytest.mark.parametrize("line", NARRATING)
def test_a_narrating_line_is_found(line):
    assert history_in(line) != []


@pytest.mark.parametrize("line", PLAIN)
def test_a_plain_line_passes(line):
    assert history_in(line) == []


def test_the_code_prose_reader_sees_docstrings_and_comments(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Module (stop 3)."""\n\n\ndef f():\n    """Since 858c86d."""\n    return 1  # issue 9\n')
    hits = [hit for _, text in prose_of(module) for hit in history_in(text)]
    assert len(hits) == 3 and module_docstring(module) == "Module (stop 3)."


REPO_PATH = re.compile(r"(?<![\w./-])((?:anonlib|dashboard|pages|bench|tests|docs|data)/[\w./-]*\w)")


def test_every_path_a_doc_names_exists():
    """A doc that names ``anonlib/transformations/optimal.py`` after it moved would send a
    developer to nothing. Globs (``*.csv``) name their folder."""
    missing = []
    for name, number, line in doc_lines():
        if name.startswith("data"):  # the samples' README names paths of the source repositories
            continue
        for match in REPO_PATH.finditer(line):
            path = match.group(1).split("*")[0].rstrip("/")
            if path and not (ROOT / path).exists():
                missing.append(f"{name}:{number}: {match.group(1)}")
    assert missing == []


DOTTED = re.compile(r"\banonlib(?:\.\w+)+")


def resolves(name: str) -> bool:
    """Whether ``anonlib.a.b.c`` is a module or a name inside one."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_module_and_name_a_doc_names_exists():
    """``anonlib.synthetic.adult_with_zip`` in a doc must import (here it is
    ``anonlib.transformations.synthetic``): docs that name moved code mislead."""
    names = {(name, m.group(0).rstrip(".")) for name, _, line in doc_lines() for m in DOTTED.finditer(line)}
    assert sorted((doc, dotted) for doc, dotted in names if not resolves(dotted)) == []


def test_a_moved_name_does_not_resolve():
    assert resolves("anonlib.transformations.generalization.optimal_levels")
    assert not resolves("anonlib.optimal.optimal_levels") and not resolves("anonlib.synthetic.adult_with_zip")
