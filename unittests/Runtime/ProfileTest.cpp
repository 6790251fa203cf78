//===- ProfileTest.cpp - Where a training step's time goes ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include "parallax/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace parallax::runtime;

// What --parallax-instrument-profile gives a program: two sites.
extern "C" const char parallax_profile_sites[] =
    "elementwise\t100\t400\t/a/Relu\tstep.k0.generic./a/Relu\n"
    "matrix product (BLAS)\t2000\t800\t/b/Gemm\tmatmul_f32\n";

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The report's text from `"key":` to the end of its object.
std::string entryOf(const std::string &report, const std::string &label) {
  size_t at = report.find("{\"family\":\"" + label + "\"");
  if (at == std::string::npos)
    return "";
  return report.substr(at, report.find('}', at) - at);
}

TEST(ProfileTest, SitesBeforeEnablingCostNothing) {
  // Not profiling: any site, even one past the table, returns at once.
  parallax_rt_profile_begin(12345);
  parallax_rt_profile_end(12345);
  ProfileScope scope("step end", "loss");
  EXPECT_FALSE(profiling());
}

TEST(ProfileTest, PerStepTotalsLeaveTheWarmUpOut) {
  std::string path =
      ::testing::TempDir() + "profile." + std::to_string(getpid()) + ".json";
  std::remove(path.c_str());
  enableProfile(path);
  ASSERT_TRUE(profiling());
  startProfile(3);
  for (int step = 0; step < 3; ++step) {
    // Site 0 twice a step, site 1 once; the runtime's own site once.
    for (int64_t site : {0, 0, 1}) {
      parallax_rt_profile_begin(site);
      parallax_rt_profile_end(site);
    }
    { ProfileScope scope("step end", "loss, metrics and progress"); }
    profileStepEnd();
  }
  testing::internal::CaptureStderr();
  writeProfile();
  std::string table = testing::internal::GetCapturedStderr();
  EXPECT_NE(table.find("2 steps of"), std::string::npos) << table;
  EXPECT_NE(table.find("(the first, a warm-up, left out)"), std::string::npos);
  EXPECT_NE(table.find("matrix product (BLAS)"), std::string::npos);

  std::string report = readFile(path);
  EXPECT_EQ(report.rfind("{\"parallax_profile\":1,", 0), 0u) << report;
  EXPECT_NE(report.find("\"steps\":2,"), std::string::npos);
  // Per step: the calls of the two measured steps, averaged.
  std::string elementwise = entryOf(report, "elementwise");
  EXPECT_NE(elementwise.find("\"calls\":2,\"flops\":200,\"bytes\":800"),
            std::string::npos)
      << elementwise;
  std::string product = entryOf(report, "matrix product (BLAS)");
  EXPECT_NE(product.find("\"calls\":1,\"flops\":2000,\"bytes\":800"),
            std::string::npos)
      << product;
  EXPECT_NE(entryOf(report, "step end").find("\"calls\":1,"),
            std::string::npos);
  EXPECT_NE(report.find("\"site\":\"matmul_f32 /b/Gemm\""), std::string::npos);
  EXPECT_NE(report.find("\"node\":\"/a/Relu\""), std::string::npos);
  std::remove(path.c_str());
}

TEST(ProfileTest, SitesOutsideTheTableAreAnInternalError) {
  // Another test of this process may have started OpenMP's threads.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        enableProfile(::testing::TempDir() + "unused-profile.json");
        parallax_rt_profile_begin(2);
      },
      "internal error: profile site 2 is not in the program's table of 2");
}

} // namespace
