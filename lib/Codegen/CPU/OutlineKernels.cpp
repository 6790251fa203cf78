//===- OutlineKernels.cpp - One function per linalg op --------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Kernels.h"
#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXOUTLINEKERNELS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Where a memref's buffer comes from: a distinct allocation or global,
/// a function argument (which may alias any other argument), or something
/// this pass cannot see through.
struct Root {
  enum Kind { Allocation, Global, Argument, Unknown } kind;
  const void *identity = nullptr;
  bool operator==(const Root &other) const {
    return kind == other.kind && identity == other.identity;
  }
};

Root rootOf(Value memref) {
  while (true) {
    if (isa<BlockArgument>(memref))
      return {Root::Argument};
    Operation *def = memref.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return {Root::Allocation, def};
    if (auto global = dyn_cast<memref::GetGlobalOp>(def))
      return {Root::Global, global.getNameAttr().getAsOpaquePointer()};
    // Views, memref.cast included (a ViewLikeOpInterface).
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      memref = view.getViewSource();
      continue;
    }
    return {Root::Unknown};
  }
}

/// Whether `arguments[index]` (a memref) reaches a buffer that no other
/// argument can: its root is a distinct allocation or global that no other
/// memref argument shares, and no argument's root is unknown.
bool isUnaliased(ArrayRef<Value> arguments, ArrayRef<Root> roots,
                 size_t index) {
  const Root &mine = roots[index];
  if (mine.kind != Root::Allocation && mine.kind != Root::Global)
    return false;
  for (size_t other = 0; other < arguments.size(); ++other) {
    if (other == index || !isa<BaseMemRefType>(arguments[other].getType()))
      continue;
    if (roots[other].kind == Root::Unknown || roots[other] == mine)
      return false;
  }
  return true;
}

struct OutlineKernelsPass
    : parallax::impl::ParallaxOutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<func::FuncOp, SmallVector<linalg::LinalgOp>>> work;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> ops;
      function.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics())
          ops.push_back(op);
        return WalkResult::skip();
      });
      if (!ops.empty())
        work.push_back({function, std::move(ops)});
    }
    for (auto &[function, ops] : work) {
      unsigned counter = 0;
      for (linalg::LinalgOp op : ops)
        outline(op, function, counter++, symbols);
    }
  }

  void outline(linalg::LinalgOp op, func::FuncOp parent, unsigned index,
               SymbolTable &symbols) {
    Operation *kernel = op.getOperation();
    // The values the op reads from outside: its operands and what its
    // regions capture. Constants are cloned into the kernel instead.
    llvm::SetVector<Value> used;
    for (Value operand : kernel->getOperands())
      used.insert(operand);
    getUsedValuesDefinedAbove(kernel->getRegions(), used);
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (def && def->getNumResults() == 1 && matchPattern(value, m_Constant()))
        constants.push_back(def);
      else
        arguments.push_back(value);
    }

    std::string name = (parent.getSymName() + ".k" + Twine(index) + "." +
                        kernel->getName().stripDialect())
                           .str();
    if (std::string node = nodeNameOf(kernel->getLoc()); !node.empty())
      name += "." + node;
    OpBuilder builder(parent);
    auto type = builder.getFunctionType(ValueRange(arguments).getTypes(), {});
    auto function = func::FuncOp::create(builder, kernel->getLoc(), name, type);
    function.setPrivate();
    function->setAttr("passthrough", builder.getStrArrayAttr({"noinline"}));
    symbols.insert(function);

    SmallVector<Root> roots;
    for (Value argument : arguments)
      roots.push_back(isa<BaseMemRefType>(argument.getType())
                          ? rootOf(argument)
                          : Root{Root::Unknown});
    // The descriptor convention expands a ranked memref into (allocated,
    // aligned, offset, sizes..., strides...): mark both pointers.
    SmallVector<int64_t> noalias;
    int64_t position = 0;
    for (size_t i = 0; i < arguments.size(); ++i) {
      auto memref = dyn_cast<MemRefType>(arguments[i].getType());
      if (memref && isUnaliased(arguments, roots, i)) {
        noalias.push_back(position);
        noalias.push_back(position + 1);
      }
      position += memref ? 3 + 2 * memref.getRank()
                  : isa<UnrankedMemRefType>(arguments[i].getType()) ? 2
                                                                    : 1;
    }
    if (!noalias.empty())
      function->setAttr(ParallaxDialect::getNoaliasPointersAttrName(),
                        builder.getDenseI64ArrayAttr(noalias));

    Block *body = function.addEntryBlock();
    OpBuilder inside = OpBuilder::atBlockBegin(body);
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(arguments, body->getArguments()))
      mapping.map(value, argument);
    for (Operation *constant : constants)
      inside.clone(*constant, mapping);
    inside.clone(*kernel, mapping);
    func::ReturnOp::create(inside, kernel->getLoc());

    OpBuilder at(kernel);
    func::CallOp::create(at, kernel->getLoc(), function, arguments);
    kernel->erase();
  }
};

} // namespace

linalg::LinalgOp mlir::parallax::kernelOpOf(func::FuncOp function) {
  if (function.isExternal())
    return nullptr;
  linalg::LinalgOp found;
  function.walk([&](linalg::LinalgOp op) {
    found = op;
    return WalkResult::interrupt();
  });
  return found;
}

std::string mlir::parallax::nodeNameOf(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (std::string name = nodeNameOf(inner); !name.empty())
        return name;
    return "";
  }
  auto name = dyn_cast<NameLoc>(loc);
  if (!name)
    return "";
  std::string text = name.getName().str();
  for (char &c : text)
    if (!llvm::isAlnum(c) && c != '_' && c != '.' && c != '/')
      c = '_';
  return text.substr(0, 120);
}
