"""Per-process stage counters: each span (the dataset's __getitem__, a stage
the dataset marks, a transform, collate) adds its own time, children
excluded, to its stage. Every process (the main one and each DataLoader
worker) keeps its own; collate hands what accumulated since the last batch
to the main process together with the batch, so nothing crosses processes
but the batches the DataLoader already sends.

Wall time is read on every span (perf_counter_ns, about 60 ns, monotonic
across processes). Thread CPU costs about 1.5 us a read, so it is read on
one top-level span in CPU_SAMPLE_EVERY (and on every collate) together with
all the spans nested in it, and extrapolated per stage by the main process."""

import os
import time

_perf = time.perf_counter_ns
_thread_cpu = time.thread_time_ns

# One __getitem__ in this many (and the spans inside it) reads thread CPU.
CPU_SAMPLE_EVERY = 8

# Record fields, in order.
CALLS, OWN_WALL, INCL_WALL, SAMPLED_CALLS, SAMPLED_CPU, BYTES_IN, BYTES_OUT, CONSUMED = range(8)
_FIELDS = 8


class _State:
    def __init__(self, worker_id=None, init_ns=None):
        self.pid = os.getpid()
        self.worker_id = worker_id
        self.init_ns = init_ns
        self.stages = {}
        self.stack = []
        self.top_calls = 0
        self.sampling = False


_state = _State()


def start_worker(worker_id):
    """A new DataLoader worker: forget what the parent process counted
    (fork copies it) and note when the worker came up."""
    global _state
    _state = _State(worker_id, _perf())


def begin(key, force_sample=False):
    st = _state
    if os.getpid() != st.pid:
        # A process forked without worker_init_fn (or before it ran):
        # count it on its own from here.
        start_worker(None)
        st = _state
    if not st.stack:
        st.sampling = force_sample or st.top_calls % CPU_SAMPLE_EVERY == 0
        st.top_calls += 1
    if key not in st.stages:
        st.stages[key] = [0] * _FIELDS
    sampling = st.sampling
    # key, wall at entry, CPU at entry, children's wall, children's CPU, sampled
    frame = [key, 0, _thread_cpu() if sampling else 0, 0, 0, sampling]
    st.stack.append(frame)
    frame[1] = _perf()
    return frame


def end(frame, bytes_in=0, bytes_out=0, consumed=0):
    t = _perf()
    sampled = frame[5]
    c = _thread_cpu() if sampled else 0
    st = _state
    # An exception may have skipped inner ends: drop their frames.
    while st.stack and st.stack[-1] is not frame:
        st.stack.pop()
    if st.stack:
        st.stack.pop()
    incl = t - frame[1]
    rec = st.stages.get(frame[0])
    if rec is None:
        rec = st.stages[frame[0]] = [0] * _FIELDS
    rec[CALLS] += 1
    rec[OWN_WALL] += max(0, incl - frame[3])
    rec[INCL_WALL] += incl
    rec[BYTES_IN] += bytes_in
    rec[BYTES_OUT] += bytes_out
    rec[CONSUMED] += consumed
    incl_cpu = 0
    if sampled:
        incl_cpu = c - frame[2]
        rec[SAMPLED_CALLS] += 1
        rec[SAMPLED_CPU] += max(0, incl_cpu - frame[4])
    if st.stack:
        parent = st.stack[-1]
        parent[3] += incl
        parent[4] += incl_cpu


def drain():
    """What this process counted since the last drain, and its identity:
    a dict the main process merges (picklable, small)."""
    st = _state
    stages = [(k, tuple(v)) for k, v in st.stages.items() if v[CALLS]]
    for v in st.stages.values():
        for i in range(_FIELDS):
            v[i] = 0
    return {
        "pid": st.pid,
        "worker_id": st.worker_id,
        "init_ns": st.init_ns,
        "process_cpu_ns": time.process_time_ns(),
        "stages": stages,
    }


_BYTES_PER_BAND = {"I": 4, "F": 4, "I;16": 2, "I;16B": 2, "I;16L": 2}


def nbytes(x, depth=0):
    """Bytes of an element where cheap to tell (tensors, arrays, bytes, PIL
    images, and tuples, lists and dicts of them); 0 otherwise."""
    try:
        if hasattr(x, "element_size") and hasattr(x, "nelement"):
            return int(x.element_size() * x.nelement())
        if isinstance(x, (bytes, bytearray)):
            return len(x)
        if isinstance(x, memoryview):
            return x.nbytes
        if hasattr(x, "getbands") and hasattr(x, "size"):
            w, h = x.size
            return int(w * h * len(x.getbands()) * _BYTES_PER_BAND.get(getattr(x, "mode", ""), 1))
        if depth < 3:
            if isinstance(x, (tuple, list)):
                return sum(nbytes(v, depth + 1) for v in x)
            if isinstance(x, dict):
                return sum(nbytes(v, depth + 1) for v in x.values())
        n = getattr(x, "nbytes", None)
        if isinstance(n, int):
            return n
    except Exception:  # an object whose size cannot be read counts 0
        return 0
    return 0
