"""CRC32C (Castagnoli) and TFRecord's mask, as lib/base/crc32c.h computes
them, in pure Python: Debian has no crc32c module for Python, and trace
records are small (a snapshot is a few hundred bytes), so a byte-at-a-time
table is fast enough."""

_POLY = 0x82F63B78  # reversed Castagnoli polynomial
_MASK_DELTA = 0xA282EAD8


def _make_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_TABLE = _make_table()


def extend(crc, data):
    """CRC32C of `data` appended to a stream whose CRC so far is `crc`."""
    c = crc ^ 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def value(data):
    return extend(0, data)


def mask(crc):
    """Rotate right by 15 bits, then add a constant: keeps the CRC of data
    that holds CRCs from being trivially zero (TFRecord's masking)."""
    rot = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    return (rot + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked):
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF
