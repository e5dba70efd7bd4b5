// Tracing accuracy: CPU time charged to the node doing the work (children
// excluded, worker threads included), elements and bytes attributed to the
// producer and the consumer. Bounds are loose enough for a loaded 2-core
// machine; bench/ reports the strict numbers.
#include <algorithm>
#include <atomic>
#include <thread>

#include "harness.h"
#include "runtime/udf.h"

namespace plumber::runtime::testing {
namespace {

schema::Pipeline BurnPipeline(int parallelism, int elements) {
  return Chain({R"({"name":"src","op":"range","range":{"stop":)" + std::to_string(elements) + "}}",
                R"({"name":"burn","op":"map","map":{"parallelism":)" + std::to_string(parallelism) +
                    R"(,"udf":[{"op":"cpu_burn","args":{"micros":1000}}]}})",
                R"({"name":"batch","op":"batch","batch":{"batch_size":32}})"});
}

TEST_CASE("map(cpu_burn 1000us) is charged about 1000us per element at parallelism 1 and 4", "[tracing]") {
  for (int p : {1, 4}) {
    INFO("parallelism " << p);
    Harness h(BurnPipeline(p, 128));
    auto out = h.All();
    REQUIRE(out.size() == 4);
    auto burn = h.Stats("burn");
    REQUIRE(burn.elements_produced() == 128);
    const double per_element_us = static_cast<double>(burn.active_cpu_ns()) / 128 / 1000;
    // What a 1000 us burn really costs right now: calibrated once, it costs
    // more CPU when other processes share the caches. Tracing must charge
    // what was spent, so compare with a direct measurement in this thread.
    const int64_t cpu0 = ThreadCpuNanos();
    uint64_t sink = 0;
    for (int i = 0; i < 32; ++i) sink += BurnLoop(static_cast<uint64_t>(1000 * BurnIterationsPerMicro()));
    const double direct_us = static_cast<double>(ThreadCpuNanos() - cpu0) / 32 / 1000;
    INFO("charged " << per_element_us << " us, a direct burn " << direct_us << " us (" << (sink & 1) << ")");
    // In the sanitizer builds the same burn measured 640 to 1320 us within
    // minutes (charged/direct 0.73 to 1.62), and that spread failed this
    // check before and after the sampling debts: there it only has to be
    // within a factor of two.
    const double low = kSanitized ? 0.5 : 0.75, high = kSanitized ? 2.0 : 1.25;
    CHECK(per_element_us > low * direct_us);
    CHECK(per_element_us < high * direct_us);
    CHECK(per_element_us > 500);  // and it is a millisecond-scale burn at all
    // Its parent and its input did not get the burn's time.
    // (Under CPU contention a few percent of the burn's time can land on
    // its neighbours, since CPU read between clock samples is split by wall
    // time; bench/ holds the strict numbers.)
    CHECK(h.Stats("batch").active_cpu_ns() < burn.active_cpu_ns() / 8);
    CHECK(h.Stats("src").active_cpu_ns() < burn.active_cpu_ns() / 8);
    CHECK(burn.parallelism() == p);
  }
}

TEST_CASE("batch(32) consumes exactly 32 elements per minibatch, bytes match element sizes", "[tracing]") {
  Harness h(BurnPipeline(2, 96));
  auto out = h.All();
  auto batch = h.Stats("batch");
  auto burn = h.Stats("burn");
  auto src = h.Stats("src");
  CHECK(batch.elements_produced() == 3);
  CHECK(batch.elements_consumed() == 32 * batch.elements_produced());
  CHECK(burn.elements_consumed() == 96);
  CHECK(src.elements_produced() == 96);
  // int64 scalars: 8 bytes each; a batch is 32 of them.
  CHECK(src.bytes_produced() == 96 * 8);
  CHECK(burn.bytes_consumed() == 96 * 8);
  CHECK(batch.bytes_consumed() == 96 * 8);
  CHECK(batch.bytes_produced() == 3 * 32 * 8);
  CHECK(src.cardinality() == 96);
  CHECK(batch.cardinality() == 3);
  int64_t bytes = 0;
  for (const auto& e : out) bytes += static_cast<int64_t>(ElementBytes(e));
  CHECK(bytes == batch.bytes_produced());
}

TEST_CASE("wall time inside Next includes children, CPU does not", "[tracing]") {
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":20}})",
                   R"({"name":"nap","op":"map","map":{"udf":[{"op":"sleep","args":{"micros":2000}}]}})",
                   R"({"name":"batch","op":"batch","batch":{"batch_size":5}})"}));
  h.All();
  auto nap = h.Stats("nap");
  auto batch = h.Stats("batch");
  CHECK(nap.wall_ns() >= 20 * 2'000'000);
  CHECK(batch.wall_ns() >= nap.wall_ns());
  // Sleeping is waiting, not work.
  CHECK(nap.active_cpu_ns() < 20 * 2'000'000 / 4);
}

