#!/usr/bin/python3
"""The DataLoader bench: an image-classification loader and a text loader,
each run over a grid of num_workers x persistent_workers x prefetch_factor,
untraced and traced. First the setting people start from (2 workers, not
persistent, prefetch_factor 2) is traced --repeats times and analyzed; the
trace whose as-traced prediction is their median gets `plumber rewrite`,
and its advised setting joins the grid. Reports, per loader: the advised
setting's samples/s over the grid's best, the as-traced prediction's error,
the advised setting's prediction error, and the tracing overhead (traced /
untraced samples/s at each grid point, their median).

Runs alternate (every grid point once, then again, ...) after one
warm-up run, and each figure is the median of --repeats runs; a run is 4
epochs, a few seconds, since one-second runs vary by 10% here. Run it on an idle machine for figures worth
recording; --tiny is a smoke test (a small grid, small data, 1 repeat).

    PYTHONPATH=python:build/python /usr/bin/python3 bench/torch/grid.py \\
        --plumber build/apps/plumber-cli/plumber [--tiny] [--out results.json]
"""

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torchvision.transforms as T
from PIL import Image

import plumber_torch


# --- the image loader: JPEG files, read and decode marked, a deterministic
# resize, then the random augmentations of image classification.

def write_jpegs(directory, count, width, height):
    rng = random.Random(1)
    paths = []
    for k in range(count):
        img = Image.new("RGB", (width, height), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
        for _ in range(200):
            img.putpixel((rng.randrange(width), rng.randrange(height)), (255, 255, 255))
        p = os.path.join(directory, "img%05d.jpg" % k)
        img.save(p, quality=90)
        paths.append(p)
    return paths


class JpegDataset(torch.utils.data.Dataset):
    def __init__(self, paths):
        self.paths = paths
        self.transform = T.Compose([
            T.Resize(128),
            T.RandomResizedCrop(96),
            T.RandomHorizontalFlip(),
            T.ToTensor(),
            T.Normalize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25]),
        ])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with plumber_torch.stage("read") as s:
            with open(self.paths[i], "rb") as f:
                data = f.read()
            s.bytes = len(data)
        with plumber_torch.stage("decode"):
            img = Image.open(io.BytesIO(data)).convert("RGB")
        return self.transform(img), i % 10


# --- the text loader: lines of words, tokenized by hashing, truncated or
# padded to a fixed length, with random token dropout.

class Tokenize:
    def __init__(self, length):
        self.length = length

    def __call__(self, line):
        ids = [hash(w) % 30000 for w in line.split()][:self.length]
        return torch.tensor(ids + [0] * (self.length - len(ids)), dtype=torch.long)


class RandomTokenDropout:
    def __call__(self, ids):
        keep = torch.rand(ids.shape) > 0.1
        return ids * keep


class TextDataset(torch.utils.data.Dataset):
    def __init__(self, path, length):
        with open(path) as f:
            self.offsets = []
            pos = 0
            for line in f:
                self.offsets.append(pos)
                pos += len(line.encode())
        self.path = path
        self.transform = T.Compose([Tokenize(length), RandomTokenDropout()])

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        with plumber_torch.stage("read"):
            with open(self.path, "rb") as f:
                f.seek(self.offsets[i])
                line = f.readline().decode()
        return self.transform(line), len(line) % 2


def write_text(path, lines):
    rng = random.Random(2)
    words = ["w%d" % k for k in range(5000)]
    with open(path, "w") as f:
        for _ in range(lines):
            f.write(" ".join(rng.choice(words) for _ in range(rng.randrange(20, 200))) + "\n")


# --- runs

def run(dataset, batch, setting, epochs, trace=None):
    workers, persistent, pf = setting
    kw = {}
    if workers > 0:
        kw = {"persistent_workers": persistent, "prefetch_factor": pf}
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers, **kw)
    if trace:
        loader = plumber_torch.traced(loader, trace)
    samples = 0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for x, _ in loader:
            samples += x.shape[0]
    dt = time.perf_counter() - t0
    if trace:
        loader.close()
    del loader
    return samples / dt


