//===- ParallaxComputeOps.cpp - Tensor compute operations -----------------===//
//
// Part of the Parallax project.
//
// Result-type inference (which is also the verifier: a result that differs
// from the inferred type is rejected) and verifiers of the compute ops.
// Inference runs while parsing, before operand constraints are verified, so
// it checks every type it relies on instead of assuming it.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

using Shape = SmallVector<int64_t>;

/// The ranked tensor type of `value`, or null (reported by the caller).
RankedTensorType getTensor(Value value) {
  return value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
}

LogicalResult fail(std::optional<Location> loc, const Twine &message) {
  return emitOptionalError(loc, message);
}

std::string str(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << type << "'";
  return s;
}

std::string str(ArrayRef<int64_t> values) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  return s + "]";
}

/// Checks that `values` has one entry per dimension (or `factor` per
/// dimension) and no entry below `min`.
LogicalResult checkPerDim(std::optional<Location> loc, StringRef name,
                          ArrayRef<int64_t> values, int64_t count,
                          int64_t min) {
  if (static_cast<int64_t>(values.size()) != count)
    return fail(loc, Twine("'") + name + "' must have " + Twine(count) +
                         " entries, got " + str(values));
  for (int64_t v : values)
    if (v < min)
      return fail(loc, Twine("'") + name + "' entries must be >= " +
                           Twine(min) + ", got " + str(values));
  return success();
}

LogicalResult broadcastShapes(std::optional<Location> loc,
                              ArrayRef<RankedTensorType> types, Shape &shape) {
  shape.assign(types.front().getShape().begin(),
               types.front().getShape().end());
  for (RankedTensorType type : types.drop_front()) {
    Shape next;
    if (!OpTrait::util::getBroadcastedShape(shape, type.getShape(), next)) {
      std::string list;
      llvm::raw_string_ostream os(list);
      llvm::interleaveComma(types, os, [&](Type t) { os << str(t); });
      return fail(loc, "operand shapes are not broadcast-compatible: " + list);
    }
    shape = std::move(next);
  }
  return success();
}

/// Whether `from` broadcasts to `to` without changing `to`
/// (ONNX's unidirectional broadcasting).
bool broadcastsTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  for (auto [f, t] : llvm::zip(llvm::reverse(from), llvm::reverse(to)))
    if (f != 1 && f != t)
      return false;
  return true;
}