TEST_CASE("tracing off counts nothing but storage", "[tracing]") {
  Harness h(BurnPipeline(1, 32), {}, /*tracing=*/false);
  h.All();
  auto burn = h.Stats("burn");
  CHECK(burn.elements_produced() == 0);
  CHECK(burn.active_cpu_ns() == 0);
  CHECK(h.Get("burn", &NodeCounters::instances) == 1);
}

TEST_CASE("buffer capacity, peak fill and peak bytes are recorded", "[tracing]") {
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":64}})",
                   R"({"name":"s","op":"shuffle","shuffle":{"buffer_size":16,"seed":1}})",
                   R"({"name":"m","op":"map","map":{"parallelism":3,"udf":[{"op":"add"}]}})",
                   R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":4}})"}));
  h.All();
  auto s = h.Stats("s");
  CHECK(s.buffer_capacity() == 16);
  CHECK(s.buffer_peak_fill() == 16);
  CHECK(s.peak_buffered_bytes() == 16 * 8);
  // A cheap map hands its elements over in chunks (ordered_pool.h): its
  // buffer then holds up to capacity chunks, recorded in elements.
  auto m = h.Stats("m");
  CHECK(m.buffer_capacity() == 3);
  CHECK(m.buffer_peak_fill() >= 1);
  CHECK(m.peak_buffered_bytes() == m.buffer_peak_fill() * 8);
  CHECK(m.parallelism() == 3);
  auto p = h.Stats("p");
  CHECK(p.buffer_capacity() == 4);
  CHECK(p.peak_buffered_bytes() == p.buffer_peak_fill() * 8);
}

TEST_CASE("a pooled map of costly elements buffers at most its capacity and one per worker", "[tracing]") {
  // 2 ms per element: more than a chunk's worth of work (1 ms), so each
  // element travels alone and the buffer counts elements: tf.data's
  // capacity, plus the one each worker may start while the buffer is full.
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":24}})",
                   R"({"name":"m","op":"map","map":{"parallelism":3,"udf":[{"op":"cpu_burn","args":{"micros":2000}}]}})"}));
  h.All();
  auto m = h.Stats("m");
  CHECK(m.buffer_capacity() == 3);
  CHECK(m.buffer_peak_fill() >= 1);
  CHECK(m.buffer_peak_fill() <= 3 + 3);
}

}  // namespace
}  // namespace plumber::runtime::testing

