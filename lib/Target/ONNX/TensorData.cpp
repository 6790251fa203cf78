//===- TensorData.cpp - Initializer and constant tensor data --------------===//
//
// Part of the Parallax project.
//
// Reading a TensorProto's bytes (raw, typed fields or external data,
// memory-mapped), as compile-time constants or resource blobs, and the
// initializers as variables.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Support/ExternalData.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

//===----------------------------------------------------------------------===//
// Tensor data
//===----------------------------------------------------------------------===//

static int64_t byteWidth(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

template <typename T> static void appendBytes(std::string &bytes, T value) {
  bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// Bytes owned by a string (moved in, not copied).
static TensorData ownedBytes(std::string bytes) {
  auto owner = std::make_shared<std::string>(std::move(bytes));
  return {ArrayRef<char>(owner->data(), owner->size()), owner};
}

FailureOr<TensorData>
GraphImporter::readTensorBytes(const onnx::TensorProto &t, Type elementType,
                               int64_t numElements,
                               onnx::TensorProto *movable) {
  Location loc = fileLoc();
  int64_t width = byteWidth(elementType);
  int64_t expected = numElements * width;
  std::string what = "tensor '" + t.name() + "'";

  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    auto [location, offset, length] = ::parallax::externalDataOf(t);
    if (location.empty())
      return emitError(loc) << what << " has external data without a location";
    SmallString<256> path = externalDataPath(location);
    if (length >= 0 && length != expected)
      return emitError(loc)
             << what << ": external data length " << length
             << " does not match the " << expected << " bytes of its type";
    auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!file)
      return emitError(loc) << what << ": cannot read external data file '"
                            << path << "': " << file.getError().message()
                            << " (set the directory with --onnx-data-dir)";
    int64_t available = static_cast<int64_t>((*file)->getBufferSize()) - offset;
    if (offset < 0 || available < expected)
      return emitError(loc)
             << what << ": external data file '" << path
             << "' is too short: it has " << std::max<int64_t>(available, 0)
             << " bytes after offset " << offset << ", " << expected
             << " are needed";
    // The (usually mapped) file stays alive as long as the data is used.
    std::shared_ptr<llvm::MemoryBuffer> owner = std::move(*file);
    return TensorData{
        ArrayRef<char>(owner->getBufferStart() + offset, expected), owner};
  }

  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != expected)
      return emitError(loc)
             << what << " holds " << t.raw_data().size()
             << " bytes of data, but " << numElements << " elements of "
             << elementType << " need " << expected;
    if (movable)
      return ownedBytes(std::move(*movable->mutable_raw_data()));
    return ownedBytes(t.raw_data());
  }

  std::string bytes;
  bytes.reserve(expected);
  int64_t count = 0;
  if (elementType.isF32()) {
    count = t.float_data_size();
    for (float v : t.float_data())
      appendBytes(bytes, v);
  } else if (elementType.isF64()) {
    count = t.double_data_size();
    for (double v : t.double_data())
      appendBytes(bytes, v);
  } else if (elementType.isInteger(64)) {
    count = t.int64_data_size();
    for (int64_t v : t.int64_data())
      appendBytes(bytes, v);
  } else {
    // int32_data holds int32, int16, int8, bool, and the bits of f16/bf16.
    count = t.int32_data_size();
    for (int32_t v : t.int32_data()) {
      switch (width) {
      case 4:
        appendBytes(bytes, v);
        break;
      case 2:
        appendBytes(bytes, static_cast<int16_t>(v));
        break;
      default:
        appendBytes(bytes, static_cast<int8_t>(v));
      }
    }
  }
  if (count != numElements)
    return emitError(loc) << what << " holds " << count
                          << " values, but its shape has " << numElements
                          << " elements";
  return ownedBytes(std::move(bytes));
}

/// Reads a TensorProto's shape and element type.
static FailureOr<std::pair<SmallVector<int64_t>, Type>>
readTensorHeader(GraphImporter &importer, const onnx::TensorProto &t) {
  Type elementType = importer.convertElementType(t.data_type());
  if (!elementType)
    return emitError(importer.fileLoc())
           << "tensor '" << t.name() << "' has unsupported element type "
           << dataTypeName(t.data_type());
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  if (!countElements(shape, kMaxElements))
    return emitError(importer.fileLoc())
           << "tensor '" << t.name()
           << "' has a negative dimension or more than 2^40 elements";
  return std::make_pair(shape, elementType);
}

