// Semantics of every dataset op against small exact expectations, and
// determinism across parallelism.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>

#include "harness.h"
#include "runtime/compression.h"
#include "runtime/datagen.h"
#include "runtime/example.h"
#include "traceio/record_io.h"

namespace plumber::runtime::testing {
namespace {

std::vector<int64_t> Iota(int64_t a, int64_t b) {
  std::vector<int64_t> v(static_cast<size_t>(b - a));
  std::iota(v.begin(), v.end(), a);
  return v;
}

std::vector<std::string> Strings(const std::vector<Element>& es) {
  std::vector<std::string> out;
  for (const auto& e : es) out.push_back(e[0].strings()[0]);
  return out;
}

TEST_CASE("range counts up and down by its step", "[datasets]") {
  Harness up(Chain({R"({"name":"r","op":"range","range":{"start":2,"stop":11,"step":3}})"}));
  CHECK(up.Ints() == std::vector<int64_t>{2, 5, 8});
  CHECK(up.program().output()->Cardinality() == 3);
  Harness down(Chain({R"({"name":"r","op":"range","range":{"start":5,"stop":0,"step":-2}})"}));
  CHECK(down.Ints() == std::vector<int64_t>{5, 3, 1});
  CHECK(down.program().output()->Cardinality() == 3);
}

TEST_CASE("batch stacks and keeps or drops the remainder", "[datasets]") {
  for (bool drop : {false, true}) {
    for (int p : {1, 3}) {
      Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":10}})",
                       R"({"name":"b","op":"batch","batch":{"batch_size":3,"drop_remainder":)" +
                           std::string(drop ? "true" : "false") + R"(,"parallelism":)" + std::to_string(p) + "}}"}));
      auto out = h.All();
      REQUIRE(out.size() == (drop ? 3u : 4u));
      CHECK(h.program().output()->Cardinality() == (drop ? 3 : 4));
      for (size_t i = 0; i < out.size(); ++i) {
        const int64_t n = i == 3 ? 1 : 3;
        REQUIRE(out[i][0].shape() == std::vector<int64_t>{n});
        for (int64_t k = 0; k < n; ++k) CHECK(out[i][0].GetInt(k) == static_cast<int64_t>(i) * 3 + k);
      }
    }
  }
}

TEST_CASE("batch refuses differing shapes and points at padded_batch", "[datasets]") {
  TempDir dir;
  WriteText(dir.File("a.txt"), "a b\nc\n");
  Harness h(Chain({R"({"name":"l","op":"text_line","text_line":{"files":[")" + dir.File("a.txt") + R"("]}})",
                   R"({"name":"t","op":"map","map":{"udf":[{"op":"tokenize"}]}})",
                   R"({"name":"b","op":"batch","batch":{"batch_size":2}})"}));
  std::vector<Element> out;
  Status s = h.Collect(&out);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("node 'b'") && Catch::Contains("padded_batch"));
}

TEST_CASE("padded_batch pads to the longest or to padded_shape", "[datasets]") {
  TempDir dir;
  WriteText(dir.File("a.txt"), "x\nx y z\nx y\n");
  const std::string src = R"({"name":"l","op":"text_line","text_line":{"files":[")" + dir.File("a.txt") + R"("]}})";
  const std::string tok = R"({"name":"t","op":"map","map":{"udf":[{"op":"tokenize","args":{"vocab_size":100}}]}})";
  Harness h(Chain({src, tok, R"({"name":"b","op":"padded_batch","padded_batch":{"batch_size":2,"padding_value":-1}})"}));
  auto out = h.All();
  REQUIRE(out.size() == 2);
  CHECK(out[0][0].shape() == std::vector<int64_t>{2, 3});
  CHECK(out[1][0].shape() == std::vector<int64_t>{1, 2});
  CHECK(out[0][0].dtype() == DType::kInt32);
  // Row 0 ("x") is padded after its one token; row 1 is full.
  CHECK(out[0][0].GetInt(1) == -1);
  CHECK(out[0][0].GetInt(2) == -1);
  CHECK(out[0][0].GetInt(0) == out[0][0].GetInt(3));  // both "x"
  CHECK(out[0][0].GetInt(5) != -1);

  Harness fixed(Chain({src, tok, R"({"name":"b","op":"padded_batch","padded_batch":{"batch_size":3,"padded_shape":[5]}})"}));
  auto f = fixed.All();
  REQUIRE(f.size() == 1);
  CHECK(f[0][0].shape() == std::vector<int64_t>{3, 5});
  CHECK(f[0][0].GetInt(4) == 0);
}