namespace plumber::runtime::testing {
namespace {

TEST_CASE("a snapshot sums the counts of live iterators, closing them loses and doubles none", "[tracing]") {
  // Counts live in each iterator until it goes away (IterShard): a snapshot
  // taken mid-run must still see every element, exactly once, while
  // another thread keeps snapshotting (ThreadSanitizer watches that).
  for (int p : {1, 2}) {
    INFO("parallelism " << p);
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":1000000000000}})",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + std::to_string(p) +
                         R"(,"udf":[{"op":"add"}]}})",
                     R"({"name":"b","op":"batch","batch":{"batch_size":4}})"}));
    std::atomic<bool> stop{false};
    std::atomic<bool> monotonic{true};
    std::thread snapshotter([&] {
      int64_t last = 0;
      while (!stop.load()) {
        schema::Snapshot snap;
        h.program().stats().Fill(&snap);
        for (const auto& n : snap.nodes()) {
          if (n.name() != "m") continue;
          if (n.elements_produced() < last) monotonic = false;
          last = n.elements_produced();
        }
      }
    });
    {
      auto it = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
      REQUIRE(it.ok());
      Element e;
      bool end = false;
      for (int i = 0; i < 5000; ++i) REQUIRE((*it)->GetNext(&e, &end).ok());
      // Mid-run, the iterators alive.
      CHECK(h.Stats("b").elements_produced() == 5000);
      CHECK(h.Stats("b").elements_consumed() == 20000);
      CHECK(h.Stats("m").elements_produced() == 20000);
      CHECK(h.Stats("m").bytes_produced() == 20000 * 8);
      // Inline, the range is in step. A pool's workers read ahead of its
      // consumer and are still reading: its input counts only grow.
      if (p == 1) {
        CHECK(h.Stats("r").elements_produced() == 20000);
        CHECK(h.Stats("m").elements_consumed() == 20000);
      } else {
        CHECK(h.Stats("m").elements_consumed() >= 20000);
      }
      (*it)->Close();
    }
    stop = true;
    snapshotter.join();
    CHECK(monotonic.load());
    // Gone: folded into the nodes' totals, once.
    CHECK(h.Stats("b").elements_produced() == 5000);
    CHECK(h.Stats("m").elements_produced() == 20000);
    CHECK(h.Stats("b").elements_consumed() == 20000);
    CHECK(h.Stats("m").elements_consumed() == h.Stats("r").elements_produced());
  }
}

TEST_CASE("sampled timing of tiny ops keeps counts exact and CPU conserved", "[tracing]") {
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":200000}})",
                   R"({"name":"m","op":"map","map":{"udf":[{"op":"add"}]}})",
                   R"({"name":"b","op":"batch","batch":{"batch_size":256}})"}));
  const int64_t cpu0 = ThreadCpuNanos();
  auto out = h.All();
  const int64_t cpu = ThreadCpuNanos() - cpu0;
  CHECK(out.size() == 782);
  CHECK(h.Stats("src").elements_produced() == 200000);
  CHECK(h.Stats("m").elements_produced() == 200000);
  CHECK(h.Stats("b").elements_consumed() == 200000);
  CHECK(h.Stats("b").elements_produced() == 782);
  CHECK(h.Stats("m").bytes_produced() == 200000 * 8);
  int64_t charged = 0;
  for (const char* n : {"src", "m", "b"}) {
    const auto s = h.Stats(n);
    // A tiny node's CPU is a sampled estimate: its sampling debit can take
    // it to zero (seen under ThreadSanitizer's slowdown), never below.
    CHECK(s.active_cpu_ns() >= 0);
    CHECK(s.wall_ns() > 0);
    charged += s.active_cpu_ns();
  }
  CHECK(charged > 0);
  // Everything charged was really spent, and most of what was spent is
  // charged (the rest is the test's own loop).
  // Times of fast calls are sampled estimates: allow their variance.
  CHECK(charged <= cpu + cpu / 4);
  CHECK(charged >= cpu / 2);
  // Wall time inside Next includes the children's. The batch's 782 calls
  // are fast enough to be timed one in about 128, so its wall time rests on
  // some six timed calls: it failed at half of the map's in 1 run of about 20.
  CHECK(h.Stats("b").wall_ns() >= h.Stats("m").wall_ns() / 3);
}

