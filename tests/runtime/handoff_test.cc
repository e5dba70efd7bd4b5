// The pooled stages' hand-offs: cheap elements travel between threads in
// chunks (lib/runtime/ordered_pool.h), which must change nothing a
// pipeline can observe: order, the numbers random ops draw, partial and
// dropped remainders, errors, and how fast Cancel and Close take effect.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

#include "harness.h"
#include "runtime/datagen.h"
#include "runtime/ordered_pool.h"

// Every allocation through operator new in this test binary is counted, so
// that a test can tell whether a pipeline allocates per element. A relaxed
// increment: cheap, and harmless to the other tests. Not under
// AddressSanitizer, whose own operator new (used by code this replacement
// does not reach) must be paired with its own delete: there the count is
// off and the test that needs it says so.
#if defined(__SANITIZE_ADDRESS__)
#define PLUMBER_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLUMBER_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef PLUMBER_COUNT_ALLOCATIONS
#define PLUMBER_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

#if PLUMBER_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace plumber::runtime::testing {
namespace {

// Enough cheap elements that the pools learn they are cheap and move them
// in chunks of hundreds.
constexpr int kMany = 60000;

std::string Par(int p) { return std::to_string(p); }

std::vector<int64_t> Iota(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

TEST_CASE("chunked hand-offs keep input order at parallelism 1, 2 and 8", "[handoff][determinism]") {
  for (int p : {1, 2, 8}) {
    INFO("parallelism " << p);
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":)" + std::to_string(kMany) + "}}",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + Par(p) + R"(,"udf":[{"op":"add","args":{"value":5}}]}})",
                     R"({"name":"b","op":"batch","batch":{"batch_size":7,"parallelism":)" + Par(p) + "}}"}));
    const auto batches = h.All();
    // 60000 = 8571 x 7 + 3: the short last batch is kept.
    REQUIRE(batches.size() == 8572);
    int64_t want = 5;
    bool in_order = true;
    for (const auto& b : batches) {
      for (int64_t i = 0; i < b[0].NumElements(); ++i) in_order = in_order && b[0].GetInt(i) == want++;
    }
    CHECK(in_order);
    CHECK(want == kMany + 5);
    CHECK(batches.back()[0].NumElements() == 3);
  }
}

TEST_CASE("a pool counts its hand-offs: cheap elements many to a chunk, costly ones alone", "[handoff][tracing]") {
  Harness cheap(Chain({R"({"name":"r","op":"range","range":{"stop":)" + std::to_string(kMany) + "}}",
                       R"({"name":"m","op":"map","map":{"parallelism":2,"udf":[{"op":"add"}]}})"}));
  REQUIRE(cheap.All().size() == kMany);
  auto m = cheap.Stats("m");
  INFO("handoffs " << m.handoffs() << ", wakeups " << m.wakeups());
  CHECK(m.elements_produced() == kMany);
  CHECK(m.handoffs() >= 1);
  // The pool starts with chunks of one while it learns what a task costs;
  // an add costs so little that the rest travel hundreds to a chunk.
  CHECK(m.handoffs() * 20 < kMany);
  CHECK(m.input_lock_wait_ns() >= 0);

  Harness costly(Chain({R"({"name":"r","op":"range","range":{"stop":12}})",
                        R"({"name":"m","op":"map","map":{"parallelism":2,"udf":[{"op":"cpu_burn","args":{"micros":2000}}]}})"}));
  REQUIRE(costly.All().size() == 12);
  auto c = costly.Stats("m");
  // One chunk per element, and one more for the end when it came alone.
  CHECK(c.handoffs() >= 12);
  CHECK(c.handoffs() <= 13);
  // The consumer, faster than a 2 ms burn, parks and is woken.
  CHECK(c.wakeups() >= 1);

  Harness untraced(Chain({R"({"name":"r","op":"range","range":{"stop":100}})",
                          R"({"name":"m","op":"map","map":{"parallelism":2,"udf":[{"op":"add"}]}})"}),
                   {}, /*tracing=*/false);
  untraced.All();
  CHECK(untraced.Stats("m").handoffs() == 0);
}

TEST_CASE("chunked batches drop the remainder when asked", "[handoff]") {
  Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":)" + std::to_string(kMany) + "}}",
                   R"({"name":"b","op":"batch","batch":{"batch_size":7,"drop_remainder":true,"parallelism":3}})"}));
  const auto batches = h.All();
  CHECK(batches.size() == 8571);
  CHECK(batches.back()[0].GetInt(6) == 8571 * 7 - 1);
}