template <typename Adaptor>
LogicalResult inferBinary(std::optional<Location> loc, Adaptor adaptor,
                          Type resultElementType,
                          SmallVectorImpl<Type> &types) {
  RankedTensorType lhs = getTensor(adaptor.getLhs());
  RankedTensorType rhs = getTensor(adaptor.getRhs());
  if (!lhs || !rhs)
    return fail(loc, "operands must be ranked tensors");
  Shape shape;
  if (failed(broadcastShapes(loc, {lhs, rhs}, shape)))
    return failure();
  types.push_back(RankedTensorType::get(
      shape, resultElementType ? resultElementType : lhs.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult
inferElementwiseBroadcast(MLIRContext *, std::optional<Location> loc,
                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  return inferBinary(loc, adaptor, Type(), types);
}

template <typename Adaptor>
LogicalResult
inferPredicateBroadcast(MLIRContext *context, std::optional<Location> loc,
                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  return inferBinary(loc, adaptor, IntegerType::get(context, 1), types);
}

template <typename Adaptor>
LogicalResult inferWhere(MLIRContext *, std::optional<Location> loc,
                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType cond = getTensor(adaptor.getCondition());
  RankedTensorType lhs = getTensor(adaptor.getTrueValue());
  RankedTensorType rhs = getTensor(adaptor.getFalseValue());
  if (!cond || !lhs || !rhs)
    return fail(loc, "operands must be ranked tensors");
  Shape shape;
  if (failed(broadcastShapes(loc, {cond, lhs, rhs}, shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferMatMul(MLIRContext *, std::optional<Location> loc,
                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType lhs = getTensor(adaptor.getLhs());
  RankedTensorType rhs = getTensor(adaptor.getRhs());
  if (!lhs || !rhs || lhs.getRank() < 1 || rhs.getRank() < 1)
    return fail(loc, "operands must be tensors of rank >= 1");
  // numpy: a 1-D lhs is a row vector, a 1-D rhs a column vector.
  Shape a(lhs.getShape()), b(rhs.getShape());
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  int64_t k = a.back(), kRhs = b[b.size() - 2];
  if (k != kRhs)
    return fail(loc, "contracting dimensions differ: lhs " + str(lhs) +
                         " has " + Twine(k) + " columns, rhs " + str(rhs) +
                         " has " + Twine(kRhs) + " rows");
  Shape batch;
  if (!OpTrait::util::getBroadcastedShape(ArrayRef(a).drop_back(2),
                                          ArrayRef(b).drop_back(2), batch))
    return fail(loc, "batch dimensions of " + str(lhs) + " and " + str(rhs) +
                         " are not broadcast-compatible");
  if (lhs.getRank() > 1)
    batch.push_back(a[a.size() - 2]);
  if (rhs.getRank() > 1)
    batch.push_back(b.back());
  types.push_back(RankedTensorType::get(batch, lhs.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferGemm(MLIRContext *, std::optional<Location> loc,
                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType a = getTensor(adaptor.getA());
  RankedTensorType b = getTensor(adaptor.getB());
  if (!a || !b || a.getRank() != 2 || b.getRank() != 2)
    return fail(loc, "A and B must be 2-D tensors");
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t k = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kB = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (k != kB)
    return fail(loc, "contracting dimensions differ: op(A) is " + Twine(m) +
                         "x" + Twine(k) + ", op(B) is " + Twine(kB) + "x" +
                         Twine(n));
  if (Value c = adaptor.getC()) {
    RankedTensorType cType = getTensor(c);
    if (!cType || !broadcastsTo(cType.getShape(), {m, n}))
      return fail(loc, "C " + str(c.getType()) +
                           " does not broadcast to the result shape " +
                           str(ArrayRef<int64_t>{m, n}));
  }
  types.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferGather(MLIRContext *, std::optional<Location> loc,
                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType data = getTensor(adaptor.getData());
  RankedTensorType indices = getTensor(adaptor.getIndices());
  if (!data || !indices)
    return fail(loc, "operands must be ranked tensors");
  int64_t axis = adaptor.getAxis();
  if (axis >= data.getRank())
    return fail(loc,
                "axis " + Twine(axis) + " is out of range for " + str(data));
  Shape shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferTranspose(MLIRContext *, std::optional<Location> loc,
                             Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  if (!input)
    return fail(loc, "input must be a ranked tensor");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = input.getRank();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid)
    return fail(loc, "permutation " + str(perm) +
                         " is not a permutation of the dimensions of " +
                         str(input));
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(input.getDimSize(p));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferConcat(MLIRContext *, std::optional<Location> loc,
                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return fail(loc, "requires at least one input");
  RankedTensorType first = getTensor(inputs.front());
  if (!first)
    return fail(loc, "inputs must be ranked tensors");
  int64_t axis = adaptor.getAxis();
  if (axis >= first.getRank())
    return fail(loc,
                "axis " + Twine(axis) + " is out of range for " + str(first));
  Shape shape(first.getShape());
  shape[axis] = 0;
  for (Value input : inputs) {
    RankedTensorType type = getTensor(input);
    if (!type || type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return fail(loc, "inputs must have the rank and element type of " +
                           str(first) + ", got " + str(input.getType()));
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis && type.getDimSize(d) != first.getDimSize(d))
        return fail(loc, "inputs " + str(first) + " and " + str(type) +
                             " differ in dimension " + Twine(d) +
                             ", which is not the concatenation axis");
    shape[axis] += type.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferSlice(MLIRContext *, std::optional<Location> loc,
                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  if (!input)
    return fail(loc, "input must be a ranked tensor");
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = input.getRank();
  if (failed(checkPerDim(loc, "offsets", offsets, rank, 0)) ||
      failed(checkPerDim(loc, "sizes", sizes, rank, 0)) ||
      failed(checkPerDim(loc, "strides", strides, rank,
                         std::numeric_limits<int64_t>::min())))
    return failure();
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] == 0)
      return fail(loc, "strides must be non-zero, got " + str(strides));
    if (sizes[d] == 0)
      continue;
    int64_t last = offsets[d] + (sizes[d] - 1) * strides[d];
    int64_t dim = input.getDimSize(d);
    if (offsets[d] >= dim || last < 0 || last >= dim)
      return fail(loc, "slice of dimension " + Twine(d) + " (offset " +
                           Twine(offsets[d]) + ", size " + Twine(sizes[d]) +
                           ", stride " + Twine(strides[d]) +
                           ") reads outside [0, " + Twine(dim) + ")");
  }
  types.push_back(RankedTensorType::get(sizes, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferTile(MLIRContext *, std::optional<Location> loc,
                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  if (!input)
    return fail(loc, "input must be a ranked tensor");
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if (failed(checkPerDim(loc, "repeats", repeats, input.getRank(), 0)))
    return failure();
  Shape shape;
  for (auto [dim, repeat] : llvm::zip(input.getShape(), repeats))
    shape.push_back(dim * repeat);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferPad(MLIRContext *, std::optional<Location> loc,
                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  if (!input)
    return fail(loc, "input must be a ranked tensor");
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if (failed(checkPerDim(loc, "low", low, input.getRank(), 0)) ||
      failed(checkPerDim(loc, "high", high, input.getRank(), 0)))
    return failure();
  Shape shape;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t dim = input.getDimSize(d);
    int64_t widest = std::max(low[d], high[d]);
    if (adaptor.getMode() == PadMode::Reflect && widest > 0 && widest >= dim)
      return fail(loc, "reflect padding of " + Twine(widest) +
                           " needs dimension " + Twine(d) +
                           " to be larger, got " + Twine(dim));
    if (adaptor.getMode() == PadMode::Edge && widest > 0 && dim == 0)
      return fail(loc, "edge padding of empty dimension " + Twine(d));
    shape.push_back(dim + low[d] + high[d]);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferReduce(MLIRContext *, std::optional<Location> loc,
                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  if (!input)
    return fail(loc, "input must be a ranked tensor");
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis < 0 || axis >= input.getRank() || (i > 0 && axes[i - 1] >= axis))
      return fail(loc, "axes " + str(axes) +
                           " must be sorted, distinct dimensions of " +
                           str(input));
  Shape shape;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(input.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// The type of a segment reduction's result (one row per bag), after
/// checking its kind and the shape of its bounds.
FailureOr<RankedTensorType> segmentsType(std::optional<Location> loc,
                                         ReduceKind kind, RankedTensorType data,
                                         RankedTensorType bounds) {
  if (kind != ReduceKind::Sum && kind != ReduceKind::Mean &&
      kind != ReduceKind::Max)
    return fail(loc, "a segment reduction is sum, mean or max, not " +
                         stringifyReduceKind(kind));
  if (data.getRank() < 1)
    return fail(loc, "data must have a row dimension, got " + str(data));
  if (bounds.getRank() != 1 || bounds.getDimSize(0) < 1)
    return fail(loc, "bounds must be 1-D with one more element than there "
                     "are bags, got " +
                         str(bounds));
  Shape shape(data.getShape());
  shape.front() = bounds.getDimSize(0) - 1;
  return RankedTensorType::get(shape, data.getElementType());
}

template <typename Adaptor>
LogicalResult inferSegmentReduce(MLIRContext *, std::optional<Location> loc,
                                 Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  RankedTensorType data = getTensor(adaptor.getData());
  RankedTensorType bounds = getTensor(adaptor.getBounds());
  if (!data || !bounds)
    return fail(loc, "operands must be ranked tensors");
  FailureOr<RankedTensorType> bags =
      segmentsType(loc, adaptor.getKind(), data, bounds);
  if (failed(bags))
    return failure();
  types.push_back(*bags);
  return success();
}

template <typename Adaptor>
LogicalResult inferSegmentReduceGrad(MLIRContext *, std::optional<Location> loc,
                                     Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  RankedTensorType grad = getTensor(adaptor.getOutputGrad());
  RankedTensorType data = getTensor(adaptor.getData());
  RankedTensorType bounds = getTensor(adaptor.getBounds());
  if (!grad || !data || !bounds)
    return fail(loc, "operands must be ranked tensors");
  FailureOr<RankedTensorType> bags =
      segmentsType(loc, adaptor.getKind(), data, bounds);
  if (failed(bags))
    return failure();
  if (grad != *bags)
    return fail(loc, "output_grad " + str(grad) +
                         " must have the forward result's type, " + str(*bags));
  types.push_back(data);
  return success();
}

/// Checks the spatial attributes of a convolution or pooling window over
/// `input` (N x C x D1..Dk) and computes the output spatial sizes.
LogicalResult inferWindowed(std::optional<Location> loc, RankedTensorType input,
                            ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                            bool ceilMode, Shape &spatial) {
  int64_t k = input.getRank() - 2;
  if (failed(checkPerDim(loc, "strides", strides, k, 1)) ||
      failed(checkPerDim(loc, "pads", pads, 2 * k, 0)) ||
      failed(checkPerDim(loc, "dilations", dilations, k, 1)))
    return failure();
  for (int64_t d = 0; d < k; ++d) {
    int64_t extent = input.getDimSize(d + 2) + pads[d] + pads[d + k];
    int64_t window = dilations[d] * (kernel[d] - 1) + 1;
    if (window > extent)
      return fail(loc, "window of " + Twine(window) +
                           " elements is larger than the padded spatial "
                           "dimension " +
                           Twine(d) + " of " + Twine(extent));
    int64_t span = extent - window;
    int64_t out =
        (ceilMode ? llvm::divideCeil(span, strides[d]) : span / strides[d]) + 1;
    spatial.push_back(out);
  }
  return success();
}

template <typename Adaptor>
LogicalResult inferConv(MLIRContext *, std::optional<Location> loc,
                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  RankedTensorType filter = getTensor(adaptor.getFilter());
  if (!input || !filter || input.getRank() < 3 ||
      filter.getRank() != input.getRank())
    return fail(loc, "input must be N x C x D1.. (rank >= 3) and the filter "
                     "of the same rank");
  int64_t groups = adaptor.getGroups();
  int64_t channels = input.getDimSize(1), features = filter.getDimSize(0);
  if (groups < 1 || channels % groups != 0 || features % groups != 0 ||
      filter.getDimSize(1) * groups != channels)
    return fail(loc, "filter " + str(filter) + " with " + Twine(groups) +
                         " groups does not match the " + Twine(channels) +
                         " input channels of " + str(input));
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = getTensor(bias);
    if (!biasType || biasType.getShape() != ArrayRef<int64_t>{features})
      return fail(loc, "bias must be a " + Twine(features) +
                           "-element vector, got " + str(bias.getType()));
  }
  Shape shape{input.getDimSize(0), features};
  if (failed(inferWindowed(loc, input, filter.getShape().drop_front(2),
                           adaptor.getStrides(), adaptor.getPads(),
                           adaptor.getDilations(), /*ceilMode=*/false, shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferConvFilterGrad(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  RankedTensorType grad = getTensor(adaptor.getOutputGrad());
  if (!input || !grad || input.getRank() < 3 ||
      grad.getRank() != input.getRank() ||
      grad.getDimSize(0) != input.getDimSize(0))
    return fail(loc, "input must be N x C x D1.. (rank >= 3) and the output "
                     "gradient N x M x O1.. of the same rank and batch");
  int64_t k = input.getRank() - 2;
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  if (failed(checkPerDim(loc, "kernel", kernel, k, 1)))
    return failure();
  Shape spatial;
  if (failed(inferWindowed(loc, input, kernel, adaptor.getStrides(),
                           Shape(2 * k, 0), adaptor.getDilations(),
                           /*ceilMode=*/false, spatial)))
    return failure();
  if (ArrayRef<int64_t>(spatial) != grad.getShape().drop_front(2))
    return fail(loc, "output gradient " + str(grad) +
                         " does not have the spatial shape of the forward "
                         "convolution's result");
  // The parser infers before it fills in the default.
  IntegerAttr groupsAttr = adaptor.getGroupsAttr();
  int64_t groups = groupsAttr ? groupsAttr.getInt() : 1;
  if (groups < 1 || input.getDimSize(1) % groups || grad.getDimSize(1) % groups)
    return fail(loc, "input channels (" + std::to_string(input.getDimSize(1)) +
                         ") and output gradient channels (" +
                         std::to_string(grad.getDimSize(1)) +
                         ") must be multiples of groups (" +
                         std::to_string(groups) + ")");
  Shape shape{grad.getDimSize(1), input.getDimSize(1) / groups};
  llvm::append_range(shape, kernel);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferConvInputGrad(MLIRContext *, std::optional<Location> loc,
                                 Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  RankedTensorType grad = getTensor(adaptor.getOutputGrad());
  RankedTensorType filter = getTensor(adaptor.getFilter());
  if (!grad || !filter || grad.getRank() < 3 ||
      filter.getRank() != grad.getRank() ||
      filter.getDimSize(0) != grad.getDimSize(1))
    return fail(loc, "output gradient must be N x M x O1.. (rank >= 3) and "
                     "the filter M x C x K1.. of the same rank and M");
  int64_t k = grad.getRank() - 2;
  ArrayRef<int64_t> inputSpatial = adaptor.getInputSpatial();
  if (failed(checkPerDim(loc, "input_spatial", inputSpatial, k, 1)))
    return failure();
  Shape shape{grad.getDimSize(0), filter.getDimSize(1)};
  llvm::append_range(shape, inputSpatial);
  auto input = RankedTensorType::get(shape, grad.getElementType());
  Shape spatial;
  if (failed(inferWindowed(loc, input, filter.getShape().drop_front(2),
                           adaptor.getStrides(), adaptor.getPads(),
                           adaptor.getDilations(), /*ceilMode=*/false,
                           spatial)))
    return failure();
  if (ArrayRef<int64_t>(spatial) != grad.getShape().drop_front(2))
    return fail(loc, "output gradient " + str(grad) +
                         " does not have the spatial shape " + str(spatial) +
                         " of the forward convolution's result");
  types.push_back(input);
  return success();
}

template <typename Adaptor>
LogicalResult inferPool(MLIRContext *, std::optional<Location> loc,
                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  if (!input || input.getRank() < 3)
    return fail(loc, "input must be N x C x D1.. (rank >= 3)");
  int64_t k = input.getRank() - 2;
  if (failed(checkPerDim(loc, "kernel", adaptor.getKernel(), k, 1)))
    return failure();
  Shape shape{input.getDimSize(0), input.getDimSize(1)};
  SmallVector<int64_t> dilations(k, 1);
  if (failed(inferWindowed(loc, input, adaptor.getKernel(),
                           adaptor.getStrides(), adaptor.getPads(), dilations,
                           adaptor.getCeilMode(), shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
LogicalResult inferMaxPoolGrad(MLIRContext *context,
                               std::optional<Location> loc, Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  RankedTensorType output = getTensor(adaptor.getOutput());
  SmallVector<Type> pooled;
  if (failed(inferPool(context, loc, adaptor, pooled)))
    return failure();
  if (output != pooled.front())
    return fail(loc, "output " + str(adaptor.getOutput().getType()) +
                         " is not the pooling's result " + str(pooled.front()));
  types.push_back(input);
  return success();
}

template <typename Adaptor>
LogicalResult
inferClassificationLoss(MLIRContext *, std::optional<Location> loc,
                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = getTensor(adaptor.getInput());
  RankedTensorType labels = getTensor(adaptor.getLabels());
  if (!input || !labels || input.getRank() < 2)
    return fail(loc, "input must be N x C x D1.. (rank >= 2)");
  Shape labelShape{input.getDimSize(0)};
  llvm::append_range(labelShape, input.getShape().drop_front(2));
  if (labels.getShape() != ArrayRef(labelShape))
    return fail(loc, "labels " + str(labels) + " must have shape " +
                         str(labelShape) + " for input " + str(input));
  if (Value weights = adaptor.getWeights()) {
    RankedTensorType weightType = getTensor(weights);
    if (!weightType ||
        weightType.getShape() != ArrayRef<int64_t>{input.getDimSize(1)} ||
        weightType.getElementType() != input.getElementType())
      return fail(loc, "weights must be a vector of " +
                           Twine(input.getDimSize(1)) + " " +
                           str(input.getElementType()) + ", got " +
                           str(weights.getType()));
  }
  Shape shape;
  if (adaptor.getReduction() == LossReduction::None)
    shape = labelShape;
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

} // namespace

#define GET_OP_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxComputeOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers and folders
//===----------------------------------------------------------------------===//

LogicalResult ClipOp::verify() {
  if (getMin() && getMax() &&
      getMin()->convertToDouble() > getMax()->convertToDouble())
    return emitOpError() << "min " << getMin()->convertToDouble()
                         << " is greater than max "
                         << getMax()->convertToDouble();
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getType());
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot reshape " << input << " ("
                         << input.getNumElements() << " elements) to " << result
                         << " (" << result.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Row-major order is kept: a constant's elements reshaped. The raw data
  // is copied in one piece (not element by element, as the folds in
  // ParallaxFolders.cpp go), so the bound is 2^24 elements, not 2^16.
  if (auto elements = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
      elements &&
      (elements.isSplat() || elements.getNumElements() <= (1 << 24)))
    return elements.reshape(cast<ShapedType>(getType()));
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

LogicalResult ExpandOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getType());
  if (!broadcastsTo(input.getShape(), result.getShape()))
    return emitOpError() << input << " does not broadcast to " << result;
  return success();
}

static LogicalResult verifyAxis(Operation *op, uint64_t axis, Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  if (static_cast<int64_t>(axis) >= rank)
    return op->emitOpError()
           << "axis " << axis << " is out of range for " << type;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType());
}

LogicalResult BatchNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto scale = cast<RankedTensorType>(getScale().getType());
  if (input.getRank() < 2)
    return emitOpError() << "input must be N x C x ..., got " << input;
  if (scale.getShape() != ArrayRef<int64_t>{input.getDimSize(1)})
    return emitOpError() << "scale, bias, mean and variance must have one "
                            "element per channel ("
                         << input.getDimSize(1) << "), got " << scale;
  return success();
}

LogicalResult BatchSumOp::verify() {
  if (getInputs().empty())
    return emitOpError("sums at least one value");
  return success();
}

LogicalResult BatchSumOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyAxis(*this, getAxis(), input)))
    return failure();
  ArrayRef<int64_t> normalized = input.getShape().drop_front(getAxis());
  for (Value param : {getScale(), getBias()}) {
    if (!param)
      continue;
    auto type = cast<RankedTensorType>(param.getType());
    if (!broadcastsTo(type.getShape(), normalized))
      return emitOpError() << "scale and bias must broadcast to the "
                              "normalised shape ["
                           << normalized << "], got " << type;
  }
  return success();
}

LogicalResult OneHotOp::verify() {
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto result = cast<RankedTensorType>(getType());
  int64_t axis = getAxis();
  if (result.getRank() != indices.getRank() + 1 || axis >= result.getRank())
    return emitOpError() << "result must add one dimension to the indices "
                            "at axis "
                         << axis << ", got " << str(result);
  Shape expected(indices.getShape());
  expected.insert(expected.begin() + axis, result.getDimSize(axis));
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape " << str(result.getShape())
                         << " must be the indices' shape "
                         << str(indices.getShape())
                         << " with the depth at axis " << axis;
  return success();
}
