//===- Builders.cpp - IR builders shared by the lowerings -----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace mlir::parallax::to_linalg {

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

/// A scalar constant of `type` (float or integer).
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar) {
  return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                ValueRange{emptyTensor(b, loc, type)})
      .getResult(0);
}

/// The indexing map reading an operand of `shape` broadcast (numpy style,
/// aligned on the right) into a loop nest over `resultShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = resultShape.size() - shape.size();
  for (auto [i, dim] : llvm::enumerate(shape)) {
    int64_t loop = offset + i;
    exprs.push_back(dim == 1 && resultShape[loop] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(loop, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

/// A `linalg.generic` computing `body(operands...)` elementwise into
/// `resultType`, broadcasting every operand.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange operands, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(ctx, tensorTypeOf(operand).getShape(),
                                resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, operands,
             ValueRange{emptyTensor(b, loc, resultType)}, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value result = body(nb, nloc, args.drop_back());
               linalg::YieldOp::create(nb, nloc, result);
             })
      .getResult(0);
}

/// A `linalg.generic` whose result element at index i is `input` at
/// `inputMap(i)`: a gather of elements by an affine map.
Value remap(OpBuilder &b, Location loc, Value input, AffineMap inputMap,
            RankedTensorType resultType) {
  SmallVector<AffineMap> maps{inputMap,
                              b.getMultiDimIdentityMap(resultType.getRank())};
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, input,
             ValueRange{emptyTensor(b, loc, resultType)}, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

/// Reshapes a statically shaped tensor: collapse to 1-D, expand to `shape`.
Value reshapeTo(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorTypeOf(value);
  if (type.getShape() == shape)
    return value;
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return rank == 0 ? SmallVector<ReassociationIndices>{}
                     : SmallVector<ReassociationIndices>{group};
  };
  int64_t n = type.getNumElements();
  auto flatType = RankedTensorType::get({n}, type.getElementType());
  Value flat = value;
  if (type.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                         SmallVector<ReassociationIndices>{});
  else if (type.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, value,
                                           all(type.getRank()));
  if (shape.size() == 1)
    return flat;
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, target, flat,
                                           SmallVector<ReassociationIndices>{});
  return tensor::ExpandShapeOp::create(b, loc, target, flat, all(shape.size()));
}

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value maxOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MaximumFOp::create(b, loc, x, y))
                    : Value(arith::MaxSIOp::create(b, loc, x, y));
}

Value minOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MinimumFOp::create(b, loc, x, y))
                    : Value(arith::MinSIOp::create(b, loc, x, y));
}

Value addOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::AddFOp::create(b, loc, x, y))
                    : Value(arith::AddIOp::create(b, loc, x, y));
}

Value mulOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MulFOp::create(b, loc, x, y))
                    : Value(arith::MulIOp::create(b, loc, x, y));
}

/// Broadcasts `value` to `shape` (numpy rules) unless it already has it.
Value broadcastTo(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorTypeOf(value);
  if (type.getShape() == shape)
    return value;
  return elementwise(b, loc,
                     RankedTensorType::get(shape, type.getElementType()), value,
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value transposed(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> permutation) {
  RankedTensorType type = tensorTypeOf(value);
  Shape shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value init =
      emptyTensor(b, loc, RankedTensorType::get(shape, type.getElementType()));
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

/// Reduces `input` over `axes` (dropped from the result) with `combine`,
/// starting from `initial`.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             double initial, CombineFn combine) {
  return reduce(
      b, loc, input, axes,
      [&](OpBuilder &nb, Location l, Type type) {
        return scalarConstant(nb, l, type, initial);
      },
      combine);
}

Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             function_ref<Value(OpBuilder &, Location, Type)> initial,
             CombineFn combine) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = tensorTypeOf(input);
  Shape shape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced) {
      shape.push_back(type.getDimSize(d));
      outExprs.push_back(getAffineDimExpr(d, ctx));
    }
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init =
      filledTensor(b, loc, resultType, initial(b, loc, type.getElementType()));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(type.getRank()),
                              AffineMap::get(type.getRank(), 0, outExprs, ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, input, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       combine(nb, nloc, args[0], args[1]));
             })
      .getResult(0);
}

/// An integer extreme is exact here: as a double, the largest i64 would
/// round up to 2^63 and overflow.
static Value extreme(OpBuilder &b, Location loc, Type type, bool lowest) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType, APFloat::getInf(floatType.getFloatSemantics(),
                                                  /*Negative=*/lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(type, lowest ? APInt::getSignedMinValue(width)
                                    : APInt::getSignedMaxValue(width)));
}

Value lowest(OpBuilder &b, Location loc, Type type) {
  return extreme(b, loc, type, /*lowest=*/true);
}

Value highest(OpBuilder &b, Location loc, Type type) {
  return extreme(b, loc, type, /*lowest=*/false);
}

/// The mean of `input` over `axes` (dropped from the result).
Value meanOver(OpBuilder &b, Location loc, Value input,
               ArrayRef<int64_t> axes) {
  RankedTensorType type = tensorTypeOf(input);
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= type.getDimSize(axis);
  Value sum = reduce(b, loc, input, axes, 0, addOf);
  Value divisor = scalarConstant(b, loc, type.getElementType(), count);
  return elementwise(b, loc, tensorTypeOf(sum), sum,
                     [&](OpBuilder &nb, Location l, ValueRange v) {
                       return floatOrInt<arith::DivFOp, arith::DivSIOp>(
                           nb, l, {v[0], divisor});
                     });
}

SoftmaxParts softmaxParts(OpBuilder &b, Location loc, Value x, int64_t axis) {
  RankedTensorType type = tensorTypeOf(x);
  Shape keptShape(type.getShape());
  keptShape[axis] = 1;
  Value max =
      reshapeTo(b, loc, reduce(b, loc, x, axis, lowest, maxOf), keptShape);
  Value exps = elementwise(
      b, loc, type, ValueRange{x, max},
      [](OpBuilder &nb, Location l, ValueRange v) -> Value {
        return math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, v[0], v[1]).getResult());
      });
  Value sum =
      reshapeTo(b, loc, reduce(b, loc, exps, axis, 0, addOf), keptShape);
  return {max, exps, sum};
}

/// Pads the spatial dimensions (2..) of `input` with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> pads, double value, int64_t firstSpatial) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return input;
  RankedTensorType type = tensorTypeOf(input);
  int64_t k = type.getRank() - 2;
  SmallVector<OpFoldResult> low(type.getRank(), b.getIndexAttr(0)),
      high(type.getRank(), b.getIndexAttr(0));
  Shape shape(type.getShape());
  for (int64_t d = 0; d < k; ++d) {
    low[firstSpatial + d] = b.getIndexAttr(pads[d]);
    high[firstSpatial + d] = b.getIndexAttr(pads[d + k]);
    shape[firstSpatial + d] += pads[d] + pads[d + k];
  }
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input, low,
      high, scalarConstant(b, loc, type.getElementType(), value));
}

} // namespace mlir::parallax::to_linalg
