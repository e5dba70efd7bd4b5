"""plumber's binary trace file: the magic, the version, then TFRecord-framed
records (docs/trace-format.md). The writer appends each record whole and
hands it to the operating system at once, so a process killed at any point
leaves a file whose complete records all read back; the reader is for tests
and tools, and treats a short last record as a torn tail, as plumber does."""

import os
import struct

from . import crc32c

MAGIC = b"PLMTRACE"
VERSION = 1


class TraceFormatError(ValueError):
    """The bytes are not a plumber trace, or a record's checksum fails."""


def frame_record(payload):
    """The framed bytes of one record: u64 length, its masked CRC32C, the
    payload, the payload's masked CRC32C (all little-endian)."""
    payload = bytes(payload)
    length = struct.pack("<Q", len(payload))
    return (length + struct.pack("<I", crc32c.mask(crc32c.value(length))) + payload +
            struct.pack("<I", crc32c.mask(crc32c.value(payload))))


class TraceFileWriter:
    """Writes the magic and version at once, then one framed record per
    call. After a failed write it writes nothing more, so the file stays a
    readable prefix (at worst ending in one torn record)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._file = open(self.path, "wb", buffering=0)
        self.failed = None
        self._write(MAGIC + struct.pack("<I", VERSION))

    def _write(self, data):
        if self.failed is not None or self._file is None:
            return False
        try:
            view = memoryview(data)
            while view:
                n = self._file.write(view)
                view = view[n:]
        except OSError as e:
            self.failed = e
            return False
        return True

    def add_record(self, payload):
        """Appends one record; False when the file is closed or a write
        failed (then `failed` holds the error)."""
        return self._write(frame_record(payload))

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


def read_records(data):
    """Splits the bytes of a trace file into record payloads. Returns
    (payloads, torn_offset): torn_offset is where an incomplete last record
    starts, or None. Raises TraceFormatError on a bad magic or version or a
    checksum that does not match."""
    data = bytes(data)
    if len(data) < 12 or data[:8] != MAGIC:
        raise TraceFormatError("not a plumber trace (no PLMTRACE magic)")
    (version,) = struct.unpack_from("<I", data, 8)
    if version != VERSION:
        raise TraceFormatError("trace format version %d, expected %d" % (version, VERSION))
    out = []
    pos = 12
    while pos < len(data):
        if len(data) - pos < 12:
            return out, pos
        length_bytes = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        (length_crc,) = struct.unpack_from("<I", data, pos + 8)
        if crc32c.mask(crc32c.value(length_bytes)) != length_crc:
            raise TraceFormatError("record %d at byte %d: length checksum mismatch" % (len(out), pos))
        if length + 16 > len(data) - pos:
            return out, pos
        payload = data[pos + 12:pos + 12 + length]
        (payload_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        if crc32c.mask(crc32c.value(payload)) != payload_crc:
            raise TraceFormatError("record %d at byte %d: payload checksum mismatch" % (len(out), pos))
        out.append(payload)
        pos += 16 + length
    return out, None