def plumber_json(binary, *args):
    out = subprocess.run([binary] + list(args) + ["--format", "json"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return json.loads(out)


def bench(name, dataset, batch, grid, epochs, repeats, binary, tmp):
    start = (2, False, 2) if (2, False, 2) in grid else grid[-1]
    run(dataset, batch, start, epochs)  # warm-up: the page cache, torch's first use; not counted
    # The advice first, from one of `repeats` traces of the start setting
    # (the one whose as-traced prediction is their median), so the advised
    # setting can run alternated with the grid below.
    predictions = []
    for r in range(repeats):
        trace = os.path.join(tmp, "%s_start_%d.pb" % (name, r))
        run(dataset, batch, start, epochs, trace)
        analysis = plumber_json(binary, "analyze", trace)
        predictions.append(((analysis.get("as_traced") or {}).get("predicted_throughput") or 0, trace))
    predictions.sort()
    as_traced, trace = predictions[len(predictions) // 2]
    advice = plumber_json(binary, "rewrite", trace)["dataloader"]
    a = advice["advised"]
    advised = (a["num_workers"], a["persistent_workers"] if a["num_workers"] else False,
               a["prefetch_factor"] if a["num_workers"] else 2)
    settings = grid + ([advised] if advised not in grid else [])
    untraced = {s: [] for s in settings}
    traced = {s: [] for s in grid}
    for r in range(repeats):
        for s in settings:  # alternated: every setting once per round
            untraced[s].append(run(dataset, batch, s, epochs))
            if s in traced:
                traced[s].append(run(dataset, batch, s, epochs, os.path.join(tmp, "%s.pb" % name)))
    med = {s: statistics.median(v) for s, v in untraced.items()}
    overhead = statistics.median(statistics.median(traced[s]) / med[s] for s in grid)
    best = max(grid, key=med.get)
    result = {
        "loader": name,
        "epochs": epochs,
        "samples": len(dataset),
        "grid": [{"num_workers": s[0], "persistent_workers": s[1], "prefetch_factor": s[2],
                  "samples_per_s": med[s], "traced_samples_per_s": statistics.median(traced[s])} for s in grid],
        "grid_best": {"setting": list(best), "samples_per_s": med[best]},
        "start_setting": list(start),
        "advised": {"setting": list(advised), "samples_per_s": med[advised],
                    "predicted_samples_per_s": advice["advised_prediction_batches_per_s"] * batch},
        "advised_over_grid_best": med[advised] / med[best],
        "as_traced_predictions_samples_per_s": [p * batch for p, _ in predictions],
        "as_traced_predicted_samples_per_s": as_traced * batch if as_traced else None,
        "as_traced_error": (as_traced * batch / med[start] - 1) if as_traced else None,
        "advised_error": advice["advised_prediction_batches_per_s"] * batch / med[advised] - 1,
        "tracing_overhead": overhead,
    }
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plumber", required=True, help="the plumber binary")
    ap.add_argument("--tiny", action="store_true", help="smoke test: small data, small grid, 1 repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", help="write the results here as JSON")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.tiny:
        grid = [(0, False, 2), (2, False, 2), (2, True, 2)]
        images, lines, epochs, repeats = 48, 400, 2, 1
    else:
        grid = [(0, False, 2)] + [(w, p, f) for w in (1, 2, 4) for p in (False, True) for f in (2, 4)]
        images, lines, epochs, repeats = 600, 12000, 4, args.repeats
    load = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="plumber_torch_bench_")
    os.mkdir(os.path.join(tmp, "jpegs"))
    paths = write_jpegs(os.path.join(tmp, "jpegs"), images, 320, 240)
    write_text(os.path.join(tmp, "text.txt"), lines)
    results = [
        bench("image", JpegDataset(paths), 32, grid, epochs, repeats, args.plumber, tmp),
        bench("text", TextDataset(os.path.join(tmp, "text.txt"), 128), 64, grid, epochs, repeats, args.plumber, tmp),
    ]
    report = {"cores": len(os.sched_getaffinity(0)), "load_before": load, "load_after": os.getloadavg(),
              "tiny": args.tiny, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f" % (load + os.getloadavg()))
    print("| loader | grid best (samples/s) | advised | advised/best | as-traced error | advised error | "
          "tracing overhead |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        b = r["grid_best"]
        a = r["advised"]
        err = r["as_traced_error"]
        print("| %s | %.1f %s | %.1f %s | %.2f | %s | %+.0f%% | %.3f |" % (
            r["loader"], b["samples_per_s"], tuple(b["setting"]), a["samples_per_s"], tuple(a["setting"]),
            r["advised_over_grid_best"], "n/a" if err is None else "%+.0f%%" % (100 * err),
            100 * r["advised_error"], r["tracing_overhead"]))


if __name__ == "__main__":
    sys.exit(main())
