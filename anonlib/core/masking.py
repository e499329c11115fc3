"""Secrets kept out of what anonlib prints: the one masking function for every URL and DSN,
and the same rule for log lines and for every line printed to a terminal.

- ``mask_secrets(text)``: ``text`` with the password of every URL (``scheme://user:PASSWORD@host``,
  up to the last ``@`` before the host, spaces and percent escapes included), every ``password=``
  query argument and every libpq ``key=value`` DSN password (quoted, or with backslash-escaped
  spaces) replaced by ``***``, and every password ``remember_secrets`` was given, in any of the
  forms it can be written in (as typed, percent-encoded or decoded, libpq-escaped, as JSON writes
  it); everything else left as it is. Every message, log line and JSON document naming a database
  goes through it (``anonlib.projects.location.shown_url``, the command line's streams,
  ``SecretFilter`` on loggers).
- ``remember_secrets(url_or_dsn)``: the passwords of a store URL or DSN this process was given,
  masked from then on wherever they appear (the store's URL comes from ``ANONLIB_STORE``).
- ``SecretFilter``: a ``logging.Filter`` applying ``mask_secrets`` to a record's message and traceback.
- ``printable(text)``: a name as a terminal shows it safely: control characters (C0, C1, DEL) and
  bidirectional overrides escaped the way ``repr`` writes them (``\\x1b``, ``\\u202e``).
- ``SafeLines``: a text stream that passes each line on through ``mask_secrets`` with its control
  characters escaped (but tab and line feed): the command line prints through it, so no line of
  its output, results and notes included, can move the cursor, clear the screen or show a password.

Example:
    >>> mask_secrets("cannot reach postgresql://anna:s3cret@db.example:5432/projects")
    'cannot reach postgresql://anna:***@db.example:5432/projects'
    >>> mask_secrets("postgresql://anna@db/p?sslmode=require&password=s3cret")
    'postgresql://anna@db/p?sslmode=require&password=***'
    >>> mask_secrets("host=db user=anna password='s 3cret' dbname=projects")
    'host=db user=anna password=*** dbname=projects'
    >>> mask_secrets("postgresql://anna:p@ss w0rd@db/projects")
    'postgresql://anna:***@db/projects'
    >>> printable("clinic\\x1b[2J\\u202e")
    'clinic\\\\x1b[2J\\\\u202e'
"""

from __future__ import annotations

import json
import logging
import re
import threading
from urllib.parse import quote, quote_plus, unquote, unquote_plus

MASK = "***"
# scheme://user:password@host: the password runs to the first "@" that a host followed by "/",
# "?", "#" or the end of the text follows (a raw "@" or space in it included), else to the first
# "@" a host follows; at most 256 characters, no double quote (JSON's delimiter)
_URL_HEAD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:\"]*:")
_URL_SECRET = (  # a host is at most 253 characters (DNS): the work per '@' is bounded
    re.compile(r"[^\n\"]{0,256}?(?=@[^\s@/?#\"']{0,253}(?:[/?#]|$))"),
    re.compile(r"[^\n\"]{0,256}?(?=@[^\s@/?#\"']{0,253}(?:[/?#\s\"'),;\]]|$))"),
)
# password=..., sslpassword=..., passwd=..., pwd=...: in a URL's query, up to the next "&" or "#";
# in a libpq DSN (or any other text), quoted, or up to the next space (a backslash-escaped space
# or quote included)
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&;](?:ssl)?(?:password|passwd|pwd)=)(?P<secret>[^&#\s\"'<>]*)", re.IGNORECASE)
_KEY_PASSWORD = re.compile(
    r"(?P<head>(?<![?&;\w])(?:ssl)?(?:password|passwd|pwd)\s*=\s*)"
    r"(?P<secret>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\"?(?:\\.|[^\s'\"\\])+)",
    re.IGNORECASE,
)
# C0 and C1 controls, DEL, the line and paragraph separators (U+2028, U+2029), and the
# bidirectional embeddings, overrides, isolates (U+202A-202E, U+2066-2069) and marks
_OTHERS = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
CONTROL = re.compile(f"[\x00-\x1f{_OTHERS}]")
CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_OTHERS}]")  # the same without tab, line feed, return
_TERMINAL = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")  # what a printed line may not hold raw (tab and LF may)
MIN_REMEMBERED = 4  # a remembered password shorter than this is masked where it stands in a URL or DSN only
_REMEMBERED: set[str] = set()
_REMEMBERED_LOCK = threading.Lock()


