"""Unit tests of the PyTorch tracer's parts: CRC32C against the RFC 3720
vectors and against what plumber's C++ wrote, the record framing (torn
tails, corruption), the span counters, element sizes, and the errors
traced() gives for what it cannot trace."""

import os
import shutil
import struct
import tempfile
import time
import unittest

from plumber_torch import counters, crc32c, record_io
from plumber_cli import plumber, read_trace

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Crc32cTest(unittest.TestCase):
    def test_rfc3720_vectors(self):
        self.assertEqual(crc32c.value(bytes(32)), 0x8A9136AA)
        self.assertEqual(crc32c.value(b"\xff" * 32), 0x62A8AB43)
        self.assertEqual(crc32c.value(bytes(range(32))), 0x46DD794E)
        self.assertEqual(crc32c.value(bytes(range(31, -1, -1))), 0x113FDB5C)
        self.assertEqual(crc32c.value(b"123456789"), 0xE3069283)

    def test_extend_is_concatenation(self):
        data = b"the quick brown fox jumps over the lazy dog"
        for cut in (0, 1, 17, len(data)):
            self.assertEqual(crc32c.extend(crc32c.value(data[:cut]), data[cut:]), crc32c.value(data))

    def test_mask(self):
        self.assertEqual(crc32c.mask(0x00008000), (1 + 0xA282EAD8) & 0xFFFFFFFF)
        for crc in (0, 1, 0x8A9136AA, 0xFFFFFFFF):
            self.assertEqual(crc32c.unmask(crc32c.mask(crc)), crc)
            self.assertNotEqual(crc32c.mask(crc), crc)

    def test_frames_match_what_plumber_wrote(self):
        # plumber (C++) converts a committed JSON trace to its binary form;
        # framing each payload again here must give the same bytes.
        tmp = tempfile.mkdtemp()
        try:
            pb = os.path.join(tmp, "cpu.pb")
            rc, out, err = plumber("convert", os.path.join(SOURCE_DIR, "testdata/traces/cpu.json"), pb)
            self.assertEqual(rc, 0, out + err)
            with open(pb, "rb") as f:
                data = f.read()
            payloads, torn = record_io.read_records(data)
            self.assertIsNone(torn)
            self.assertGreater(len(payloads), 2)
            self.assertEqual(record_io.MAGIC + struct.pack("<I", 1) +
                             b"".join(record_io.frame_record(p) for p in payloads), data)
        finally:
            shutil.rmtree(tmp)


class RecordIoTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.path = os.path.join(self.tmp, "t.pb")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, payloads):
        w = record_io.TraceFileWriter(self.path)
        for p in payloads:
            self.assertTrue(w.add_record(p))
        w.close()
        with open(self.path, "rb") as f:
            return f.read()

    def test_round_trip_and_layout(self):
        data = self.write([b"", b"abc", bytes(300)])
        self.assertEqual(data[:12], b"PLMTRACE\x01\x00\x00\x00")
        self.assertEqual(struct.unpack_from("<Q", data, 12)[0], 0)
        self.assertEqual(len(data), 12 + 16 * 3 + 3 + 300)
        payloads, torn = record_io.read_records(data)
        self.assertEqual(payloads, [b"", b"abc", bytes(300)])
        self.assertIsNone(torn)

    def test_every_cut_is_a_readable_prefix(self):
        data = self.write([b"one", b"second record", b"3"])
        ends = [12, 12 + 19, 12 + 19 + 29, len(data)]
        for cut in range(12, len(data) + 1):
            payloads, torn = record_io.read_records(data[:cut])
            complete = sum(1 for e in ends[1:] if e <= cut)
            self.assertEqual(len(payloads), complete, cut)
            self.assertEqual(torn is None, cut in ends, cut)

    def test_corruption_is_an_error(self):
        data = bytearray(self.write([b"hello", b"world"]))
        data[12 + 12 + 1] ^= 0x01  # a payload byte of the first record
        with self.assertRaisesRegex(record_io.TraceFormatError, "record 0 .*payload checksum"):
            record_io.read_records(bytes(data))
        with self.assertRaisesRegex(record_io.TraceFormatError, "magic"):
            record_io.read_records(b"NOTATRACE...")

    def test_plumber_reads_a_python_written_trace(self):
        # The committed JSON trace, written by the Python writer, reads in
        # plumber as the same trace.
        from google.protobuf import json_format
        import trace_pb2
        with open(os.path.join(SOURCE_DIR, "testdata/traces/cpu.json")) as f:
            trace = json_format.Parse(f.read(), trace_pb2.Trace())
        w = record_io.TraceFileWriter(self.path)
        w.add_record(trace_pb2.TraceRecord(header=trace.header).SerializeToString())
        for s in trace.snapshots:
            w.add_record(trace_pb2.TraceRecord(snapshot=s).SerializeToString())
        w.close()
        rc, out, err = plumber("validate", self.path)
        self.assertEqual(rc, 0, out + err)
        header, snapshots, end, torn = read_trace(self.path)
        self.assertEqual(len(snapshots), len(trace.snapshots))
        self.assertIsNone(end)


