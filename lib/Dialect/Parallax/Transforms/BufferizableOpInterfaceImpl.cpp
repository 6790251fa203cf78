//===- BufferizableOpInterfaceImpl.cpp - Parallax ops in bufferization ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/Transforms/BufferizableOpInterfaceImpl.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::parallax;

namespace {

/// parallax.library_call: a func.call on the operands' buffers. Inputs are
/// read; outputs are written whole, never read, in place.
struct LibraryCallOpInterface
    : DstBufferizableOpInterfaceExternalModel<LibraryCallOpInterface,
                                              LibraryCallOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto call = cast<LibraryCallOp>(op);
    Location loc = op->getLoc();
    SmallVector<Value> arguments, results;
    // Strided outputs are written through contiguous buffers, copied
    // into them after the call.
    SmallVector<std::pair<Value, Value>> copiesBack;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      Value argument = *buffer;
      auto type = cast<MemRefType>(argument.getType());
      bool output = call.isDpsInit(&operand);
      if (output)
        results.push_back(*buffer);
      if (!memref::isStaticShapeAndContiguousRowMajor(type)) {
        auto contiguous =
            MemRefType::get(type.getShape(), type.getElementType(),
                            MemRefLayoutAttrInterface(), type.getMemorySpace());
        FailureOr<Value> copy =
            options.createAlloc(rewriter, loc, contiguous, {});
        if (failed(copy))
          return failure();
        if (!output &&
            failed(options.createMemCpy(rewriter, loc, *buffer, *copy)))
          return failure();
        if (output)
          copiesBack.emplace_back(*copy, *buffer);
        argument = *copy;
      }
      auto unranked =
          UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace());
      arguments.push_back(
          memref::CastOp::create(rewriter, loc, unranked, argument));
    }
    for (int64_t scalar : call.getScalars())
      arguments.push_back(
          arith::ConstantIntOp::create(rewriter, loc, scalar, 64));
    func::CallOp::create(rewriter, loc, call.getCalleeAttr(), TypeRange{},
                         arguments);
    for (auto [from, to] : copiesBack)
      if (failed(options.createMemCpy(rewriter, loc, from, to)))
        return failure();
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

} // namespace

void mlir::parallax::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ParallaxDialect *) {
    LibraryCallOp::attachInterface<LibraryCallOpInterface>(*ctx);
  });
}
