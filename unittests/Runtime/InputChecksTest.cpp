//===- InputChecksTest.cpp - Ranges and finiteness of input data ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"
#include "parallax/Support/Npy.h"

#include "Support.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace parallax::runtime;

namespace {

template <typename T>
NpyArray array(const char *dtype, std::vector<int64_t> shape,
               std::vector<T> values) {
  NpyArray result{dtype, std::move(shape), {}};
  result.data.resize(values.size() * sizeof(T));
  std::memcpy(result.data.data(), values.data(), result.data.size());
  return result;
}

TEST(InputChecksTest, ValuesInRangePass) {
  parallax_rt_declare_input_range("ok", -3, 3, 0, 0, "a table of 3 rows");
  checkInputValues("ok", "ok.npy",
                   array<int64_t>("<i8", {2, 2}, {-3, -1, 0, 2}),
                   /*examples=*/true, /*finite=*/true, /*batch=*/2);
}

TEST(InputChecksTest, AValueOutsideNamesFileExampleValueAndRange) {
  parallax_rt_declare_input_range("ids", 0, 10, 0, 0, "the rows of 'emb'");
  EXPECT_EXIT(
      checkInputValues("ids", "data/ids.npy",
                       array<int32_t>("<i4", {3, 2}, {1, 2, 3, 4, 10, 5}), true,
                       true, 3),
      testing::ExitedWithCode(1),
      "'data/ids.npy' example 2, position \\[0\\]: value 10 is "
      "outside \\[0, 10\\), the valid range of the rows of 'emb'");
}

TEST(InputChecksTest, TheIgnoredLabelIsAllowed) {
  parallax_rt_declare_input_range("labels", 0, 4, 1, -100, "4 classes");
  checkInputValues("labels", "labels.npy",
                   array<int64_t>("<i8", {3}, {0, -100, 3}), true, true, 3);
  EXPECT_EXIT(checkInputValues("labels", "labels.npy",
                               array<int64_t>("<i8", {3}, {0, -1, 3}), true,
                               true, 3),
              testing::ExitedWithCode(1),
              "example 1: value -1 is outside \\[0, 4\\).*or -100");
}

/// A column of a table of ids: only its elements are checked, in every
/// batch of the file (dimension 0 counts within a batch of 2).
TEST(InputChecksTest, RegionsLimitTheCheckToTheirElements) {
  parallax_rt_declare_input_range("table", 0, 5, 0, 0, "column 1");
  parallax_rt_declare_input_region("table", 0, 0, 2, 1);
  parallax_rt_declare_input_region("table", 1, 1, 1, 1);
  // Column 0 and 2 hold anything; column 1 is within [0, 5).
  checkInputValues(
      "table", "table.npy",
      array<int64_t>("<i8", {4, 3}, {99, 1, -7, 50, 4, 8, 77, 0, 9, 1, 2, 3}),
      true, true, 2);
  EXPECT_EXIT(
      checkInputValues(
          "table", "table.npy",
          array<int64_t>("<i8", {4, 3}, {9, 1, 9, 9, 4, 9, 9, 5, 9, 9, 2, 9}),
          true, true, 2),
      testing::ExitedWithCode(1),
      "example 2, position \\[1\\]: value 5 is outside");
}

/// Found by fuzzing: a region given for a later dimension only leaves the
/// earlier ones unlimited (it divided by a zero stride).
TEST(InputChecksTest, AnUnlimitedDimensionTakesEveryIndex) {
  parallax_rt_declare_input_range("late", 0, 2, 0, 0, "column 0");
  parallax_rt_declare_input_region("late", 1, 0, 1, 1);
  checkInputValues("late", "late.npy",
                   array<int64_t>("<i8", {2, 2}, {1, 50, 0, 60}), true, true,
                   2);
}

TEST(InputChecksTest, NaNAndInfinityInFloatDataAreNamed) {
  float nan = std::nanf(""), inf = INFINITY;
  EXPECT_EXIT(checkInputValues("x", "x.npy",
                               array<float>("<f4", {2, 2}, {0, 1, nan, 2}),
                               true, true, 2),
              testing::ExitedWithCode(1),
              "'x.npy' example 1, position \\[0\\] is NaN: training data "
              "must be finite");
  EXPECT_EXIT(checkInputValues("x", "x.npy",
                               array<double>("<f8", {2}, {-inf, 0}), true, true,
                               2),
              testing::ExitedWithCode(1), "example 0 is infinite");
  // Inference inputs may hold anything.
  checkInputValues("x", "x.npy", array<float>("<f4", {2}, {nan, inf}), false,
                   /*finite=*/false, 0);
}

} // namespace
