#!/usr/bin/python3
"""Writes the PipelineSnapshot fixtures' text form from the hand-chosen
numbers below (README.md works the analysis out from the same numbers).
Encode each with
  protoc --encode=plumber.tfsnap.PipelineSnapshot -I schemas \
    schemas/pipeline_snapshot.proto < X.pbtxt > X.pb
(from the repository root); both forms are committed."""

GRAPH = '''graph {
  node { name: "Const/_0" op: "Const" }
  node { name: "TensorSliceDataset/_1" op: "TensorSliceDataset" input: "Const/_0" }
  node { name: "Const/_2" op: "Const" attr { key: "value" value { tensor { int64_val: 4 } } } }
  node { name: "Const/_3" op: "Const" attr { key: "value" value { tensor { int64_val: 1 } } } }
  node { name: "Const/_4" op: "Const" attr { key: "value" value { tensor { int64_val: -1 } } } }
  node { name: "Const/_5" op: "Const" attr { key: "value" value { tensor { int64_val: -1 } } } }
  node { name: "Const/_6" op: "Const" attr { key: "value" value { tensor { int64_val: 2 } } } }
  node {
    name: "ParallelInterleaveDatasetV4/_7" op: "ParallelInterleaveDatasetV4"
    input: "TensorSliceDataset/_1" input: "Const/_2" input: "Const/_3" input: "Const/_4" input: "Const/_5"
    input: "Const/_6"
    attr { key: "f" value { func { name: "__inference_read_file_10" } } }
  }
  node { name: "Const/_8" op: "Const" attr { key: "value" value { tensor { int64_val: 4 } } } }
  node {
    name: "ParallelMapDatasetV2/_9" op: "ParallelMapDatasetV2"
    input: "ParallelInterleaveDatasetV4/_7" input: "Const/_8"
    attr { key: "f" value { func { name: "__inference_parse_20" } } }
  }
  node { name: "Const/_10" op: "Const" attr { key: "value" value { tensor { int64_val: 32 } } } }
  node { name: "Const/_11" op: "Const" }
  node {
    name: "BatchDatasetV2/_12" op: "BatchDatasetV2"
    input: "ParallelMapDatasetV2/_9" input: "Const/_10" input: "Const/_11"
  }
  node { name: "Const/_13" op: "Const" attr { key: "value" value { tensor { int64_val: 2 } } } }
  node { name: "PrefetchDataset/_14" op: "PrefetchDataset" input: "BatchDatasetV2/_12" input: "Const/_13" }
  node { name: "dataset" op: "_Retval" input: "PrefetchDataset/_14" }
  library {
    function {
      signature { name: "__inference_read_file_10" }
      node_def { name: "compression_type" op: "Const" }
      node_def { name: "buffer_size" op: "Const" attr { key: "value" value { tensor { int64_val: 262144 } } } }
      node_def {
        name: "TFRecordDataset" op: "TFRecordDataset"
        input: "args_0" input: "compression_type:output:0" input: "buffer_size:output:0"
      }
      ret { key: "identity" value: "TFRecordDataset:handle:0" }
    }
  }
}
'''

# name: (elements_produced, elements_consumed, bytes_produced, bytes_consumed,
#        processing_time (wall ns), processing_time_clock (CPU ns),
#        disk_bytes_read, parallelism, cardinality, max_buffer_size)
A = {
    "PrefetchDataset/_14": (2500, 2500, 320000000, 320000000, 15000000, 12500000, 0, 1, -2, 2),
    "BatchDatasetV2/_12": (2500, 80000, 320000000, 320000000, 150000000, 125000000, 0, 1, -2, 0),
    "ParallelMapDatasetV2/_9": (80000, 80000, 320000000, 80000000, 34000000000, 32000000000, 0, 4, -2, 4),
    "ParallelInterleaveDatasetV4/_7": (80000, 4, 80000000, 240, 200000000, 160000000, 0, 2, -2, 0),
    "TFRecordDataset": (80000, 0, 80000000, 0, 2400000000, 1600000000, 80000000, 1, -2, 0),
    "TensorSliceDataset/_1": (4, 0, 240, 0, 8000, 4000, 0, 1, 4, 0),
}
# Dump B, 20 s later: three times A's flow for every op that streams.
B = {
    "PrefetchDataset/_14": (7500, 7500, 960000000, 960000000, 45000000, 37500000, 0, 1, -2, 2),
    "BatchDatasetV2/_12": (7500, 240000, 960000000, 960000000, 450000000, 375000000, 0, 1, -2, 0),
    "ParallelMapDatasetV2/_9": (240000, 240000, 960000000, 240000000, 102000000000, 96000000000, 0, 4, -2, 4),
    "ParallelInterleaveDatasetV4/_7": (240000, 4, 240000000, 240, 600000000, 480000000, 0, 2, -2, 0),
    "TFRecordDataset": (240000, 0, 240000000, 0, 7200000000, 4800000000, 240000000, 1, -2, 0),
    "TensorSliceDataset/_1": (4, 0, 240, 0, 8000, 4000, 0, 1, 4, 0),
}
FILES = [("data/train-0.tfrecord", 100000000), ("data/train-1.tfrecord", 120000000),
         ("data/train-2.tfrecord", 80000000), ("data/train-3.tfrecord", 100000000)]
START = 1764000000000000000  # ns since the epoch


def stats(table):
    out = []
    for name, (ep, ec, bp, bc, pt, ptc, disk, par, card, buf) in table.items():
        out.append(f'''stats {{
  name: "{name}"
  parallelism: {par}
  aggregate_elements_produced: {ep}
  aggregate_processing_time: {pt}
  aggregate_processing_time_clock: {ptc}
  aggregate_bytes_produced: {bp}
  aggregate_bytes_consumed: {bc}
  aggregate_disk_bytes_read: {disk}
  aggregate_elements_consumed: {ec}
  cardinality: {card}
  aggregate_parallelism: {par}
  aggregate_max_buffer_size: {buf}
}}
''')
    return "".join(out)


def snapshot(table, seconds, process_cpu_s, comment):
    files = "".join(f'  file_sizes {{ name: "{n}" size: {s} }}\n' for n, s in FILES)
    return (f"# {comment}\n# Text form of plumber.tfsnap.PipelineSnapshot; written by make_fixtures.py.\n" +
            GRAPH + stats(table) + f'''machine_info {{
  num_cores: 8
  memory_free: 8589934592
  memory_total: 17179869184
  estimated_disk_bandwidth: 200000000
  num_hyperthreads_per_core: 2
  nominal_cpu_frequency: 2400
  model: "1585"
}}
ctx_info {{
  shared_threadpool_size: 8
{files}}}
iter_stats {{
  avg_duration: 480000
  var_duration: 1000000
  avg_wallclock_duration: 500000
}}
snapshot_info {{
  start_time: {START}
  current_time: {START + seconds * 1000000000}
  process_start_time: 1000000000
  process_current_time: {1000000000 + process_cpu_s * 1000000000}
}}
''')


with open("run_a.pbtxt", "w") as f:
    f.write(snapshot(A, 10, 35, "Dump A of one run, 10 s after the iterator was created."))
with open("run_b.pbtxt", "w") as f:
    f.write(snapshot(B, 30, 103, "Dump B of the same run, 30 s after the iterator was created."))