// The share of the burns' neighbours (range, batch): 2-4% on an idle
// machine, up to 8% with another test on the other core (preempted
// timed calls), 11% when sampling debts were dropped. The burns' ratio is
// the sharp check. On 2026-12-02 this VM gave 5% to 10% in 24 runs alone
// and 12.3% in one CI run (its burns ran at 3.2 and 1.5 us, not 4 and 2,
// so the same neighbours weighed more), hence 15%. In the sanitizer
// builds (Debug, every memory access instrumented) the range and the
// batch themselves cost 4 to 7.5 us an element against the burns' 8-11:
// there the neighbours really are a third or more of the thread, and the
// two burns' CPU (arithmetic) the rest. Measured on 2026-12-02: shares of
// 0.33 alone on an idle machine, 0.41 and 0.42 in one CI run, 0.42 to
// 0.45 right after a build, and burns' shares down to 0.57, so the bounds
// are 0.55 and 0.45. At those bounds the sanitizer builds catch only gross
// misattribution (most of a burn charged to its neighbours); the fine
// split is the normal build's to guard.
constexpr double kRestShare = kSanitized ? 0.55 : 0.15;
constexpr double kBurnShare = kSanitized ? 0.45 : 0.8;
// The same instrumentation adds each map's own machinery (the UDF call,
// the element's copy) to its burn: 0.4 us an element here, 1.25 us in the
// CI run of 2026-12-03, whose pooled map of 4 and 1 us measured 6.58 and
// 2.25 (2.93:1). Added to both burns it pulls their ratio towards 1; the
// sanitizer builds' lower bounds leave room for twice CI's overhead and
// stay well above what the bugs gave (0.67 and 0.36).
constexpr double kTwoToOneLow = kSanitized ? 1.25 : 1.5;
constexpr double kFourToOneLow = kSanitized ? 2.0 : 3.0;

TEST_CASE("sampled nodes on one thread: each is charged its own work, not its input's", "[tracing]") {
  // Two fast maps inline on the consumer's thread, both timed one call in
  // a hundred or so: a timed call of the outer map mostly runs the inner
  // map untimed. Its extrapolation must be taken back from the node the
  // inner map works for (its consumer, the outer map), not from whatever
  // node the thread was last timing (the batch): that charged the outer
  // map 3.6 us of a 6 us element and the inner one 2.4, against the 2 and
  // 4 they burn.
  constexpr int kElements = 40000;
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":)" + std::to_string(kElements) + "}}",
                   R"({"name":"inner","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":4}}]}})",
                   R"({"name":"outer","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":2}}]}})",
                   R"({"name":"b","op":"batch","batch":{"batch_size":64}})"}));
  const int64_t cpu0 = ThreadCpuNanos();
  h.All();
  const double spent = static_cast<double>(ThreadCpuNanos() - cpu0);
  const double inner = static_cast<double>(h.Stats("inner").active_cpu_ns());
  const double outer = static_cast<double>(h.Stats("outer").active_cpu_ns());
  const double rest = static_cast<double>(h.Stats("b").active_cpu_ns() + h.Stats("src").active_cpu_ns());
  INFO("inner " << inner / kElements << " ns, outer " << outer / kElements << " ns, batch and range "
                << rest / kElements << " ns per element; " << spent / kElements << " ns spent");
  // Burns of 4 and 2 us cost 2:1 however fast the machine is right now;
  // sampling leaves noise at these counts: CI measured 2.47 and, under
  // ASan, 1.63 on 2026-12-02. The bug this guards charged them 2.4 and 3.6
  // us (0.67), far outside either bound.
  CHECK(inner / outer > kTwoToOneLow);
  CHECK(inner / outer < 2.6);
  // And together they are nearly all of the thread's time.
  CHECK(inner + outer > kBurnShare * spent);
  CHECK(rest < kRestShare * spent);
}

