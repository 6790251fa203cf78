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
  auto fail = [&](const std::string &what) {
    error = "'" + path + "' is not a valid .npy file: " + what;
    return false;
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return fail("missing the \\x93NUMPY magic");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3)
    return fail("unknown format version " + std::to_string(major));
  if (bytes.size() < 8 + lengthBytes)
    return fail("truncated header");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |=
        static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i]))
        << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    return fail("truncated header");
  std::string header(bytes.begin() + 8 + lengthBytes,
                     bytes.begin() + dataStart);

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
  if (bytes.size() - dataStart < expected) {
    error = "'" + path + "' is truncated: shape " + shapeString(array.shape) +
            " of " + array.dtype + " needs " + std::to_string(expected) +
            " bytes of data, the file has " +
            std::to_string(bytes.size() - dataStart);
    return false;
  }
  // The data moves to the front of the buffer: no second copy in memory.
  bytes.erase(bytes.begin(), bytes.begin() + dataStart);
  bytes.resize(expected);
  array.data = std::move(bytes);
  return true;
}

bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error) {
  std::string header =
      "{'descr': '" + array.dtype +
      "', 'fortran_order': False, 'shape': " + shapeString(array.shape) + ", }";
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
  return writeFileAtomically(
      path,
      {std::string_view(preamble, sizeof preamble), header,
       std::string_view(array.data.data(), array.data.size())},
      error);
}

} // namespace parallax::runtime
