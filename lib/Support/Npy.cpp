//===- Npy.cpp - numpy .npy files -----------------------------------------===//
//
// Part of the Parallax project.
//
// The format: magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a header
// length (2 or 4 bytes), then a Python dict literal with 'descr',
// 'fortran_order' and 'shape', padded so the data starts aligned.
//
//===----------------------------------------------------------------------===//

#include "parallax/Support/Npy.h"

#include "parallax/Support/FileNames.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace parallax::runtime {

static const char kMagic[] = "\x93NUMPY";

int64_t dtypeSize(const std::string &dtype) {
  if (dtype == "<f4" || dtype == "<i4")
    return 4;
  if (dtype == "<f8" || dtype == "<i8")
    return 8;
  if (dtype == "|b1" || dtype == "|i1" || dtype == "|u1")
    return 1;
  if (dtype == "<f2" || dtype == "<i2")
    return 2;
  return 0;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// The value of `'key': ...` in the header dict, up to the next top-level
/// comma or the closing brace.
static bool headerField(const std::string &header, const std::string &key,
                        std::string &value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  size_t colon = header.find(':', at);
  if (colon == std::string::npos)
    return false;
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos)
    return false;
  size_t end = header[start] == '(' ? header.find(')', start) + 1
                                    : header.find_first_of(",}", start);
  if (end == std::string::npos || end == 0)
    return false;
  value = header.substr(start, end - start);
  return true;
}

/// Parses the header of the .npy file `path` of `fileSize` bytes from
/// `bytes`, its first `available` bytes (all of the header when they are
/// enough: `needed` says how many are, and it returns false without an
/// error when they are not). Sets the dtype and shape of `array` and where
/// the data starts, and checks that the data fits in the file.
static bool parseHeader(const std::string &path, const char *bytes,
                        size_t available, size_t fileSize, NpyArray &array,
                        size_t &dataStart, size_t &needed, std::string &error) {
  auto fail = [&](const std::string &what) {
    error = "'" + path + "' is not a valid .npy file: " + what;
    return false;
  };
  needed = 12;
  if (fileSize < 10 || (available >= 6 && std::memcmp(bytes, kMagic, 6) != 0))
    return fail("missing the \\x93NUMPY magic");
  if (available < std::min<size_t>(needed, fileSize))
    return false;
  int major = static_cast<unsigned char>(bytes[6]);
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3)
    return fail("unknown format version " + std::to_string(major));
  if (fileSize < 8 + lengthBytes)
    return fail("truncated header");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |=
        static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i]))
        << (8 * i);
  dataStart = 8 + lengthBytes + headerLength;
  if (fileSize < dataStart)
    return fail("truncated header");
  needed = dataStart;
  if (available < dataStart)
    return false;
  std::string header(bytes + 8 + lengthBytes, bytes + dataStart);

  std::string descr, fortran, shape;
  if (!headerField(header, "descr", descr) ||
      !headerField(header, "fortran_order", fortran) ||
      !headerField(header, "shape", shape))
    return fail("header lacks descr, fortran_order or shape");
  if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'')
    return fail("malformed descr " + descr);
  array.dtype = descr.substr(1, descr.size() - 2);
  if (fortran != "False")
    return fail("Fortran-ordered arrays are not supported");
  array.shape.clear();
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return fail("malformed shape " + shape);
  std::string dims = shape.substr(1, shape.size() - 2);
  std::stringstream stream(dims);
  std::string dim;
  while (std::getline(stream, dim, ',')) {
    size_t first = dim.find_first_not_of(' ');
    if (first == std::string::npos)
      continue;
    char *end = nullptr;
    long long value = std::strtoll(dim.c_str() + first, &end, 10);
    if (value < 0 || (*end && *end != ' '))
      return fail("malformed shape " + shape);
    array.shape.push_back(value);
  }
  int64_t elementSize = dtypeSize(array.dtype);
  if (elementSize == 0)
    return fail("unsupported dtype '" + array.dtype + "'");
  // The data must fit in the file, so any shape whose size overflows is
  // malformed.
  int64_t count = 1;
  for (int64_t d : array.shape) {
    if (d != 0 && count > INT64_MAX / elementSize / d)
      return fail("shape " + shape + " is too large");
    count *= d;
  }
  size_t expected = static_cast<size_t>(count * elementSize);
  if (fileSize - dataStart < expected) {
    error = "'" + path + "' is truncated: shape " + shapeString(array.shape) +
            " of " + array.dtype + " needs " + std::to_string(expected) +
            " bytes of data, the file has " +
            std::to_string(fileSize - dataStart);
    return false;
  }
  return true;
}

bool readNpy(const std::string &path, NpyArray &array, std::string &error) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  // One read of the whole file (a byte-wise iterator read 360 MB/s).
  std::streamoff fileSize = in.tellg();
  std::vector<char> bytes(fileSize > 0 ? static_cast<size_t>(fileSize) : 0);
  in.seekg(0);
  if (!bytes.empty() && !in.read(bytes.data(), bytes.size())) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  size_t dataStart = 0, needed = 0;
  if (!parseHeader(path, bytes.data(), bytes.size(), bytes.size(), array,
                   dataStart, needed, error))
    return false;
  // The data moves to the front of the buffer: no second copy in memory.
  size_t expected =
      static_cast<size_t>(dtypeSize(array.dtype) * elementCount(array));
  bytes.erase(bytes.begin(), bytes.begin() + dataStart);
  bytes.resize(expected);
  array.data = std::move(bytes);
  return true;
}

bool readNpyHeader(const std::string &path, NpyArray &array,
                   int64_t &dataOffset, std::string &error) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  size_t fileSize =
      static_cast<size_t>(std::max<std::streamoff>(in.tellg(), 0));
  std::vector<char> prefix;
  size_t dataStart = 0, needed = 12;
  for (;;) {
    size_t want = std::min(needed, fileSize);
    prefix.resize(want);
    in.seekg(0);
    if (want && !in.read(prefix.data(), want)) {
      error = "cannot read '" + path + "': " + std::strerror(errno);
      return false;
    }
    error.clear();
    if (parseHeader(path, prefix.data(), want, fileSize, array, dataStart,
                    needed, error)) {
      array.data.clear();
      dataOffset = static_cast<int64_t>(dataStart);
      return true;
    }
    if (!error.empty() || needed <= want)
      return false;
  }
}

int64_t elementCount(const NpyArray &array) {
  int64_t count = 1;
  for (int64_t d : array.shape)
    count *= d;
  return count;
}

std::string npyHeader(const std::string &dtype,
                      const std::vector<int64_t> &shape) {
  std::string header =
      "{'descr': '" + dtype +
      "', 'fortran_order': False, 'shape': " + shapeString(shape) + ", }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  char preamble[10] = {kMagic[0],
                       kMagic[1],
                       kMagic[2],
                       kMagic[3],
                       kMagic[4],
                       kMagic[5],
                       1,
                       0,
                       static_cast<char>(header.size() & 0xff),
                       static_cast<char>(header.size() >> 8)};
  return std::string(preamble, sizeof preamble) + header;
}

bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error) {
  return writeFileAtomically(
      path,
      {npyHeader(array.dtype, array.shape),
       std::string_view(array.data.data(), array.data.size())},
      error);
}

} // namespace parallax::runtime