def _unescaped(secret: str) -> str:
    """A DSN value as libpq reads it: quotes taken off, backslash escapes resolved."""
    if len(secret) >= 2 and secret[0] == secret[-1] and secret[0] in "'\"":
        secret = secret[1:-1]
    return re.sub(r"\\(.)", r"\1", secret)


def _forms(secret: str) -> set[str]:
    """Every way ``secret`` (a password as written in a URL or DSN) may be printed: as written,
    unescaped, percent-decoded and percent-encoded (SQLAlchemy's, ``quote``'s and a form's),
    libpq-escaped, and each of these as JSON and ``repr`` write it."""
    plain = {secret, _unescaped(secret)}
    plain |= {unquote(p) for p in plain} | {unquote_plus(p) for p in plain}
    written = set(plain)
    for p in plain:
        written |= {
            quote(p, safe=""),
            quote_plus(p),
            re.sub(r"[%:@/]", lambda m: f"%{ord(m[0]):02X}", p),  # SQLAlchemy's rendering of a URL password
            re.sub(r"[:@/]", lambda m: f"%{ord(m[0]):02X}", p),
            p.replace("\\", "\\\\").replace("'", "\\'"),  # libpq's quoted value
            re.sub(r"([\\' ])", r"\\\1", p),  # libpq's unquoted value
        }
    forms = set(written)
    for w in written:
        forms |= {json.dumps(w)[1:-1], json.dumps(w, ensure_ascii=False)[1:-1], repr(w)[1:-1], printable(w)}
    return {f for f in forms if len(f) >= MIN_REMEMBERED}


def remember_secrets(text: str) -> None:
    """Remember the passwords of a URL or DSN (``text``) this process was given, so that
    ``mask_secrets`` masks them in every form wherever they appear from now on (a password with
    a space, a raw ``@`` or a quote defeats any pattern in free text).

    >>> remember_secrets("postgresql://anna:open sesame@db/p")
    >>> mask_secrets("connection with password 'open sesame' (open%20sesame) refused")
    "connection with password '***' (***) refused"
    """
    found = [secret for _, secret, _ in _url_passwords(str(text))]
    found += [m["secret"] for pattern in (_QUERY_PASSWORD, _KEY_PASSWORD) for m in pattern.finditer(str(text))]
    forms = set().union(*(_forms(secret) for secret in found if secret)) if found else set()
    if forms:
        with _REMEMBERED_LOCK:
            _REMEMBERED.update(forms)


def mask_secrets(text: str) -> str:
    """``text`` with every password of a URL or DSN in it replaced by ``***`` (see the module).

    >>> mask_secrets("sqlite:////home/anna/projects.sqlite (no password)")
    'sqlite:////home/anna/projects.sqlite (no password)'
    >>> mask_secrets("postgresql+psycopg://anna:p%40ss@db/projects?PASSWORD=again")
    'postgresql+psycopg://anna:***@db/projects?PASSWORD=***'
    >>> mask_secrets(r"host=db password=open\\ sesame dbname=p")
    'host=db password=*** dbname=p'
    """
    text = str(text)
    if _REMEMBERED:
        with _REMEMBERED_LOCK:
            remembered = sorted(_REMEMBERED, key=len, reverse=True)
        for secret in remembered:
            if secret in text:
                text = text.replace(secret, MASK)
    parts, at = [], 0
    for start, _, end in _url_passwords(text):
        parts += [text[at:start], MASK]
        at = end
    text = "".join([*parts, text[at:]])
    text = _QUERY_PASSWORD.sub(lambda m: m["head"] + MASK if m["secret"] else m[0], text)
    return _KEY_PASSWORD.sub(lambda m: m["head"] + MASK, text)


