//===- Resampling.cpp - ConvTranspose and Resize --------------------------===//
//
// Part of the Parallax project.
//
// The upsampling operators, built from ops that have gradients:
// ConvTranspose is a convolution's input gradient (a transposed
// convolution); Resize gathers, along each resized axis, the source
// elements at positions computed at compile time (nearest) or blends two
// of them with constant weights (linear).
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

using Shape = SmallVector<int64_t>;

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertConvTranspose(NodeContext &ctx) {
  std::optional<ConvolutionOperands> operands = convolutionOperands(ctx);
  if (!operands)
    return failure();
  auto [x, w, bias] = *operands;
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t groups = ctx.attrInt("group", 1);
  if (xType.getRank() < 3 || wType.getRank() != xType.getRank() || groups < 1 ||
      wType.getDimSize(0) != xType.getDimSize(1) ||
      xType.getDimSize(1) % groups)
    return ctx.emitError() << "input " << xType << " and weight " << wType
                           << " must be N x C x D1.. and C x M/group x K1.. "
                              "with C a multiple of group ("
                           << groups << ")";
  int64_t k = xType.getRank() - 2;
  Shape kernel(wType.getShape().drop_front(2));
  if (ctx.attrInts("kernel_shape").value_or(kernel) != kernel)
    return ctx.emitError() << "kernel_shape does not match the weight "
                           << wType;
  Shape strides = ctx.attrInts("strides").value_or(Shape(k, 1));
  Shape dilations = ctx.attrInts("dilations").value_or(Shape(k, 1));
  Shape outputPadding = ctx.attrInts("output_padding").value_or(Shape(k, 0));
  if (static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k ||
      static_cast<int64_t>(outputPadding.size()) != k)
    return ctx.emitError() << "strides, dilations and output_padding need " << k
                           << " entries";
  for (int64_t d = 0; d < k; ++d)
    if (strides[d] < 1 || dilations[d] < 1 || outputPadding[d] < 0 ||
        outputPadding[d] >= std::max(strides[d], dilations[d]))
      return ctx.emitError()
             << "strides and dilations must be positive and output_padding "
                "in [0, max(stride, dilation))";

  // The full output of each spatial dimension, before pads.
  Shape full(k);
  for (int64_t d = 0; d < k; ++d)
    full[d] = strides[d] * (xType.getDimSize(d + 2) - 1) + outputPadding[d] +
              (kernel[d] - 1) * dilations[d] + 1;
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  std::optional<Shape> outputShape = ctx.attrInts("output_shape");
  Shape pads;
  if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Pads that give the requested output: split as ONNX specifies.
    Shape target(k);
    for (int64_t d = 0; d < k; ++d)
      target[d] = xType.getDimSize(d + 2) * strides[d];
    if (outputShape) {
      Shape given(*outputShape);
      if (static_cast<int64_t>(given.size()) == k + 2)
        given.erase(given.begin(), given.begin() + 2);
      if (static_cast<int64_t>(given.size()) != k)
        return ctx.emitError() << "output_shape needs " << k << " entries";
      target = given;
    }
    pads.assign(2 * k, 0);
    for (int64_t d = 0; d < k; ++d) {
      // A negative total (an output_shape past the full output) pads the
      // end with zeros, as ONNX's reference computes it (floor halves).
      int64_t total = full[d] - target[d];
      int64_t half = llvm::divideFloorSigned(total, 2);
      pads[d] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[d + k] = total - pads[d];
    }
  } else if (autoPad == "NOTSET" || autoPad == "VALID") {
    pads = autoPad == "VALID" ? Shape(2 * k, 0)
                              : ctx.attrInts("pads").value_or(Shape(2 * k, 0));
    if (static_cast<int64_t>(pads.size()) != 2 * k)
      return ctx.emitError()
             << "needs " << 2 * k << " pads, got " << pads.size();
  } else {
    return ctx.emitError() << "unknown auto_pad '" << autoPad << "'";
  }
  Shape outSpatial(k);
  for (int64_t d = 0; d < k; ++d) {
    outSpatial[d] = full[d] - pads[d] - pads[d + k];
    if ((!outputShape && (pads[d] < 0 || pads[d + k] < 0)) || outSpatial[d] < 1)
      return ctx.emitError() << "pads " << pads[d] << " and " << pads[d + k]
                             << " leave no output in dimension " << d;
  }
  return result(ctx,
                buildTransposedConvolution(
                    ctx.builder, ctx.loc, x, w, bias, strides, dilations,
                    ArrayRef<int64_t>(pads).take_front(k), outSpatial, groups));
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

