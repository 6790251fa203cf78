//===- LibraryConvolutions.cpp - Convolutions as cuDNN calls --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPULIBRARYCONVOLUTIONS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Strides, leading pads and dilations of a convolution along D, H and W.
/// A 2-d convolution uses H and W; a 1-d one is one of unit height (as
/// PyTorch runs it on cuDNN): only W. The dimensions a convolution does
/// not have keep stride and dilation 1 and pad 0.
struct Geometry {
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
};

/// An f32 tensor of static shape with one, two or three spatial
/// dimensions (NCW, NCHW, NCDHW).
bool isStaticConvF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 3 && tensor.getRank() <= 5 &&
         tensor.hasStaticShape() && tensor.getElementType().isF32();
}

/// Whether the op's tensors but a bias are f32 of static shape and all of
/// one rank.
bool allStaticConvF32(Operation *op) {
  auto conv = dyn_cast<ConvOp>(op);
  SmallVector<Type> types(op->getResultTypes());
  for (Value operand : op->getOperands())
    if (!conv || operand != conv.getBias())
      types.push_back(operand.getType());
  return llvm::all_of(types, [&](Type type) {
    return isStaticConvF32(type) &&
           cast<RankedTensorType>(type).getRank() ==
               cast<RankedTensorType>(types.front()).getRank();
  });
}

/// Where spatial dimension `d` of `spatial` goes in a Geometry: the last
/// is always W.
int64_t slot(int64_t d, int64_t spatial) { return d + 3 - spatial; }

/// The geometry of an op's attributes (ONNX's pads: leading ones first).
Geometry geometryOf(ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                    ArrayRef<int64_t> dilations) {
  Geometry g;
  int64_t spatial = strides.size();
  for (int64_t d = 0; d < spatial; ++d) {
    g.stride[slot(d, spatial)] = strides[d];
    g.pad[slot(d, spatial)] = pads.empty() ? 0 : pads[d];
    g.dilation[slot(d, spatial)] = dilations[d];
  }
  return g;
}

/// The output extent cuDNN computes from an input extent, padding both
/// ends with `pad`.
int64_t cudnnExtent(int64_t input, int64_t kernel, int64_t stride, int64_t pad,
                    int64_t dilation) {
  int64_t reach = input + 2 * pad - dilation * (kernel - 1) - 1;
  return reach < 0 ? -1 : reach / stride + 1;
}

/// Whether cuDNN's geometry maps `input` [.., .., (D, H,) W] through a
/// `kernel` [.., .., (KD, KH,) KW] onto `output` [.., .., (OD, OH,) OW].
bool matchesCudnn(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> output, const Geometry &g) {
  int64_t spatial = input.size() - 2;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t s = slot(d, spatial);
    if (g.pad[s] < 0 || cudnnExtent(input[d + 2], kernel[d + 2], g.stride[s],
                                    g.pad[s], g.dilation[s]) != output[d + 2])
      return false;
  }
  return true;
}

/// [N, C, W] as [N, C, 1, W]; NCHW and NCDHW as they are.
RankedTensorType withHeight(RankedTensorType type) {
  if (type.getRank() != 3)
    return type;
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + 2, 1);
  return type.clone(shape);
}

/// `value` reshaped to `type` (a view once bufferized), where it differs.
Value reshapedTo(OpBuilder &builder, Location loc, Value value,
                 RankedTensorType type) {
  if (value.getType() == type)
    return value;
  return ReshapeOp::create(builder, loc, type, value);
}

enum class Direction { Forward, FilterGradient, InputGradient };

/// The runtime's call of `direction` for a convolution of rank `rank`:
/// cuDNN's (`cudnn`) or the CPU equivalent.
abi::Function functionFor(Direction direction, int64_t rank, bool cudnn) {
  using F = abi::Function;
  static constexpr F functions[2][2][3] = {
      {{F::conv2d_f32, F::conv2d_filter_grad_f32, F::conv2d_input_grad_f32},
       {F::cuda_conv2d_f32, F::cuda_conv2d_filter_grad_f32,
        F::cuda_conv2d_input_grad_f32}},
      {{F::conv3d_f32, F::conv3d_filter_grad_f32, F::conv3d_input_grad_f32},
       {F::cuda_conv3d_f32, F::cuda_conv3d_filter_grad_f32,
        F::cuda_conv3d_input_grad_f32}}};
  return functions[rank == 5][cudnn][int(direction)];
}

