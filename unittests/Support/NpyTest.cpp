//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Support/Npy.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace parallax::runtime;

namespace {

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/parallax-npy-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  std::string path(const std::string &name) { return dir + "/" + name; }
  void writeBytes(const std::string &name, const std::string &bytes) {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

  std::string dir;
};

/// A version-1.0 .npy file with the given header dict and data bytes.
std::string npyFile(const std::string &header, size_t dataBytes) {
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size()));
  file.push_back(0);
  return file + header + std::string(dataBytes, '\0');
}

NpyArray floats(std::vector<int64_t> shape, std::vector<float> values) {
  NpyArray array;
  array.dtype = "<f4";
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(float));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

TEST_F(NpyTest, RoundTrip) {
  NpyArray written = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  std::string error;
  ASSERT_TRUE(writeNpy(path("a.npy"), written, error)) << error;
  NpyArray read;
  ASSERT_TRUE(readNpy(path("a.npy"), read, error)) << error;
  EXPECT_EQ(read.dtype, "<f4");
  EXPECT_EQ(read.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(read.data, written.data);
  // No temporary file is left behind.
  EXPECT_EQ(std::system(("ls '" + dir + "' | grep -q tmp").c_str()) == 0,
            false);
}

TEST_F(NpyTest, ScalarsAndEmptyShapes) {
  std::string error;
  NpyArray scalar = floats({}, {2.5f});
  ASSERT_TRUE(writeNpy(path("s.npy"), scalar, error)) << error;
  NpyArray read;
  ASSERT_TRUE(readNpy(path("s.npy"), read, error)) << error;
  EXPECT_TRUE(read.shape.empty());
  EXPECT_EQ(read.data.size(), 4u);
  EXPECT_EQ(shapeString({}), "()");
  EXPECT_EQ(shapeString({4}), "(4,)");
  EXPECT_EQ(shapeString({2, 3}), "(2, 3)");
}

TEST_F(NpyTest, HeaderIsAlignedAsNumpyWritesIt) {
  std::string error;
  ASSERT_TRUE(writeNpy(path("a.npy"), floats({3}, {1, 2, 3}), error));
  std::ifstream in(path("a.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  // The data (12 bytes) starts at a multiple of 64, after a newline.
  size_t dataStart = bytes.size() - 12;
  EXPECT_EQ(dataStart % 64, 0u);
  EXPECT_EQ(bytes[dataStart - 1], '\n');
}

TEST_F(NpyTest, ErrorsNameTheFileAndTheProblem) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(readNpy(path("missing.npy"), array, error));
  EXPECT_NE(error.find("missing.npy"), std::string::npos);
  EXPECT_NE(error.find("No such file"), std::string::npos);

  writeBytes("garbage.npy", "hello world");
  EXPECT_FALSE(readNpy(path("garbage.npy"), array, error));
  EXPECT_NE(error.find("magic"), std::string::npos);

  writeBytes(
      "fortran.npy",
      npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8));
  EXPECT_FALSE(readNpy(path("fortran.npy"), array, error));
  EXPECT_NE(error.find("Fortran"), std::string::npos);

  ASSERT_TRUE(writeNpy(path("full.npy"), floats({4}, {1, 2, 3, 4}), error));
  std::ifstream in(path("full.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  writeBytes("short.npy", bytes.substr(0, bytes.size() - 3));
  EXPECT_FALSE(readNpy(path("short.npy"), array, error));
  EXPECT_NE(error.find("truncated"), std::string::npos);
  EXPECT_NE(error.find("(4,)"), std::string::npos);

  writeBytes(
      "complex.npy",
      npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8));
  EXPECT_FALSE(readNpy(path("complex.npy"), array, error));
  EXPECT_NE(error.find("unsupported dtype '<c8'"), std::string::npos);
}

/// readNpyHeader reads what readNpy would, without the data: the data
/// starts where npyHeader's bytes end (a 64-byte boundary), and a file
/// too short for its shape or with a header cut off is an error.
TEST_F(NpyTest, HeaderOnly) {
  std::string error;
  ASSERT_TRUE(writeNpy(path("a.npy"), floats({2, 3}, {1, 2, 3, 4, 5, 6}),
                       error));
  NpyArray header;
  int64_t offset = -1;
  ASSERT_TRUE(readNpyHeader(path("a.npy"), header, offset, error)) << error;
  EXPECT_EQ(header.dtype, "<f4");
  EXPECT_EQ(header.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(header.data.empty());
  EXPECT_EQ(offset, static_cast<int64_t>(npyHeader("<f4", {2, 3}).size()));
  EXPECT_EQ(offset % 64, 0);
  EXPECT_EQ(elementCount(header), 6);

  std::ifstream in(path("a.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.substr(0, offset), npyHeader("<f4", {2, 3}));
  writeBytes("short.npy", bytes.substr(0, bytes.size() - 1));
  EXPECT_FALSE(readNpyHeader(path("short.npy"), header, offset, error));
  EXPECT_NE(error.find("truncated"), std::string::npos);
  writeBytes("cut.npy", bytes.substr(0, 20));
  EXPECT_FALSE(readNpyHeader(path("cut.npy"), header, offset, error));
  EXPECT_NE(error.find("truncated header"), std::string::npos);
  EXPECT_FALSE(readNpyHeader(path("missing.npy"), header, offset, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

TEST_F(NpyTest, UnwritableDirectoryIsAnError) {
  std::string error;
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x.npy", floats({1}, {1}), error));
  EXPECT_NE(error.find("/nonexistent-dir/x.npy.tmp"), std::string::npos);
}

/// Headers whose shape cannot be (empty, unbalanced, or so large that its
/// byte count overflows) are errors, not reads past the data; found by
/// fuzzing the training program's inputs.
TEST_F(NpyTest, MalformedShapesAreErrors) {
  NpyArray array;
  std::string error;
  for (const char *shape :
       {"'shape': ,", "'shape': (", "'shape': 3,",
        "'shape': (9223372036854775807, 9223372036854775807),",
        "'shape': (4611686018427387904,),"}) {
    writeBytes("bad.npy",
               npyFile(std::string("{'descr': '<f4', 'fortran_order': "
                                   "False, ") +
                           shape + " }",
                       16));
    EXPECT_FALSE(readNpy(path("bad.npy"), array, error)) << shape;
    EXPECT_NE(error.find("bad.npy"), std::string::npos) << error;
  }
}

/// A write that cannot complete (a full disk) fails with the reason and
/// leaves nothing at the path.
TEST_F(NpyTest, WriteErrorsAreReported) {
  std::string error;
  EXPECT_FALSE(writeNpy("/dev/full/x.npy", floats({1}, {1}), error));
  EXPECT_NE(error.find("/dev/full"), std::string::npos) << error;
}

} // namespace
