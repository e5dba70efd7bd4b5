// Sizes, rates and durations: one parser for every flag.
#include <catch2/catch.hpp>

#include "base/units.h"

using namespace plumber;

TEST_CASE("sizes use decimal and binary suffixes", "[units]") {
  CHECK(*units::ParseBytes("300G") == 300'000'000'000ull);
  CHECK(*units::ParseBytes("300GB") == 300'000'000'000ull);
  CHECK(*units::ParseBytes("512MiB") == 512ull * 1024 * 1024);
  CHECK(*units::ParseBytes("1.5Ki") == 1536ull);
  CHECK(*units::ParseBytes("1048576") == 1048576ull);
  CHECK(*units::ParseBytes("2 TiB") == 2ull << 40);
  CHECK(*units::ParseBytes("64k") == 64000ull);
}

TEST_CASE("bad sizes are rejected with the text quoted", "[units]") {
  for (const char* bad : {"", "G", "-5G", "12XB", "1e400", "abc", "5GiBs"}) {
    auto r = units::ParseBytes(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Status::Code::kInvalidArgument);
    CHECK(r.status().message().find(std::string("'") + bad + "'") != std::string::npos);
  }
}

TEST_CASE("rates accept an optional /s", "[units]") {
  CHECK(*units::ParseRate("100MB/s") == Approx(1e8));
  CHECK(*units::ParseRate("100MB") == Approx(1e8));
  CHECK(*units::ParseRate("1GiB/s") == Approx(1073741824.0));
  CHECK_FALSE(units::ParseRate("100 furlongs/s").ok());
}

TEST_CASE("a lowercase b in a rate is bits, as networks are sold", "[units]") {
  CHECK(*units::ParseRate("10Gb/s") == Approx(1.25e9));
  CHECK(*units::ParseRate("10Gbit/s") == Approx(1.25e9));
  CHECK(*units::ParseRate("10Gbps") == Approx(1.25e9));
  CHECK(*units::ParseRate("1.25GB/s") == Approx(1.25e9));
  CHECK(*units::ParseRate("8Kib/s") == Approx(1024));
  CHECK_FALSE(units::ParseRate("10GBb/s").ok());
}

TEST_CASE("durations", "[units]") {
  CHECK(*units::ParseSeconds("30s") == Approx(30));
  CHECK(*units::ParseSeconds("2m") == Approx(120));
  CHECK(*units::ParseSeconds("5ms") == Approx(0.005));
  CHECK(*units::ParseSeconds("200us") == Approx(0.0002));
  CHECK(*units::ParseSeconds("1h") == Approx(3600));
  CHECK(*units::ParseSeconds("1.5") == Approx(1.5));
  CHECK(*units::ParseSeconds("1e-3s") == Approx(0.001));
  CHECK_FALSE(units::ParseSeconds("3 days").ok());
}

TEST_CASE("shares are percentages or fractions", "[units]") {
  CHECK(*units::ParseFraction("10%") == Approx(0.1));
  CHECK(*units::ParseFraction("2.5%") == Approx(0.025));
  CHECK(*units::ParseFraction("0.1") == Approx(0.1));
  // "10" would be 1000%: almost surely a percentage without its sign.
  auto ten = units::ParseFraction("10");
  REQUIRE_FALSE(ten.ok());
  CHECK(ten.status().message().find("'10%'") != std::string::npos);
  CHECK_FALSE(units::ParseFraction("10 percent").ok());
  CHECK_FALSE(units::ParseFraction("-5%").ok());
}

TEST_CASE("formatting keeps three significant digits", "[units]") {
  CHECK(units::FormatBytes(512) == "512 B");
  CHECK(units::FormatBytes(1.5e9) == "1.50 GB");
  CHECK(units::FormatBytes(135e9) == "135 GB");
  CHECK(units::FormatRate(4.12e8) == "412 MB/s");
  CHECK(units::FormatSeconds(0.00235) == "2.35 ms");
}

TEST_CASE("numbers that overflow once scaled are refused (fuzz finding)", "[units]") {
  // 1e294 x the P suffix overflows a double: found by units_fuzz.
  const std::string huge = std::string(294, '7') + "P";
  CHECK_FALSE(units::ParseRate(huge).ok());
  CHECK_FALSE(units::ParseBytes(huge).ok());
  CHECK_FALSE(units::ParseSeconds(std::string(307, '9') + "h").ok());
  CHECK_THAT(units::ParseRate(huge).status().message(), Catch::Contains("too large"));
}

TEST_CASE("a positive rate refuses zero and a sign as not positive, other text as no rate", "[units]") {
  CHECK(*units::ParsePositiveRate("10Gb/s") == Approx(1.25e9));
  CHECK(*units::ParsePositiveRate("1.25GB/s") == Approx(1.25e9));
  for (const char* text : {"0", "0GB/s", "-10Gb/s", " -1", "-fast"}) {
    const auto r = units::ParsePositiveRate(text);
    INFO(text);
    CHECK(r.status().code() == Status::Code::kOutOfRange);
    CHECK(r.status().message() == "'" + std::string(text) + "' is not a positive rate");
  }
  const auto bad = units::ParsePositiveRate("10 furlongs/s");
  CHECK(bad.status().code() == Status::Code::kInvalidArgument);
  CHECK(bad.status().message() == units::ParseRate("10 furlongs/s").status().message());
}
