// Concurrency stress: many small pipelines built from the threaded datasets
// (parallel map, parallel interleave, parallel batch, prefetch with a
// one-element buffer, shuffle with tiny buffers), each opened, pulled for a
// random number of elements (none, some, all) and closed or destroyed,
// sometimes cancelled from another thread mid-pull, sometimes failing on an
// element while workers run ahead. Meant to run under ThreadSanitizer too.
//
// Every pull and every Close runs on a helper thread under a watchdog: a
// deadlock or lost wakeup fails the test with a message saying which
// iteration and pipeline hung, and aborts, so that CI reports it instead of
// stalling until its own timeout.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "harness.h"
#include "runtime/compression.h"
#include "traceio/record_io.h"

namespace plumber::runtime::testing {
namespace {

constexpr double kWatchdogSeconds = 10;

// Runs fn on a helper thread and returns its result, or reports the hang
// and aborts if it does not return within kWatchdogSeconds.
template <typename T>
T Within(const std::string& what, std::function<T()> fn) {
  std::packaged_task<T()> task(std::move(fn));
  std::future<T> done = task.get_future();
  std::thread helper(std::move(task));
  if (done.wait_for(std::chrono::duration<double>(kWatchdogSeconds)) != std::future_status::ready) {
    std::fprintf(stderr, "\nstress_test: FAILED: %s did not return within %.0f s (a deadlock or lost wakeup)\n",
                 what.c_str(), kWatchdogSeconds);
    std::fflush(stderr);
    std::abort();
  }
  helper.join();
  return done.get();
}

// Input files shared by all iterations.
struct Inputs {
  TempDir dir;
  static constexpr int kLines = 20;      // per text file
  static constexpr int kRecords = 20;    // per TFRecord file
  static constexpr int kBadRecord = 13;  // the element that fails, in bad.tfrecord / torn.tfrecord
  std::string text_files;                // JSON list of three text files
  std::string zlib_files;                // JSON list: two good files and bad.tfrecord
  std::string corrupt_files;             // JSON list: two good files and corrupt.tfrecord