TEST_CASE("a pooled map is charged its own work, its sampled input only its own", "[tracing]") {
  // The pool's workers pull chunks of the input under a lock, then burn:
  // the input's sampled calls happen on the workers' threads.
  constexpr int kElements = 40000;
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":)" + std::to_string(kElements) + "}}",
                   R"({"name":"inner","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":1}}]}})",
                   R"({"name":"outer","op":"map","map":{"parallelism":2,"udf":[{"op":"cpu_burn","args":{"micros":4}}]}})",
                   R"({"name":"b","op":"batch","batch":{"batch_size":64}})"}));
  h.All();
  const double inner = static_cast<double>(h.Stats("inner").active_cpu_ns());
  const double outer = static_cast<double>(h.Stats("outer").active_cpu_ns());
  const double rest = static_cast<double>(h.Stats("b").active_cpu_ns() + h.Stats("src").active_cpu_ns());
  INFO("inner " << inner / kElements << " ns, outer " << outer / kElements << " ns, batch and range "
                << rest / kElements << " ns per element");
  // Burns of 1 and 4 us. The pool's own work (the chunk pulls, the
  // consumer spinning for a chunk) is charged to the pooled map, and the
  // input's timed calls stand for calls made on both workers while their
  // debit lands on one: measured, the input is charged about 0.65 us of
  // its 1 and the map 4.3-4.8 of its 4. Before its debits went to its
  // consumer, the two swapped places in some runs (2.2 and 0.8 us).
  CHECK(outer / inner > kFourToOneLow);
  CHECK(outer / inner < 9.0);
  CHECK(inner / kElements > 400);
  CHECK(rest < kRestShare * (inner + outer));
}

// A thread CPU clock that takes 10 ms to read, and counts its reads. A
// read charged to a frame shows as 10 ms of its own time; half a read is
// the bound. At 1 ms a read the bound had to be 0.5 ms, and a loaded CI
// machine once preempted the repeat's few microseconds for 1.5 ms.
std::atomic<int> g_slow_clock_reads{0};
constexpr int64_t kSlowClockNs = 10'000'000;
constexpr double kHalfReadMs = kSlowClockNs / 2e6;
int64_t SlowCpuClock() {
  g_slow_clock_reads.fetch_add(1, std::memory_order_relaxed);
  std::this_thread::sleep_for(std::chrono::nanoseconds(kSlowClockNs));
  return ThreadCpuNanos();
}

TEST_CASE("reading the thread's CPU clock is nobody's work, not the consumer's of a slow input", "[tracing]") {
  // The thread settles its CPU split (a system call) every 2 ms, at the end
  // of a call more often than not: a repeat over a map burning 2.5 ms
  // settles at nearly every element. That settlement used to run in the
  // repeat's frame (on the cached example's naive trace the repeat cost
  // 1.5 us an element, 0.3 once the cache served it). Timing the real
  // read (1.3 us) could not tell the two apart on a host whose caches run
  // cold after 2.5 ms of other work: the repeat alone measured 0.26 to 2.3
  // us an element, 7 to 15 under ThreadSanitizer. Here the clock takes
  // 10 ms to read, so a frame holding even one read shows it.
  const cpu::CpuClock real = cpu::SetCpuClockForTesting(&SlowCpuClock);
  g_slow_clock_reads = 0;
  constexpr int kElements = 32;
  Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":32}})",
                   R"({"name":"slow","op":"map","map":{"udf":[{"op":"cpu_burn","args":{"micros":2500}}]}})",
                   R"({"name":"again","op":"repeat","repeat":{"count":1}})",
                   R"({"name":"b","op":"batch","batch":{"batch_size":8}})"}));
  h.All();
  const int reads = g_slow_clock_reads.load();
  cpu::SetCpuClockForTesting(real);
  const double repeat_ms = static_cast<double>(h.Stats("again").self_wall_ns()) / 1e6;
  const double batch_ms = static_cast<double>(h.Stats("b").self_wall_ns()) / 1e6;
  INFO(reads << " clock reads; own time of the repeat " << repeat_ms << " ms, of the batch " << batch_ms << " ms, over "
             << kElements << " elements");
  CHECK(reads >= kElements / 2);  // it did settle, about once an element
  // Their own work is some microseconds an element.
  CHECK(repeat_ms < kHalfReadMs);
  CHECK(batch_ms < kHalfReadMs);
}

