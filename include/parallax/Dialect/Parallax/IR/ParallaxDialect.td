//===- ParallaxDialect.td - Parallax dialect definition ----*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXDIALECT_TD
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXDIALECT_TD

include "mlir/IR/OpBase.td"

def Parallax_Dialect : Dialect {
  let name = "parallax";
  let cppNamespace = "::mlir::parallax";
  let summary = "Sparsity-aware data-parallel training";
  let description = [{
    The Parallax dialect models a single-device training program and its
    data-parallel rewrite.

    * **Variables** are named module-level symbols (`parallax.variable`), one
      per trainable ONNX initializer, read with `parallax.read` and updated
      with `parallax.assign` inside the step function.
    * **Row-sparse values** (`!parallax.row_sparse`) are `(indices, values)`
      pairs with a dense shape: the gradient of a gather on axis 0 touches
      only the looked-up rows.
    * **Communication ops** express how each variable is synchronised:
      `parallax.allreduce` (and its asynchronous `allreduce_start` /
      `allreduce_wait` pair) for dense variables, `parallax.push` /
      `parallax.pull` of rows to and from a variable partitioned over
      parameter servers, `parallax.allgather` of row slices and
      `parallax.broadcast`.
    * **Attributes** record the per-variable decision
      (`#parallax.distribution`) and the module's world
      (`parallax.world = #parallax.world<workers = N>` on the module; when it
      is absent the number of workers is read at run time).

    All ops are SPMD: every worker runs the same program, and collective ops
    must be reached by all workers in the same order.
  }];

  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;

  // The attributes the dialect attaches to ops of other dialects: a
  // module's world, a function argument's or result's ONNX name, index
  // ranges and bags of varying size, a runtime parameter the runtime keeps,
  // and the `memref.global`s variables are lowered to. Verified in
  // verifyOperationAttribute / verifyRegionArgAttribute.
  let discardableAttrs = (ins
    // The `#parallax.world` of a module.
    "::mlir::parallax::WorldAttr":$world,
    // The ONNX name of a graph input or output.
    "::mlir::StringAttr":$name,
    // The `#parallax.index_range`s an integer graph input must satisfy.
    "::mlir::ArrayAttr":$index_ranges,
    // On a 1-D graph input holding the elements of bags (nn.EmbeddingBag's
    // ids and per-sample weights with offsets): the name of the graph input
    // holding each bag's first position. A batch holds up to the input's
    // length of elements, and padding after them.
    "::mlir::StringAttr":$segmented_by,
    // On the i64 scalar argument the importer adds for such bags: the
    // number of elements the inputs segmented by the named offsets input
    // hold in this batch (the bags' end).
    "::mlir::StringAttr":$segment_count,
    // The kind of a variable's `memref.global`: "trainable", "state" or
    // "statistics" (registered for checkpoints).
    "::mlir::StringAttr":$variable,
    // `array<i64: P, S>` on a parameter-server variable's `memref.global`
    // (and its optimizer state's): its P partitions are served by workers
    // S, S+1, ... (mod the world size).
    "::mlir::DenseI64ArrayAttr":$shards,
    // The ONNX file (absolute path) a module's `from_model` variables take
    // their initial values from when the program starts.
    "::mlir::StringAttr":$model,
    // On a variable (and the `memref.global` it is lowered to): its initial
    // value is the model's initializer of the same name, loaded when the
    // program starts instead of embedded in it.
    "::mlir::UnitAttr":$from_model,
    // On a memref parameter of a runtime function's declaration
    // (RT_RETAINED_MEMREF): the runtime keeps the pointer past the call, so
    // the buffer must not be freed right after it.
    "::mlir::UnitAttr":$retained,
    // On a kernel function (parallax-outline-kernels): the positions of its
    // LLVM arguments, once its memrefs are expanded into descriptors, that
    // are pointers to a buffer no other argument reaches (the conversion to
    // LLVM drops `llvm.noalias` on memref arguments).
    "::mlir::DenseI64ArrayAttr":$noalias_pointers,
    // On a global's buffer and on each view of it loaded from its pointer
    // slot (parallax-gpu-globals-to-buffers): the slot's name, so that
    // parallax-gpu-device-memory sees every use of the buffer.
    "::mlir::StringAttr":$global_buffer_slot
  );

  let extraClassDeclaration = [{
    // The attribute names, for code that has no dialect instance at hand.
    static constexpr ::llvm::StringLiteral getWorldAttrName() {
      return WorldAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return NameAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getIndexRangesAttrName() {
      return IndexRangesAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getSegmentedByAttrName() {
      return SegmentedByAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getSegmentCountAttrName() {
      return SegmentCountAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getVariableAttrName() {
      return VariableAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getShardsAttrName() {
      return ShardsAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getModelAttrName() {
      return ModelAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getFromModelAttrName() {
      return FromModelAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getRetainedAttrName() {
      return RetainedAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getNoaliasPointersAttrName() {
      return NoaliasPointersAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getGlobalBufferSlotAttrName() {
      return GlobalBufferSlotAttrHelper::getNameStr();
    }

    /// "node 'NAME'" for an op imported from ONNX node NAME (its NameLoc),
    /// else "an operation at LOC": how messages and generated checks name
    /// where a problem is.
    static std::string describeNode(::mlir::Location loc);

    /// Returns the number of workers fixed on the module enclosing `op`, or
    /// std::nullopt when it is decided at run time.
    static std::optional<int64_t> getStaticWorkers(::mlir::Operation *op);

    /// Whether the module of `op` is planned for any number of workers,
    /// read when the program runs (`#parallax.world<workers = 0>`).
    static bool hasWorldAtRunTime(::mlir::Operation *op);

  private:
    void registerAttributes();
    void registerTypes();
  }];
}

class Parallax_Op<string mnemonic, list<Trait> traits = []>
    : Op<Parallax_Dialect, mnemonic, traits>;

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXDIALECT_TD