namespace {

/// How one output coordinate maps into the input (ONNX's
/// coordinate_transformation_mode), for one axis.
struct AxisMapping {
  std::string mode;
  int64_t in, out;
  double scale, roiStart, roiEnd;
  /// The output length the formulas use: in * scale when scales are given
  /// (not rounded, as ONNX's reference computes it), else the size.
  double length;

  /// The input coordinate of output index `i`, or nullopt when it falls
  /// outside the input (tf_crop_and_resize's extrapolation).
  std::optional<double> source(int64_t i) const {
    double x = i;
    if (mode == "half_pixel")
      return (x + 0.5) / scale - 0.5;
    if (mode == "pytorch_half_pixel")
      return length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    if (mode == "align_corners")
      return length > 1 ? x * double(in - 1) / (length - 1) : 0.0;
    if (mode == "asymmetric")
      return x / scale;
    if (mode == "tf_half_pixel_for_nn")
      return (x + 0.5) / scale;
    // tf_crop_and_resize
    double c = length > 1 ? roiStart * (in - 1) + x * (roiEnd - roiStart) *
                                                      (in - 1) / (length - 1)
                          : 0.5 * (roiStart + roiEnd) * (in - 1);
    if (c < 0 || c > in - 1)
      return std::nullopt;
    return c;
  }
};

int64_t nearestIndex(double x, StringRef rounding, int64_t in) {
  double i;
  if (rounding == "floor")
    i = std::floor(x);
  else if (rounding == "ceil")
    i = std::ceil(x);
  else if (x == std::floor(x) + 0.5)
    i = rounding == "round_prefer_ceil" ? std::ceil(x) : std::floor(x);
  else
    i = std::round(x);
  return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1);
}

/// `value` gathered along `axis` at constant `indices`.
Value gatherAlong(NodeContext &ctx, Value value, int64_t axis,
                  ArrayRef<int64_t> indices) {
  Const c = Const::ofInts(ctx.builder.getI64Type(),
                          {static_cast<int64_t>(indices.size())},
                          std::vector<int64_t>(indices.begin(), indices.end()));
  Value ids = arith::ConstantOp::create(ctx.builder, ctx.loc, c.toAttr());
  return createInferred<GatherOp>(ctx, value, ids, static_cast<uint64_t>(axis));
}

/// A constant shaped to broadcast along `axis` of a tensor of `rank`.
Value weightsAlong(NodeContext &ctx, Type elementType, int64_t rank,
                   int64_t axis, ArrayRef<double> weights) {
  Shape shape(rank, 1);
  shape[axis] = weights.size();
  Const c = Const::ofFloats(
      elementType, shape, std::vector<double>(weights.begin(), weights.end()));
  return arith::ConstantOp::create(ctx.builder, ctx.loc, c.toAttr());
}

} // namespace

