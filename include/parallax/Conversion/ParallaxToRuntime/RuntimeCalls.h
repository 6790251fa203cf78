//===- RuntimeCalls.h - Calling the Parallax runtime from IR ----*- C++ -*-===//
//
// Part of the Parallax project. The builders every lowering that calls the
// runtime uses (lib/Conversion, lib/Codegen), over RuntimeABI.h.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PARALLAXTORUNTIME_RUNTIMECALLS_H
#define PARALLAX_CONVERSION_PARALLAXTORUNTIME_RUNTIMECALLS_H

#include "parallax/Conversion/ParallaxToRuntime/RuntimeABI.h"

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::parallax {

/// The function `name` a generated `main` will call, or null after an
/// error (no such function, or the module already has a `main`).
inline func::FuncOp findEntryTarget(ModuleOp module, StringRef name,
                                    StringRef purpose) {
  auto target = module.lookupSymbol<func::FuncOp>(name);
  if (!target) {
    module.emitError() << "no function '" << name << "' to " << purpose;
    return nullptr;
  }
  if (module.lookupSymbol("main")) {
    module.emitError("the module already has a 'main'");
    return nullptr;
  }
  return target;
}

/// Declares runtime entry point `function` (private, at the top of
/// `module`, with its type from RuntimeABI.def and `parallax.retained` on
/// the memref parameters the runtime keeps past the call) unless the
/// module already has it; returns the declaration. `listener` (a rewriter,
/// in a conversion pattern) sees the new op.
inline func::FuncOp
declareRuntimeFunction(ModuleOp module, abi::Function function,
                       OpBuilder::Listener *listener = nullptr) {
  StringRef name = abi::symbol(function);
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody(), listener);
  FunctionType type = abi::type(function, builder.getContext());
  auto declaration = func::FuncOp::create(builder, module.getLoc(), name, type);
  declaration.setPrivate();
  for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i)
    if (abi::retainsArgument(function, i))
      declaration.setArgAttr(i, ParallaxDialect::getRetainedAttrName(),
                             builder.getUnitAttr());
  return declaration;
}

/// Declares runtime entry point `function` in `module` (once, with its
/// type from RuntimeABI.def) and calls it with `args`, whose types must be
/// the ABI's: a mismatch is a compiler bug, reported as such.
inline func::CallOp callRuntime(OpBuilder &builder, ModuleOp module,
                                Location loc, abi::Function function,
                                ValueRange args) {
  FunctionType type = abi::type(function, builder.getContext());
  StringRef name = abi::symbol(function);
  declareRuntimeFunction(module, function, builder.getListener());
  if (TypeRange(args) != type.getInputs()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "internal error: a call of " << name << " with (";
    llvm::interleaveComma(TypeRange(args), os);
    os << ") does not match the runtime ABI's " << type;
    llvm::report_fatal_error(llvm::StringRef(text));
  }
  return func::CallOp::create(builder, loc, name, type.getResults(), args);
}

/// A pointer to a private constant global of `module` of `type` holding
/// `value`, named `prefix`N: one global per distinct value.
inline Value constantGlobal(OpBuilder &builder, ModuleOp module, Location loc,
                            StringRef prefix, Type type, Attribute value) {
  auto pointer = LLVM::LLVMPointerType::get(builder.getContext());
  std::string symbol;
  for (unsigned i = 0;; ++i) {
    symbol = (prefix + Twine(i)).str();
    auto existing = module.lookupSymbol<LLVM::GlobalOp>(symbol);
    if (!existing)
      break;
    if (existing.getValueOrNull() == value && existing.getGlobalType() == type)
      return LLVM::AddressOfOp::create(builder, loc, pointer, symbol);
  }
  OpBuilder top =
      OpBuilder::atBlockBegin(module.getBody(), builder.getListener());
  LLVM::GlobalOp::create(top, loc, type, /*isConstant=*/true,
                         LLVM::Linkage::Internal, symbol, value);
  return LLVM::AddressOfOp::create(builder, loc, pointer, symbol);
}

/// A pointer to a NUL-terminated copy of `text` in a private global of
/// `module` (one global per distinct text).
inline Value runtimeString(OpBuilder &builder, ModuleOp module, Location loc,
                           StringRef text) {
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), text.size() + 1);
  return constantGlobal(builder, module, loc, "__parallax_str_", type,
                        builder.getStringAttr(text.str() + '\0'));
}

/// A pointer to the ParallaxHyperParameters of `config` (Runtime.h: eight
/// doubles in field order), a private constant of `module`, one per
/// distinct configuration.
inline Value runtimeHyperParameters(OpBuilder &builder, ModuleOp module,
                                    Location loc, OptimizerAttr config) {
  SmallVector<double> values;
  for (const APFloat &value :
       {config.getLr(), config.getMomentum(), config.getBeta1(),
        config.getBeta2(), config.getEpsilon(), config.getWeightDecay(),
        config.getLrDecay(), APFloat(config.getNesterov() ? 1.0 : 0.0)})
    values.push_back(value.convertToDouble());
  auto valueType = RankedTensorType::get({8}, builder.getF64Type());
  return constantGlobal(
      builder, module, loc, "__parallax_hyper_",
      LLVM::LLVMArrayType::get(builder.getF64Type(), 8),
      DenseElementsAttr::get(valueType, ArrayRef<double>(values)));
}

/// `value` (a memref) as the runtime takes memrefs: memref<*xT>.
inline Value unrankedMemRef(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<MemRefType>(value.getType());
  return memref::CastOp::create(
      builder, loc, UnrankedMemRefType::get(type.getElementType(), 0), value);
}

