"""plumber_torch: trace a PyTorch DataLoader into a plumber trace.

    loader = plumber_torch.traced(loader, "trace.pb")

and, inside a dataset's __getitem__, optionally

    with plumber_torch.stage("read") as s:
        data = f.read()
        s.bytes = len(data)

and, where `plumber rewrite` advises it, the cache of a dataset's
deterministic prefix

    dataset = plumber_torch.CachedPrefix(dataset, 1)

docs/pytorch.md says what is traced and what is not."""

from .stage import stage

__version__ = "0.1.0"


def traced(loader, path, snapshot_every=1.0):
    """Wraps `loader` (a torch.utils.data.DataLoader) so that iterating it
    writes a plumber trace to `path`. See TracedLoader."""
    from .tracer import TracedLoader
    return TracedLoader(loader, path, snapshot_every=snapshot_every)


def CachedPrefix(dataset, transforms):  # noqa: N802 (a class to its users)
    """See cached.CachedPrefix (imported here lazily: it needs torch)."""
    from .cached import CachedPrefix as cls
    return cls(dataset, transforms)


__all__ = ["traced", "stage", "CachedPrefix", "__version__"]
