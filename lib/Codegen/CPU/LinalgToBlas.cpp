//===- LinalgToBlas.cpp - Matrix products through BLAS --------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXLINALGTOBLAS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

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

/// The buffer `value` is a view of (view-like ops stripped).
Value rootBuffer(Value value) {
  return memref::skipViewLikeOps(cast<MemrefValue>(value));
}

/// Whether `a` and `b` are the same buffer: one value, or one global.
bool sameBuffer(Value a, Value b) {
  if (a == b)
    return true;
  auto globalA = a.getDefiningOp<memref::GetGlobalOp>();
  auto globalB = b.getDefiningOp<memref::GetGlobalOp>();
  return globalA && globalB && globalA.getName() == globalB.getName();
}

/// The runtime's entry point `call` calls, or null for any other callee.
func::FuncOp runtimeCallee(CallOpInterface call) {
  auto callee = dyn_cast_if_present<func::FuncOp>(call.resolveCallable());
  return callee && callee.isExternal() &&
                 callee.getName().starts_with("parallax_rt_")
             ? callee
             : func::FuncOp();
}

/// Whether `call` never returns (the runtime's index check, which ends the
/// program): what it may write is never read after it.
bool endsTheProgram(CallOpInterface call) {
  auto callee = dyn_cast_if_present<func::FuncOp>(call.resolveCallable());
  auto attributes =
      callee ? callee->getAttrOfType<ArrayAttr>("passthrough") : ArrayAttr();
  return attributes && llvm::any_of(attributes, [](Attribute a) {
           auto name = dyn_cast<StringAttr>(a);
           return name && name.getValue() == "noreturn";
         });
}

/// The buffers that runtime calls in `function` retain (RT_RETAINED_MEMREF:
/// a bucket's results, a queued pull's rows, a pushed variable and its
/// state), which any later runtime call may write (RuntimeABI.def).
SmallVector<Value> retainedBuffers(Operation *function) {
  SmallVector<Value> retained;
  function->walk([&](CallOpInterface call) {
    func::FuncOp callee = runtimeCallee(call);
    if (!callee)
      return;
    for (auto [i, argument] : llvm::enumerate(call.getArgOperands()))
      if (i < callee.getNumArguments() &&
          callee.getArgAttr(i,
                            parallax::ParallaxDialect::getRetainedAttrName()))
        retained.push_back(rootBuffer(argument));
  });
  return retained;
}

/// Whether runtime call `call` (of `callee`) may write the buffer `root`
/// (RuntimeABI.def):
/// the memrefs passed to it, the buffers retained by a call of its function
/// (`retained`), and the function's arguments (main may register them).
/// memref_copy takes its memrefs as plain pointers: it may write anything.
bool runtimeCallMayWrite(func::FuncOp callee, CallOpInterface call, Value root,
                         ArrayRef<Value> retained) {
  if ((!root.getDefiningOp<memref::AllocOp>() &&
       !root.getDefiningOp<memref::GetGlobalOp>()) ||
      callee.getName() ==
          parallax::abi::symbol(parallax::abi::Function::memref_copy))
    return true;
  auto same = [&](Value buffer) { return sameBuffer(buffer, root); };
  return llvm::any_of(retained, same) ||
         llvm::any_of(call.getArgOperands(), [&](Value argument) {
           return isa<BaseMemRefType>(argument.getType()) &&
                  same(rootBuffer(argument));
         });
}