TEST_CASE("random ops draw the same numbers whatever the parallelism and chunking", "[handoff][determinism]") {
  // Many tiny images: cheap enough per element to be chunked, and each
  // element's crop and flip depend only on its index and the seeds.
  TempDir dir;
  ImageGenOptions g;
  g.files = 2;
  g.records_per_file = 1500;
  g.width = 8;
  g.height = 8;
  REQUIRE(GenerateImages(Env::Default(), dir.path(), g).ok());
  std::vector<std::vector<Element>> runs;
  for (int p : {1, 2, 8}) {
    Harness h(Chain({R"({"name":"f","op":"tfrecord","tfrecord":{"files":[")" + dir.path() +
                         R"(/train-00000-of-00002.tfrecord",")" + dir.path() + R"(/train-00001-of-00002.tfrecord"]}})",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + Par(p) + R"(,"udf":[
                        {"op":"parse_example","args":{"features":["image/encoded"]}},{"op":"decode_jpeg"},
                        {"op":"random_crop","args":{"height":5,"width":5,"seed":3}},
                        {"op":"random_flip_left_right","args":{"seed":4}}]}})",
                     R"({"name":"b","op":"batch","batch":{"batch_size":10,"parallelism":)" + Par(p) + "}}"}));
    runs.push_back(h.All());
  }
  REQUIRE(runs[0].size() == 300);
  CHECK(runs[1] == runs[0]);
  CHECK(runs[2] == runs[0]);
}

TEST_CASE("deterministic: false yields every element once, at parallelism 2 and 8", "[handoff][determinism]") {
  for (int p : {2, 8}) {
    INFO("parallelism " << p);
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":)" + std::to_string(kMany) + "}}",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + Par(p) +
                         R"(,"deterministic":false,"udf":[{"op":"add","args":{"value":-1}}]}})"}));
    auto v = h.Ints();
    std::sort(v.begin(), v.end());
    CHECK(v == Iota(-1, kMany - 1));
  }
}

// An input that fails at element `fail_at`, for errors inside a chunk.
class FailingInput final : public Iterator {
 public:
  explicit FailingInput(int64_t fail_at) : fail_at_(fail_at) {}
  Status GetNextInternal(Element* out, bool* end) override {
    if (next_ == fail_at_) return Status::Corruption("element " + std::to_string(next_) + " is corrupt");
    *out = Element{Tensor::Scalar(next_++)};
    *end = false;
    return Status::OK();
  }
  void Cancel() override {}
  void Close() override {}

 private:
  int64_t fail_at_;
  int64_t next_ = 0;
};

OrderedPoolSpec AddOnePool(int parallelism, bool deterministic, int64_t fail_work_at = -1) {
  OrderedPoolSpec spec;
  spec.parallelism = parallelism;
  spec.capacity = parallelism;
  spec.deterministic = deterministic;
  spec.work = [fail_work_at](std::vector<Element>& in, uint64_t index, Element* out) {
    if (static_cast<int64_t>(index) == fail_work_at) return Status::InvalidArgument("task " + std::to_string(index));
    *out = std::move(in[0]);
    (*out)[0].data<int64_t>()[0] += 1;
    return Status::OK();
  };
  return spec;
}

TEST_CASE("an input error inside a chunk comes after every element before it", "[handoff]") {
  for (int p : {1, 2, 8}) {
    INFO("parallelism " << p);
    auto it = MakeOrderedPoolIterator(std::make_unique<FailingInput>(30000), AddOnePool(p, true));
    int64_t want = 1;
    Status s;
    while (true) {
      Element e;
      bool end = false;
      s = it->GetNext(&e, &end);
      if (!s.ok() || end) break;
      REQUIRE(e[0].GetInt(0) == want);
      ++want;
    }
    CHECK(want == 30001);
    CHECK(s.code() == Status::Code::kCorruption);
    it->Close();
  }
}

TEST_CASE("a work error inside a chunk comes in order, also when not deterministic", "[handoff]") {
  for (bool deterministic : {true, false}) {
    INFO("deterministic " << deterministic);
    auto it = MakeOrderedPoolIterator(std::make_unique<FailingInput>(-1), AddOnePool(4, deterministic, 25000));
    std::vector<int64_t> got;
    Status s;
    while (true) {
      Element e;
      bool end = false;
      s = it->GetNext(&e, &end);
      if (!s.ok() || end) break;
      got.push_back(e[0].GetInt(0));
    }
    CHECK(s.code() == Status::Code::kInvalidArgument);
    // Every element before the failing task came first (when not
    // deterministic, some after it may have come too).
    std::sort(got.begin(), got.end());
    REQUIRE(got.size() >= 25000);
    CHECK(std::vector<int64_t>(got.begin(), got.begin() + 25000) == Iota(1, 25001));
    it->Close();
  }
}

