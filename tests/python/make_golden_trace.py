"""Writes testdata/traces/torch_dataloader.pb, the committed DataLoader trace
of the golden cases rewrite_torch*: 48 small JPEGs, a deterministic Resize
before the random augmentations (so the advice has a prefix to cache), batch
8, 2 workers that do not persist, 3 epochs. Run once, from the repository:

    PYTHONPATH=python:tests/python:build/python /usr/bin/python3 tests/python/make_golden_trace.py

The trace is a measurement: rerunning it changes the golden output."""

import os
import shutil
import tempfile

import torch
import torchvision.transforms as T

import jpeg_data
import plumber_torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    torch.set_num_threads(1)
    tmp = tempfile.mkdtemp(prefix="plumber_torch_golden_")
    try:
        paths = jpeg_data.write_jpegs(tmp, 48)
        transform = T.Compose([
            T.Resize(40),
            T.RandomResizedCrop(32),
            T.RandomHorizontalFlip(),
            T.ToTensor(),
            T.Normalize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25]),
        ])
        loader = torch.utils.data.DataLoader(jpeg_data.JpegFiles(paths, transform), batch_size=8, shuffle=True,
                                             num_workers=2)
        out = os.path.join(ROOT, "testdata", "traces", "torch_dataloader.pb")
        traced = plumber_torch.traced(loader, out, snapshot_every=0.05)
        for _ in range(3):
            for _ in traced:
                pass
        traced.close()
        print(out)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