TEST_CASE("repeat repeats count times or forever", "[datasets]") {
  Harness twice(Chain({R"({"name":"r","op":"range","range":{"stop":3}})", R"({"name":"x","op":"repeat","repeat":{"count":2}})"}));
  CHECK(twice.Ints() == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  CHECK(twice.program().output()->Cardinality() == 6);
  Harness forever(Chain({R"({"name":"r","op":"range","range":{"stop":3}})", R"({"name":"x","op":"repeat"})",
                         R"({"name":"t","op":"take","take":{"count":7}})"}));
  CHECK(forever.Ints() == std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0});
  CHECK(forever.program().Find("x")->Cardinality() == kInfiniteCardinality);
  CHECK(forever.program().output()->Cardinality() == 7);
  // An empty input repeated forever ends instead of spinning.
  Harness empty(Chain({R"({"name":"r","op":"range","range":{"stop":0}})", R"({"name":"x","op":"repeat"})"}));
  CHECK(empty.Ints().empty());
}

TEST_CASE("take and skip", "[datasets]") {
  Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":10}})", R"({"name":"s","op":"skip","skip":{"count":3}})",
                   R"({"name":"t","op":"take","take":{"count":4}})"}));
  CHECK(h.Ints() == std::vector<int64_t>{3, 4, 5, 6});
  CHECK(h.program().output()->Cardinality() == 4);
  Harness all(Chain({R"({"name":"r","op":"range","range":{"stop":4}})", R"({"name":"t","op":"take","take":{"count":-1}})"}));
  CHECK(all.Ints() == std::vector<int64_t>{0, 1, 2, 3});
  Harness none(Chain({R"({"name":"r","op":"range","range":{"stop":4}})", R"({"name":"s","op":"skip","skip":{"count":-1}})"}));
  CHECK(none.Ints().empty());
  CHECK(none.program().output()->Cardinality() == 0);
}

TEST_CASE("filter keeps the elements whose predicate holds", "[datasets]") {
  TempDir dir;
  WriteText(dir.File("a.txt"), "a\na b\na b c\na b c d\n\n");
  Harness h(Chain({R"({"name":"l","op":"text_line","text_line":{"files":[")" + dir.File("a.txt") + R"("]}})",
                   R"({"name":"f","op":"filter","filter":{"predicate":[{"op":"tokenize"},{"op":"length_filter","args":{"min":2,"max":3}}]}})"}));
  auto out = h.All();
  CHECK(Strings(out) == std::vector<std::string>{"a b", "a b c"});
  // The predicate's own ops do not change the elements.
  CHECK(out[0][0].dtype() == DType::kString);
  CHECK(h.Get("f", &NodeCounters::elements_consumed) == 5);
}

TEST_CASE("shuffle is a reproducible permutation, reshuffled each epoch", "[datasets]") {
  auto make = [](int seed, bool reshuffle) {
    return Chain({R"({"name":"r","op":"range","range":{"stop":100}})",
                  R"({"name":"s","op":"shuffle","shuffle":{"buffer_size":10,"seed":)" + std::to_string(seed) +
                      R"(,"reshuffle_each_iteration":)" + (reshuffle ? "true" : "false") + "}}",
                  R"({"name":"x","op":"repeat","repeat":{"count":2}})"});
  };
  auto a = Harness(make(42, true)).Ints();
  auto b = Harness(make(42, true)).Ints();
  auto c = Harness(make(43, true)).Ints();
  REQUIRE(a.size() == 200);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<int64_t> first(a.begin(), a.begin() + 100), second(a.begin() + 100, a.end());
  CHECK(first != Iota(0, 100));
  CHECK(first != second);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  CHECK(first == Iota(0, 100));
  CHECK(second == Iota(0, 100));
  auto same = Harness(make(42, false)).Ints();
  CHECK(std::vector<int64_t>(same.begin(), same.begin() + 100) == std::vector<int64_t>(same.begin() + 100, same.end()));
}

