//===- InstrumentProfile.cpp - Profile sites around kernels and calls -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Kernels.h"
#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXINSTRUMENTPROFILE
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

constexpr StringLiteral kRuntimePrefix = "parallax_rt_";

/// What a site does once, statically.
struct Site {
  std::string family;
  int64_t flops = 0, bytes = 0;
  std::string node, name;
};

/// Bytes of one element of `type` (index as 64 bits), 0 if unknown.
int64_t elementBytes(MemRefType type) {
  Type element = type.getElementType();
  if (element.isIndex())
    return 8;
  if (element.isIntOrFloat())
    return llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  return 0;
}

int64_t bytesOf(Type type) {
  auto shaped = dyn_cast<MemRefType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements() * elementBytes(shaped);
}

/// The ranked memref a runtime call's memref<*xT> argument was cast from.
Type rankedTypeOf(Value argument) {
  if (auto cast = argument.getDefiningOp<memref::CastOp>())
    return cast.getSource().getType();
  return argument.getType();
}

/// Floating-point operations per point of a linalg body: arithmetic and
/// comparisons on floats and math functions count one each (an FMA two);
/// constants, casts and integer index arithmetic count none.
int64_t flopsPerPoint(linalg::LinalgOp op) {
  int64_t flops = 0;
  op->walk([&](Operation *inner) {
    if (isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
            arith::UIToFPOp, arith::FPToSIOp, arith::FPToUIOp, arith::BitcastOp,
            arith::SelectOp>(inner))
      return;
    bool isFloat = llvm::any_of(inner->getOperandTypes(),
                                [](Type t) { return isa<FloatType>(t); }) ||
                   llvm::any_of(inner->getResultTypes(),
                                [](Type t) { return isa<FloatType>(t); });
    if (isa<math::FmaOp>(inner))
      flops += 2;
    else if (isFloat &&
             llvm::is_contained({StringRef("arith"), StringRef("math")},
                                inner->getName().getDialectNamespace()))
      flops += 1;
  });
  return flops;
}

/// The family of a kernel's op, by what it does: named ops by name,
/// generic ones by their iterators and body (`flopsPerPoint`; `gathers`:
/// it reads or writes a captured memref).
std::string familyOf(linalg::LinalgOp op, int64_t flopsPerPoint, bool gathers) {
  StringRef name = op->getName().stripDialect();
  if (name.contains("conv"))
    return "convolution";
  if (name.starts_with("pooling"))
    return "pooling";
  if (name.contains("matmul") || isa<linalg::ContractionOpInterface>(*op))
    return "matrix product (generated)";
  if (isa<linalg::FillOp>(op))
    return "fill";
  if (gathers)
    return "gather and scatter";
  if (op.getNumReductionLoops() > 0)
    return "reduction";
  if (flopsPerPoint == 0) {
    // A copy through a window (im2col, padding) or a plain relayout.
    bool windowed = llvm::any_of(op.getIndexingMapsArray(), [](AffineMap m) {
      return !m.isProjectedPermutation(/*allowZeroInResults=*/true);
    });
    return windowed ? "im2col and padding" : "copy and layout";
  }
  return "elementwise";
}

Site kernelSite(func::CallOp call, linalg::LinalgOp op) {
  Site site;
  int64_t points = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range)) {
      points = 0;
      break;
    }
    points *= range;
  }
  int64_t perPoint = flopsPerPoint(op);
  site.flops = points * perPoint;
  // An input read through several maps (a pooling's window positions) is
  // one buffer: counted once.
  llvm::SmallDenseSet<Value> inputs;
  for (OpOperand *input : op.getDpsInputOperands())
    if (inputs.insert(input->get()).second)
      site.bytes += bytesOf(input->get().getType());
  for (OpOperand &init : op.getDpsInitsMutable())
    site.bytes += bytesOf(init.get().getType()) *
                  (op.payloadUsesValueFromOperand(&init) ? 2 : 1);
  // Captured memrefs (gathers, scatters): at most one element per access
  // and point.
  bool gathers = false;
  op->walk([&](Operation *inner) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(inner))
      memref = store.getMemRef();
    else
      return;
    gathers = true;
    auto type = cast<MemRefType>(memref.getType());
    site.bytes += std::min(bytesOf(type), points * elementBytes(type));
  });
  site.family = familyOf(op, perPoint, gathers);
  site.node = nodeNameOf(call.getLoc());
  site.name = call.getCallee().str();
  return site;
}

