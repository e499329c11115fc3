"""Secrets kept out of what anonlib prints: the one masking function for every URL and DSN,
and the same rule for log lines and names printed to a terminal.

- ``mask_secrets(text)``: ``text`` with the password of every URL (``scheme://user:PASSWORD@host``),
  every ``password=`` query argument and every libpq ``key=value`` DSN password replaced by ``***``;
  everything else left as it is. Every message, log line and JSON document naming a database
  goes through it (``anonlib.projects.location.shown_url``, the command line's error printer,
  ``SecretFilter`` on loggers).
- ``SecretFilter``: a ``logging.Filter`` applying ``mask_secrets`` to a record's message and traceback.
- ``printable(text)``: a name as a terminal shows it safely: control characters (C0, C1, DEL) and
  bidirectional overrides escaped the way ``repr`` writes them (``\\x1b``, ``\\u202e``).

Example:
    >>> mask_secrets("cannot reach postgresql://anna:s3cret@db.example:5432/projects")
    'cannot reach postgresql://anna:***@db.example:5432/projects'
    >>> mask_secrets("postgresql://anna@db/p?sslmode=require&password=s3cret")
    'postgresql://anna@db/p?sslmode=require&password=***'
    >>> mask_secrets("host=db user=anna password='s 3cret' dbname=projects")
    'host=db user=anna password=*** dbname=projects'
    >>> printable("clinic\\x1b[2J\\u202e")
    'clinic\\\\x1b[2J\\\\u202e'
"""

from __future__ import annotations

import logging
import re

MASK = "***"
# scheme://user:password@  (the password runs to the last "@" before the host)
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*:)(?P<secret>[^\s@]*)@")
# password=..., sslpassword=..., passwd=..., pwd=... in a query string or a libpq DSN (quoted or not)
_KEY_PASSWORD = re.compile(
    r"(?P<head>\b(?:ssl)?(?:password|passwd|pwd)\s*=\s*)"
    r"(?P<secret>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s&;,)'\"]+)",
    re.IGNORECASE,
)
# C0 and C1 controls, DEL, and the bidirectional embeddings, overrides, isolates (U+202A-202E,
# U+2066-2069) and marks
_OTHERS = "\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
CONTROL = re.compile(f"[\x00-\x1f{_OTHERS}]")
CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_OTHERS}]")  # the same without tab, line feed, return


def mask_secrets(text: str) -> str:
    """``text`` with every password of a URL or DSN in it replaced by ``***`` (see the module).

    >>> mask_secrets("sqlite:////home/anna/projects.sqlite (no password)")
    'sqlite:////home/anna/projects.sqlite (no password)'
    >>> mask_secrets("postgresql+psycopg://anna:p%40ss@db/projects?PASSWORD=again")
    'postgresql+psycopg://anna:***@db/projects?PASSWORD=***'
    """
    text = str(text)
    text = _URL_PASSWORD.sub(lambda m: m["head"] + MASK + "@", text)
    return _KEY_PASSWORD.sub(lambda m: m["head"] + MASK, text)


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