TEST_CASE("list_files globs in sorted order and shuffles with a seed", "[datasets]") {
  TempDir dir;
  for (const char* n : {"c.txt", "a.txt", "b.txt", "skip.dat"}) WriteText(dir.File(n), "x\n");
  Harness h(Chain({R"({"name":"f","op":"list_files","list_files":{"pattern":")" + dir.path() + R"(/*.txt"}})"}));
  CHECK(Strings(h.All()) == std::vector<std::string>{dir.File("a.txt"), dir.File("b.txt"), dir.File("c.txt")});
  CHECK(h.program().output()->Cardinality() == 3);
  // Relative patterns resolve against the pipeline's directory.
  Harness rel(Chain({R"({"name":"f","op":"list_files","list_files":{"pattern":"*.txt","shuffle":true,"seed":5}})"}), {},
              true, dir.path());
  auto names = Strings(rel.All());
  auto again = Strings(Harness(Chain({R"({"name":"f","op":"list_files","list_files":{"pattern":"*.txt","shuffle":true,"seed":5}})"}), {}, true, dir.path()).All());
  CHECK(names == again);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{dir.File("a.txt"), dir.File("b.txt"), dir.File("c.txt")});
  Harness none(Chain({R"({"name":"f","op":"list_files","list_files":{"pattern":")" + dir.path() + R"(/*.nope"}})"}));
  CHECK(none.build_status().code() == Status::Code::kNotFound);
  CHECK_THAT(none.build_status().message(), Catch::Contains("*.nope") && Catch::Contains("node 'f'"));
}

TEST_CASE("text_line splits lines, handling CRLF and a last line without newline", "[datasets]") {
  TempDir dir;
  WriteText(dir.File("a.txt"), "one\r\ntwo\n\nthree");
  WriteText(dir.File("b.txt"), "four\n");
  Harness h(Chain({R"({"name":"l","op":"text_line","text_line":{"files":[")" + dir.File("a.txt") + R"(",")" +
                   dir.File("b.txt") + R"("]}})"}));
  CHECK(Strings(h.All()) == std::vector<std::string>{"one", "two", "", "three", "four"});
  auto s = h.Stats("l");
  CHECK(s.files_opened() == 2);
  CHECK(s.files_completed() == 2);
  CHECK(s.completed_file_records() == 5);
  CHECK(s.completed_file_bytes() == 15 + 5);
  CHECK(s.storage_bytes_read() == 20);
}

// Three text files of three lines: "a0".."c2".
std::string ThreeFiles(const TempDir& dir) {
  std::string list;
  for (char f : {'a', 'b', 'c'}) {
    std::string text;
    for (int i = 0; i < 3; ++i) text += std::string(1, f) + std::to_string(i) + "\n";
    WriteText(dir.File(std::string(1, f) + ".txt"), text);
    list += std::string(list.empty() ? "" : ",") + "\"" + dir.File(std::string(1, f) + ".txt") + "\"";
  }
  return list;
}

TEST_CASE("interleave follows cycle and block lengths, at any parallelism", "[datasets]") {
  TempDir dir;
  const std::string files = ThreeFiles(dir);
  for (int p : {1, 2}) {
    Harness h(Chain({R"({"name":"f","op":"list_files","list_files":{"files":[)" + files + "]}}",
                     R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":2,"block_length":2,"parallelism":)" +
                         std::to_string(p) + "}}"},
                    {R"({"name":"read","op":"text_line"})"}));
    INFO("parallelism " << p);
    CHECK(Strings(h.All()) == std::vector<std::string>{"a0", "a1", "b0", "b1", "a2", "b2", "c0", "c1", "c2"});
    // The function's counters sum over its three instances.
    auto read = h.Stats("read");
    CHECK(read.elements_produced() == 9);
    CHECK(read.files_opened() == 3);
    CHECK(read.files_completed() == 3);
    CHECK(h.Get("read", &NodeCounters::instances) == 3);
    CHECK(h.Get("i", &NodeCounters::elements_produced) == 9);
  }
  Harness one(Chain({R"({"name":"f","op":"list_files","list_files":{"files":[)" + files + "]}}",
                     R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":3}})"},
                    {R"({"name":"read","op":"text_line"})"}));
  CHECK(Strings(one.All()) == std::vector<std::string>{"a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"});
}

TEST_CASE("non-deterministic interleave and map yield the same multiset", "[datasets]") {
  TempDir dir;
  const std::string files = ThreeFiles(dir);
  Harness h(Chain({R"({"name":"f","op":"list_files","list_files":{"files":[)" + files + "]}}",
                   R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":3,"parallelism":3,"deterministic":false}})",
                   R"({"name":"m","op":"map","map":{"parallelism":3,"deterministic":false,"udf":[{"op":"tokenize","args":{"vocab_size":1000}}]}})"},
                  {R"({"name":"read","op":"text_line"})"}));
  auto out = h.All();
  CHECK(out.size() == 9);
  std::multiset<int64_t> ids;
  for (const auto& e : out) ids.insert(e[0].GetInt(0));
  Harness ordered(Chain({R"({"name":"f","op":"list_files","list_files":{"files":[)" + files + "]}}",
                         R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":3}})",
                         R"({"name":"m","op":"map","map":{"udf":[{"op":"tokenize","args":{"vocab_size":1000}}]}})"},
                        {R"({"name":"read","op":"text_line"})"}));
  std::multiset<int64_t> want;
  for (const auto& e : ordered.All()) want.insert(e[0].GetInt(0));
  CHECK(ids == want);
}

TEST_CASE("tfrecord reads records from files, an input of names, or gzip", "[datasets]") {
  TempDir dir;
  std::string plain0, plain1;
  for (int i = 0; i < 3; ++i) plain0 += FrameRecord("r0-" + std::to_string(i));
  for (int i = 0; i < 2; ++i) plain1 += FrameRecord("r1-" + std::to_string(i));
  WriteText(dir.File("0.tfrecord"), plain0);
  WriteText(dir.File("1.tfrecord"), plain1);
  const std::vector<std::string> want{"r0-0", "r0-1", "r0-2", "r1-0", "r1-1"};
  Harness direct(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":["0.tfrecord","1.tfrecord"]}})"}), {}, true,
                 dir.path());
  CHECK(Strings(direct.All()) == want);
  auto s = direct.Stats("t");
  CHECK(s.completed_file_records() == 5);
  CHECK(s.completed_file_records_sq() == 9 + 4);
  CHECK(s.completed_file_bytes() == static_cast<int64_t>(plain0.size() + plain1.size()));
  CHECK(s.bytes_produced() == 5 * 4);

  Harness via_input(Chain({R"({"name":"f","op":"list_files","list_files":{"pattern":")" + dir.path() + R"(/*.tfrecord"}})",
                           R"({"name":"t","op":"tfrecord"})"}));
  CHECK(Strings(via_input.All()) == want);

  auto gz = Compress(Codec::kGzip, plain0);
  REQUIRE(gz.ok());
  WriteText(dir.File("z.tfrecord.gz"), *gz);
  Harness gzip(Chain({R"({"name":"t","op":"tfrecord","tfrecord":{"files":["z.tfrecord.gz"],"compression":"GZIP"}})"}), {},
               true, dir.path());
  CHECK(Strings(gzip.All()) == std::vector<std::string>{"r0-0", "r0-1", "r0-2"});
  CHECK(gzip.Stats("t").storage_bytes_read() == static_cast<int64_t>(gz->size()));
}

TEST_CASE("cache replays the first epoch without touching its input", "[datasets]") {
  Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":5}})",
                   R"({"name":"m","op":"map","map":{"udf":[{"op":"add","args":{"value":1}}]}})",
                   R"({"name":"c","op":"cache"})", R"({"name":"x","op":"repeat","repeat":{"count":3}})"}));
  CHECK(h.Ints() == std::vector<int64_t>{1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5});
  CHECK(h.Get("m", &NodeCounters::elements_produced) == 5);
  CHECK(h.Get("m", &NodeCounters::instances) == 1);
  CHECK(h.Get("c", &NodeCounters::elements_produced) == 15);
}

TEST_CASE("a file cache is written once and replayed by a later run", "[datasets]") {
  TempDir dir;
  auto pipeline = Chain({R"({"name":"r","op":"range","range":{"stop":4}})",
                         R"({"name":"m","op":"map","map":{"udf":[{"op":"add","args":{"value":10}}]}})",
                         R"({"name":"c","op":"cache","cache":{"filename":"cached"}})"});
  Harness first(pipeline, {}, true, dir.path());
  CHECK(first.Ints() == std::vector<int64_t>{10, 11, 12, 13});
  CHECK(Env::Default()->FileExists(dir.File("cached.cache")));
  Harness second(pipeline, {}, true, dir.path());
  CHECK(second.Ints() == std::vector<int64_t>{10, 11, 12, 13});
  CHECK(second.Get("m", &NodeCounters::instances) == 0);
  CHECK(second.Stats("c").storage_bytes_read() > 0);
  // A pass cut short leaves no cache file behind.
  TempDir other;
  Harness cut(pipeline, {}, true, other.path());
  std::vector<Element> two;
  REQUIRE(cut.Collect(&two, 2).ok());
  CHECK_FALSE(Env::Default()->FileExists(other.File("cached.cache")));
  CHECK(std::distance(std::filesystem::directory_iterator(other.path()), std::filesystem::directory_iterator()) == 0);
}

TEST_CASE("prefetch passes every element through a bounded buffer", "[datasets]") {
  for (int size : {0, 1, 4}) {
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":50}})",
                     R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":)" + std::to_string(size) + "}}"}));
    CHECK(h.Ints() == Iota(0, 50));
    auto s = h.Stats("p");
    CHECK(s.buffer_capacity() == size);
    CHECK(s.buffer_peak_fill() <= size);
    if (size > 0) CHECK(s.buffer_peak_fill() >= 1);
  }
}

TEST_CASE("map applies its UDF in order at any parallelism", "[datasets]") {
  for (int p : {1, 2, 8}) {
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":100}})",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + std::to_string(p) +
                         R"(,"udf":[{"op":"add","args":{"value":3}},{"op":"add","args":{"value":-1}}]}})"}));
    CHECK(h.Ints() == Iota(2, 102));
    CHECK(h.Stats("m").parallelism() == p);
  }
}

// A filter fused into a map (MapParams.keep_if) passes what the map then
// the filter passed, in order, at any parallelism: also where whole chunks
// of the pool's tasks are dropped (the first 900 elements) and where
// single elements are kept among many dropped.
TEST_CASE("a map with a fused filter yields what the map and the filter yielded, at any parallelism",
          "[datasets]") {
  const std::string add = R"("udf":[{"op":"add","args":{"value":3}}])";
  for (const std::string predicate : {R"([{"op":"label_in","args":{"min":903}}])",
                                      R"([{"op":"label_in","args":{"values":[5,64,65,999]}}])"}) {
    Harness separate(Chain({R"({"name":"r","op":"range","range":{"stop":1000}})",
                            R"({"name":"m","op":"map","map":{)" + add + "}}",
                            R"({"name":"f","op":"filter","filter":{"predicate":)" + predicate + "}}"}));
    const std::vector<int64_t> want = separate.Ints();
    REQUIRE(!want.empty());
    for (int p : {1, 3}) {
      INFO("predicate " << predicate << ", parallelism " << p);
      Harness fused(Chain({R"({"name":"r","op":"range","range":{"stop":1000}})",
                           R"({"name":"m","op":"map","map":{"parallelism":)" + std::to_string(p) + "," + add +
                               R"(,"keep_if":)" + predicate + "}}"}));
      CHECK(fused.Ints() == want);
      CHECK(fused.Get("m", &NodeCounters::elements_consumed) == 1000);
      CHECK(fused.Get("m", &NodeCounters::elements_produced) == static_cast<int64_t>(want.size()));
    }
  }
}

TEST_CASE("a fused filter's failure stops the map, naming the node and its keep_if", "[datasets]") {
  for (int p : {1, 3}) {
    Harness h(Chain({R"({"name":"r","op":"range","range":{"stop":100}})",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + std::to_string(p) +
                         R"(,"udf":[{"op":"add"}],"keep_if":[{"op":"label_in","args":{"component":4,"min":0}}]}})"}));
    std::vector<Element> out;
    const Status s = h.Collect(&out);
    CHECK_FALSE(s.ok());
    CHECK(s.ToString().find("node 'm' (keep_if)") != std::string::npos);
    CHECK(out.empty());
  }
}

TEST_CASE("Close stops worker threads promptly in the middle of an epoch", "[datasets]") {
  TempDir dir;
  const std::string files = ThreeFiles(dir);
  Harness h(Chain({R"({"name":"f","op":"list_files","list_files":{"files":[)" + files + "]}}",
                   R"({"name":"x","op":"repeat"})",
                   R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":3,"parallelism":3}})",
                   R"({"name":"m","op":"map","map":{"parallelism":4,"udf":[{"op":"sleep","args":{"micros":2000}}]}})",
                   R"({"name":"b","op":"batch","batch":{"batch_size":2,"parallelism":2}})",
                   R"({"name":"p","op":"prefetch","prefetch":{"buffer_size":8}})"},
                  {R"({"name":"read","op":"text_line"})"}));
  auto it = h.program().output()->MakeIterator(IterCtx{&h.ctx(), nullptr, nullptr});
  REQUIRE(it.ok());
  for (int i = 0; i < 5; ++i) {
    Element e;
    bool end = true;
    REQUIRE((*it)->GetNext(&e, &end).ok());
    REQUIRE_FALSE(end);
  }
  const auto t0 = std::chrono::steady_clock::now();
  (*it)->Close();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Generous: a loaded machine still closes in far less than this.
  CHECK(secs < 2.0);
}

// Three shards of small JPEG Examples.
std::string ImageShards(const TempDir& dir) {
  ImageGenOptions g;
  g.files = 3;
  g.records_per_file = 6;
  g.width = 40;
  g.height = 32;
  g.seed = 9;
  auto paths = GenerateImages(Env::Default(), dir.path(), g);
  REQUIRE(paths.ok());
  return dir.path() + "/train-*.tfrecord";
}

TEST_CASE("a deterministic pipeline yields identical elements at parallelism 1, 2 and 8", "[datasets][determinism]") {
  TempDir dir;
  const std::string pattern = ImageShards(dir);
  std::vector<std::vector<Element>> runs;
  for (int p : {1, 2, 8}) {
    const std::string ps = std::to_string(p);
    const std::string ip = std::to_string(std::min(p, 3));
    Harness h(Chain({R"({"name":"f","op":"list_files","list_files":{"pattern":")" + pattern + R"("}})",
                     R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":3,"block_length":2,"parallelism":)" + ip + "}}",
                     R"({"name":"m","op":"map","map":{"parallelism":)" + ps + R"(,"udf":[
                        {"op":"parse_example","args":{"features":["image/encoded","image/class/label"]}},
                        {"op":"decode_jpeg"},{"op":"random_crop","args":{"height":24,"width":24,"seed":3}},
                        {"op":"random_flip_left_right","args":{"seed":4}},{"op":"normalize"}]}})",
                     R"({"name":"b","op":"batch","batch":{"batch_size":4,"parallelism":)" + ps + "}}"},
                    {R"({"name":"read","op":"tfrecord"})"}));
    runs.push_back(h.All());
  }
  REQUIRE(runs[0].size() == 5);  // 18 images in batches of 4
  CHECK(runs[0][0][0].shape() == std::vector<int64_t>{4, 3, 24, 24});
  CHECK(runs[0][0][1].shape() == std::vector<int64_t>{4});
  CHECK(runs[1] == runs[0]);
  CHECK(runs[2] == runs[0]);
}

// "Train on a subset of classes": a filter on the label parse_example made
// keeps exactly the elements whose label is in the set, in their order.
TEST_CASE("a label_in filter keeps the records of the classes named, in order", "[datasets]") {
  TempDir dir;
  const std::string pattern = ImageShards(dir);
  auto labels_of = [&](const std::string& filter) {
    std::vector<std::string> nodes = {
        R"({"name":"f","op":"list_files","list_files":{"pattern":")" + pattern + R"("}})",
        R"({"name":"i","op":"interleave","interleave":{"function":"read","cycle_length":1}})",
        R"({"name":"m","op":"map","map":{"udf":[
           {"op":"parse_example","args":{"features":["image/encoded","image/class/label"]}}]}})"};
    if (!filter.empty()) nodes.push_back(filter);
    Harness h(Chain(nodes, {R"({"name":"read","op":"tfrecord"})"}));
    std::vector<int64_t> labels;
    for (const auto& e : h.All()) labels.push_back(static_cast<int64_t>(e[1].GetDouble(0)));
    return labels;
  };
  const std::vector<int64_t> all = labels_of("");
  REQUIRE(all.size() == 18);
  // Two of the classes the data has (the generator draws them at random).
  const int64_t a = all[0], b = all[3];
  const std::vector<int64_t> kept =
      labels_of(R"({"name":"subset","op":"filter","filter":{"predicate":[{"op":"label_in","args":{"component":1,)"
                R"("values":[)" + std::to_string(a) + "," + std::to_string(b) + "]}}]}}");
  std::vector<int64_t> want;
  for (const int64_t l : all) {
    if (l == a || l == b) want.push_back(l);
  }
  REQUIRE_FALSE(want.empty());
  REQUIRE(want.size() < all.size());
  CHECK(kept == want);
}

}  // namespace
}  // namespace plumber::runtime::testing
