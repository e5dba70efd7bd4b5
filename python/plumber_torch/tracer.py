"""TracedLoader: wraps a DataLoader so that iterating it writes a plumber
trace. It instruments the dataset's __getitem__ (on its class, guarded per
instance), each transform of its Compose, collate_fn and worker_init_fn;
workers send their counters with each batch, and the main process merges
them, times its own wait for each batch, and writes the header at the first
batch (when the stages the dataset marks are known), then snapshots every
`snapshot_every` seconds and at each epoch's end, each appended and handed
to the operating system at once."""

import atexit
import math
import os
import socket
import sys
import time

import torch
import torch.utils.data as tud

from . import counters
from ._schema import trace_pb2
from .record_io import TraceFileWriter

GETITEM = "getitem"
COLLATE = "collate"
_STAGE = "stage:"
_TRANSFORM = "transform:"
_TRACED_FLAG = "_plumber_torch_traced"

_perf = time.perf_counter_ns


class _Payload:
    """A worker's counters riding with its batch. Not a tensor or sequence,
    so pin_memory passes it through untouched."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data

    def __getstate__(self):
        return self.data

    def __setstate__(self, data):
        self.data = data


class _TracedTransform:
    def __init__(self, fn, key):
        self.fn = fn
        self.key = key

    def __call__(self, x):
        frame = counters.begin(self.key)
        out = self.fn(x)
        counters.end(frame, bytes_in=counters.nbytes(x), bytes_out=counters.nbytes(out), consumed=1)
        return out

    def __repr__(self):
        return repr(self.fn)


class _TracedCollate:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, samples):
        frame = counters.begin(COLLATE, force_sample=True)
        out = self.fn(samples)
        counters.end(frame, bytes_in=counters.nbytes(samples), bytes_out=counters.nbytes(out),
                     consumed=len(samples))
        return out, _Payload(counters.drain())


class _TracedWorkerInit:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, worker_id):
        counters.start_worker(worker_id)
        # Under spawn the worker imported the dataset's class afresh.
        info = tud.get_worker_info()
        if info is not None:
            _patch_getitem(type(info.dataset))
        if self.fn is not None:
            self.fn(worker_id)


def _patch_getitem(cls):
    """Wraps __getitem__ on the class (Python looks dunders up on the type),
    counting only instances flagged as traced."""
    current = cls.__dict__.get("__getitem__")
    if current is not None and getattr(current, "_plumber_torch_wrapper", False):
        return
    orig = cls.__getitem__

    def __getitem__(self, index):
        if not getattr(self, _TRACED_FLAG, False):
            return orig(self, index)
        frame = counters.begin(GETITEM)
        out = None
        try:
            out = orig(self, index)
        finally:
            counters.end(frame, bytes_out=counters.nbytes(out))
        return out

    __getitem__._plumber_torch_wrapper = True
    __getitem__._plumber_torch_orig = orig
    cls.__getitem__ = __getitem__


def _find_transform_owner(dataset):
    """The dataset object holding a `transform`, looking through wrappers
    such as Subset (their `.dataset`)."""
    d = dataset
    for _ in range(4):
        if d is None:
            return None
        if getattr(d, "transform", None) is not None:
            return d
        d = getattr(d, "dataset", None)
    return None


def _unwrap(fn):
    while isinstance(fn, (_TracedTransform, _TracedCollate, _TracedWorkerInit)):
        fn = fn.fn
    return fn


class _Totals:
    """One stage's counters summed over processes, CPU extrapolated from
    the sampled spans delta by delta so that the estimate never goes back."""

    __slots__ = ("calls", "own_wall", "incl_wall", "sampled_calls", "sampled_cpu", "cpu_est", "bytes_in",
                 "bytes_out", "consumed")

    def __init__(self):
        for f in self.__slots__:
            setattr(self, f, 0)

    def add(self, r):
        calls = r[counters.CALLS]
        self.calls += calls
        self.own_wall += r[counters.OWN_WALL]
        self.incl_wall += r[counters.INCL_WALL]
        self.bytes_in += r[counters.BYTES_IN]
        self.bytes_out += r[counters.BYTES_OUT]
        self.consumed += r[counters.CONSUMED]
        sc, cpu = r[counters.SAMPLED_CALLS], r[counters.SAMPLED_CPU]
        if sc > 0:
            self.cpu_est += cpu * calls // sc
        elif self.sampled_calls > 0:
            self.cpu_est += self.sampled_cpu * calls // self.sampled_calls
        else:
            # Nothing sampled yet: the wall time is the CPU's upper bound.
            self.cpu_est += r[counters.OWN_WALL]
        self.sampled_calls += sc
        self.sampled_cpu += cpu


def _node_name(base, taken):
    name = base
    k = 2
    while name in taken:
        name = "%s.%d" % (base, k)
        k += 1
    taken.add(name)
    return name


class TracedLoader:
    """Iterates like the DataLoader it wraps (epochs by `for batch in
    loader`), writing the trace as it goes; `close()` (or the process's
    normal exit) writes the last snapshot and the end record."""

    def __init__(self, loader, path, snapshot_every=1.0):
        if not isinstance(loader, tud.DataLoader):
            raise TypeError("plumber_torch.traced: expected a torch.utils.data.DataLoader, got %s" %
                            type(loader).__name__)
        if isinstance(loader.dataset, tud.IterableDataset):
            raise ValueError("plumber_torch.traced: IterableDataset is not supported (only map-style "
                             "datasets, whose samples are fetched by index)")
        if not getattr(loader, "_auto_collation", True):
            raise ValueError("plumber_torch.traced: the DataLoader does not batch (batch_size=None); "
                             "only batching DataLoaders are supported")
        if not (snapshot_every > 0 and math.isfinite(snapshot_every)):
            raise ValueError("plumber_torch.traced: snapshot_every must be a positive number of seconds, got %r" %
                             (snapshot_every,))
        self._loader = loader
        self._snapshot_every_ns = int(snapshot_every * 1e9)
        self._snapshot_every = snapshot_every
        self._pid = os.getpid()
        self._config = self._read_config(loader)
        self._instrument(loader)
        self._writer = TraceFileWriter(path)
        self.path = self._writer.path
        self._t0 = _perf()
        self._start_unix_ns = time.time_ns()
        try:
            self._cpus = sorted(os.sched_getaffinity(0))
        except AttributeError:
            self._cpus = []
        self._machine_start = _machine_cpu_ticks(self._cpus)
        self._machine_last = (0, 0)
        self._totals = {}
        self._order = []
        self._worker_cpu = {}
        self._pids_seen = set()
        self._program = None  # list of (node name, key) once the header is out
        self._next_calls = 0
        self._wait_ns = 0
        self._max_wait_ns = 0
        self._batches = 0
        self._epochs = 0
        self._workers_started = 0
        self._worker_start_done = 0
        self._worker_start_epoch = 0
        self._epoch_iter_ns = 0
        self._first_batch_wait = 0
        self._epoch_end_wait = 0
        self._last_snapshot_ns = None
        self._last_wall = -1
        self._status = None
        self._closed = False
        atexit.register(self._at_exit)

    # ---- setup ---------------------------------------------------------

    @staticmethod
    def _read_config(loader):
        c = trace_pb2.DataLoaderConfig()
        c.num_workers = int(loader.num_workers)
        bs = loader.batch_size
        if bs is None and loader.batch_sampler is not None:
            bs = getattr(loader.batch_sampler, "batch_size", None)
        c.batch_size = int(bs or 0)
        c.prefetch_factor = int(getattr(loader, "prefetch_factor", None) or 2)
        c.persistent_workers = bool(loader.persistent_workers)
        c.pin_memory = bool(loader.pin_memory)
        c.shuffle = isinstance(loader.sampler, tud.RandomSampler)
        c.drop_last = bool(loader.drop_last)
        c.torch_version = str(torch.__version__)
        try:
            c.dataset_length = len(loader.dataset)
        except TypeError:
            c.dataset_length = 0
        if c.num_workers > 0:
            ctx = loader.multiprocessing_context
            if ctx is None:
                import torch.multiprocessing as tmp
                c.multiprocessing_context = tmp.get_start_method()
            else:
                c.multiprocessing_context = ctx.get_start_method() if hasattr(ctx, "get_start_method") else str(ctx)
        return c

    def _instrument(self, loader):
        ds = loader.dataset
        try:
            setattr(ds, _TRACED_FLAG, True)
        except AttributeError as e:
            raise ValueError("plumber_torch.traced: cannot mark the dataset as traced (%s)" % e) from e
        _patch_getitem(type(ds))
        self._transforms = []  # (node name, key)
        taken = {GETITEM, COLLATE, "prefetch"}
        owner = _find_transform_owner(ds)
        if owner is not None:
            t = owner.transform
            inner = getattr(t, "transforms", None)
            if isinstance(inner, list):
                for i, fn in enumerate(inner):
                    fn = _unwrap(fn)
                    name = _node_name(type(fn).__name__ if type(fn).__name__.isidentifier() else "transform",
                                      taken)
                    key = _TRANSFORM + name
                    inner[i] = _TracedTransform(fn, key)
                    self._transforms.append((name, key))
            else:
                name = _node_name("transform", taken)
                owner.transform = _TracedTransform(_unwrap(t), _TRANSFORM + name)
                self._transforms.append((name, _TRANSFORM + name))
        self._taken = taken
        loader.collate_fn = _TracedCollate(_unwrap(loader.collate_fn))
        loader.worker_init_fn = _TracedWorkerInit(_unwrap(loader.worker_init_fn))

    # ---- iteration -----------------------------------------------------

    def __len__(self):
        return len(self._loader)

    def __getattr__(self, name):
        # Only the DataLoader's public attributes: a private one missing here
        # (before __init__ set it) must not recurse.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._loader, name)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and self._status is None:
            self._status = ("interrupted", "") if issubclass(exc_type, KeyboardInterrupt) else ("error", repr(exc))
        self.close()
        return False

    def __iter__(self):
        if self._closed:
            raise RuntimeError("plumber_torch: the traced DataLoader was closed")
        self._epochs += 1
        self._worker_start_done += self._worker_start_epoch
        self._worker_start_epoch = 0
        t = _perf()
        self._epoch_iter_ns = t
        it = iter(self._loader)
        pending = _perf() - t  # starting workers is part of the first wait
        first = True
        while True:
            a = _perf()
            try:
                item = next(it)
            except StopIteration:
                self._epoch_end_wait += _perf() - a
                break
            except KeyboardInterrupt:
                self._status = ("interrupted", "")
                raise
            except Exception as e:
                self._status = ("error", repr(e))
                self._snapshot(_perf())
                raise
            b = _perf()
            wait = b - a + pending
            pending = 0
            if first:
                self._first_batch_wait += wait
                first = False
            batch = self._absorb(item, wait)
            if self._program is None:
                self._write_header()
                self._snapshot(b)
            elif b - self._last_snapshot_ns >= self._snapshot_every_ns:
                self._snapshot(b)
            yield batch
        if self._program is not None:
            self._snapshot(_perf())

    def _absorb(self, item, wait):
        self._next_calls += 1
        self._wait_ns += wait
        self._max_wait_ns = max(self._max_wait_ns, wait)
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], _Payload)):
            raise RuntimeError("plumber_torch: a batch arrived without its counters; was collate_fn "
                               "replaced after plumber_torch.traced()?")
        batch, payload = item[0], item[1].data
        self._batches += 1
        pid = payload["pid"]
        if pid != self._pid:
            # A worker is its pid and start time: pids are reused across epochs.
            worker = (pid, payload["init_ns"])
            self._worker_cpu[worker] = payload["process_cpu_ns"]
            if worker not in self._pids_seen:
                self._pids_seen.add(worker)
                self._workers_started += 1
                if payload["init_ns"] is not None:
                    self._worker_start_epoch = max(self._worker_start_epoch,
                                                   payload["init_ns"] - self._epoch_iter_ns)
        for key, rec in payload["stages"]:
            tot = self._totals.get(key)
            if tot is None:
                tot = self._totals[key] = _Totals()
                self._order.append(key)
            tot.add(rec)
        return batch

    # ---- the trace -----------------------------------------------------

    def _write_header(self):
        cfg = self._config
        workers = cfg.num_workers
        stage_keys = [k for k in self._order if k.startswith(_STAGE)]
        program = [(GETITEM, GETITEM)]
        taken = set(self._taken) | {n for n, _ in self._transforms}
        for k in stage_keys:
            program.append((_node_name(k[len(_STAGE):], taken), k))
        program += self._transforms
        program.append((COLLATE, COLLATE))
        if workers > 0:
            program.append(("prefetch", None))
        self._program = program

        h = trace_pb2.TraceHeader()
        from . import __version__
        h.tool_version = "plumber_torch " + __version__
        h.start_unix_ns = self._start_unix_ns
        h.wait_traced = False
        p = h.program
        ds = self._loader.dataset
        p.name = type(ds).__name__
        p.description = "a torch.utils.data.DataLoader traced by plumber_torch"
        p.imported_from = "PyTorch DataLoader"
        par = max(1, workers)
        prev = None
        for name, key in program:
            n = p.nodes.add()
            n.name = name
            if prev is not None:
                n.inputs.append(prev)
            if key == GETITEM:
                n.op = "opaque"
                n.imported_type = type(ds).__name__ + ".__getitem__"
                if par > 1:
                    n.opaque.parallelism = par
                else:
                    n.opaque.SetInParent()
            elif key == COLLATE:
                n.op = "batch"
                n.imported_type = "collate_fn"
                n.batch.batch_size = max(1, cfg.batch_size)
                n.batch.drop_remainder = cfg.drop_last
                if par > 1:
                    n.batch.parallelism = par
            elif key is None:
                n.op = "prefetch"
                n.imported_type = "DataLoader worker queue"
                n.prefetch.buffer_size = cfg.prefetch_factor * workers
            else:
                n.op = "map"
                n.imported_type = ("stage" if key.startswith(_STAGE) else "transform") + " " + name
                n.map.SetInParent()
                if par > 1:
                    n.map.parallelism = par
            prev = name
        p.output = prev

        m = h.machine
        try:
            m.cores = len(os.sched_getaffinity(0))
        except AttributeError:
            m.cores = os.cpu_count() or 0
        try:
            m.memory_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            pass
        m.available_memory_bytes = _mem_available()
        m.hostname = socket.gethostname()

        o = h.options
        o.snapshot_every_seconds = self._snapshot_every
        o.argv.extend(sys.argv)

        imp = h.imported
        # The configuration in the DataLoader's own words, so that every
        # report's "imported from" line shows it.
        imp.format = ("PyTorch DataLoader (plumber_torch %s, torch %s): num_workers=%d, batch_size=%d, "
                      "prefetch_factor=%d, persistent_workers=%s, pin_memory=%s, shuffle=%s, drop_last=%s" %
                      (__version__, cfg.torch_version, cfg.num_workers, cfg.batch_size, cfg.prefetch_factor,
                       cfg.persistent_workers, cfg.pin_memory, cfg.shuffle, cfg.drop_last))
        imp.thread_cpu = True
        imp.window_known = True
        imp.window_from = "the tracer's own clock"
        imp.file_sizes_known = False
        imp.dataloader.CopyFrom(cfg)
        imp.notes.extend(self._notes(stage_keys))
        self._record(trace_pb2.TraceRecord(header=h))

    def _notes(self, stage_keys):
        cfg = self._config
        notes = []
        if cfg.num_workers > 0:
            notes.append("handing a batch from a worker to the main process (pickling, shared memory, the "
                         "queues) is not timed on its own: plumber prices it as the processes' CPU beyond "
                         "the stages', which also holds the tracer's own and the training loop's")
            if not cfg.persistent_workers:
                notes.append("workers are restarted at each epoch: the trace times what the main process waited "
                             "at each epoch's start and end, not what the restart costs the cores")
        else:
            notes.append("num_workers is 0: the main process loads every batch itself, between training steps")
        notes.append("thread CPU is read on one __getitem__ in %d (and every collate) and extrapolated per "
                     "stage" % counters.CPU_SAMPLE_EVERY)
        if not stage_keys:
            notes.append("the dataset marks no stages (plumber_torch.stage): reading and decoding are all in "
                         "'getitem'")
        else:
            notes.append("'getitem' holds the dataset's __getitem__ outside its marked stages and transforms")
        if cfg.pin_memory:
            notes.append("pin_memory's thread in the main process is not traced")
        notes.append("the sampler, the training step and the GPU are not traced")
        return notes

    def _snapshot(self, now):
        if self._program is None:
            return
        wall = max(now - self._t0, self._last_wall + 1)
        self._last_wall = wall
        self._last_snapshot_ns = now
        cfg = self._config
        par = max(1, cfg.num_workers)
        s = trace_pb2.Snapshot()
        s.wall_ns = wall
        s.process_cpu_ns = time.process_time_ns() + sum(self._worker_cpu.values())
        rss = _rss_bytes()
        if rss:
            s.rss_bytes = rss
        ticks = _machine_cpu_ticks(self._cpus) if self._machine_start else None
        if ticks:
            # Cumulative since the tracer began, never decreasing (the
            # kernel's iowait may), in nanoseconds.
            ns = 1e9 / os.sysconf("SC_CLK_TCK")
            idle = max(self._machine_last[0], int((ticks[0] - self._machine_start[0]) * ns))
            busy = max(self._machine_last[1], int((ticks[1] - self._machine_start[1]) * ns))
            self._machine_last = (idle, busy)
            s.machine_idle_ns = idle
            s.machine_busy_ns = busy
        for name, key in self._program:
            n = s.nodes.add()
            n.name = name
            n.parallelism = par if key is not None else 1
            if key is None:
                n.elements_produced = self._batches
                n.elements_consumed = self._batches
                n.buffer_capacity = cfg.prefetch_factor * cfg.num_workers
                n.input_blocked_ns = self._wait_ns
                n.parallelism = 1
                continue
            t = self._totals.get(key)
            if t is None:
                continue
            n.elements_produced = t.calls
            n.elements_consumed = t.consumed
            n.bytes_produced = t.bytes_out
            n.bytes_consumed = t.bytes_in
            n.active_cpu_ns = t.cpu_est
            n.wall_ns = t.incl_wall
            n.self_wall_ns = t.own_wall
            if key == GETITEM:
                if cfg.dataset_length > 0:
                    n.cardinality = cfg.dataset_length
                # A stage first marked after the header is written has no
                # node: its time goes back to the __getitem__ it ran in.
                for k in self._late_keys():
                    late = self._totals[k]
                    n.active_cpu_ns += late.cpu_est
                    n.self_wall_ns += late.own_wall
            if key.startswith(_STAGE):
                n.elements_consumed = t.calls
        s.root.next_calls = self._next_calls
        s.root.wait_ns = self._wait_ns
        s.root.max_wait_ns = self._max_wait_ns
        d = s.dataloader
        d.epochs = self._epochs
        d.workers_started = self._workers_started
        d.worker_start_ns = self._worker_start_done + self._worker_start_epoch
        d.first_batch_wait_ns = self._first_batch_wait
        d.epoch_end_wait_ns = self._epoch_end_wait
        self._record(trace_pb2.TraceRecord(snapshot=s))

    def _late_keys(self):
        known = {key for _, key in self._program}
        return [k for k in self._order if k.startswith(_STAGE) and k not in known]

    def _record(self, rec):
        if not self._writer.add_record(rec.SerializeToString()) and self._writer.failed is not None:
            err = self._writer.failed
            self._writer.failed = None  # say it once
            self._writer._file = None
            print("plumber_torch: writing the trace %s failed (%s); tracing stops here" % (self.path, err),
                  file=sys.stderr)

    def close(self):
        """Writes the last snapshot and the end record. Idempotent."""
        if self._closed or os.getpid() != self._pid:
            return
        self._closed = True
        if self._program is not None:
            self._snapshot(_perf())
            status, message = self._status or ("ok", "")
            end = trace_pb2.RunEnd(status=status, message=message)
            self._record(trace_pb2.TraceRecord(end=end))
        self._writer.close()

    def _at_exit(self):
        self.close()


def _mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _machine_cpu_ticks(cpus):
    """(idle, busy) clock ticks of the run's CPUs from /proc/stat, as plumber's
    own runs count them (lib/runtime/machine_cpu.cc): idle + iowait, and
    user + nice + system + irq + softirq + steal; the aggregate line where
    the per-CPU lines are missing; None when /proc/stat cannot be read."""
    try:
        with open("/proc/stat") as f:
            lines = [l.split() for l in f if l.startswith("cpu")]
    except OSError:
        return None
    wanted = {"cpu%d" % c for c in cpus}
    rows = [l for l in lines if l[0] in wanted] or [l for l in lines if l[0] == "cpu"]
    idle = busy = 0
    try:
        for l in rows:
            v = [int(x) for x in l[1:9]] + [0] * max(0, 9 - len(l))
            idle += v[3] + v[4]
            busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
    except ValueError:
        return None
    return (idle, busy) if rows else None


def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
