"""The context manager a dataset uses to mark the parts of its __getitem__
(reading, decoding) that should be stages of their own in the trace."""

import re

from . import counters

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_names_checked = set()


class stage:
    """`with plumber_torch.stage("read") as s: ...; s.bytes = n` counts the
    block as one element of the stage `name` (bytes: what it yields, when
    known). Costs two clock reads; outside a traced run it only counts."""

    __slots__ = ("name", "bytes", "_frame")

    def __init__(self, name, bytes=0):
        if name not in _names_checked:
            if not isinstance(name, str) or not _NAME.match(name):
                raise ValueError("plumber_torch.stage: name %r must match [A-Za-z0-9_.-]+" % (name,))
            _names_checked.add(name)
        self.name = name
        self.bytes = bytes
        self._frame = None

    def __enter__(self):
        self._frame = counters.begin("stage:" + self.name)
        return self

    def __exit__(self, exc_type, exc, tb):
        counters.end(self._frame, bytes_out=int(self.bytes or 0))
        return False
