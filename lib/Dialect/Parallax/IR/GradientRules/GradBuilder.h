//===- GradBuilder.h - The builder shared by the gradient rules -*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// One GradientOpInterface::buildGradients per differentiable compute op,
// one file per op family: given dL/dresult, build dL/doperand from
// Parallax ops. Rules build on the forward values (operands and the
// result) and never on the op's lowering. A broadcasting op reduces each
// operand's gradient back to the operand's shape. The gradient of a gather
// on axis 0 is row-sparse.
//
// GradBuilder builds a rule's ops at one location (reductions back to an
// operand's shape for broadcasts, slices, pads, dilations); `rule` is the
// shape every buildGradients shares. Private to GradientRules/.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_DIALECT_PARALLAX_IR_GRADIENTRULES_GRADBUILDER_H
#define PARALLAX_LIB_DIALECT_PARALLAX_IR_GRADIENTRULES_GRADBUILDER_H

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <limits>
#include <numeric>

namespace mlir::parallax::gradients {

using Shape = SmallVector<int64_t>;

inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Builds the rule's ops at one location, folding as it goes (identity
/// reshapes, transposes and slices, constants; ParallaxFolders.cpp).
struct GradBuilder {
  OpBuilder &b;
  Location loc;

  /// A rank-0 constant of `like`'s element type (broadcasts in binary ops).
  Value scalar(Value like, double value) {
    Type element = tensorType(like).getElementType();
    auto type = RankedTensorType::get({}, element);
    auto attr =
        DenseElementsAttr::get(type, b.getFloatAttr(element, value).getValue());
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value reshape(Value value, ArrayRef<int64_t> shape) {
    auto type = tensorType(value);
    if (type.getShape() == shape)
      return value;
    return b.createOrFold<ReshapeOp>(loc, type.clone(shape), value);
  }
  Value expand(Value value, RankedTensorType to) {
    if (value.getType() == to)
      return value;
    return b.createOrFold<ExpandOp>(loc, to, value);
  }
  Value add(Value x, Value y) { return b.createOrFold<AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.createOrFold<SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.createOrFold<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.createOrFold<DivOp>(loc, x, y); }
  Value neg(Value x) { return b.createOrFold<NegOp>(loc, x); }
  Value sum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceOp::create(b, loc, ReduceKind::Sum, x, axes, keepdims);
  }
  Value mean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceOp::create(b, loc, ReduceKind::Mean, x, axes, keepdims);
  }
  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    return b.createOrFold<TransposeOp>(loc, x, permutation);
  }
  Value slice(Value x, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides) {
    return b.createOrFold<SliceOp>(loc, x, offsets, sizes, strides);
  }
  /// `where(condition, x, 0)`.
  Value select(Value condition, Value x) {
    return WhereOp::create(b, loc, condition, x, scalar(x, 0.0));
  }

  /// Sums `grad` (of a broadcast result's shape) over the dimensions that
  /// broadcasting added to or stretched in `to`, and gives it `to`'s shape.
  Value unbroadcast(Value grad, RankedTensorType to) {
    auto from = tensorType(grad);
    if (from.getShape() == to.getShape())
      return grad;
    int64_t lead = from.getRank() - to.getRank();
    Shape axes;
    for (int64_t d = 0; d < from.getRank(); ++d)
      if (d < lead || (to.getDimSize(d - lead) == 1 && from.getDimSize(d) != 1))
        axes.push_back(d);
    if (!axes.empty())
      grad = sum(grad, axes, /*keepdims=*/true);
    return reshape(grad, to.getShape());
  }

  /// Pads (positive entries) or crops (negative entries) every dimension.
  Value padOrCrop(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
    auto type = tensorType(x);
    Shape offsets, sizes, padLow, padHigh;
    bool crop = false, pad = false;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      offsets.push_back(std::max<int64_t>(0, -low[d]));
      sizes.push_back(type.getDimSize(d) - std::max<int64_t>(0, -low[d]) -
                      std::max<int64_t>(0, -high[d]));
      padLow.push_back(std::max<int64_t>(0, low[d]));
      padHigh.push_back(std::max<int64_t>(0, high[d]));
      crop |= low[d] < 0 || high[d] < 0;
      pad |= low[d] > 0 || high[d] > 0;
    }
    if (crop)
      x = slice(x, offsets, sizes, Shape(type.getRank(), 1));
    if (pad)
      x = PadOp::create(b, loc, PadMode::Constant, x, padLow, padHigh,
                        APFloat(0.0));
    return x;
  }

  /// Inserts `factor - 1` zeros after every element of dimension `dim`
  /// (the adjoint of a strided slice), dropping the trailing ones.
  Value dilate(Value x, int64_t dim, int64_t factor) {
    if (factor == 1)
      return x;
    auto type = tensorType(x);
    Shape split(type.getShape());
    split.insert(split.begin() + dim + 1, 1);
    x = reshape(x, split);
    Shape low(split.size(), 0), high(split.size(), 0);
    high[dim + 1] = factor - 1;
    x = PadOp::create(b, loc, PadMode::Constant, x, low, high, APFloat(0.0));
    Shape merged(type.getShape());
    merged[dim] *= factor;
    x = reshape(x, merged);
    Shape offsets(merged.size(), 0), sizes(merged);
    sizes[dim] = (type.getDimSize(dim) - 1) * factor + 1;
    return slice(x, offsets, sizes, Shape(merged.size(), 1));
  }
};

/// The permutation swapping the last two of `rank` dimensions.
inline Shape swapLastTwo(int64_t rank) {
  Shape permutation(rank);
  std::iota(permutation.begin(), permutation.end(), 0);
  std::swap(permutation[rank - 1], permutation[rank - 2]);
  return permutation;
}

/// Shared rule shape: one builder, one result gradient.
template <typename OpT, typename Fn>
LogicalResult rule(OpT op, OpBuilder &builder, ValueRange resultGradients,
                   SmallVectorImpl<Value> &operandGradients, Fn &&fn) {
  GradBuilder g{builder, op.getLoc()};
  size_t before = operandGradients.size();
  if (failed(fn(g, resultGradients.front())))
    return failure();
  assert(operandGradients.size() == before + op->getNumOperands() &&
         "a rule gives one gradient (or null) per operand");
  (void)before;
  return success();
}

} // namespace mlir::parallax::gradients

#endif // PARALLAX_LIB_DIALECT_PARALLAX_IR_GRADIENTRULES_GRADBUILDER_H
