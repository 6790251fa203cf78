//===- FileNamesTest.cpp - Names as file names ----------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Support/FileNames.h"

#include "gtest/gtest.h"

using namespace parallax::runtime;

namespace {

TEST(FileNamesTest, PlainNamesStayAsTheyAre) {
  for (const char *name : {"embedding.weight", "fc1.bias", "dense_kernel:0",
                           "x-y+z", "a b", "résumé"})
    EXPECT_EQ(encodeFileName(name), name);
}

TEST(FileNamesTest, OtherNamesNeverLeaveTheDirectory) {
  EXPECT_EQ(encodeFileName("dense/kernel:0"), "dense%2Fkernel:0");
  EXPECT_EQ(encodeFileName("../../evil"), "%2E.%2F..%2Fevil");
  EXPECT_EQ(encodeFileName(".hidden"), "%2Ehidden");
  EXPECT_EQ(encodeFileName("100%"), "100%25");
  EXPECT_EQ(encodeFileName(std::string("a\nb\0c", 5)), "a%0Ab%00c");
  EXPECT_EQ(encodeFileName(""), "%");
  for (const std::string &name : {std::string("/abs/path"), std::string(".."),
                                  std::string("."), std::string("a/../../b")}) {
    std::string file = encodeFileName(name);
    EXPECT_EQ(file.find('/'), std::string::npos) << file;
    EXPECT_NE(file.front(), '.') << file;
  }
}

TEST(FileNamesTest, DecodingGivesTheNameBack) {
  for (const std::string &name :
       {std::string("embedding.weight"), std::string("dense/kernel:0"),
        std::string("../../evil"), std::string("100%"), std::string(""),
        std::string("%2F"), std::string("a\x01\x7f/b", 5)})
    EXPECT_EQ(decodeFileName(encodeFileName(name)), name) << name;
}

TEST(FileNamesTest, LongNamesAreShortenedDistinctly) {
  std::string a(300, '/'), b = a + "x";
  std::string fileA = encodeFileName(a), fileB = encodeFileName(b);
  EXPECT_LE(fileA.size(), 200u);
  EXPECT_NE(fileA, fileB);
  EXPECT_NE(fileA.find("%~"), std::string::npos);
  EXPECT_EQ(decodeFileName(fileA), ""); // only the manifest maps it back
  // The cut never splits a %XX escape.
  size_t cut = fileA.find("%~");
  for (size_t i = 0; i < cut; i += 3)
    EXPECT_EQ(fileA.substr(i, 3), "%2F");
}

TEST(FileNamesTest, JsonStringsEscape) {
  EXPECT_EQ(jsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

} // namespace