/// The buffer of a tensor (identity layout), for code that only reads it.
inline Value readOnlyView(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

/// The buffer of a tensor, for a runtime call that only reads it.
inline Value readOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  return unrankedMemRef(b, loc, readOnlyView(b, loc, tensor));
}

/// A fresh, 64-byte aligned buffer shaped as `type`, for a runtime call to
/// fill.
inline Value freshBuffer(OpBuilder &b, Location loc, RankedTensorType type) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      b.getI64IntegerAttr(64));
}

/// The tensor a fresh buffer holds once the runtime has filled it.
inline Value bufferContents(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
      buffer, /*restrict=*/true, /*writable=*/true);
}

/// Inside a kernel body: when `bad`, calls the runtime, which ends the
/// program naming `op`'s node, `what` it indexes, the value `raw` and the
/// range [low, high). Every index a kernel reads memory with is checked:
/// the checks of graph inputs' data at start-up cannot see indices the
/// graph computes.
inline void emitIndexCheck(OpBuilder &b, Location loc, Operation *op, Value bad,
                           Value raw, int64_t low, int64_t high,
                           StringRef what) {
  auto module = op->getParentOfType<ModuleOp>();
  Type i64 = b.getI64Type();
  abi::Function callee = abi::Function::index_out_of_range;
  func::FuncOp function =
      declareRuntimeFunction(module, callee, b.getListener());
  if (!function->hasAttr("passthrough"))
    function->setAttr("passthrough", b.getStrArrayAttr({"noreturn", "cold"}));
  std::string where =
      ParallaxDialect::describeNode(op->getLoc()) + ": " + what.str();
  scf::IfOp::create(b, loc, bad, [&](OpBuilder &t, Location l) {
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantOp::create(t, l, t.getI64IntegerAttr(value));
    };
    Value value = raw;
    if (value.getType().isIndex())
      value = arith::IndexCastOp::create(t, l, i64, value);
    else if (value.getType() != i64)
      value = arith::ExtSIOp::create(t, l, i64, value);
    callRuntime(t, module, l, callee,
                {runtimeString(t, module, l, where), value, constant(low),
                 constant(high)});
    scf::YieldOp::create(t, l);
  });
}

/// `raw` (an index) as a position along a dimension of `size`: negative
/// ones count from the end (ONNX's Gather), and any other outside
/// [-size, size) ends the program (emitIndexCheck, naming `op` and `what`).
inline Value checkedIndex(OpBuilder &b, Location loc, Operation *op, Value raw,
                          int64_t size, StringRef what) {
  Value count = arith::ConstantIndexOp::create(b, loc, size);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, raw, zero);
  Value index = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, raw, count), raw);
  // One unsigned comparison: below -size stays negative.
  Value bad =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, index, count);
  emitIndexCheck(b, loc, op, bad, raw, -size, size, what);
  return index;
}

/// Tells the runtime the valid ranges (`parallax.index_ranges`) of
/// argument `index` of `step`, graph input `name`, before it is read.
inline void declareInputRanges(OpBuilder &builder, ModuleOp module,
                               Location loc, func::FuncOp step, unsigned index,
                               StringRef name) {
  auto ranges = step.getArgAttrOfType<ArrayAttr>(
      index, ParallaxDialect::getIndexRangesAttrName());
  if (!ranges)
    return;
  Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
  auto constant = [&](Type type, int64_t value) -> Value {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getIntegerAttr(type, value));
  };
  for (auto range : ranges.getAsRange<IndexRangeAttr>()) {
    std::optional<int64_t> ignored = range.getIgnored();
    callRuntime(builder, module, loc, abi::Function::declare_input_range,
                {runtimeString(builder, module, loc, name),
                 constant(i64, range.getLow()), constant(i64, range.getHigh()),
                 constant(i32, ignored.has_value()),
                 constant(i64, ignored.value_or(0)),
                 runtimeString(builder, module, loc, range.getUse())});
    DenseI64ArrayAttr region = range.getRegion();
    if (!region)
      continue;
    for (int64_t d = 0; d < region.size() / 3; ++d)
      callRuntime(builder, module, loc, abi::Function::declare_input_region,
                  {runtimeString(builder, module, loc, name), constant(i64, d),
                   constant(i64, region[3 * d]),
                   constant(i64, region[3 * d + 1]),
                   constant(i64, region[3 * d + 2])});
  }
}

/// Tells the runtime that argument `index` of `step`, graph input `name`,
/// holds the elements of bags (`parallax.segmented_by`), before it is read.
inline void declareSegmentedInput(OpBuilder &builder, ModuleOp module,
                                  Location loc, func::FuncOp step,
                                  unsigned index, StringRef name) {
  auto offsets = step.getArgAttrOfType<StringAttr>(
      index, ParallaxDialect::getSegmentedByAttrName());
  if (offsets)
    callRuntime(builder, module, loc, abi::Function::segment_input,
                {runtimeString(builder, module, loc, name),
                 runtimeString(builder, module, loc, offsets.getValue())});
}

/// Drops the argument and result attributes that only the generated entry
/// point needed (names, index ranges, bags): LLVM has no use for them.
inline void dropEntryAttributes(func::FuncOp step) {
  for (StringRef attr : {ParallaxDialect::getNameAttrName(),
                         ParallaxDialect::getIndexRangesAttrName(),
                         ParallaxDialect::getSegmentedByAttrName(),
                         ParallaxDialect::getSegmentCountAttrName()}) {
    for (unsigned i = 0; i < step.getNumArguments(); ++i)
      step.removeArgAttr(i, attr);
    for (unsigned i = 0; i < step.getNumResults(); ++i)
      step.removeResultAttr(i, attr);
  }
}

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PARALLAXTORUNTIME_RUNTIMECALLS_H