/// Whether an op strictly between `from` and `to` (one block) may write
/// the buffer `root`. Runtime calls may write what RuntimeABI.def says
/// (`retained`: the buffers the function's runtime calls retain), calls
/// that end the program nothing, other calls anything; ops that do not
/// declare their effects are assumed to write.
bool mayWriteBetween(Operation *from, Operation *to, Value root,
                     ArrayRef<Value> retained) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    WalkResult result = op->walk([&](Operation *nested) {
      if (auto call = dyn_cast<CallOpInterface>(nested)) {
        if (endsTheProgram(call))
          return WalkResult::advance();
        func::FuncOp callee = runtimeCallee(call);
        return callee && !runtimeCallMayWrite(callee, call, root, retained)
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      }
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects)
        return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffects(list);
      for (const MemoryEffects::EffectInstance &effect : list)
        if (isa<MemoryEffects::Write>(effect.getEffect()) &&
            (!effect.getValue() ||
             sameBuffer(rootBuffer(effect.getValue()), root)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return true;
  }
  return false;
}

/// Whether `permutation` swaps the last two dimensions and keeps the rest.
bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  int64_t rank = permutation.size();
  if (rank < 2)
    return false;
  SmallVector<int64_t> swapLast = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swapLast[rank - 1], swapLast[rank - 2]);
  return permutation == ArrayRef<int64_t>(swapLast);
}

/// A view of `value` with its last two dimensions swapped (BLAS reads it
/// as the transposed matrix).
Value swapLastTwo(OpBuilder &builder, Location loc, Value value) {
  int64_t rank = cast<MemRefType>(value.getType()).getRank();
  SmallVector<unsigned> permutation =
      llvm::to_vector(llvm::seq<unsigned>(0, rank));
  std::swap(permutation[rank - 1], permutation[rank - 2]);
  return memref::TransposeOp::create(
      builder, loc, value,
      AffineMapAttr::get(
          AffineMap::getPermutationMap(permutation, builder.getContext())));
}

/// Whether `op` overwrites `buffer` without reading what it held: a
/// transpose or a fill into it, a generic that never reads its output.
bool overwrites(linalg::LinalgOp op, Value buffer) {
  bool writes = false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get() != buffer)
      continue;
    if (!op.isDpsInit(&operand) || op.payloadUsesValueFromOperand(&operand))
      return false;
    writes = true;
  }
  return writes;
}

/// When `operand` of `product` is a fresh buffer that a transpose of the
/// last two dimensions fills for this product alone, a transposed view of
/// the transpose's source (BLAS reads it as a transposed matrix, no copy);
/// else null. Bufferization may give one buffer to several values (their
/// `tensor.empty`s were merged by CSE, or a later result reuses it): the
/// transpose that counts is the last op to overwrite the buffer before the
/// product, and no other op may read the buffer between it and the next op
/// that overwrites it (a transpose, or a fill for a later product).
/// Other products to be called through BLAS that read the buffer as A or
/// B (`products`) before it is overwritten read the same view instead
/// (`shared` maps the buffer to the transpose's source for them): CSE
/// merges a filter's transposes for a pixel-major convolution and for its
/// input gradient. `copies` collects the transposes made dead. `retained`:
/// the buffers the function's runtime calls retain.
Value transposedSource(OpBuilder &builder, Value operand, Operation *product,
                       const llvm::SmallPtrSetImpl<Operation *> &products,
                       DenseMap<std::pair<Operation *, Value>, Value> &shared,
                       llvm::SetVector<linalg::TransposeOp> &copies,
                       ArrayRef<Value> retained) {
  builder.setInsertionPoint(product);
  if (Value source = shared.lookup({product, operand}))
    return swapLastTwo(builder, product->getLoc(), source);
  auto alloc = operand.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return {};
  Block *block = product->getBlock();
  SmallVector<Operation *> writers, readers, otherProducts;
  for (Operation *user : alloc->getUsers()) {
    if (user->getBlock() != block)
      return {};
    if (user == product)
      continue;
    if (products.contains(user) &&
        llvm::none_of(cast<linalg::LinalgOp>(user).getDpsInits(),
                      [&](Value init) { return init == alloc.getResult(); })) {
      otherProducts.push_back(user);
      continue;
    }
    // Other linalg ops only; anything else (a view, a call) may read the
    // buffer anywhere.
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    if (!linalgOp)
      return {};
    (overwrites(linalgOp, alloc.getResult()) ? writers : readers)
        .push_back(user);
  }
  Operation *last = nullptr, *next = nullptr;
  for (Operation *writer : writers) {
    if (writer->isBeforeInBlock(product)) {
      if (!last || last->isBeforeInBlock(writer))
        last = writer;
    } else if (!next || writer->isBeforeInBlock(next)) {
      next = writer;
    }
  }
  auto transpose = dyn_cast_if_present<linalg::TransposeOp>(last);
  if (!transpose || transpose.getInput() == alloc.getResult())
    return {};
  for (Operation *reader : readers)
    if (transpose->isBeforeInBlock(reader) &&
        (!next || reader->isBeforeInBlock(next)))
      return {};
  Value source = transpose.getInput();
  if (!swapsLastTwo(transpose.getPermutation()) || !hasContiguousRows(source) ||
      mayWriteBetween(transpose, product, rootBuffer(source), retained))
    return {};
  SmallVector<Operation *> alsoReading;
  for (Operation *other : otherProducts) {
    if (!transpose->isBeforeInBlock(other) ||
        (next && next->isBeforeInBlock(other)))
      continue;
    if (mayWriteBetween(transpose, other, rootBuffer(source), retained))
      return {};
    alsoReading.push_back(other);
  }
  for (Operation *other : alsoReading)
    shared[{other, alloc.getResult()}] = source;
  copies.insert(transpose);
  return swapLastTwo(builder, product->getLoc(), source);
}

