//===- ParallaxOps.td - Parallax operations ----------------*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXOPS_TD
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXOPS_TD

include "parallax/Dialect/Parallax/IR/ParallaxDialect.td"
include "parallax/Dialect/Parallax/IR/ParallaxAttrs.td"
include "parallax/Dialect/Parallax/IR/ParallaxTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// The state of variables; reads and writes of variables are ordered by it.
def Parallax_VariableResource
    : Resource<"::mlir::parallax::VariableResource">;
/// The communicator: collectives must run in program order on every worker,
/// so they read and write this resource and are never reordered or erased.
def Parallax_CommResource
    : Resource<"::mlir::parallax::CommunicationResource">;

defvar Parallax_Collective = MemoryEffects<[MemRead<Parallax_CommResource>,
                                            MemWrite<Parallax_CommResource>]>;

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

def Parallax_VariableOp : Parallax_Op<"variable", [
    Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a named, typed model variable";
  let description = [{
    Declares a model variable: one per ONNX initializer, named after it. A
    `trainable` variable is updated by the optimizer; a `state` variable
    holds optimizer state of one (created by `--parallax-optimizer`, e.g.
    `@fc.weight.exp_avg`); a `statistics` variable is model state the step
    computes itself (BatchNorm's running mean and variance): assigned by
    `parallax.assign`, never by the optimizer, saved and restored like a
    trainable variable; others are frozen constants. The initial value is
    omitted when the model was imported
    without its initializer data (`parallax-compile --plan-only`). The
    optional `distribution` attribute records how the variable is
    synchronised across workers, the optional `sparsity` attribute what
    `--parallax-sparsity-analysis` found about its gradient.

    Example:

    ```mlir
    parallax.variable trainable @fc.weight : tensor<4x8xf32> = dense<0.5>
    parallax.variable @emb : tensor<1000x64xf32>
        {distribution = #parallax.distribution<ps, partitions = 4>}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyStaticShapeTensor>:$type,
                       OptionalAttr<ElementsAttr>:$initial_value,
                       UnitAttr:$trainable, UnitAttr:$state,
                       UnitAttr:$statistics,
                       OptionalAttr<Parallax_DistributionAttr>:$distribution,
                       OptionalAttr<Parallax_SparsityAttr>:$sparsity);
  let assemblyFormat = [{
    (`trainable` $trainable^)? (`state` $state^)?
    (`statistics` $statistics^)? $sym_name
    custom<TypeAndInitialValue>($type, $initial_value) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Parallax_ReadOp : Parallax_Op<"read", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Parallax_VariableResource>]>]> {
  let summary = "read the current value of a variable";
  let description = [{
    Yields the current value of `variable` on this worker. The result type is
    the variable's type.

    Example: `%w = parallax.read @fc.weight : tensor<4x8xf32>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$variable attr-dict `:` type($result)";
}

def Parallax_AssignOp : Parallax_Op<"assign", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Parallax_VariableResource>]>]> {
  let summary = "overwrite the value of a trainable or statistics variable";
  let description = [{
    Stores `value` into `variable` on this worker: the new running
    statistics of a BatchNorm in training mode, or an update written out.
    Only trainable and `statistics` variables can be assigned. Autodiff
    moves assignments to the end of the step, after every use of the
    values read from the variables (a read is a view of the variable).

    Example: `parallax.assign @fc.weight, %new : tensor<4x8xf32>`
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable,
                       AnyStaticShapeTensor:$value);
  let assemblyFormat = "$variable `,` $value attr-dict `:` type($value)";
}

def Parallax_RandomUniformOp : Parallax_Op<"random_uniform", [
    MemoryEffects<[MemRead]>]> {
  let summary = "counter-based uniform random numbers in [0, 1)";
  let description = [{
    Dimension 0 holds `rows_per_example` rows per example of the batch
    (1, or a batch and its attention heads merged, example-major). Element
    `e` of row `i` (`e` the element's row-major position within its row)
    is Philox4x32-10 of the counter (e, global row, `stream`) under the
    key (`seed`, `salt`), scaled to [0, 1) with 24 bits. The global row is
    the row's position in the whole run, (first example) x
    `rows_per_example` + i, where the first example of this worker's batch
    (step x global batch + this worker's offset) is read from the runtime,
    so the numbers depend on neither the number of workers nor where a
    restored run resumed; the program's `--seed` replaces `seed`. Reads the
    step's position, so it is not pure.

    Example (a dropout mask's draw):

    ```mlir
    %u = parallax.random_uniform seed = 0 salt = 0 stream = 3 : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins I64Attr:$seed, I64Attr:$salt, I64Attr:$stream,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>,
                                         "1">:$rows_per_example);
  let results = (outs StaticShapeTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    `seed` `=` $seed `salt` `=` $salt `stream` `=` $stream
    (`rows_per_example` `=` $rows_per_example^)? attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training: gradients and optimizer updates
//===----------------------------------------------------------------------===//

def Parallax_ApplyGradientOp : Parallax_Op<"apply_gradient", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Parallax_VariableResource>,
                   MemWrite<Parallax_VariableResource>]>]> {
  let summary = "the gradient of the loss for one trainable variable";
  let description = [{
    Produced by `--parallax-autodiff`, one per trainable variable the loss
    depends on: `gradient` is d loss / d `variable` for this step, dense or
    row-sparse (an embedding lookup). It stands for "update the variable
    with this gradient": the distribution passes rewrite its gradient
    (averaging it over workers), and `--parallax-optimizer` replaces it
    with a `parallax.update`.

    Example:

    ```mlir
    parallax.apply_gradient @emb, %g : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable,
                       Parallax_TensorOrRowSparse:$gradient);
  let assemblyFormat = "$variable `,` $gradient attr-dict `:` type($gradient)";
}

def Parallax_UpdateOp : Parallax_Op<"update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Parallax_VariableResource>,
                   MemWrite<Parallax_VariableResource>]>]> {
  let summary = "apply one optimizer step to a variable in place";
  let description = [{
    Updates the trainable `variable` and its optimizer `state` variables
    (in the order of `OptimizerAttr::getStateNames`) with `gradient`, by
    the rule of `optimizer`. A row-sparse gradient updates only the rows it
    holds (lazily; repeated rows are summed first).

    Example:

    ```mlir
    parallax.update @emb, %g optimizer = <adagrad, lr = 1.000000e-01>
        state = [@emb.sum] : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable,
                       Parallax_TensorOrRowSparse:$gradient,
                       Parallax_OptimizerAttr:$optimizer,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$state);
  let assemblyFormat = [{
    $variable `,` $gradient `optimizer` `=` $optimizer
    (`state` `=` $state^)? attr-dict `:` type($gradient)
  }];
}

//===----------------------------------------------------------------------===//
// Row-sparse values
//===----------------------------------------------------------------------===//

def Parallax_RowSparsePackOp : Parallax_Op<"row_sparse.pack", [Pure,
    TypesMatchWith<"indices type matches the row-sparse type", "result",
                   "indices",
                   "::llvm::cast<RowSparseType>($_self).getIndicesType()">,
    TypesMatchWith<"values type matches the row-sparse type", "result",
                   "values",
                   "::llvm::cast<RowSparseType>($_self).getValuesType()">]> {
  let summary = "build a row-sparse value from row indices and row values";
  let description = [{
    Example:

    ```mlir
    %g = parallax.row_sparse.pack %ids, %rows
        : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
    ```
    where `%ids : tensor<32xi64>` and `%rows : tensor<32x64xf32>`.
  }];
  let arguments = (ins 1DTensorOf<[I64]>:$indices, AnyRankedTensor:$values);
  let results = (outs Parallax_RowSparseType:$result);
  let assemblyFormat =
      "$indices `,` $values attr-dict `:` qualified(type($result))";
}

def Parallax_RowSparseUnpackOp : Parallax_Op<"row_sparse.unpack", [Pure,
    TypesMatchWith<"indices type matches the row-sparse type", "input",
                   "indices",
                   "::llvm::cast<RowSparseType>($_self).getIndicesType()">,
    TypesMatchWith<"values type matches the row-sparse type", "input",
                   "values",
                   "::llvm::cast<RowSparseType>($_self).getValuesType()">]> {
  let summary = "split a row-sparse value into row indices and row values";
  let description = [{
    Example:

    ```mlir
    %ids, %rows = parallax.row_sparse.unpack %g
        : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
    ```
  }];
  let arguments = (ins Parallax_RowSparseType:$input);
  let results = (outs 1DTensorOf<[I64]>:$indices, AnyRankedTensor:$values);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasFolder = 1;
}

def Parallax_RowSparseToDenseOp : Parallax_Op<"row_sparse.to_dense", [Pure,
    TypesMatchWith<"result is the dense type of the row-sparse value",
                   "input", "result",
                   "::llvm::cast<RowSparseType>($_self).getDenseType()">]> {
  let summary = "densify a row-sparse value (repeated rows add up)";
  let description = [{
    Yields the dense tensor that is zero except at the stored rows; rows
    whose index appears several times are summed.

    Example:

    ```mlir
    %d = parallax.row_sparse.to_dense %g
        : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
    ```
  }];
  let arguments = (ins Parallax_RowSparseType:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

//===----------------------------------------------------------------------===//
// Dense collectives
//===----------------------------------------------------------------------===//

def Parallax_AllReduceOp : Parallax_Op<"allreduce", [Parallax_Collective,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "reduce tensors elementwise across all workers";
  let description = [{
    Combines each input elementwise over all workers with `reduction` and
    gives every worker the result. Several tensors may be reduced together
    (a bucket), which the runtime sends as one message. `for` names, per
    input, the variable whose gradient it is: the runtime accounts the
    traffic under that name (under `allreduce` where it is absent).

    Example:

    ```mlir
    %a, %b = parallax.allreduce mean %ga, %gb for ["w", "b"]
        : tensor<8x4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Parallax_ReductionKind:$reduction,
                       Variadic<AnyStaticShapeTensor>:$inputs,
                       OptionalAttr<StrArrayAttr>:$variables);
  let results = (outs Variadic<AnyStaticShapeTensor>:$results);
  let assemblyFormat = [{
    $reduction $inputs (`for` $variables^)? attr-dict `:` type($inputs)
  }];
  let extraClassDeclaration = [{
    /// The name each input's traffic is accounted under.
    ::llvm::SmallVector<::llvm::StringRef> getTrafficNames();
  }];
  let hasVerifier = 1;
}

def Parallax_AllReduceStartOp : Parallax_Op<"allreduce_start", [
    Parallax_Collective, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "start an asynchronous allreduce";
  let description = [{
    Starts the same reduction as `parallax.allreduce` and returns at once, so
    that computation placed between the start and its
    `parallax.allreduce_wait` overlaps the communication. The handle must be
    consumed by exactly one `parallax.allreduce_wait` in the same block; its
    type carries the input types.

    Example:

    ```mlir
    %h = parallax.allreduce_start mean %g for ["w"] : tensor<8x4xf32>
    ...
    %r = parallax.allreduce_wait %h : tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Parallax_ReductionKind:$reduction,
                       Variadic<AnyStaticShapeTensor>:$inputs,
                       OptionalAttr<StrArrayAttr>:$variables);
  let results = (outs Parallax_AllReduceHandleType:$handle);
  let assemblyFormat = [{
    $reduction $inputs (`for` $variables^)? attr-dict `:` type($inputs)
  }];
  let extraClassDeclaration = [{
    /// The name each input's traffic is accounted under.
    ::llvm::SmallVector<::llvm::StringRef> getTrafficNames();
  }];
  let hasVerifier = 1;
}

def Parallax_AllReduceWaitOp : Parallax_Op<"allreduce_wait", [
    Parallax_Collective]> {
  let summary = "wait for an asynchronous allreduce and yield its results";
  let description = [{
    Blocks until the allreduce started by the `parallax.allreduce_start` that
    produced `handle` has completed, and yields the reduced tensors (same
    types as the start's inputs).
  }];
  let arguments = (ins Parallax_AllReduceHandleType:$handle);
  let results = (outs Variadic<AnyStaticShapeTensor>:$results);
  let assemblyFormat = [{
    $handle attr-dict `:` custom<HandleResults>(type($handle), type($results))
  }];
  let hasVerifier = 1;
}

def Parallax_AllGatherOp : Parallax_Op<"allgather", [Parallax_Collective]> {
  let summary = "concatenate every worker's row slice along dimension 0";
  let description = [{
    Worker `r`'s `input` becomes rows `[r*k, (r+1)*k)` of the result, where
    `k` is the input's leading dimension. The result's leading dimension is
    `k` times the number of workers, or `?` when that number is only known
    at run time. `for` names the variable whose rows or row ids these are:
    the runtime accounts the traffic under that name (under `allgather`
    where it is absent).

    Example: `%all = parallax.allgather %rows for "emb" : tensor<32x64xf32> -> tensor<128x64xf32>`
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       OptionalAttr<StrAttr>:$variable);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`for` $variable^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Parallax_BroadcastOp : Parallax_Op<"broadcast", [Parallax_Collective,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "send a tensor from one worker to all workers";
  let description = [{
    Every worker receives worker `root`'s `input` (used to give all replicas
    of a dense variable the same initial value).

    Example: `%w0 = parallax.broadcast %w root 0 : tensor<8x4xf32>`
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$root);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input `root` $root attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Parameter-server push / pull
//===----------------------------------------------------------------------===//

def Parallax_PushOp : Parallax_Op<"push", [Parallax_Collective,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Parallax_VariableResource>]>]> {
  let summary = "send a gradient to the servers that own a variable";
  let description = [{
    Sends this worker's gradient of a `ps`-placed variable to the servers
    that hold its partitions. A row-sparse gradient sends only its rows, each
    to the server owning that row's range; a dense gradient sends every
    partition to its owner. The owners average the contributions of all
    workers and apply the variable's optimizer update to their rows:
    `optimizer` and its `state` variables (set by `--parallax-optimizer`,
    as for `parallax.update`) say which.

    Example:

    ```mlir
    parallax.push @emb, %g optimizer = <adagrad, lr = 1.000000e-01> state = [@emb.sum]
        : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable,
                       Parallax_TensorOrRowSparse:$gradient,
                       OptionalAttr<Parallax_OptimizerAttr>:$optimizer,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$state);
  let assemblyFormat = [{
    $variable `,` $gradient (`optimizer` `=` $optimizer^)?
    (`state` `=` $state^)? attr-dict `:` type($gradient)
  }];
}

def Parallax_PullOp : Parallax_Op<"pull", [Parallax_Collective,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Parallax_VariableResource>]>]> {
  let summary = "fetch rows (or all) of a variable from its servers";
  let description = [{
    With `indices`, fetches the requested rows of a `ps`-placed variable from
    the servers that own them (duplicates are fetched once); the result has
    one row per index. Without indices, fetches the whole variable.

    Example:

    ```mlir
    %rows = parallax.pull @emb[%ids : tensor<32xi64>] : tensor<32x64xf32>
    %w = parallax.pull @fc.weight : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable,
                       Optional<1DTensorOf<[I64]>>:$indices);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $variable (`[` $indices^ `:` type($indices) `]`)? attr-dict `:`
    type($result)
  }];
}

def Parallax_WorkersOp : Parallax_Op<"workers", [Pure]> {
  let summary = "the number of workers this run trains with";
  let description = [{
    The number of workers of the run: the MPI world's size, or 1 for a
    program run without `mpirun`. It is fixed for the whole run. A program
    whose world is read at run time (`parallax.world` of 0) branches on it
    where one worker can do without the parameter servers
    (`--parallax-local-when-alone`).

    Example: `%n = parallax.workers : i64`
  }];
  let results = (outs I64:$count);
  let assemblyFormat = "attr-dict `:` type($count)";
}

//===----------------------------------------------------------------------===//
// Library calls
//===----------------------------------------------------------------------===//

def Parallax_LibraryCallOp : Parallax_Op<"library_call", [Pure,
    AttrSizedOperandSegments, DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    AllTypesMatch<["outputs", "results"]>]> {
  let summary = "a runtime function computing tensors, in destination style";
  let description = [{
    Calls `callee`, a runtime function of RuntimeABI.def that reads the
    buffers of `inputs`, overwrites those of `outputs` whole (their old
    contents are never read) and takes the `scalars` after them as i64
    arguments: `callee(inputs..., outputs..., scalars...)`, each buffer a
    contiguous `memref<*xT>`. The results are the outputs' new values.
    `callee` must be declared as a `func.func` of those arguments
    (`memref<*xT>` for each tensor of element type T, i64 for each scalar)
    and no results. Pure at the tensor level: the callee depends on its
    arguments alone.
    One-shot bufferization turns it into the `func.call`
    (lib/Dialect/Parallax/Transforms/BufferizableOpInterfaceImpl.cpp),
    with each input's buffer (a contiguous copy first where it is a
    strided view) and the outputs' buffers, written in place.
    `--parallax-gpu-library-convolutions` writes it for cuDNN's
    convolutions.

    Example:

    ```mlir
    %y = parallax.library_call @parallax_rt_conv2d_f32(%x, %w) outs(%init)
        scalars = [1, 1, 0, 0, 1, 1, 1]
        : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyRankedTensor>:$inputs,
                       Variadic<AnyRankedTensor>:$outputs,
                       DenseI64ArrayAttr:$scalars);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` `outs` `(` $outputs `)` `scalars` `=` $scalars
    attr-dict `:` `(` type($inputs) `)` `->` type($results)
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutputsMutable();
    }
  }];
}

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXOPS_TD
