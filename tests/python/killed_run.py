"""Run by test_dataloader: traces a DataLoader over the JPEGs in argv[1]
with two workers, writing argv[2], and SIGKILLs itself after argv[3]
batches of its second epoch, so nothing gets to close the trace."""

import os
import signal
import sys

import torch

import jpeg_data
import plumber_torch

torch.set_num_threads(1)
paths = sorted(os.path.join(sys.argv[1], f) for f in os.listdir(sys.argv[1]) if f.endswith(".jpg"))
loader = torch.utils.data.DataLoader(jpeg_data.JpegFiles(paths, jpeg_data.image_transform()), batch_size=4,
                                     shuffle=True, num_workers=2)
loader = plumber_torch.traced(loader, sys.argv[2], snapshot_every=0.01)
for _ in loader:
    pass
for k, _ in enumerate(loader):
    if k + 1 == int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)
sys.exit("killed_run: the epoch ended before batch %s" % sys.argv[3])
