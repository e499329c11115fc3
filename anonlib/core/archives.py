"""Reading zip files anonlib is handed (release packages, project exports) within what their
directory declares: a member's bytes are read in chunks and never past its declared size, so a
member that inflates far beyond it (a zip bomb) costs one chunk of memory before it fails, and
member names that would leave a folder (absolute, ``..``) are told apart.

``zipfile``'s own ``read`` inflates a member's whole compressed data in one call before cutting
it to the declared size: a member declaring 1,000 bytes that inflates to 600 MB held 600 MB (and
more) before failing its checksum. ``read_member`` asks for at most one chunk at a time.

Example:
    >>> import io, zipfile
    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w") as archive:
    ...     archive.writestr("recipe.json", "{}")
    >>> with zipfile.ZipFile(buffer) as archive:
    ...     read_member(archive, archive.getinfo("recipe.json"))
    b'{}'
    >>> unsafe_name("../etc/passwd"), unsafe_name("/tmp/x"), unsafe_name("released.csv")
    (True, True, False)
"""

from __future__ import annotations

import re
import zipfile

CHUNK = 1 << 20  # bytes inflated at a time


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, chunk: int = CHUNK) -> bytes:
    """The bytes of one member, inflated ``chunk`` bytes at a time; ``zipfile.BadZipFile`` when they
    pass its declared size (``zipfile`` also stops there, failing its checksum)."""
    parts, total = [], 0
    with archive.open(info) as member:
        while block := member.read(chunk):
            total += len(block)
            if total > info.file_size:
                raise zipfile.BadZipFile(f"{info.filename} unpacks past its declared size ({info.file_size:,} bytes)")
            parts.append(block)
    return b"".join(parts)


_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_name(name: str) -> bool:
    """Whether a member's name is a path that leaves the folder it is unpacked in, or is no
    plain name: absolute (``/x``, ``C:\\x``), with a ``..`` part or a backslash, or empty.

    >>> unsafe_name("a/../../b"), unsafe_name("C:report.html"), unsafe_name("a\\\\b"), unsafe_name("docs/a.txt")
    (True, True, True, False)
    """
    if not name or name.startswith(("/", "\\")) or _DRIVE.match(name) or "\\" in name or "\x00" in name:
        return True
    return any(part == ".." for part in name.split("/"))
