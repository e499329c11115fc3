"""Nothing raw on a terminal, no password in any output (``integrity.md`` part 2).

- A column name holding escape sequences cleared the screen and set the terminal's title from
  ``anonymize`` and ``profile`` (results and notes): every line the command line prints now has its
  control characters escaped, in text and in JSON.
- A PostgreSQL password with a raw ``@``, a space, ``%20``, or a libpq ``password=`` with an escaped
  space was printed, in messages and in every successful release's output. A property test
  generates passwords (spaces, ``@``, ``%``, quotes, slashes, backslashes) in the URL and key=value
  forms and checks every path that prints a store: ``mask_secrets``, ``shown_url``, the command
  line's error sentence, a log line; the successful release on the real PostgreSQL server (which
  trusts any password) checks the output of a release, ``audit``, ``projects list`` and ``show``.
"""

from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.cli import main
from anonlib.core import masking
from anonlib.core.masking import SecretFilter, mask_secrets
from anonlib.projects.location import shown_url, store_url


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def raw_controls(text: str) -> list[str]:
    """The control characters (C0 but line feed and tab, DEL, C1, bidirectional overrides) ``text`` holds raw."""
    return sorted({c for c in text if ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F or c == "\u202e"})


def test_column_names_with_escape_sequences_are_escaped_in_every_line(tmp_path, capsys):
    names = ["\x1b]0;owned\x07age", "sex\x1b[2J", "zip\u202e", "note\x9b"]
    rows = ["30,F,52001,=1+1", "30,F,52001,", "40,M,52002,", "40,M,52002,"] * 3
    (tmp_path / "t.csv").write_text(",".join(names) + "\n" + "\n".join(rows) + "\n")
    qis = ",".join(names[:3])
    for argv in (
        ["profile", tmp_path / "t.csv", "--qi", qis],
        ["profile", tmp_path / "t.csv", "--qi", qis, "--json"],
        ["anonymize", tmp_path / "t.csv", "--shield", qis, "--k", "2", "--out", tmp_path / "o.csv"],
        ["anonymize", tmp_path / "t.csv", "--shield", qis, "--k", "2", "--json"],
        ["profile", tmp_path / "t.csv", "--qi", "no\x1b[2Jsuch"],  # an error naming the column
    ):
        code, out, err = run(capsys, *argv)
        assert code in (0, 1, 2) and raw_controls(out + err) == [], (argv, out, err)
        assert "\\x1b]0;owned\\x07age" in out + err or "\\u001b]0;owned\\u0007age" in out, (argv, out)
        if "--json" in argv:
            assert json.loads(out)  # one JSON document, its names escaped as JSON escapes
    notes = run(capsys, "profile", tmp_path / "t.csv", "--qi", qis)[2]  # the loader's notes name the columns
    assert "note\\x9b" in notes and raw_controls(notes) == []


# ---------------------------------------------------------------------- secrets

PASSWORDS = st.text(alphabet="abcdefghijkmnpqrstuvwxyzXYZ0123456789 @%'\"/:\\#?&=;,)+*", min_size=6, max_size=24)


def forms(password: str) -> dict[str, str]:
    """The store given with ``password`` in each way a user could write it (nothing listens on port 1)."""
    escaped = password.replace("\\", "\\\\").replace("'", "\\'")
    given = {
        "url, encoded": f"postgresql://anna:{quote(password, safe='')}@127.0.0.1:1/projects",
        "url, query": f"postgresql://anna@127.0.0.1:1/projects?sslmode=disable&password={quote_plus(password)}",
        "dsn, quoted": f"host=127.0.0.1 port=1 user=anna password='{escaped}' dbname=projects",
        "dsn, escaped": "host=127.0.0.1 port=1 user=anna password="
        + "".join(f"\\{c}" if c in " \\'" else c for c in password)
        + " dbname=projects",
    }
    if not any(c in password for c in "/?#"):  # typed raw: '@', spaces, '%' and quotes as they are
        given["url, raw"] = f"postgresql://anna:{password}@127.0.0.1:1/projects"
    return given


def leaked(password: str, text: str) -> list[str]:
    """The pieces of ``password`` (any 6 characters of it, as written, percent-encoded or decoded)
    that ``text`` holds."""
    shapes = {password, quote(password, safe=""), quote_plus(password), quote(password, safe=" ")}
    return sorted({s[i : i + 6] for s in shapes for i in range(len(s) - 5) if s[i : i + 6] in text})


@contextmanager
def fresh_memory():
    """The passwords ``remember_secrets`` keeps, as they were before (each example's own forgotten)."""
    kept = set(masking._REMEMBERED)
    try:
        yield
    finally:
        masking._REMEMBERED.clear()
        masking._REMEMBERED.update(kept)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(password=PASSWORDS)
def test_no_generated_password_is_printed_in_any_form(password, capsys, monkeypatch):
    with fresh_memory():
        for how, given in forms(password).items():
            monkeypatch.setenv("ANONLIB_STORE", given)
            code, out, err = run(capsys, "projects", "list")  # parsed, remembered, refused: one sentence
            assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (how, err)
            printed = [
                out + err,
                mask_secrets(f"connection to {given} failed: {given!r}"),
                mask_secrets(json.dumps({"store": given})),
            ]
            if given.startswith("postgresql://"):
                printed.append(shown_url(store_url({"ANONLIB_STORE": given})))
            record = logging.LogRecord("anonlib", logging.ERROR, "f", 1, "store %s failed", (given,), None)
            SecretFilter().filter(record)
            printed.append(record.getMessage())
            for text in printed:
                assert leaked(password, text) == [], (how, given, text)


@pytest.mark.parametrize("password", ["p@ss w0rd%20@x", "q'u\"o te\\s/l:ash"])
def test_no_password_is_printed_by_a_successful_release_on_postgresql(
    tmp_path, capsys, monkeypatch, postgresql, password
):
    """The test server trusts any password, so every output of a real release is seen."""
    from postgres_server import new_database

    database = new_database(postgresql).rsplit("/", 1)[1]
    port = postgresql.rsplit(":", 1)[1].split("/")[0]
    (tmp_path / "d.csv").write_text("age,sex\n" + "30,F\n40,M\n" * 10)
    release = ["anonymize", tmp_path / "d.csv", "--shield", "age,sex", "--k", "2", "--out", tmp_path / "o.csv"]
    with fresh_memory():
        stores = [f"postgresql://postgres:{quote(password, safe='')}@127.0.0.1:{port}/{database}"]
        if "/" not in password:
            stores.append(f"postgresql://postgres:{password}@127.0.0.1:{port}/{database}")
        for i, given in enumerate(stores):
            monkeypatch.setenv("ANONLIB_STORE", given)
            for argv in ([*release, "--project", f"p{i}"], [*release, "--project", f"p{i}", "--json"], ["audit"],
                         ["audit", "--json"], ["projects", "list"], ["projects", "show", f"p{i}"]):  # fmt: skip
                code, out, err = run(capsys, *argv)
                assert code == 0, (argv, err)
                assert leaked(password, out + err) == [], (argv, out + err)
            assert "postgresql://postgres:***@127.0.0.1" in run(capsys, *release, "--project", f"p{i}")[1]
