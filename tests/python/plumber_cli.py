"""Shared by the PyTorch tracer's tests: the plumber binary under test (its
path in PLUMBER_BINARY, set by ctest) and reading a trace back in Python."""

import os
import subprocess

from plumber_torch.record_io import read_records
import trace_pb2


def plumber(*args):
    """Runs the plumber binary; returns (exit status, stdout, stderr)."""
    binary = os.environ.get("PLUMBER_BINARY")
    if not binary:
        raise RuntimeError("PLUMBER_BINARY is not set (ctest sets it to the built plumber)")
    r = subprocess.run([binary] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def read_trace(path):
    """(header, snapshots, end or None, torn offset or None) of a binary
    trace, every record's checksums checked."""
    with open(path, "rb") as f:
        payloads, torn = read_records(f.read())
    header, snapshots, end = None, [], None
    for i, p in enumerate(payloads):
        r = trace_pb2.TraceRecord()
        r.ParseFromString(p)
        kind = r.WhichOneof("kind")
        if i == 0 and kind != "header":
            raise AssertionError("first record is %s, not the header" % kind)
        if kind == "header":
            header = r.header
        elif kind == "snapshot":
            snapshots.append(r.snapshot)
        else:
            end = r.end
    return header, snapshots, end, torn
