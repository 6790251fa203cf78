//===- ExternalData.h - Where an ONNX tensor's external data is -*- C++ -*-===//
//
// Part of the Parallax project. Shared by the importer and the runtime,
// which both read initializers stored outside the model file.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_SUPPORT_EXTERNALDATA_H
#define PARALLAX_SUPPORT_EXTERNALDATA_H

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace parallax {

/// The `external_data` entries of an ONNX tensor: the file (relative to
/// the model's directory unless absolute; empty when missing), the byte
/// offset of the data in it, and its length (-1 when not given).
struct ExternalData {
  std::string location;
  int64_t offset = 0, length = -1;
};

inline ExternalData externalDataOf(const onnx::TensorProto &tensor) {
  ExternalData data;
  for (const onnx::StringStringEntryProto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      data.location = kv.value();
    else if (kv.key() == "offset")
      data.offset = std::strtoll(kv.value().c_str(), nullptr, 10);
    else if (kv.key() == "length")
      data.length = std::strtoll(kv.value().c_str(), nullptr, 10);
  }
  return data;
}

} // namespace parallax

#endif // PARALLAX_SUPPORT_EXTERNALDATA_H