FailureOr<Const> onnx_import::readTensorConst(GraphImporter &importer,
                                              const onnx::TensorProto &t) {
  auto header = readTensorHeader(importer, t);
  if (failed(header))
    return failure();
  auto [shape, elementType] = *header;
  int64_t numElements = *countElements(shape, kMaxElements);
  FailureOr<TensorData> data =
      importer.readTensorBytes(t, elementType, numElements);
  if (failed(data))
    return failure();
  if (elementType.isInteger(1)) {
    std::vector<int64_t> values;
    for (char c : data->bytes)
      values.push_back(c != 0);
    return Const::ofInts(elementType, shape, std::move(values));
  }
  auto attr = DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(shape, elementType), data->bytes);
  if (isa<FloatType>(elementType)) {
    std::vector<double> values;
    for (const APFloat &v : attr.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return Const::ofFloats(elementType, shape, std::move(values));
  }
  std::vector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return Const::ofInts(elementType, shape, std::move(values));
}

ElementsAttr GraphImporter::makeElementsAttr(RankedTensorType type,
                                             TensorData data,
                                             StringRef blobName) {
  if (static_cast<int64_t>(data.bytes.size()) <=
      options.resourceBlobThresholdBytes)
    return DenseElementsAttr::getFromRawBuffer(type, data.bytes);
  // Large values are held as resource blobs: no text round trip, the
  // printer can elide them (--elide-large-constants), and the blob adopts
  // the bytes where they are when they are suitably aligned.
  std::string key;
  for (char c : blobName)
    key.push_back(llvm::isAlnum(c) || c == '_' ? c : '_');
  constexpr size_t kAlignment = alignof(double);
  AsmResourceBlob blob =
      reinterpret_cast<uintptr_t>(data.bytes.data()) % kAlignment == 0
          ? AsmResourceBlob(
                data.bytes, kAlignment,
                [owner = std::move(data.owner)](
                    void *, size_t, size_t) mutable { owner.reset(); },
                /*dataIsMutable=*/false)
          : HeapAsmResourceBlob::allocateAndCopyWithAlign(
                data.bytes, kAlignment, /*dataIsMutable=*/false);
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

//===----------------------------------------------------------------------===//
// Import
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::importInitializers(onnx::GraphProto &graph) {
  bool ok = true;
  llvm::StringSet<> floatInitializers;
  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    auto header = readTensorHeader(*this, init);
    if (failed(header)) {
      ok = false;
      continue;
    }
    auto [shape, elementType] = *header;
    if (!isa<FloatType>(elementType)) {
      FailureOr<Const> value = readTensorConst(*this, init);
      if (failed(value))
        ok = false;
      else
        defineConst(init.name(), std::move(*value));
      continue;
    }
    floatInitializers.insert(init.name());
    auto type = RankedTensorType::get(shape, elementType);
    bool trainable = !options.frozen.contains(init.name());
    bool fromModel = trainable && loadsWeightsFromModel();
    ElementsAttr value;
    if (!options.shapesOnly && !fromModel) {
      // The raw data moves out of the model into the variable's blob.
      FailureOr<TensorData> data =
          readTensorBytes(init, elementType, type.getNumElements(), &init);
      if (failed(data)) {
        ok = false;
        continue;
      }
      value = makeElementsAttr(type, std::move(*data), init.name());
    }
    Location loc =
        NameLoc::get(StringAttr::get(context, init.name()), fileLoc());
    auto variable = VariableOp::create(builder, loc, init.name(), type, value,
                                       trainable, /*state=*/false,
                                       /*statistics=*/false,
                                       /*distribution=*/nullptr,
                                       /*sparsity=*/nullptr);
    if (fromModel)
      variable->setAttr(ParallaxDialect::getFromModelAttrName(),
                        builder.getUnitAttr());
  }
  for (const auto &name : options.frozen)
    if (!floatInitializers.contains(name.getKey())) {
      ok = false;
      emitError(fileLoc()) << "--freeze: '" << name.getKey()
                           << "' is not a floating-point initializer of "
                              "the model";
    }
  return success(ok);
}
