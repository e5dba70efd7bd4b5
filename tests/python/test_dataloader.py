"""The PyTorch tracer on real torch runs: DataLoaders over small generated
JPEGs at num_workers 0, 1 and 2, persistent or not, traced; the traces read
back, pass `plumber validate`, and `plumber analyze` and `rank` model them.
A run killed mid-epoch still leaves a trace plumber reads."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

import jpeg_data
import plumber_torch
from plumber_cli import plumber, read_trace

SAMPLES = 24
BATCH = 4
EPOCHS = 2
HERE = os.path.dirname(os.path.abspath(__file__))


class TracedDataLoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.mkdtemp(prefix="plumber_torch_test_")
        cls.jpegs = os.path.join(cls.tmp, "jpegs")
        os.mkdir(cls.jpegs)
        cls.paths = jpeg_data.write_jpegs(cls.jpegs, SAMPLES)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_traced(self, workers, persistent):
        path = os.path.join(self.tmp, "w%d_p%d.pb" % (workers, persistent))
        dataset = jpeg_data.JpegFiles(self.paths, jpeg_data.image_transform())
        loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=workers,
                                             persistent_workers=persistent)
        traced = plumber_torch.traced(loader, path, snapshot_every=0.01)
        seen = 0
        for _ in range(EPOCHS):
            for images, labels in traced:
                # The batch is the DataLoader's own, counters stripped.
                self.assertEqual(tuple(images.shape), (BATCH, 3, 32, 32))
                self.assertEqual(labels.shape[0], BATCH)
                seen += images.shape[0]
        traced.close()
        self.assertEqual(seen, SAMPLES * EPOCHS)
        return path

    def check_trace(self, path, workers, persistent):
        header, snapshots, end, torn = read_trace(path)
        self.assertIsNone(torn)
        self.assertEqual(end.status, "ok")
        # The program: getitem, the marked stages, the transforms, collate,
        # and the workers' queue when there are workers.
        names = [n.name for n in header.program.nodes]
        expected = ["getitem", "read", "decode"] + jpeg_data.TRANSFORM_NODES + ["collate"]
        if workers > 0:
            expected.append("prefetch")
        self.assertEqual(names, expected)
        self.assertEqual(header.program.output, expected[-1])
        ops = {n.name: n.op for n in header.program.nodes}
        self.assertEqual(ops["getitem"], "opaque")
        self.assertEqual(ops["collate"], "batch")
        self.assertEqual(ops["Normalize"], "map")
        collate = next(n for n in header.program.nodes if n.name == "collate")
        self.assertEqual(collate.batch.batch_size, BATCH)
        self.assertEqual(collate.batch.parallelism, workers if workers > 1 else 0)
        # The header's DataLoader configuration.
        cfg = header.imported.dataloader
        self.assertEqual(cfg.num_workers, workers)
        self.assertEqual(cfg.batch_size, BATCH)
        self.assertEqual(cfg.prefetch_factor, 2)
        self.assertEqual(cfg.persistent_workers, persistent)
        self.assertTrue(cfg.shuffle)
        self.assertFalse(cfg.pin_memory)
        self.assertFalse(cfg.drop_last)
        self.assertEqual(cfg.dataset_length, SAMPLES)
        self.assertTrue(header.imported.format.startswith("PyTorch DataLoader"))
        self.assertTrue(header.imported.thread_cpu)
        self.assertTrue(any("not traced" in n for n in header.imported.notes))
        # Snapshots: several, and the last counts every sample processed.
        self.assertGreater(len(snapshots), 1)
        last = {n.name: n for n in snapshots[-1].nodes}
        for name in ["getitem", "read", "decode"] + jpeg_data.TRANSFORM_NODES:
            self.assertEqual(last[name].elements_produced, SAMPLES * EPOCHS, name)
            self.assertGreater(last[name].self_wall_ns, 0, name)
        self.assertEqual(last["read"].bytes_produced,
                         EPOCHS * sum(os.path.getsize(p) for p in self.paths))
        self.assertEqual(last["Normalize"].bytes_produced, SAMPLES * EPOCHS * 3 * 32 * 32 * 4)
        self.assertGreater(last["decode"].active_cpu_ns, 0)
        self.assertEqual(last["getitem"].cardinality, SAMPLES)
        batches = SAMPLES // BATCH * EPOCHS
        self.assertEqual(last["collate"].elements_produced, batches)
        self.assertEqual(last["collate"].elements_consumed, SAMPLES * EPOCHS)
        self.assertEqual(snapshots[-1].root.next_calls, batches)
        self.assertGreater(snapshots[-1].root.wait_ns, 0)
        dl = snapshots[-1].dataloader
        self.assertEqual(dl.epochs, EPOCHS)
        if workers == 0:
            self.assertEqual(dl.workers_started, 0)
        else:
            self.assertEqual(last["prefetch"].elements_produced, batches)
            self.assertEqual(last["prefetch"].buffer_capacity, 2 * workers)
            self.assertEqual(dl.workers_started, workers * (1 if persistent else EPOCHS))
            self.assertGreater(dl.worker_start_ns, 0)
            # Each epoch's end is waited for: a pool that does not persist
            # is shut down then, so its wait is at least the joins'.
            self.assertGreater(dl.epoch_end_wait_ns, 0)
        # plumber itself reads it: valid, and the model runs.
        rc, out, err = plumber("validate", path)
        self.assertEqual(rc, 0, out + err)
        rc, out, err = plumber("analyze", path)
        self.assertEqual(rc, 0, out + err)
        for name in ["decode", "RandomResizedCrop", "collate"]:
            self.assertIn(name, out)
        self.assertIn("imported from:        PyTorch DataLoader", out)
        self.assertIn("num_workers=%d, batch_size=%d, prefetch_factor=2, persistent_workers=%s" %
                      (workers, BATCH, persistent), out)
        rc, out, err = plumber("analyze", path, "--format", "json")
        self.assertEqual(rc, 0, err)
        report = json.loads(out)
        self.assertIsNotNone(report)
        # plumber's own schema knows the DataLoader's fields: they survive
        # its conversion to JSON.
        as_json = path + ".json"
        rc, out, err = plumber("convert", path, as_json)
        self.assertEqual(rc, 0, out + err)
        with open(as_json) as f:
            converted = json.load(f)
        dataloader = converted["header"]["imported"]["dataloader"]
        self.assertEqual(dataloader.get("num_workers", 0), workers)
        self.assertEqual(dataloader["batch_size"], str(BATCH))
        self.assertEqual(converted["snapshots"][-1]["dataloader"]["epochs"], str(EPOCHS))
        rc, out, err = plumber("rank", path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("getitem", out)
        self.check_advice(path, workers, persistent)

    def check_advice(self, path, workers, persistent):
        # The machine's CPU, as plumber's own runs record it, so the analysis
        # can tell the cores the run really had.
        _, snapshots, _, _ = read_trace(path)
        self.assertTrue(snapshots[-1].HasField("machine_idle_ns"))
        self.assertGreater(snapshots[-1].machine_idle_ns + snapshots[-1].machine_busy_ns, 0)
        # The advice is the DataLoader call to write, priced by the
        # evaluator, and the workers are modelled as one pool.
        rc, out, err = plumber("analyze", path, "--format", "json")
        self.assertEqual(rc, 0, out + err)
        groups = {g["name"]: g for g in json.loads(out)["thread_groups"]}
        if workers:
            self.assertEqual(groups["DataLoader workers"]["threads"], workers)
            self.assertNotIn("collate's input lock", groups)
        else:
            self.assertEqual(list(groups), ["consumer"])
        rc, out, err = plumber("rewrite", path)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("DataLoader(dataset, batch_size=%d, num_workers=" % BATCH, out)
        for argument in ("num_workers", "prefetch_factor", "persistent_workers"):
            self.assertIn(argument + "=", out)
        rc, out, err = plumber("rewrite", path, "--format", "json")
        self.assertEqual(rc, 0, out + err)
        d = json.loads(out)["dataloader"]
        self.assertEqual(d["traced"]["num_workers"], workers)
        self.assertEqual(d["traced"]["persistent_workers"], persistent)
        self.assertEqual(set(d["advised"]), {"num_workers", "prefetch_factor", "persistent_workers", "pin_memory"})
        self.assertGreater(d["advised_prediction_batches_per_s"], 0)
        # The advised setting is the best the evaluator priced.
        best = max(c["prediction_batches_per_s"] for c in d["candidates"])
        self.assertGreaterEqual(d["advised_prediction_batches_per_s"], 0.995 * best)
        self.assertGreater(len(d["candidates"]), 8)
        for change in d["changes"]:
            self.assertEqual(str(d["traced"][change["argument"]]).lower(), change["before"].lower())
            self.assertTrue(change["why"])
        # The transforms begin with RandomResizedCrop: only the decoded
        # images can be cached.
        self.assertEqual(d["cache"]["first_random"], "RandomResizedCrop")
        self.assertEqual(d["cache"]["last_node"], "decode")
        self.assertEqual(d["cache"]["transforms"], 0)

    def test_no_workers(self):
        self.check_trace(self.run_traced(0, False), 0, False)

    def test_one_worker(self):
        self.check_trace(self.run_traced(1, False), 1, False)

    def test_one_persistent_worker(self):
        self.check_trace(self.run_traced(1, True), 1, True)

    def test_two_workers(self):
        self.check_trace(self.run_traced(2, False), 2, False)

    def test_two_persistent_workers(self):
        self.check_trace(self.run_traced(2, True), 2, True)

    def test_check_and_diff(self):
        # The CI gate and the comparison of two runs read these traces too.
        a = self.run_traced(1, False)
        b = self.run_traced(1, True)
        rc, out, err = plumber("check", a, "--min-throughput", "0.01/s")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = plumber("check", a, "--min-throughput", "1000000/s")
        self.assertEqual(rc, 1, out + err)
        rc, out, err = plumber("diff", a, b)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("program: unchanged", out)
        self.assertIn("RandomResizedCrop", out)

    def test_killed_mid_epoch(self):
        path = os.path.join(self.tmp, "killed.pb")
        env = dict(os.environ)
        env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
        # Output to files, not pipes: the orphaned workers would hold a pipe
        # open until they notice their parent is gone.
        with open(os.path.join(self.tmp, "killed.log"), "w") as log:
            r = subprocess.run([sys.executable, os.path.join(HERE, "killed_run.py"), self.jpegs, path, "3"],
                               stdout=log, stderr=log, env=env, timeout=300)
        self.assertEqual(r.returncode, -9)
        header, snapshots, end, torn = read_trace(path)
        self.assertIsNone(end)
        self.assertGreater(len(snapshots), 1)
        # The first epoch's samples at least, and no more than were sent.
        produced = {n.name: n.elements_produced for n in snapshots[-1].nodes}
        self.assertGreaterEqual(produced["getitem"], SAMPLES)
        self.assertLessEqual(produced["getitem"], 2 * SAMPLES)
        rc, out, err = plumber("validate", path)
        self.assertEqual(rc, 0, out + err)
        rc, out, err = plumber("analyze", path)
        self.assertEqual(rc, 0, out + err)
        # Cut inside the last record too: a torn tail, still readable.
        with open(path, "rb") as f:
            data = f.read()
        cut = os.path.join(self.tmp, "cut.pb")
        with open(cut, "wb") as f:
            f.write(data[:-7])
        _, cut_snapshots, _, torn = read_trace(cut)
        self.assertIsNotNone(torn)
        self.assertEqual(len(cut_snapshots), len(snapshots) - 1)
        rc, out, err = plumber("validate", cut)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("ends inside a record", out + err)
        rc, out, err = plumber("analyze", cut)
        self.assertEqual(rc, 0, out + err)


if __name__ == "__main__":
    unittest.main()
