"""CachedPrefix: the cache `plumber rewrite` advises on a DataLoader's trace.

The deterministic prefix of a dataset's transforms (reading, decoding and the
leading transforms up to the first random one) gives the same sample every
epoch, so it is computed once, in the main process before the DataLoader
starts its workers: forked workers then share it, and a worker that restarts
at an epoch finds it still there. The random transforms after it run on every
sample as before."""

import torch


class CachedPrefix(torch.utils.data.Dataset):
    """Wraps `dataset`, whose `transform` is a torchvision `Compose` applied to
    the first item of what `__getitem__` returns (as torchvision's datasets
    do), and caches each sample after the Compose's first `transforms`
    transforms. `transform` of the wrapper is the rest, so a traced loader
    still sees each of them as a stage.

        dataset = plumber_torch.CachedPrefix(dataset, 1)
    """

    def __init__(self, dataset, transforms):
        compose = getattr(dataset, "transform", None)
        steps = getattr(compose, "transforms", None)
        if steps is None:
            raise TypeError("CachedPrefix needs a dataset whose transform is a torchvision Compose")
        if not 0 <= transforms <= len(steps):
            raise ValueError("transforms must be between 0 and %d, the Compose's length" % len(steps))
        prefix = type(compose)(list(steps[:transforms]))
        self.transform = type(compose)(list(steps[transforms:]))
        dataset.transform = prefix
        try:
            self._items = [dataset[i] for i in range(len(dataset))]
        finally:
            dataset.transform = compose
        self.prefix = prefix

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        item = self._items[i]
        if isinstance(item, tuple):
            return (self.transform(item[0]),) + item[1:]
        return self.transform(item)