LogicalResult onnx_import::convertResize(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  std::string mode = ctx.attrString("mode", "nearest");
  std::string transform =
      ctx.attrString("coordinate_transformation_mode", "half_pixel");
  std::string rounding = ctx.attrString("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    return ctx.emitError() << "mode '" << mode
                           << "' is not supported (nearest and linear are)";
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          transform))
    return ctx.emitError() << "unknown coordinate_transformation_mode '"
                           << transform << "'";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          rounding))
    return ctx.emitError() << "unknown nearest_mode '" << rounding << "'";
  if (ctx.attrInt("exclude_outside", 0) != 0)
    return ctx.emitError() << "exclude_outside = 1 is not supported";
  if (!isa<FloatType>(type.getElementType()))
    return ctx.emitError() << "resizing " << type
                           << " is not supported (floating-point data is)";

  // Opset 11-12: X, roi, scales, sizes; every input but X may be empty.
  auto constant = [&](unsigned i) -> const Const * {
    if (!ctx.hasInput(i))
      return nullptr;
    const Const *c = ctx.requireConstInput(i, i == 1   ? "roi"
                                              : i == 2 ? "scales"
                                                       : "sizes");
    return c && c->size() > 0 ? c : nullptr;
  };
  const Const *roi = constant(1), *scales = constant(2), *sizes = constant(3);
  if (ctx.failed())
    return failure();
  if (!scales == !sizes)
    return ctx.emitError() << "exactly one of scales and sizes must be given";
  const Const *given = scales ? scales : sizes;
  if (given->size() != rank)
    return ctx.emitError() << (scales ? "scales" : "sizes") << " needs " << rank
                           << " entries, got " << given->size();
  if (transform == "tf_crop_and_resize" && (!roi || roi->size() != 2 * rank))
    return ctx.emitError() << "tf_crop_and_resize needs an roi of " << 2 * rank
                           << " entries";

  Value y = x;
  Type elementType = type.getElementType();
  double extrapolation = ctx.attrFloat("extrapolation_value", 0.0f);
  for (int64_t axis = 0; axis < rank; ++axis) {
    AxisMapping map{transform, type.getDimSize(axis), 0, 1.0, 0.0, 1.0, 0.0};
    if (scales) {
      map.scale = scales->at(axis);
      if (!(map.scale > 0))
        return ctx.emitError() << "scales must be positive, got " << map.scale
                               << " for axis " << axis;
      map.out = static_cast<int64_t>(std::floor(map.in * map.scale));
      map.length = map.in * map.scale;
    } else {
      map.out = sizes->at(axis);
      if (map.out < 1)
        return ctx.emitError() << "sizes must be positive, got " << map.out
                               << " for axis " << axis;
      map.scale = double(map.out) / double(map.in);
      map.length = map.out;
    }
    if (roi) {
      map.roiStart = roi->at(axis);
      map.roiEnd = roi->at(axis + rank);
    }
    if (map.out == map.in && transform != "tf_crop_and_resize" &&
        (map.scale == 1.0 || sizes))
      continue;
    if (map.in == 0 || map.out < 1)
      return ctx.emitError() << "axis " << axis << " resizes " << map.in
                             << " elements to " << map.out;

    SmallVector<int64_t> low, high;
    SmallVector<double> lowWeight, highWeight, inside;
    bool outside = false;
    for (int64_t i = 0; i < map.out; ++i) {
      std::optional<double> source = map.source(i);
      inside.push_back(source ? 1.0 : 0.0);
      outside |= !source;
      double c = source.value_or(0.0);
      if (mode == "nearest") {
        low.push_back(nearestIndex(c, rounding, map.in));
        continue;
      }
      c = std::clamp(c, 0.0, double(map.in - 1));
      int64_t first = static_cast<int64_t>(std::floor(c));
      low.push_back(first);
      high.push_back(std::min(first + 1, map.in - 1));
      highWeight.push_back(c - first);
      lowWeight.push_back(1.0 - (c - first));
    }
    // One statement per op: the IR's order does not depend on the order
    // the compiler evaluates arguments in.
    Value resized = gatherAlong(ctx, y, axis, low);
    if (resized && mode == "linear") {
      Value lowPart = createInferred<MulOp>(
          ctx, resized, weightsAlong(ctx, elementType, rank, axis, lowWeight));
      Value other = gatherAlong(ctx, y, axis, high);
      if (!lowPart || !other)
        return failure();
      Value highPart = createInferred<MulOp>(
          ctx, other, weightsAlong(ctx, elementType, rank, axis, highWeight));
      resized =
          highPart ? createInferred<AddOp>(ctx, lowPart, highPart) : Value();
    }
    if (resized && outside) {
      // tf_crop_and_resize outside the input: extrapolation_value.
      SmallVector<double> fill;
      for (double in : inside)
        fill.push_back(in ? 0.0 : extrapolation);
      Value kept = createInferred<MulOp>(
          ctx, resized, weightsAlong(ctx, elementType, rank, axis, inside));
      resized = kept ? createInferred<AddOp>(
                           ctx, kept,
                           weightsAlong(ctx, elementType, rank, axis, fill))
                     : Value();
    }
    if (!resized)
      return failure();
    y = resized;
  }
  return result(ctx, y);
}
