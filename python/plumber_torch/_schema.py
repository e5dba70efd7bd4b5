"""The generated protobuf modules of schemas/trace.proto and pipeline.proto.
The build writes them to build/python (protoc --python_out); that directory
must be on sys.path (PYTHONPATH), as docs/pytorch.md says."""

try:
    import pipeline_pb2  # noqa: F401  (trace_pb2 imports it by this name)
    import trace_pb2
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        "plumber_torch needs the Python modules generated from schemas/*.proto: build plumber "
        "(scripts/build.sh writes them to build/python) and put that directory on PYTHONPATH "
        "(" + str(e) + ")") from e

__all__ = ["pipeline_pb2", "trace_pb2"]
