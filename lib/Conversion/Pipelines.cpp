//===- Pipelines.cpp - Parallax lowering pipelines ------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::parallax::registerParallaxLoweringPipelines() {
  PassPipelineRegistration<>(
      "parallax-lower-to-llvm",
      "Lower Parallax compute ops through linalg, one-shot bufferization and "
      "loops to the LLVM dialect",
      [](OpPassManager &pm) {
        pm.addPass(createConvertParallaxToLinalg());
        pm.addPass(createCanonicalizerPass());
        pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
        bufferization::OneShotBufferizePassOptions bufferize;
        bufferize.bufferizeFunctionBoundaries = true;
        bufferize.functionBoundaryTypeConversion =
            bufferization::LayoutMapOption::IdentityLayoutMap;
        pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
        bufferization::BufferDeallocationPipelineOptions deallocation;
        bufferization::buildBufferDeallocationPipeline(pm, deallocation);
        pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
        pm.addPass(createLowerAffinePass());
        pm.addPass(createSCFToControlFlowPass());
        pm.addPass(memref::createExpandStridedMetadataPass());
        pm.addPass(createConvertMathToLibmPass());
        pm.addPass(createConvertToLLVMPass());
        pm.addPass(createReconcileUnrealizedCastsPass());
      });
}