/// A 2-D product whose output is a fresh zero-filled buffer that only a
/// transpose into another fresh buffer reads (a weight gradient computed
/// as (X^T dY)^T): the product can write the transposed result directly,
/// as B^T A^T.
struct TransposedOutput {
  linalg::FillOp fill;
  linalg::TransposeOp transpose;
  memref::AllocOp destination;
};

std::optional<TransposedOutput> transposedOutputOf(linalg::LinalgOp product) {
  if (!isa<linalg::MatmulOp>(product))
    return std::nullopt;
  Value output = product.getDpsInits().front();
  auto alloc = output.getDefiningOp<memref::AllocOp>();
  Block *block = product->getBlock();
  if (!alloc)
    return std::nullopt;
  // The buffer's users in order: earlier values' (bufferization may reuse
  // a buffer), then the fill, the product and the transpose, then none.
  // Linalg ops only: a view or a call could reach it anywhere.
  SmallVector<Operation *> users;
  for (Operation *user : alloc->getUsers()) {
    if (user->getBlock() != block || !isa<linalg::LinalgOp>(user))
      return std::nullopt;
    users.push_back(user);
  }
  llvm::sort(users,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  auto at = llvm::find(users, product.getOperation());
  if (at == users.begin() || at + 2 != users.end())
    return std::nullopt;
  TransposedOutput found;
  found.fill = dyn_cast<linalg::FillOp>(*(at - 1));
  found.transpose = dyn_cast<linalg::TransposeOp>(*(at + 1));
  if (!found.fill || found.fill.getOutputs().front() != output ||
      !matchPattern(found.fill.getInputs().front(), m_AnyZeroFloat()) ||
      !found.transpose || found.transpose.getInput() != output)
    return std::nullopt;
  if (!swapsLastTwo(found.transpose.getPermutation()))
    return std::nullopt;
  // The destination: fresh, with nothing using it before the transpose
  // writes it (bufferization may have given it to an earlier value).
  found.destination =
      found.transpose.getInit().getDefiningOp<memref::AllocOp>();
  if (!found.destination || found.destination->getBlock() != block ||
      !found.destination.getDynamicSizes().empty() ||
      !found.destination.getSymbolOperands().empty() ||
      !hasContiguousRows(found.destination))
    return std::nullopt;
  for (Operation *user : found.destination->getUsers())
    if (user->getBlock() != block || user->isBeforeInBlock(found.transpose))
      return std::nullopt;
  return found;
}

/// An op whose only memory effect is a fresh allocation (memref.alloc).
bool onlyAllocates(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const MemoryEffects::EffectInstance &effect) {
    return isa<MemoryEffects::Allocate>(effect.getEffect());
  });
}