  Inputs() {
    std::string lists[3];
    for (int f = 0; f < 3; ++f) {
      std::string text;
      for (int i = 0; i < kLines; ++i) text += "f" + std::to_string(f) + " line " + std::to_string(i) + "\n";
      const std::string name = dir.File("t" + std::to_string(f) + ".txt");
      WriteText(name, text);
      text_files += (f ? "," : "") + ("\"" + name + "\"");
    }
    auto records = [](int file, int bad_at, bool corrupt) {
      std::string data;
      for (int i = 0; i < kRecords; ++i) {
        auto z = Compress(Codec::kZlib, "payload " + std::to_string(file) + "/" + std::to_string(i));
        REQUIRE(z.ok());
        std::string frame = FrameRecord(i == bad_at && !corrupt ? std::string("not a zlib stream") : *z);
        // A flipped payload byte: the reader's checksum catches it.
        if (i == bad_at && corrupt) frame[kRecordHeaderBytes] ^= 0x20;
        data += frame;
      }
      return data;
    };
    for (int f = 0; f < 2; ++f) {
      const std::string name = dir.File("z" + std::to_string(f) + ".tfrecord");
      WriteText(name, records(f, -1, false));
      zlib_files += "\"" + name + "\",";
      corrupt_files += "\"" + name + "\",";
    }
    WriteText(dir.File("bad.tfrecord"), records(2, kBadRecord, false));
    WriteText(dir.File("corrupt.tfrecord"), records(2, kBadRecord, true));
    zlib_files += "\"" + dir.File("bad.tfrecord") + "\"";
    corrupt_files += "\"" + dir.File("corrupt.tfrecord") + "\"";
  }
};

enum class Kind { kRange, kLines, kUdfError, kReadError };

struct Plan {
  Kind kind;
  std::vector<std::string> nodes;
  std::vector<std::string> extra;
  // Elements a full pass yields when it ends cleanly (kRange, kLines).
  int64_t expected = 0;
  // Sum of all values of a full pass (kRange without drop_remainder), or -1.
  int64_t expected_sum = -1;
  std::string summary;
};

int Pick(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
bool Coin(std::mt19937& rng) { return rng() % 2 == 0; }
std::string B(bool b) { return b ? "true" : "false"; }

// A random pipeline of the threaded datasets over one of the inputs.
Plan RandomPlan(std::mt19937& rng, const Inputs& in) {
  Plan p;
  p.kind = static_cast<Kind>(Pick(rng, 0, 3));
  int64_t elements = 0;
  switch (p.kind) {
    case Kind::kRange: {
      const int sizes[] = {0, 1, 7, 40, 150};
      const int n = sizes[Pick(rng, 0, 4)];
      p.nodes.push_back(R"({"name":"src","op":"range","range":{"stop":)" + std::to_string(n) + "}}");
      int64_t reps = 1;
      if (Coin(rng)) {
        reps = 2;
        p.nodes.push_back(R"({"name":"rep","op":"repeat","repeat":{"count":2}})");
      }
      elements = n * reps;
      // Every value gains 1: the sum of a full pass is reps * (1 + ... + n).
      p.expected_sum = reps * n * (n + 1) / 2;
      p.nodes.push_back(R"({"name":"m","op":"map","map":{"parallelism":)" + std::to_string(Pick(rng, 2, 8)) +
                        R"(,"deterministic":)" + B(Coin(rng)) +
                        R"(,"udf":[{"op":"add","args":{"value":1}},{"op":"cpu_burn","args":{"micros":)" +
                        std::to_string(Pick(rng, 0, 30)) + "}}]}}");
      break;
    }
    case Kind::kLines:
    case Kind::kUdfError:
    case Kind::kReadError: {
      const std::string& files =
          p.kind == Kind::kLines ? in.text_files : p.kind == Kind::kUdfError ? in.zlib_files : in.corrupt_files;
      p.nodes.push_back(R"({"name":"files","op":"list_files","list_files":{"files":[)" + files + "]}}");
      const int cycle = Pick(rng, 1, 3);
      p.nodes.push_back(R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":)" +
                        std::to_string(cycle) + R"(,"block_length":)" + std::to_string(Pick(rng, 1, 2)) +
                        R"(,"parallelism":)" + std::to_string(Pick(rng, std::min(cycle, 2), cycle)) +
                        R"(,"deterministic":)" + B(Coin(rng)) + "}}");
      p.extra.push_back(p.kind == Kind::kLines ? R"({"name":"read","op":"text_line"})"
                                               : R"({"name":"read","op":"tfrecord"})");
      elements = 3 * (p.kind == Kind::kLines ? Inputs::kLines : Inputs::kRecords);
      const std::string udf = p.kind == Kind::kLines ? R"({"op":"sleep","args":{"micros":)" +
                                                           std::to_string(Pick(rng, 0, 100)) + "}}"
                                                     : R"({"op":"decompress","args":{"format":"zlib"}})";
      p.nodes.push_back(R"({"name":"m","op":"map","map":{"parallelism":)" + std::to_string(Pick(rng, 2, 8)) +
                        R"(,"deterministic":)" + B(Coin(rng)) + R"(,"udf":[)" + udf + "]}}");
      break;
    }
  }
  if (Coin(rng)) p.nodes.push_back(R"({"name":"pm","op":"prefetch","prefetch":{"buffer_size":1}})");
  if (Coin(rng)) {
    p.nodes.push_back(R"({"name":"sh","op":"shuffle","shuffle":{"buffer_size":)" + std::to_string(Pick(rng, 1, 4)) +
                      R"(,"seed":)" + std::to_string(Pick(rng, 0, 99)) + "}}");
  }
  const int batch = Pick(rng, 1, 3);
  const bool drop = Coin(rng);
  p.nodes.push_back(R"({"name":"b","op":"batch","batch":{"batch_size":)" + std::to_string(batch) +
                    R"(,"drop_remainder":)" + B(drop) + R"(,"parallelism":)" + std::to_string(Pick(rng, 1, 3)) + "}}");
  p.nodes.push_back(R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":1}})");
  p.expected = drop ? elements / batch : (elements + batch - 1) / batch;
  if (drop && elements % batch != 0) p.expected_sum = -1;  // which ones are dropped depends on order
  for (const auto& n : p.nodes) {
    const size_t at = n.find("\"op\":\"") + 6;
    p.summary += (p.summary.empty() ? "" : " > ") + n.substr(at, n.find('"', at) - at);
  }
  return p;
}

// What one pass saw, gathered on the helper thread (Catch2's assertions
// are for the test's own thread).
struct Pulled {
  int64_t elements = 0;
  int64_t sum = 0;
  bool end = false;
  Status status;
};

// The run loop's situation: the consumer closes the pipeline after its
// time limit while the monitor thread, seeing the limit too, cancels it
// again. Parallel interleave used to reset its open datasets in Close
// without its lock while Cancel walked them under it.
TEST_CASE("Cancel from another thread while Close runs is safe", "[stress]") {
  Inputs inputs;
  for (int round = 0; round < 30; ++round) {
    INFO("round " << round);
    Harness h(Chain({R"({"name":"files","op":"list_files","list_files":{"files":[)" + inputs.text_files + "]}}",
                     R"({"name":"x","op":"repeat"})",
                     R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":3,"parallelism":3}})",
                     R"({"name":"m","op":"map","map":{"parallelism":2,"udf":[{"op":"sleep","args":{"micros":50}}]}})",
                     R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":1}})"},
                    {R"({"name":"read","op":"text_line"})"}));
    REQUIRE(h.build_status().ok());
    auto opened = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
    REQUIRE(opened.ok());
    std::shared_ptr<Iterator> it(std::move(opened).value());
    const int pulled = Within<int>("pulling in round " + std::to_string(round), [it] {
      int n = 0;
      for (; n < 20; ++n) {
        Element e;
        bool end = false;
        if (!it->GetNext(&e, &end).ok() || end) break;
      }
      cpu::Flush();
      return n;
    });
    CHECK(pulled == 20);
    Within<int>("closing in round " + std::to_string(round), [it = std::move(it)]() mutable {
      std::atomic<bool> closed{false};
      std::thread monitor([&] {
        while (!closed.load()) {
          it->Cancel();
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
      });
      it->Close();
      closed.store(true);
      monitor.join();
      it.reset();
      cpu::Flush();
      return 0;
    });
  }
}

// PLUMBER_STRESS_SEED and PLUMBER_STRESS_ITERATIONS override the defaults,
// for longer hunts than CI affords (a failure names its seed).
int64_t EnvOr(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : fallback;
}

TEST_CASE("threaded pipelines open, pull and close cleanly in any state", "[stress]") {
  Inputs inputs;
  const int64_t seed = EnvOr("PLUMBER_STRESS_SEED", 424242);
  const int kIterations = static_cast<int>(EnvOr("PLUMBER_STRESS_ITERATIONS", 200));
  INFO("seed " << seed);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  int drained = 0, partial = 0, untouched = 0, failed = 0, cancelled = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int iter = 0; iter < kIterations; ++iter) {
    const Plan plan = RandomPlan(rng, inputs);
    const std::string what = "iteration " + std::to_string(iter) + " (" + plan.summary + ")";
    INFO(what);
    Harness h(Chain(plan.nodes, plan.extra), {}, /*tracing=*/Coin(rng));
    REQUIRE(h.build_status().ok());
    auto opened = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
    REQUIRE(opened.ok());
    std::shared_ptr<Iterator> it(std::move(opened).value());

    // None, one, a few, or all elements (-1).
    const int64_t limits[] = {0, 1, Pick(rng, 2, 12), -1, -1};
    const int64_t limit = limits[Pick(rng, 0, 4)];
    // Now and then another thread cancels in the middle of the pulls.
    const bool cancel = limit != 0 && rng() % 6 == 0;
    const int cancel_after_us = Pick(rng, 0, 3000);

    Pulled got = Within<Pulled>("pulling in " + what, [it, limit, cancel, cancel_after_us] {
      std::thread canceller;
      if (cancel) {
        canceller = std::thread([it, cancel_after_us] {
          std::this_thread::sleep_for(std::chrono::microseconds(cancel_after_us));
          it->Cancel();
        });
      }
      Pulled r;
      while (limit < 0 || r.elements < limit) {
        Element e;
        r.status = it->GetNext(&e, &r.end);
        if (!r.status.ok() || r.end) break;
        ++r.elements;
        for (const auto& t : e) {
          if (t.dtype() == DType::kInt64) {
            for (int64_t k = 0; k < t.NumElements(); ++k) r.sum += t.GetInt(k);
          }
        }
      }
      if (canceller.joinable()) canceller.join();
      cpu::Flush();  // this thread ran sequential nodes; settle before it ends
      return r;
    });

    // Close and destroy, or destroy alone (the destructor must close).
    // Cancel may come from any thread at any time, also while Close runs:
    // a run's monitor cancels on its deadline while the consumer closes.
    const bool explicit_close = Coin(rng);
    const bool cancel_while_closing = explicit_close && rng() % 4 == 0;
    Within<int>("closing " + what, [it = std::move(it), explicit_close, cancel_while_closing]() mutable {
      std::atomic<bool> closed{false};
      std::thread hammer;
      if (cancel_while_closing) {
        hammer = std::thread([&] {
          while (!closed.load()) {
            it->Cancel();
            // Often, but leaving the cores to Close and its workers.
            std::this_thread::sleep_for(std::chrono::microseconds(50));
          }
        });
      }
      if (explicit_close) it->Close();
      closed.store(true);
      if (hammer.joinable()) hammer.join();
      it.reset();
      cpu::Flush();
      return 0;
    });

    INFO("pulled " << got.elements << ", end " << got.end << ", status " << got.status.ToString());
    if (cancel && got.status.code() == Status::Code::kCancelled) {
      ++cancelled;
      continue;  // the cancel won the race; nothing else is promised
    }
    // A clean pass is the only way to the end; errors only where planted.
    const bool errs = plan.kind == Kind::kUdfError || plan.kind == Kind::kReadError;
    if (!got.status.ok()) {
      ++failed;
      REQUIRE(errs);
      CHECK_THAT(got.status.message(), Catch::Contains("bad.tfrecord") || Catch::Contains("corrupt.tfrecord") ||
                                           Catch::Contains("node 'm'"));
      if (plan.kind == Kind::kUdfError) CHECK_THAT(got.status.message(), Catch::Contains("decompress"));
      if (plan.kind == Kind::kReadError) CHECK_THAT(got.status.message(), Catch::Contains("checksum"));
      continue;
    }
    if (got.end) {
      ++drained;
      // A drained pass of a failing pipeline must have met its error.
      CHECK_FALSE(errs);
      CHECK(got.elements == plan.expected);
      if (plan.kind == Kind::kRange && plan.expected_sum >= 0) CHECK(got.sum == plan.expected_sum);
    } else {
      got.elements == 0 ? ++untouched : ++partial;
      CHECK(got.elements == limit);
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Every kind of ending happened, or the test exercised less than it says.
  CHECK(drained > kIterations / 20);
  CHECK(partial > kIterations / 20);
  CHECK(untouched > kIterations / 20);
  CHECK(failed > kIterations / 20);
  WARN("stress: " << kIterations << " iterations in " << secs << " s: " << drained << " drained, " << partial
                  << " partial, " << untouched << " untouched, " << failed << " failed, " << cancelled
                  << " cancelled");
}

}  // namespace
}  // namespace plumber::runtime::testing