/// The family of runtime entry point `symbol` (without its prefix) when
/// the profile times it; none for the cheap ones (step numbers, seeds).
std::optional<StringRef> runtimeFamilyOf(StringRef symbol) {
  if (symbol.starts_with("matmul_"))
    return StringRef("matrix product (BLAS)");
  if (symbol.starts_with("update_"))
    return StringRef("optimizer");
  if (symbol.starts_with("push_") || symbol.starts_with("pull_"))
    return StringRef("parameter store");
  if (symbol.starts_with("allreduce_") || symbol.starts_with("allgather_") ||
      symbol.starts_with("broadcast_"))
    return StringRef("collectives");
  if (symbol == "load_batch")
    return StringRef("input");
  return std::nullopt;
}

Site runtimeSite(func::CallOp call, StringRef symbol, StringRef family) {
  Site site;
  site.family = family.str();
  site.name = symbol.str();
  site.node = nodeNameOf(call.getLoc());
  SmallVector<Type> memrefs;
  for (Value argument : call.getArgOperands())
    if (isa<BaseMemRefType>(argument.getType()))
      memrefs.push_back(rankedTypeOf(argument));
  for (Type type : memrefs)
    site.bytes += bytesOf(type);
  // matmul(A, B, [bias,] C): C = A B on the last two dimensions, batched
  // over a leading one; A's last dimension is the depth.
  bool product = memrefs.size() >= 3;
  auto a = product ? dyn_cast<MemRefType>(memrefs.front()) : nullptr;
  auto c = product ? dyn_cast<MemRefType>(memrefs.back()) : nullptr;
  if (symbol.starts_with("matmul_") && a && c && a.hasStaticShape() &&
      c.hasStaticShape())
    site.flops = 2 * c.getNumElements() * a.getShape().back();
  return site;
}

std::string sanitize(StringRef text) {
  std::string clean = text.str();
  for (char &ch : clean)
    if (ch == '\t' || ch == '\n' || ch == '\0')
      ch = ' ';
  return clean;
}

struct InstrumentProfilePass
    : parallax::impl::ParallaxInstrumentProfileBase<InstrumentProfilePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.lookupSymbol(kSitesSymbol)) {
      module.emitError() << "the module already has profile sites ('"
                         << kSitesSymbol << "')";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> callers;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && !kernelOpOf(function))
        callers.push_back(function);

    std::vector<Site> sites;
    for (func::FuncOp caller : callers) {
      SmallVector<std::pair<Operation *, Site>> found;
      caller.walk([&](Operation *op) {
        if (auto copy = dyn_cast<memref::CopyOp>(op)) {
          Site site{"copy and layout", 0,
                    2 * bytesOf(copy.getSource().getType()),
                    nodeNameOf(copy.getLoc()), "memref.copy"};
          found.push_back({op, std::move(site)});
          return;
        }
        auto call = dyn_cast<func::CallOp>(op);
        if (!call)
          return;
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee)
          return;
        if (linalg::LinalgOp kernel = kernelOpOf(callee)) {
          found.push_back({op, kernelSite(call, kernel)});
          return;
        }
        StringRef symbol = call.getCallee();
        if (!symbol.consume_front(kRuntimePrefix))
          return;
        if (std::optional<StringRef> family = runtimeFamilyOf(symbol))
          found.push_back({op, runtimeSite(call, symbol, *family)});
      });
      for (auto &[op, site] : found) {
        bracket(module, op, static_cast<int64_t>(sites.size()));
        sites.push_back(std::move(site));
      }
    }

    std::string table;
    for (const Site &site : sites)
      table += sanitize(site.family) + "\t" + std::to_string(site.flops) +
               "\t" + std::to_string(site.bytes) + "\t" + sanitize(site.node) +
               "\t" + sanitize(site.name) + "\n";
    OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
    auto type = LLVM::LLVMArrayType::get(top.getI8Type(), table.size() + 1);
    LLVM::GlobalOp::create(top, module.getLoc(), type, /*isConstant=*/true,
                           LLVM::Linkage::External, kSitesSymbol,
                           top.getStringAttr(table + '\0'));
  }

  static constexpr StringLiteral kSitesSymbol = "parallax_profile_sites";

  void bracket(ModuleOp module, Operation *op, int64_t index) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    Value site = arith::ConstantOp::create(builder, loc,
                                           builder.getI64IntegerAttr(index));
    callRuntime(builder, module, loc, abi::Function::profile_begin, {site});
    builder.setInsertionPointAfter(op);
    callRuntime(builder, module, loc, abi::Function::profile_end, {site});
  }
};

} // namespace