class CountersTest(unittest.TestCase):
    def setUp(self):
        counters.start_worker(None)

    def test_nested_spans_count_own_time(self):
        outer = counters.begin("outer", force_sample=True)
        time.sleep(0.002)
        inner = counters.begin("inner")
        time.sleep(0.02)
        counters.end(inner, bytes_out=7)
        counters.end(outer, bytes_in=3, consumed=2)
        d = dict(counters.drain()["stages"])
        o, i = d["outer"], d["inner"]
        self.assertEqual(o[counters.CALLS], 1)
        self.assertEqual(i[counters.CALLS], 1)
        self.assertGreaterEqual(i[counters.OWN_WALL], 20_000_000)
        self.assertGreaterEqual(o[counters.INCL_WALL], o[counters.OWN_WALL] + i[counters.INCL_WALL])
        self.assertLess(o[counters.OWN_WALL], i[counters.OWN_WALL])
        self.assertEqual(i[counters.BYTES_OUT], 7)
        self.assertEqual(o[counters.BYTES_IN], 3)
        self.assertEqual(o[counters.CONSUMED], 2)
        # Sleeping costs no CPU: the sampled CPU is far below the wall time.
        self.assertEqual(i[counters.SAMPLED_CALLS], 1)
        self.assertLess(i[counters.SAMPLED_CPU], i[counters.OWN_WALL] // 2)

    def test_cpu_is_sampled_per_top_level_span(self):
        for _ in range(3 * counters.CPU_SAMPLE_EVERY):
            top = counters.begin("top")
            counters.end(counters.begin("child"))
            counters.end(top)
        d = dict(counters.drain()["stages"])
        self.assertEqual(d["top"][counters.CALLS], 3 * counters.CPU_SAMPLE_EVERY)
        self.assertEqual(d["top"][counters.SAMPLED_CALLS], 3)
        self.assertEqual(d["child"][counters.SAMPLED_CALLS], 3)

    def test_drain_resets(self):
        counters.end(counters.begin("x"))
        first = counters.drain()
        self.assertEqual(first["pid"], os.getpid())
        self.assertEqual(len(first["stages"]), 1)
        self.assertEqual(counters.drain()["stages"], [])

    def test_an_exception_inside_leaves_the_stack_sane(self):
        outer = counters.begin("outer")
        counters.begin("abandoned")
        counters.end(outer)
        counters.end(counters.begin("after"))
        d = dict(counters.drain()["stages"])
        self.assertEqual(d["outer"][counters.CALLS], 1)
        self.assertEqual(d["after"][counters.CALLS], 1)
        self.assertNotIn("abandoned", d)

    def test_nbytes(self):
        import torch
        from PIL import Image
        self.assertEqual(counters.nbytes(torch.zeros(3, 4, dtype=torch.float32)), 48)
        self.assertEqual(counters.nbytes(b"abcd"), 4)
        self.assertEqual(counters.nbytes(Image.new("RGB", (10, 5))), 150)
        self.assertEqual(counters.nbytes((torch.zeros(2, dtype=torch.int64), 3)), 16)
        self.assertEqual(counters.nbytes(object()), 0)


class TracedArgumentsTest(unittest.TestCase):
    def test_refusals(self):
        import torch
        import plumber_torch
        tmp = tempfile.mkdtemp()
        try:
            path = os.path.join(tmp, "t.pb")
            with self.assertRaisesRegex(TypeError, "DataLoader"):
                plumber_torch.traced([1, 2, 3], path)

            class Stream(torch.utils.data.IterableDataset):
                def __iter__(self):
                    return iter(range(3))

            with self.assertRaisesRegex(ValueError, "IterableDataset"):
                plumber_torch.traced(torch.utils.data.DataLoader(Stream(), batch_size=2), path)
            ds = torch.utils.data.TensorDataset(torch.zeros(4, 2))
            with self.assertRaisesRegex(ValueError, "batch_size=None"):
                plumber_torch.traced(torch.utils.data.DataLoader(ds, batch_size=None), path)
            with self.assertRaisesRegex(ValueError, "snapshot_every"):
                plumber_torch.traced(torch.utils.data.DataLoader(ds, batch_size=2), path, snapshot_every=0)
            with self.assertRaisesRegex(ValueError, "must match"):
                plumber_torch.stage("read files")
            self.assertFalse(os.path.exists(path))
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()


class CachedPrefixTest(unittest.TestCase):
    """The Dataset wrapper the advice's cache names: the prefix runs once per
    sample, the rest on every access, and the dataset is left as it was."""

    def test_prefix_once_rest_every_time(self):
        import torch
        import torchvision.transforms as T

        import plumber_torch

        calls = {"prefix": 0, "rest": 0}

        def prefix(x):
            calls["prefix"] += 1
            return x * 10

        def rest(x):
            calls["rest"] += 1
            return x + 1

        class Numbers(torch.utils.data.Dataset):
            def __init__(self):
                self.transform = T.Compose([prefix, rest])

            def __len__(self):
                return 3

            def __getitem__(self, i):
                return self.transform(i), "label%d" % i

        ds = Numbers()
        cached = plumber_torch.CachedPrefix(ds, 1)
        self.assertEqual(calls, {"prefix": 3, "rest": 0})
        self.assertEqual(len(cached), 3)
        for _ in range(2):
            self.assertEqual([cached[i] for i in range(3)], [(1, "label0"), (11, "label1"), (21, "label2")])
        self.assertEqual(calls, {"prefix": 3, "rest": 6})
        self.assertEqual(ds[2], (21, "label2"))  # the dataset's own Compose is back
        self.assertEqual([t.__name__ for t in cached.transform.transforms], ["rest"])
        batches = list(torch.utils.data.DataLoader(cached, batch_size=3, num_workers=0))
        self.assertEqual(batches[0][0].tolist(), [1, 11, 21])

    def test_refuses_what_it_cannot_split(self):
        import torch

        import plumber_torch

        class Plain(torch.utils.data.Dataset):
            transform = staticmethod(lambda x: x)

            def __len__(self):
                return 1

            def __getitem__(self, i):
                return i

        with self.assertRaises(TypeError):
            plumber_torch.CachedPrefix(Plain(), 0)