/// The last op before `op` that touches memory other than by allocating:
/// the ops between only compute, make views or allocate.
Operation *lastMemoryOpBefore(Operation *op) {
  Operation *before = op->getPrevNode();
  while (before && (isMemoryEffectFree(before) || onlyAllocates(before)))
    before = before->getPrevNode();
  return before;
}

/// The zero fill the product would otherwise accumulate onto: the last op
/// before `product` with memory effects, when it fills `output` itself
/// with zero. Ops between only compute, make views or allocate; nothing
/// reads the zeros but the product.
linalg::FillOp zeroFillBefore(Operation *product, Value output) {
  auto fill = dyn_cast_if_present<linalg::FillOp>(lastMemoryOpBefore(product));
  if (fill && fill.hasPureBufferSemantics() &&
      fill.getOutputs().front() == output &&
      matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
    return fill;
  return nullptr;
}

/// A broadcast of a rank-1 bias over the whole of a product's output,
/// which the product then accumulates onto
/// (--parallax-fold-bias-into-products).
struct BiasStart {
  linalg::GenericOp broadcast;
  Value bias;
  /// bias[j] starts column j of every row (else bias[i] starts row i).
  bool perColumn;
};

/// The bias broadcast the product would otherwise accumulate onto: the
/// last op before `product` with memory effects, when it copies a rank-1
/// buffer along one of `output`'s two matrix dimensions into the buffer
/// that `output` is (or collapses whole). Ops between only compute, make
/// views or allocate.
std::optional<BiasStart> biasBroadcastBefore(Operation *product, Value output) {
  auto broadcast =
      dyn_cast_if_present<linalg::GenericOp>(lastMemoryOpBefore(product));
  if (!broadcast || !broadcast.hasPureBufferSemantics() ||
      broadcast.getNumDpsInputs() != 1 || broadcast.getNumDpsInits() != 1 ||
      broadcast.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = broadcast.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues() != ValueRange{body.getArgument(0)})
    return std::nullopt;
  OpOperand *input = broadcast.getDpsInputOperand(0);
  OpOperand *init = broadcast.getDpsInitOperand(0);
  auto biasType = dyn_cast<MemRefType>(input->get().getType());
  AffineMap biasMap = broadcast.getMatchingIndexingMap(input);
  if (!biasType || biasType.getRank() != 1 ||
      !biasType.getElementType().isF32() ||
      !broadcast.getMatchingIndexingMap(init).isIdentity() ||
      biasMap.getNumResults() != 1 || !biasMap.isProjectedPermutation() ||
      sameBuffer(rootBuffer(input->get()), rootBuffer(output)))
    return std::nullopt;
  // The output's dimensions as groups of the broadcast's loops.
  auto outputRank = cast<MemRefType>(output.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  if (output == init->get()) {
    for (int64_t i = 0; i < outputRank; ++i)
      groups.push_back({i});
  } else if (auto collapse = output.getDefiningOp<memref::CollapseShapeOp>();
             collapse && collapse.getSrc() == init->get()) {
    groups = collapse.getReassociationIndices();
  } else {
    return std::nullopt;
  }
  int64_t biasLoop = biasMap.getDimPosition(0);
  if (groups.back() == ReassociationIndices{biasLoop})
    return BiasStart{broadcast, input->get(), /*perColumn=*/true};
  if (groups[outputRank - 2] == ReassociationIndices{biasLoop})
    return BiasStart{broadcast, input->get(), /*perColumn=*/false};
  return std::nullopt;
}

struct LinalgToBlasPass
    : parallax::impl::ParallaxLinalgToBlasBase<LinalgToBlasPass> {
  using Base::Base;

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
                     ? linalg::MatmulOp::getDefaultIndexingMaps(
                           op->getContext())
                     : linalg::BatchMatmulOp::getDefaultIndexingMaps(
                           op->getContext())))
          products.push_back(linalgOp);
      }
    });
    if (products.empty())
      return;
    MLIRContext *ctx = &getContext();
    auto unranked = UnrankedMemRefType::get(Float32Type::get(ctx), 0);
    llvm::SetVector<linalg::TransposeOp> copies;
    llvm::SmallPtrSet<Operation *, 16> pending;
    DenseMap<std::pair<Operation *, Value>, Value> shared;
    DenseMap<Operation *, SmallVector<Value>> retainedIn;
    for (linalg::LinalgOp op : products)
      pending.insert(op);
    for (linalg::LinalgOp op : products) {
      OpBuilder builder(op);
      Operation *scope = op->getParentOfType<FunctionOpInterface>();
      if (!scope)
        scope = module;
      auto [found, added] = retainedIn.try_emplace(scope);
      if (added)
        found->second = retainedBuffers(scope);
      std::optional<TransposedOutput> transposed =
          cublas ? std::nullopt : transposedOutputOf(op);
      SmallVector<Value> operands;
      for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
        Value view;
        if (i < 2) // A and B may be read transposed
          view = transposedSource(builder, operand, op, pending, shared, copies,
                                  found->second);
        operands.push_back(view ? view : operand);
      }
      if (transposed) {
        // (A B)^T = B^T A^T, into the transpose's destination, zero-filled
        // where the product's output was.
        Location loc = op.getLoc();
        operands = {swapLastTwo(builder, loc, operands[1]),
                    swapLastTwo(builder, loc, operands[0]),
                    transposed->destination.getResult()};
        transposed->destination->moveBefore(transposed->fill);
        transposed->fill.getDpsInitsMutable()[0].set(
            transposed->destination.getResult());
        transposed->transpose->erase();
      }
      // C = A B where C was zero-filled for the product alone: no pass
      // over C to write the zeros, none to read them back.
      linalg::FillOp zeroFill;
      std::optional<BiasStart> bias;
      if (!cublas && rootBuffer(operands[0]) != rootBuffer(operands[2]) &&
          rootBuffer(operands[1]) != rootBuffer(operands[2])) {
        zeroFill = zeroFillBefore(op, operands[2]);
        // C = A B + bias, each tile's bias written just before its
        // product, in cache.
        if (!zeroFill && !transposed)
          bias = biasBroadcastBefore(op, operands[2]);
      }
      if (zeroFill)
        zeroFill->erase();
      if (bias) {
        operands.insert(operands.begin() + 2, bias->bias);
        bias->broadcast->erase();
      }
      for (Value &operand : operands)
        operand =
            memref::CastOp::create(builder, op.getLoc(), unranked, operand);
      parallax::abi::Function function =
          cublas     ? parallax::abi::Function::cuda_matmul_f32
          : zeroFill ? parallax::abi::Function::matmul_into_f32
          : bias     ? parallax::abi::Function::matmul_bias_f32
                     : parallax::abi::Function::matmul_f32;
      if (bias)
        operands.push_back(arith::ConstantIntOp::create(
            builder, op.getLoc(), bias->perColumn ? 1 : 0, 64));
      parallax::callRuntime(builder, module, op.getLoc(), function, operands);
      auto output = op.getDpsInits().front().getDefiningOp<memref::AllocOp>();
      pending.erase(op);
      op->erase();
      if (output && output->use_empty()) // written transposed instead
        output->erase();
    }
    for (linalg::TransposeOp copy : copies) {
      Value buffer = copy.getInit();
      copy->erase();
      if (buffer.use_empty())
        buffer.getDefiningOp()->erase();
    }
  }
};

} // namespace
