//===- LinalgToBlas.cpp - Matrix products through BLAS --------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXLINALGTOBLAS
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

constexpr StringLiteral kMatmul = "parallax_rt_matmul_f32";

/// f32, static shape, unit stride along the last dimension.
bool hasContiguousRows(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

struct LinalgToBlasPass
    : parallax::impl::ParallaxLinalgToBlasBase<LinalgToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> products;
    module.walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op)) {
        auto linalgOp = cast<linalg::LinalgOp>(op);
        // Plain products only: no transposed or broadcast indexing maps.
        if (linalgOp.hasPureBufferSemantics() &&
            llvm::all_of(op->getOperands(), hasContiguousRows) &&
            cast<linalg::LinalgOp>(op).getIndexingMapsArray() ==
                (isa<linalg::MatmulOp>(op)
                     ? linalg::MatmulOp::getDefaultIndexingMaps(op->getContext())
                     : linalg::BatchMatmulOp::getDefaultIndexingMaps(
                           op->getContext())))
          products.push_back(linalgOp);
      }
    });
    if (products.empty())
      return;
    MLIRContext *ctx = &getContext();
    auto unranked = UnrankedMemRefType::get(Float32Type::get(ctx), 0);
    if (!module.lookupSymbol(kMatmul)) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      func::FuncOp::create(builder, module.getLoc(), kMatmul,
                           builder.getFunctionType(
                               {unranked, unranked, unranked}, {}))
          .setPrivate();
    }
    for (linalg::LinalgOp op : products) {
      OpBuilder builder(op);
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(
            memref::CastOp::create(builder, op.getLoc(), unranked, operand));
      func::CallOp::create(builder, op.getLoc(), kMatmul, TypeRange{},
                           operands);
      op->erase();
    }
  }
};

} // namespace
