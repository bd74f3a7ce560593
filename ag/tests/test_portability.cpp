// What must behave the same on every system the book builds on: numbers read from text, the
// thread count with and without OpenMP, and the library releases the build reports.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ag/error.hpp"
#include "ag/numbers.hpp"
#include "ag/threads.hpp"
#include "ag/versions.hpp"

TEST(Portability, ParseDoubleReadsWhatFromCharsReads) {
  const std::pair<const char*, double> good[] = {{"0", 0},    {"3", 3},       {"-2.5", -2.5},
                                                 {".5", 0.5}, {"1e-3", 1e-3}, {"6E2", 600}};
  for (const auto& [text, expected] : good) {
    double value = -1;
    EXPECT_TRUE(ag::parse_double(text, value)) << text;
    EXPECT_EQ(value, expected) << text;
  }
  double value = 0;
  EXPECT_TRUE(ag::parse_double("inf", value));
  EXPECT_TRUE(std::isinf(value));
  EXPECT_TRUE(ag::parse_double("nan", value));
  EXPECT_TRUE(std::isnan(value));
}

TEST(Portability, ParseDoubleRefusesWhatFromCharsRefuses) {
  for (const char* text : {"", " 1", "+1", "1 ", "1x", "0x10", "0x1p3", "-", ".", "e5", "1e400",
                           "--1", "1,5", "abc"}) {
    double value = 42;
    EXPECT_FALSE(ag::parse_double(text, value)) << "'" << text << "'";
    EXPECT_EQ(value, 42) << "'" << text << "' changed the value";
  }
}

TEST(Portability, ThreadCountIsOneWithoutOpenMPAndSettableWithIt) {
  const int before = ag::max_threads();
  EXPECT_GE(before, 1);
  ag::set_max_threads(3);
  EXPECT_EQ(ag::max_threads(), ag::has_threads() ? 3 : 1);
  ag::set_max_threads(before);
  EXPECT_EQ(ag::max_threads(), before);
  EXPECT_THROW(ag::set_max_threads(0), ag::Error);
}

TEST(Portability, LibraryVersionsNameTheThreeLibraries) {
  const std::string versions = ag::library_versions();
  for (const char* name : {"xsimd ", "xtensor ", "xtl "})
    EXPECT_NE(versions.find(name), std::string::npos) << versions;
}
