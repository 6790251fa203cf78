//===- LibraryConvolutions.cpp - 2-d convolutions as cuDNN calls ----------===//
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

/// Strides, leading pads and dilations of a 2-d convolution (H, W).
struct Geometry {
  int64_t stride[2], pad[2], dilation[2];
};

/// An f32 NCHW tensor of static shape.
bool isStatic4dF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 4 && tensor.hasStaticShape() &&
         tensor.getElementType().isF32();
}

/// The output extent cuDNN computes from an input extent, padding both
/// ends with `pad`.
int64_t cudnnExtent(int64_t input, int64_t kernel, int64_t stride, int64_t pad,
                    int64_t dilation) {
  int64_t reach = input + 2 * pad - dilation * (kernel - 1) - 1;
  return reach < 0 ? -1 : reach / stride + 1;
}

/// Whether cuDNN's geometry maps `input` [.., .., H, W] through a
/// `kernel` [.., .., KH, KW] onto `output` [.., .., OH, OW].
bool matchesCudnn(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> output, const Geometry &g) {
  for (int d = 0; d < 2; ++d)
    if (g.pad[d] < 0 || cudnnExtent(input[d + 2], kernel[d + 2], g.stride[d],
                                    g.pad[d], g.dilation[d]) != output[d + 2])
      return false;
  return true;
}

/// `function`(a, b, the result, the geometry, `groups`) as a
/// parallax.library_call into a fresh tensor of `resultType`.
Value callConvolution(OpBuilder &builder, ModuleOp module, Location loc,
                      abi::Function function, Value a, Value b,
                      RankedTensorType resultType, const Geometry &g,
                      int64_t groups) {
  declareRuntimeFunction(module, function);
  Value init = tensor::EmptyOp::create(builder, loc, resultType.getShape(),
                                       resultType.getElementType());
  auto callee =
      FlatSymbolRefAttr::get(builder.getContext(), abi::symbol(function));
  auto scalars = builder.getDenseI64ArrayAttr(
      {g.stride[0], g.stride[1], g.pad[0], g.pad[1], g.dilation[0],
       g.dilation[1], groups});
  return LibraryCallOp::create(builder, loc, TypeRange{resultType}, callee,
                               ValueRange{a, b}, ValueRange{init}, scalars)
      .getResult(0);
}

/// `y` + `bias` broadcast along the channels (dimension 1), in place.
Value addBias(OpBuilder &builder, Location loc, Value y, Value bias) {
  MLIRContext *ctx = builder.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap channel = AffineMap::get(4, 0, getAffineDimExpr(1, ctx));
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, y.getType(), ValueRange{bias}, ValueRange{y},
             ArrayRef<AffineMap>{channel, identity}, parallel,
             [](OpBuilder &b, Location l, ValueRange args) {
               Value sum = arith::AddFOp::create(b, l, args[1], args[0]);
               linalg::YieldOp::create(b, l, sum);
             })
      .getResult(0);
}

struct LibraryConvolutionsPass
    : parallax::impl::ParallaxGPULibraryConvolutionsBase<
          LibraryConvolutionsPass> {
  using Base::Base;

  abi::Function pick(abi::Function cuda, abi::Function cpu) const {
    return cudnn ? cuda : cpu;
  }

  void rewrite(ConvOp op, ModuleOp module) {
    auto x = cast<RankedTensorType>(op.getInput().getType());
    auto w = cast<RankedTensorType>(op.getFilter().getType());
    auto y = cast<RankedTensorType>(op.getType());
    if (!isStatic4dF32(x) || !isStatic4dF32(w) || !isStatic4dF32(y))
      return;
    ArrayRef<int64_t> pads = op.getPads(), strides = op.getStrides(),
                      dilations = op.getDilations();
    Geometry g{{strides[0], strides[1]},
               {pads[0], pads[1]},
               {dilations[0], dilations[1]}};
    if (!matchesCudnn(x.getShape(), w.getShape(), y.getShape(), g))
      return;
    OpBuilder builder(op);
    Value result = callConvolution(
        builder, module, op.getLoc(),
        pick(abi::Function::cuda_conv2d_f32, abi::Function::conv2d_f32),
        op.getInput(), op.getFilter(), y, g, op.getGroups());
    if (Value bias = op.getBias())
      result = addBias(builder, op.getLoc(), result, bias);
    op.replaceAllUsesWith(result);
    op.erase();
  }

  void rewrite(ConvFilterGradOp op, ModuleOp module) {
    auto x = cast<RankedTensorType>(op.getInput().getType());
    auto dy = cast<RankedTensorType>(op.getOutputGrad().getType());
    auto dw = cast<RankedTensorType>(op.getType());
    if (!isStatic4dF32(x) || !isStatic4dF32(dy) || !isStatic4dF32(dw))
      return;
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    Geometry g{{strides[0], strides[1]}, {0, 0}, {dilations[0], dilations[1]}};
    Value input = op.getInput();
    // The input autodiff padded for the gradient: cuDNN pads it instead.
    if (auto pad = input.getDefiningOp<PadOp>()) {
      ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
      Geometry padded = g;
      padded.pad[0] = low[2];
      padded.pad[1] = low[3];
      auto source = cast<RankedTensorType>(pad.getInput().getType());
      if (pad.getMode() == PadMode::Constant && pad.getValue().isZero() &&
          low[0] == 0 && low[1] == 0 && high[0] == 0 && high[1] == 0 &&
          high[2] >= 0 && high[3] >= 0 && isStatic4dF32(source) &&
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
    Value result =
        callConvolution(builder, module, op.getLoc(),
                        pick(abi::Function::cuda_conv2d_filter_grad_f32,
                             abi::Function::conv2d_filter_grad_f32),
                        input, op.getOutputGrad(), dw, g, op.getGroups());
    op.replaceAllUsesWith(result);
    op.erase();
  }

  void rewrite(ConvInputGradOp op, ModuleOp module) {
    auto dy = cast<RankedTensorType>(op.getOutputGrad().getType());
    auto w = cast<RankedTensorType>(op.getFilter().getType());
    auto dx = cast<RankedTensorType>(op.getType());
    if (!isStatic4dF32(dy) || !isStatic4dF32(w) || !isStatic4dF32(dx))
      return;
    ArrayRef<int64_t> pads = op.getPads(), strides = op.getStrides(),
                      dilations = op.getDilations();
    Geometry g{{strides[0], strides[1]},
               {pads[0], pads[1]},
               {dilations[0], dilations[1]}};
    if (!matchesCudnn(dx.getShape(), w.getShape(), dy.getShape(), g))
      return;
    OpBuilder builder(op);
    Value result = callConvolution(
        builder, module, op.getLoc(),
        pick(abi::Function::cuda_conv2d_input_grad_f32,
             abi::Function::conv2d_input_grad_f32),
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
    // Pads that only the filter gradients read.
    module.walk([](PadOp pad) {
      if (pad->use_empty())
        pad->erase();
    });
  }
};

} // namespace