TEST_CASE("Cancel and Close take effect promptly with chunks in flight", "[handoff]") {
  for (int p : {2, 8}) {
    INFO("parallelism " << p);
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":1000000000000}})",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + Par(p) + R"(,"udf":[{"op":"add"}]}})",
                     R"({"name":"b","op":"batch","batch":{"batch_size":3,"parallelism":2}})"}));
    auto it = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
    REQUIRE(it.ok());
    // Long enough for the pools to learn the elements are cheap and chunk.
    for (int i = 0; i < 20000; ++i) {
      Element e;
      bool end = true;
      REQUIRE((*it)->GetNext(&e, &end).ok());
      REQUIRE_FALSE(end);
    }
    const auto t0 = std::chrono::steady_clock::now();
    (*it)->Cancel();
    Element e;
    bool end = false;
    // Cancelled at once, even with a drained chunk still in hand.
    CHECK((*it)->GetNext(&e, &end).code() == Status::Code::kCancelled);
    (*it)->Close();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Generous: a loaded machine (or a sanitizer build) still closes in far
    // less than this; a pool that finished its chunks first would take
    // minutes over this endless range.
    CHECK(secs < 2.0);
  }
}

TEST_CASE("Cancel from another thread wakes a consumer waiting on a chunk", "[handoff]") {
  // Costly tasks (a sleep) go one at a time: the consumer parks waiting.
  Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":1000000}})",
                   R"({"name":"m","op":"map","map":{"parallelism":2,"udf":[{"op":"sleep","args":{"micros":200000}}]}})"}));
  auto it = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
  REQUIRE(it.ok());
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    (*it)->Cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  Element e;
  bool end = false;
  CHECK((*it)->GetNext(&e, &end).code() == Status::Code::kCancelled);
  canceller.join();
  (*it)->Close();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 2.0);
}

}  // namespace
}  // namespace plumber::runtime::testing

namespace plumber::runtime::testing {
namespace {

TEST_CASE("a map of a tiny op allocates nothing per element once warm, inline or pooled", "[handoff][alloc]") {
  // Before chunks were recycled, each element cost an allocation on the
  // worker and a free on the consumer (a third of a pooled add's time), so
  // this counted one per element. A batch still allocates its own tensor: a
  // few allocations per 256 elements.
  if (!PLUMBER_COUNT_ALLOCATIONS) {
    WARN("allocations are not counted under AddressSanitizer; the plain build checks this");
    return;
  }
  for (bool tracing : {false, true}) {
    for (int p : {1, 2, 8}) {
      INFO("parallelism " << p << ", tracing " << tracing);
      Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":1000000000000}})",
                       R"({"name":"m","op":"map","map":{"parallelism":)" + Par(p) + R"(,"udf":[{"op":"add"}]}})",
                       R"({"name":"b","op":"batch","batch":{"batch_size":256}})"}),
                {}, tracing);
      auto it = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
      REQUIRE(it.ok());
      Element e;
      bool end = false;
      // Warm: the pool has learned the chunk size, and every chunk it keeps
      // (up to 2 x parallelism of 2048 tasks) has gone round once, filled
      // with spare elements.
      for (int i = 0; i < 1000; ++i) REQUIRE((*it)->GetNext(&e, &end).ok());
      // What is still allocated after the warm-up is bounded by the pool's
      // size, not by the elements: a chunk or a task slot used for the first
      // time (on a loaded machine, when the consumer stalls and the workers
      // fill every slot) allocates its elements once.
      const int64_t before = g_allocations.load();
      constexpr int kBatches = 4000;
      bool ok = true;  // no Catch assertion inside the window: they allocate
      for (int i = 0; i < kBatches; ++i) ok = (*it)->GetNext(&e, &end).ok() && ok;
      const int64_t allocations = g_allocations.load() - before;
      REQUIRE(ok);
      (*it)->Close();
      INFO("allocations " << allocations << " for " << kBatches * 256 << " elements");
      // Three per batch (its tensor, its shape and the shape's copy), plus
      // headroom for the one-off growth above; one per element before.
      CHECK(allocations < kBatches * 8);
    }
  }
}

}  // namespace
}  // namespace plumber::runtime::testing
