//===- Builders.h - IR builders of the lowerings ----------------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// Small builders of linalg and tensor IR on statically shaped tensors, used
// by every op family's patterns. Private to lib/Conversion/ParallaxToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_CONVERSION_PARALLAXTOLINALG_BUILDERS_H
#define PARALLAX_LIB_CONVERSION_PARALLAXTOLINALG_BUILDERS_H

#include "parallax/Conversion/ParallaxToLinalg/ParallaxToLinalg.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace mlir::parallax::to_linalg {

using Shape = SmallVector<int64_t>;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;
using CombineFn = function_ref<Value(OpBuilder &, Location, Value, Value)>;

RankedTensorType tensorTypeOf(Value v);
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);
/// A scalar constant of `type` (float or integer).
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar);

/// The indexing map reading an operand of `shape` broadcast (numpy style,
/// aligned on the right) into a loop nest over `resultShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape);
/// A `linalg.generic` computing `body(operands...)` elementwise into
/// `resultType`, broadcasting every operand.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange operands, BodyFn body);
/// A `linalg.generic` whose result element at index i is `input` at
/// `inputMap(i)`: a gather of elements by an affine map.
Value remap(OpBuilder &b, Location loc, Value input, AffineMap inputMap,
            RankedTensorType resultType);
/// Reshapes a statically shaped tensor: collapse to 1-D, expand to `shape`.
Value reshapeTo(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> shape);
/// Broadcasts `value` to `shape` (numpy rules) unless it already has it.
Value broadcastTo(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> shape);
Value transposed(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> permutation);

// Scalar arithmetic on float or integer operands.
bool isFloat(Value v);
Value maxOf(OpBuilder &b, Location loc, Value x, Value y);
Value minOf(OpBuilder &b, Location loc, Value x, Value y);
Value addOf(OpBuilder &b, Location loc, Value x, Value y);
Value mulOf(OpBuilder &b, Location loc, Value x, Value y);
template <typename FloatOp, typename IntOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0]))
    return FloatOp::create(b, loc, args[0], args[1]);
  return IntOp::create(b, loc, args[0], args[1]);
}

/// Reduces `input` over `axes` (dropped from the result) with `combine`,
/// starting from `initial`.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             double initial, CombineFn combine);
/// As above, starting from the scalar `initial(b, loc, elementType)`.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             function_ref<Value(OpBuilder &, Location, Type)> initial,
             CombineFn combine);
/// The identities of max and of min in `type`: -inf and +inf for floats,
/// the smallest and largest signed value for integers.
Value lowest(OpBuilder &b, Location loc, Type type);
Value highest(OpBuilder &b, Location loc, Type type);
/// The mean of `input` over `axes` (dropped from the result).
Value meanOver(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes);

/// The pieces of a softmax along `axis`: max(x) and sum(exp(x - max))
/// shaped as `x` with `axis` of size 1, and exp(x - max) itself. (The
/// exponentials are a pass of their own: inside the sum's loop they would
/// not vectorize.)
struct SoftmaxParts {
  Value max, exps, sum;
};
SoftmaxParts softmaxParts(OpBuilder &b, Location loc, Value x, int64_t axis);

/// Pads the spatial dimensions of `input` (k of them from `firstSpatial`:
/// 2 in NCHW order, 1 in NHWC) with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> pads, double value,
                 int64_t firstSpatial = 2);

/// segment_reduce and segment_reduce_grad (Segments.cpp), part of the
/// reductions' patterns.
void populateSegmentReductionPatterns(RewritePatternSet &patterns);

} // namespace mlir::parallax::to_linalg

#endif // PARALLAX_LIB_CONVERSION_PARALLAXTOLINALG_BUILDERS_H
