"""The project key: the secret behind pseudonyms and date shifts, kept out of every release.

A key is 256 random bits, written in a key file as 64 hexadecimal characters on one
line. The same key gives the same pseudonyms and date offsets in every delivery;
another key gives others. A recipe, a release package and a report name the key only
by its id (the first 8 hex characters of the SHA-256 of the key), never the key, so
``apply`` can refuse a recipe made with another key in one sentence.

- ``read_key_file(path)``: the key of an existing key file (64 hex characters on
  one line, nothing else), or a sentence; a key file other users may read or change
  (group or other permission bits, e.g. mode 0644) is refused unless ``shared=True``
  (the command line's ``--allow-shared-key``, which then warns);
- ``key_file(path)``: the key of ``path``, created (random, mode 0600, never over
  another file) when it does not exist yet;
- ``new_key()``, ``key_id(key)``, ``key_text(key)``.

Example:
    >>> key = bytes.fromhex("00" * 32)
    >>> key_id(key)
    '66687aad'
    >>> parse_key(key_text(key)) == key
    True
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
from pathlib import Path

from ..core.errors import KeyFileError

KEY_BYTES = 32
_KEY_TEXT = re.compile(r"[0-9a-fA-F]{64}")


def new_key() -> bytes:
    """A fresh random 256-bit key.

    >>> len(new_key()), new_key() != new_key()
    (32, True)
    """
    return secrets.token_bytes(KEY_BYTES)


def key_id(key: bytes) -> str:
    """The key's public id: the first 8 hex characters of the SHA-256 of the key."""
    return hashlib.sha256(bytes(key)).hexdigest()[:8]


def key_text(key: bytes) -> str:
    """The key as a key file holds it: 64 lower-case hex characters and a newline."""
    return bytes(key).hex() + "\n"


def parse_key(text: str, where: str = "The key") -> bytes:
    """A key from the text of a key file: exactly 64 hex characters on one line (a final
    newline allowed), or a sentence.

    >>> parse_key("abc")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.KeyFileError: The key is not a project key: a key file holds exactly 64 hexadecimal characters (0-9, a-f) on one line.
    """
    body = text[:-1] if text.endswith("\n") else text
    body = body[:-1] if body.endswith("\r") else body
    if not _KEY_TEXT.fullmatch(body):
        raise KeyFileError(
            f"{where} is not a project key: a key file holds exactly 64 hexadecimal characters (0-9, a-f) on one line."
        )
    return bytes.fromhex(body)


def read_key_file(path: str | os.PathLike, *, shared: bool = False) -> bytes:
    """The key in an existing key file; a sentence when it is missing, cannot be read (a
    folder, no permission), is not a key, or (unless ``shared``) may be read or changed by
    other users than its owner (``shared_key_problem``).

    >>> import tempfile
    >>> read_key_file(tempfile.mkdtemp())
    Traceback (most recent call last):
    ...
    anonlib.core.errors.KeyFileError: The key file 'tmp...' cannot be read: it is a folder, not a file; give the key file itself.
    """
    file = Path(path)
    if file.is_dir():
        raise KeyFileError(
            f"The key file '{file.name}' cannot be read: it is a folder, not a file; give the key file itself."
        )
    if not file.exists():
        raise KeyFileError(f"The key file '{file.name}' does not exist or is not a file.")
    try:
        if not file.is_file():
            raise KeyFileError(f"The key file '{file.name}' cannot be read: it is not a regular file.")
        if file.stat().st_size > 256:
            raise KeyFileError(f"The key file '{file.name}' is not a project key: it is far longer than 64 characters.")
        data = file.read_bytes()
    except OSError as err:
        raise KeyFileError(
            f"The key file '{file.name}' cannot be read ({err.strerror or err}); check that you may read it."
        ) from None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise KeyFileError(
            f"The key file '{file.name}' is not a project key: a key file holds exactly 64 hexadecimal "
            "characters (0-9, a-f) on one line."
        ) from None
    key = parse_key(text, f"The key file '{file.name}'")
    problem = shared_key_problem(file)
    if problem and not shared:
        raise KeyFileError(
            f"{problem}; make it private (chmod 600 '{file.name}'), or add --allow-shared-key if others must "
            "share it. Nothing was written."
        )
    return key


def shared_key_problem(path: str | os.PathLike) -> str | None:
    """The sentence saying that a key file may be read or changed by its group or by others (None
    when only its owner may, or on a system without POSIX permissions).

    >>> import tempfile
    >>> key = Path(tempfile.mkdtemp()) / "project.key"
    >>> _ = key.write_text("ab" * 32 + "\\n"); key.chmod(0o644)
    >>> shared_key_problem(key)
    "The key file 'project.key' can be read or changed by other users than its owner (mode 0644)"
    >>> key.chmod(0o600); shared_key_problem(key) is None
    True
    """
    if os.name != "posix":
        return None
    mode = stat.S_IMODE(Path(path).stat().st_mode)
    if not mode & 0o077:
        return None
    return f"The key file '{Path(path).name}' can be read or changed by other users than its owner (mode {mode:04o})"


def key_file(path: str | os.PathLike, *, shared: bool = False) -> tuple[bytes, bool]:
    """The key of ``path`` and whether it was created now: an existing file is read
    (``read_key_file``, ``shared`` as there); a missing one is created with a new key, readable
    and writable by its owner only (mode 0600), never replacing a file that appears meanwhile."""
    file = Path(path)
    if file.exists() or file.is_symlink():
        return read_key_file(file, shared=shared), False
    key = new_key()
    try:
        descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_key_file(file, shared=shared), False
    except OSError as err:
        raise KeyFileError(f"Could not create the key file '{file.name}': {err.strerror or err}.") from None
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(key_text(key))
        os.chmod(file, 0o600)
    except OSError as err:
        file.unlink(missing_ok=True)
        raise KeyFileError(f"Could not write the key file '{file.name}': {err.strerror or err}.") from None
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): no half-written key file is left
        file.unlink(missing_ok=True)
        raise
    return key, True


def require_key(key: bytes | None, expected_id: str, what: str) -> bytes:
    """``key`` when its id is ``expected_id``; a sentence when there is no key or another one.

    >>> require_key(None, "66687aad", "Step 1 (pseudonyms of mrn)")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.KeyFileError: Step 1 (pseudonyms of mrn) needs the project key (key id 66687aad); give it with --key-file.
    """
    if key is None:
        raise KeyFileError(f"{what} needs the project key (key id {expected_id}); give it with --key-file.")
    found = key_id(key)
    if found != expected_id:
        raise KeyFileError(
            f"{what} was made with the key {expected_id}, but the key given is {found}: another key would give "
            "other pseudonyms and dates, so nothing was written; use the key file the recipe was made with."
        )
    return bytes(key)
