"""Shared by the PyTorch tracer's tests: small JPEG files generated with PIL,
a map-style dataset over them that marks its read and decode stages, and the
transforms of a typical image pipeline."""

import io
import os

import torch
import torchvision.transforms as T
from PIL import Image

import plumber_torch


def write_jpegs(directory, count, width=64, height=48):
    """Writes `count` JPEGs of width x height with varied content; returns
    their paths."""
    paths = []
    for k in range(count):
        img = Image.new("RGB", (width, height), ((k * 37) % 256, (k * 91) % 256, 128))
        for x in range(0, width, 8):
            img.putpixel((x, (x + k) % height), (255, 255, 255))
        p = os.path.join(directory, "img%03d.jpg" % k)
        img.save(p, quality=90)
        paths.append(p)
    return paths


class JpegFiles(torch.utils.data.Dataset):
    """Reads and decodes one JPEG per sample, each step marked as a stage."""

    def __init__(self, paths, transform):
        self.paths = paths
        self.transform = transform

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


def image_transform():
    return T.Compose([
        T.RandomResizedCrop(32),
        T.RandomHorizontalFlip(),
        T.ToTensor(),
        T.Normalize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25]),
    ])


TRANSFORM_NODES = ["RandomResizedCrop", "RandomHorizontalFlip", "ToTensor", "Normalize"]
