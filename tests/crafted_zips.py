"""Zip files written byte by byte, as a hostile sender makes them: a member may inflate far past
the size the zip declares for it (a bomb of hundreds of MB in a few hundred KB, built in
milliseconds), two members may have one name, a name may be an absolute or ``..`` path.

A bomb's deflate stream is one block holding ``chunk`` (compressed with no history and ended by a
full flush, so it refers to nothing before it) repeated ``times`` and an empty final block: it
inflates to ``chunk * times`` without anyone compressing that much.

Example:
    >>> import io, zipfile
    >>> data = crafted_zip([Member("a.txt", b"hello"), Member("a.txt", b"again"), Member("../x", b"")])
    >>> [i.filename for i in zipfile.ZipFile(io.BytesIO(data)).infolist()]
    ['a.txt', 'a.txt', '../x']
    >>> zipfile.ZipFile(io.BytesIO(crafted_zip([Member("z", repeat=(b"ab", 3))]))).read("z")
    b'ababab'
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Member:
    """One member: ``data`` deflated, or ``repeat`` = (chunk, times) deflated without the work;
    ``declared``: the unpacked size the zip states (default: the true one)."""

    name: str
    data: bytes = b""
    repeat: tuple[bytes, int] | None = None
    declared: int | None = None


def _deflated(member: Member) -> tuple[bytes, int, int]:
    """(raw deflate stream, CRC-32, true unpacked size) of a member."""
    if member.repeat is None:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        return compressor.compress(member.data) + compressor.flush(), zlib.crc32(member.data), len(member.data)
    chunk, times = member.repeat
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty last block
    crc = 0
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
    return block * times + final, crc, len(chunk) * times


def crafted_zip(members: list[Member]) -> bytes:
    """A zip of ``members`` in order (names repeated and any path allowed), each deflated, its
    directory entries stating ``declared`` sizes."""
    body, directory = bytearray(), bytearray()
    for member in members:
        data, crc, size = _deflated(member)
        declared = size if member.declared is None else member.declared
        name = member.name.encode("utf-8")
        offset = len(body)
        body += struct.pack(
            "<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0x800, 8, 0, 0x21, crc, len(data), declared, len(name), 0
        )
        body += name + data
        directory += struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02", 20, 20, 0x800, 8, 0, 0x21, crc, len(data), declared, len(name), 0, 0, 0, 0, 0o600 << 16,
            offset,
        )  # fmt: skip
        directory += name
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0)
    return bytes(body + directory + end)