def _url_passwords(text: str) -> list[tuple[int, str, int]]:
    """(start, password, end) of each URL password in ``text`` (see ``_URL_SECRET``)."""
    found, at = [], 0
    while (head := _URL_HEAD.search(text, at)) is not None:
        secret = _URL_SECRET[0].match(text, head.end()) or _URL_SECRET[1].match(text, head.end())
        if secret is None:
            at = head.end()
            continue
        found.append((secret.start(), secret[0], secret.end()))
        at = secret.end() + 1
    return found


def control_characters(text: str) -> list[str]:
    """The control characters of ``text`` (C0, DEL, C1, bidirectional controls), each once, in order.

    >>> control_characters("a\\x07b\\u202ec\\tb")
    ['\\x07', '\\u202e', '\\t']
    """
    return list(dict.fromkeys(CONTROL.findall(str(text))))


def printable(text: str) -> str:
    """``text`` with its control characters escaped as ``repr`` writes them (``\\x1b``,
    ``\\u202e``); other characters, accents and scripts included, unchanged.

    >>> printable("Zürich \\x07"), printable("plain")
    ('Zürich \\\\x07', 'plain')
    """
    return CONTROL.sub(lambda m: repr(m[0])[1:-1], str(text))


def terminal_line(text: str) -> str:
    """One or more printed lines as a terminal may show them: secrets masked and every control
    character escaped (``printable``) but tab and line feed (and a carriage return ending a line).

    >>> terminal_line("column \\x1b]0;owned\\x07 read\\r\\n")
    'column \\\\x1b]0;owned\\\\x07 read\\r\\n'
    """
    lines = mask_secrets(text).split("\n")
    out = []
    for line in lines:
        end = "\r" if line.endswith("\r") else ""
        body = line[: len(line) - len(end)]
        out.append(_TERMINAL.sub(lambda m: repr(m[0])[1:-1], body) + end)
    return "\n".join(out)


class SafeLines:
    """A text stream passing whole lines on to ``stream`` through ``terminal_line`` (a line held
    until its end is written, or ``flush``). Any other attribute is the stream's own.

    >>> import io
    >>> out = io.StringIO()
    >>> safe = SafeLines(out)
    >>> print("name \\x1b[2J", end="", file=safe); print(" postgresql://a:pw d@h/db", file=safe)
    >>> out.getvalue()
    'name \\\\x1b[2J postgresql://a:***@h/db\\n'
    """

    def __init__(self, stream) -> None:
        self.stream = stream
        self._pending: list[str] = []

    def write(self, text: str) -> int:
        text = str(text)
        if "\n" not in text:
            self._pending.append(text)
            return len(text)
        lines, _, rest = text.rpartition("\n")
        self.stream.write(terminal_line("".join(self._pending) + lines) + "\n")
        self._pending = [rest] if rest else []
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.stream.write(terminal_line("".join(self._pending)))
            self._pending = []
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


class SecretFilter(logging.Filter):
    """A logging filter masking secrets (``mask_secrets``) in a record's message and traceback.

    >>> record = logging.LogRecord("x", logging.ERROR, "f", 1, "store %s failed", ("postgresql://a:pw@h/d",), None)
    >>> SecretFilter().filter(record), record.getMessage()
    (True, 'store postgresql://a:***@h/d failed')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = mask_secrets(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = mask_secrets(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = mask_secrets(record.exc_text)
        return True


def mask_logs(*names: str) -> None:
    """Add ``SecretFilter`` (once) to the loggers named ``names``."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretFilter) for f in logger.filters):
            logger.addFilter(SecretFilter())


mask_logs("anonlib", "anonlib.cli", "dashboard")  # the loggers of the library, the command line and the dashboard
