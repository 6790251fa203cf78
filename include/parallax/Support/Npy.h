//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
//
// Part of the Parallax project. Shared by the runtime and the compiler
// (lib/Support); in namespace parallax::runtime, the runtime being its main
// user.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_SUPPORT_NPY_H
#define PARALLAX_SUPPORT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace parallax::runtime {

/// A parsed .npy array: its dtype descr (e.g. "<f4"), shape and raw data.
struct NpyArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// Reads `path`. On failure returns false and sets `error` to a message
/// naming the file and the problem (missing, not .npy, Fortran order,
/// truncated data...).
bool readNpy(const std::string &path, NpyArray &array, std::string &error);

/// Reads only the header of `path`: the dtype and shape of `array` (its
/// data left empty) and `dataOffset`, where the data starts; checks, as
/// readNpy does, that the file holds all of the data. For reading parts
/// of large files.
bool readNpyHeader(const std::string &path, NpyArray &array,
                   int64_t &dataOffset, std::string &error);

/// The number of elements of `array`'s shape.
int64_t elementCount(const NpyArray &array);

/// The preamble and header (format version 1.0) of a .npy file of `dtype`
/// and `shape`: the data follows it.
std::string npyHeader(const std::string &dtype,
                      const std::vector<int64_t> &shape);

/// Writes `array` to `path` (format version 1.0) through a temporary file
/// renamed into place, so a crash never leaves a partial file.
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

/// The number of bytes of one element of `dtype`, or 0 if unsupported.
int64_t dtypeSize(const std::string &dtype);

/// "(2, 3)"-style rendering of a shape, as numpy prints it.
std::string shapeString(const std::vector<int64_t> &shape);

} // namespace parallax::runtime

#endif // PARALLAX_SUPPORT_NPY_H