/// The call of `direction` (a, b, the result, the geometry, `groups`) as a
/// parallax.library_call into a fresh tensor of `resultType`. The runtime
/// has 2-d and 3-d calls: 1-d operands go as 2-d ones of unit height, and
/// the result comes back as `resultType`.
Value callConvolution(OpBuilder &builder, ModuleOp module, Location loc,
                      Direction direction, bool cudnn, Value a, Value b,
                      RankedTensorType resultType, const Geometry &g,
                      int64_t groups) {
  abi::Function function = functionFor(direction, resultType.getRank(), cudnn);
  declareRuntimeFunction(module, function);
  auto nchw = [](Value v) {
    return withHeight(cast<RankedTensorType>(v.getType()));
  };
  RankedTensorType callType = withHeight(resultType);
  Value init = tensor::EmptyOp::create(builder, loc, callType.getShape(),
                                       callType.getElementType());
  auto callee =
      FlatSymbolRefAttr::get(builder.getContext(), abi::symbol(function));
  // Strides, pads, dilations of H and W (and D first, for 3-d), groups.
  SmallVector<int64_t> scalars;
  int64_t first = callType.getRank() == 5 ? 0 : 1;
  for (const int64_t *values : {g.stride, g.pad, g.dilation})
    scalars.append(values + first, values + 3);
  scalars.push_back(groups);
  Value result = LibraryCallOp::create(
                     builder, loc, TypeRange{callType}, callee,
                     ValueRange{reshapedTo(builder, loc, a, nchw(a)),
                                reshapedTo(builder, loc, b, nchw(b))},
                     ValueRange{init}, builder.getDenseI64ArrayAttr(scalars))
                     .getResult(0);
  return reshapedTo(builder, loc, result, resultType);
}

/// `y` + `bias` broadcast along the channels (dimension 1), in place.
Value addBias(OpBuilder &builder, Location loc, Value y, Value bias) {
  MLIRContext *ctx = builder.getContext();
  int64_t rank = cast<RankedTensorType>(y.getType()).getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap channel = AffineMap::get(rank, 0, getAffineDimExpr(1, ctx));
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, y.getType(), ValueRange{bias}, ValueRange{y},
             ArrayRef<AffineMap>{channel, identity}, parallel,
             [](OpBuilder &b, Location l, ValueRange args) {
               Value sum = arith::AddFOp::create(b, l, args[1], args[0]);
               linalg::YieldOp::create(b, l, sum);
             })
      .getResult(0);
}

/// The source of `x` when `x` is autodiff's dilation of it along `dim`
/// (GradBuilder::dilate: a unit dimension inserted after `dim`, padded
/// with factor - 1 zeros, merged, the trailing zeros sliced off), with the
/// ops of that chain added to `chain`, consumers first; otherwise `x`,
/// with a `factor` of 1.
Value undilate(Value x, int64_t dim, int64_t &factor,
               SmallVectorImpl<Operation *> &chain) {
  factor = 1;
  auto slice = x.getDefiningOp<SliceOp>();
  auto merged = slice ? slice.getInput().getDefiningOp<ReshapeOp>() : nullptr;
  auto pad = merged ? merged.getInput().getDefiningOp<PadOp>() : nullptr;
  auto split = pad ? pad.getInput().getDefiningOp<ReshapeOp>() : nullptr;
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (!split || pad.getMode() != PadMode::Constant ||
      !pad.getValue().isZero() || pad.getHigh().size() != size_t(rank + 1))
    return x;
  // The undilated shape: the split's without its unit dimension (the
  // split may reshape from another shape, two reshapes folded into one).
  SmallVector<int64_t> source(split.getType().getShape());
  if (source.size() != size_t(rank + 1) || source[dim + 1] != 1)
    return x;
  source.erase(source.begin() + dim + 1);
  int64_t f = pad.getHigh()[dim + 1] + 1;
  if (f < 2)
    return x;
  SmallVector<int64_t> mergedShape(source), sizes(source), zeros(rank, 0),
      ones(rank, 1), padHigh(rank + 1, 0);
  mergedShape[dim] *= f;
  sizes[dim] = (source[dim] - 1) * f + 1;
  padHigh[dim + 1] = f - 1;
  if (llvm::any_of(pad.getLow(), [](int64_t l) { return l != 0; }) ||
      pad.getHigh() != ArrayRef<int64_t>(padHigh) ||
      merged.getType().getShape() != ArrayRef<int64_t>(mergedShape) ||
      slice.getOffsets() != ArrayRef<int64_t>(zeros) ||
      slice.getSizes() != ArrayRef<int64_t>(sizes) ||
      slice.getStrides() != ArrayRef<int64_t>(ones))
    return x;
  factor = f;
  chain.append({slice, merged, pad, split});
  TypedValue<RankedTensorType> undilated = split.getInput();
  if (undilated.getType().getShape() == ArrayRef<int64_t>(source))
    return undilated;
  OpBuilder builder(split);
  return ReshapeOp::create(builder, split.getLoc(),
                           undilated.getType().clone(source), undilated);
}