TEST_CASE("the clock read that ends a wait is nobody's work", "[tracing][wait]") {
  // A blocked thread settles before its wait and restarts its CPU clock
  // after it. The restart's read used to count from before it, in the
  // frame that waited: a prefetch's consumer paid a clock read for each
  // element it waited on. So did the frame a thread's first read came in
  // (a run's first batch call, on the thread that iterates): the caller's
  // `now`, taken before that read, moved the thread's mark back. Each
  // fault alone puts one read (10 ms) of own time here.
  StatsRegistry registry;
  NodeCounters* node = registry.Get("waits");
  const cpu::CpuClock real = cpu::SetCpuClockForTesting(&SlowCpuClock);
  g_slow_clock_reads = 0;
  std::thread([node] {
    cpu::SwitchTo(node);  // the thread's first read
    {
      BlockedScope blocked(Wait::kInput, node);  // a read before the wait, and one after
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    cpu::SwitchTo(nullptr);
    cpu::Flush();  // and the last
  }).join();
  const int reads = g_slow_clock_reads.load();
  cpu::SetCpuClockForTesting(real);
  const double own_ms = static_cast<double>(node->self_wall_ns.load()) / 1e6;
  const double blocked_ms = static_cast<double>(node->input_blocked_ns.load()) / 1e6;
  INFO(reads << " clock reads; own time " << own_ms << " ms, blocked " << blocked_ms << " ms");
  CHECK(reads == 4);
  CHECK(own_ms < kHalfReadMs);
  CHECK(blocked_ms >= 3.0);
}

}  // namespace
}  // namespace plumber::runtime::testing

// Where threads' time goes besides CPU: a node's own waiting, consumers
// blocked on another thread's elements, producers blocked on a full buffer,
// and worker threads busy or idle.
namespace plumber::runtime::testing {
namespace {

TEST_CASE("a UDF's sleep is its map's own waiting, not CPU and not its neighbours'", "[tracing][wait]") {
  for (int p : {1, 3}) {
    INFO("parallelism " << p);
    Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":30}})",
                     R"({"name":"call","op":"map","map":{"parallelism":)" + std::to_string(p) +
                         R"(,"udf":[{"op":"sleep","args":{"micros":3000}}]}})"}));
    CHECK(h.All().size() == 30);
    const auto call = h.Stats("call");
    CHECK(call.wait_ns() >= 30 * 3'000'000);
    CHECK(call.wait_ns() < 30 * 3'000'000 * 3);
    CHECK(call.self_wall_ns() >= call.wait_ns());
    CHECK(call.active_cpu_ns() < call.wait_ns() / 4);
    CHECK(h.Stats("src").wait_ns() == 0);
    if (p > 1) {
      // Three workers, each busy while it sleeps; the consumer waited on
      // them, not on its own work.
      CHECK(call.worker_busy_ns() >= call.wait_ns());
      CHECK(call.input_blocked_ns() > 0);
    } else {
      CHECK(call.worker_busy_ns() == 0);
      CHECK(call.worker_idle_ns() == 0);
    }
  }
}

TEST_CASE("a prefetch's consumer blocks on a slow input, its producer blocks on a slow consumer", "[tracing][wait]") {
  SECTION("slow input: the consumer waits on the prefetch's input") {
    Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":20}})",
                     R"({"name":"slow","op":"map","map":{"udf":[{"op":"sleep","args":{"micros":3000}}]}})",
                     R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":2}})"}));
    CHECK(h.All().size() == 20);
    const auto p = h.Stats("p");
    // 20 elements at 3 ms each, made on the prefetch's thread.
    CHECK(p.input_blocked_ns() >= 20 * 3'000'000 / 2);
    CHECK(p.worker_busy_ns() >= 20 * 3'000'000);
    CHECK(h.Stats("slow").wait_ns() >= 20 * 3'000'000);
  }
  SECTION("slow consumer: the producer waits for room") {
    Harness h(Chain({R"({"name":"src","op":"range","range":{"stop":20}})",
                     R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":2}})",
                     R"({"name":"slow","op":"map","map":{"udf":[{"op":"sleep","args":{"micros":3000}}]}})"}));
    CHECK(h.All().size() == 20);
    const auto p = h.Stats("p");
    CHECK(p.output_blocked_ns() >= 15 * 3'000'000 / 2);
    CHECK(p.worker_idle_ns() >= p.output_blocked_ns());
    CHECK(p.input_blocked_ns() < p.output_blocked_ns());
  }
}

}  // namespace
}  // namespace plumber::runtime::testing