struct LibraryConvolutionsPass
    : parallax::impl::ParallaxGPULibraryConvolutionsBase<
          LibraryConvolutionsPass> {
  using Base::Base;

  void rewrite(ConvOp op, ModuleOp module) {
    if (!allStaticConvF32(op) || succeeded(rewriteTransposed(op, module)))
      return;
    auto y = cast<RankedTensorType>(op.getType());
    Geometry g = geometryOf(op.getStrides(), op.getPads(), op.getDilations());
    if (!matchesCudnn(op.getInput().getType().getShape(),
                      op.getFilter().getType().getShape(), y.getShape(), g))
      return;
    OpBuilder builder(op);
    Value result =
        callConvolution(builder, module, op.getLoc(), Direction::Forward, cudnn,
                        op.getInput(), op.getFilter(), y, g, op.getGroups());
    if (Value bias = op.getBias())
      result = addBias(builder, op.getLoc(), result, bias);
    op.replaceAllUsesWith(result);
    op.erase();
  }

  /// An input gradient autodiff wrote as a transposed convolution
  /// (buildTransposedConvolution): a unit-stride, unpadded convolution of
  /// dY, zero-padded by reach - pad, with the filter W flipped and each
  /// group's channels swapped (a flipping slice, a reshape to [G, M/G,
  /// C/G, K...], a transpose of the two channel dimensions, a reshape).
  /// That is cuDNN's backward data of W with that pad: one call instead
  /// of a padded copy of dY, the filter's copies and a forward call.
  LogicalResult rewriteTransposed(ConvOp op, ModuleOp module) {
    if (op.getBias() ||
        llvm::any_of(op.getStrides(), [](int64_t s) { return s != 1; }) ||
        llvm::any_of(op.getPads(), [](int64_t p) { return p != 0; }))
      return failure();
    int64_t groups = op.getGroups();
    int64_t rank = op.getType().getRank(), spatial = rank - 2;
    SmallVector<int64_t> swap = {0, 2, 1};
    for (int64_t d = 3; d <= rank; ++d)
      swap.push_back(d);
    auto swapped = op.getFilter().getDefiningOp<ReshapeOp>();
    auto transpose =
        swapped ? swapped.getInput().getDefiningOp<TransposeOp>() : nullptr;
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>(swap))
      return failure();
    auto grouped = transpose.getInput().getDefiningOp<ReshapeOp>();
    auto flip = grouped ? grouped.getInput().getDefiningOp<SliceOp>() : nullptr;
    if (!flip)
      return failure();
    auto w = cast<RankedTensorType>(flip.getInput().getType());
    ArrayRef<int64_t> shape = w.getShape();
    if (w.getRank() != rank || !isStaticConvF32(w) || shape[0] % groups)
      return failure();
    SmallVector<int64_t> groupedShape = {groups, shape[0] / groups, shape[1]},
                         flipOffsets = {0, 0}, flipStrides = {1, 1};
    for (int64_t d = 2; d < rank; ++d) {
      groupedShape.push_back(shape[d]);
      flipOffsets.push_back(shape[d] - 1);
      flipStrides.push_back(-1);
    }
    if (grouped.getType().getShape() != ArrayRef<int64_t>(groupedShape) ||
        flip.getSizes() != shape ||
        flip.getOffsets() != ArrayRef<int64_t>(flipOffsets) ||
        flip.getStrides() != ArrayRef<int64_t>(flipStrides))
      return failure();
    // dY, dilated by the strides (a strided convolution's), and the pad
    // around it.
    SmallVector<Operation *> chain = {op, swapped, transpose, grouped, flip};
    Value dy = op.getInput();
    SmallVector<int64_t> low(spatial, 0);
    if (auto pad = dy.getDefiningOp<PadOp>()) {
      ArrayRef<int64_t> l = pad.getLow(), h = pad.getHigh();
      if (pad.getMode() != PadMode::Constant || !pad.getValue().isZero() ||
          l.size() != size_t(rank) || l[0] || l[1] || h[0] || h[1])
        return failure();
      low.assign(l.begin() + 2, l.end());
      dy = pad.getInput();
      chain.push_back(pad);
    }
    SmallVector<int64_t> strides(spatial, 1);
    for (int64_t d = spatial - 1; d >= 0; --d)
      dy = undilate(dy, d + 2, strides[d], chain);
    if (!isStaticConvF32(dy.getType()))
      return failure();
    Geometry g = geometryOf(strides, {}, op.getDilations());
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t s = slot(d, spatial);
      g.pad[s] = g.dilation[s] * (shape[d + 2] - 1) - low[d];
    }
    auto dx = cast<RankedTensorType>(op.getType());
    auto dyType = cast<RankedTensorType>(dy.getType());
    if (dx.getDimSize(1) != shape[1] * groups ||
        dyType.getDimSize(1) != shape[0] ||
        !matchesCudnn(dx.getShape(), shape, dyType.getShape(), g))
      return failure();
    OpBuilder builder(op);
    Value result =
        callConvolution(builder, module, op.getLoc(), Direction::InputGradient,
                        cudnn, dy, flip.getInput(), dx, g, groups);
    op.replaceAllUsesWith(result);
    for (Operation *dead : chain)
      if (dead->use_empty())
        dead->erase();
    return success();
  }

  void rewrite(ConvFilterGradOp op, ModuleOp module) {
    if (!allStaticConvF32(op))
      return;
    auto x = op.getInput().getType(), dy = op.getOutputGrad().getType();
    auto dw = cast<RankedTensorType>(op.getType());
    Geometry g = geometryOf(op.getStrides(), {}, op.getDilations());
    Value input = op.getInput();
    // The input autodiff padded for the gradient: cuDNN pads it instead.
    auto pad = input.getDefiningOp<PadOp>();
    if (pad) {
      ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
      int64_t spatial = low.size() - 2;
      Geometry padded = g;
      bool spatialOnly = !low[0] && !low[1] && !high[0] && !high[1];
      for (int64_t d = 0; d < spatial; ++d) {
        padded.pad[slot(d, spatial)] = low[d + 2];
        spatialOnly &= high[d + 2] >= 0;
      }
      auto source = cast<RankedTensorType>(pad.getInput().getType());
      if (pad.getMode() == PadMode::Constant && pad.getValue().isZero() &&
          spatialOnly && isStaticConvF32(source) &&
          matchesCudnn(source.getShape(), dw.getShape(), dy.getShape(),
                       padded)) {
        input = pad.getInput();
        g = padded;
      }
    }
    if (input == op.getInput() &&
        !matchesCudnn(x.getShape(), dw.getShape(), dy.getShape(), g))
      return;
    OpBuilder builder(op);
    Value result = callConvolution(builder, module, op.getLoc(),
                                   Direction::FilterGradient, cudnn, input,
                                   op.getOutputGrad(), dw, g, op.getGroups());
    op.replaceAllUsesWith(result);
    op.erase();
    if (pad && pad->use_empty())
      pad->erase();
  }

  void rewrite(ConvInputGradOp op, ModuleOp module) {
    if (!allStaticConvF32(op))
      return;
    auto dx = cast<RankedTensorType>(op.getType());
    Geometry g = geometryOf(op.getStrides(), op.getPads(), op.getDilations());
    if (!matchesCudnn(dx.getShape(), op.getFilter().getType().getShape(),
                      op.getOutputGrad().getType().getShape(), g))
      return;
    OpBuilder builder(op);
    Value result = callConvolution(
        builder, module, op.getLoc(), Direction::InputGradient, cudnn,
        op.getOutputGrad(), op.getFilter(), dx, g, /*groups=*/1);
    op.replaceAllUsesWith(result);
    op.erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> convolutions;
    module.walk([&](Operation *op) {
      if (isa<ConvOp, ConvFilterGradOp, ConvInputGradOp>(op))
        convolutions.push_back(op);
    });
    for (Operation *op : convolutions) {
      if (auto conv = dyn_cast<ConvOp>(op))
        rewrite(conv, module);
      else if (auto filterGrad = dyn_cast<ConvFilterGradOp>(op))
        rewrite(filterGrad, module);
      else
        rewrite(cast<ConvInputGradOp>(op), module);
    }
  }
};

} // namespace
