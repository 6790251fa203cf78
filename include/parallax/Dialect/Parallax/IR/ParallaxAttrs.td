//===- ParallaxAttrs.td - Parallax attributes and enums ----*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXATTRS_TD
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXATTRS_TD

include "parallax/Dialect/Parallax/IR/ParallaxDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Parallax_Placement : I32EnumAttr<"Placement",
    "how a variable is synchronised across workers", [
      I32EnumAttrCase<"AllReduce", 0, "allreduce">,
      I32EnumAttrCase<"PS", 1, "ps">,
      I32EnumAttrCase<"AllGather", 2, "allgather">
    ]> {
  let cppNamespace = "::mlir::parallax";
  let genSpecializedAttr = 0;
}

// Not an attribute: the enum of --parallax-distribute's `strategy` option and
// of the plan (include/parallax/Analysis/Plan.h).
def Parallax_Strategy : I32EnumAttr<"Strategy",
    "how the plan places variables", [
      I32EnumAttrCase<"Hybrid", 0, "hybrid">,
      I32EnumAttrCase<"AllReduce", 1, "allreduce">,
      I32EnumAttrCase<"PS", 2, "ps">
    ]> {
  let cppNamespace = "::mlir::parallax";
  let genSpecializedAttr = 0;
}

// Printed as a bare keyword in op assembly (`parallax.allreduce mean ...`),
// like arith.cmpi's predicate.
def Parallax_ReductionKind : I32EnumAttr<"ReductionKind",
    "how an allreduce combines the workers' values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Mean", 1, "mean">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">
    ]> {
  let cppNamespace = "::mlir::parallax";
}

def Parallax_PadMode : I32EnumAttr<"PadMode", "how padding is filled", [
    I32EnumAttrCase<"Constant", 0, "constant">,
    I32EnumAttrCase<"Reflect", 1, "reflect">,
    I32EnumAttrCase<"Edge", 2, "edge">]> {
  let cppNamespace = "::mlir::parallax";
}

def Parallax_ReduceKind : I32EnumAttr<"ReduceKind", "a reduction", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Mean", 1, "mean">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"Prod", 4, "prod">]> {
  let cppNamespace = "::mlir::parallax";
}

def Parallax_PoolKind : I32EnumAttr<"PoolKind", "a pooling reduction", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Average", 1, "average">]> {
  let cppNamespace = "::mlir::parallax";
}

def Parallax_OptimizerKind : I32EnumAttr<"OptimizerKind",
    "an optimizer's update rule", [
      I32EnumAttrCase<"SGD", 0, "sgd">,
      I32EnumAttrCase<"Momentum", 1, "momentum">,
      I32EnumAttrCase<"Adagrad", 2, "adagrad">,
      I32EnumAttrCase<"Adam", 3, "adam">,
      I32EnumAttrCase<"AdamW", 4, "adamw">]> {
  let cppNamespace = "::mlir::parallax";
  let genSpecializedAttr = 0;
}

def Parallax_GradientKind : I32EnumAttr<"GradientKind",
    "the kind of a variable's gradient", [
      I32EnumAttrCase<"Dense", 0, "dense">,
      I32EnumAttrCase<"Sparse", 1, "sparse">]> {
  let cppNamespace = "::mlir::parallax";
  let genSpecializedAttr = 0;
}

def Parallax_LossReduction : I32EnumAttr<"LossReduction",
    "how per-example losses are combined", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Sum", 1, "sum">,
      I32EnumAttrCase<"Mean", 2, "mean">]> {
  let cppNamespace = "::mlir::parallax";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Parallax_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Parallax_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Parallax_DistributionAttr : Parallax_Attr<"Distribution", "distribution"> {
  let summary = "how one variable is synchronised: placement and partitions";
  let description = [{
    The distribution decision for one variable, chosen by the distribution
    pass from the cost model (or forced by `--strategy`):

    * `allreduce`: the variable is replicated on every worker and its dense
      gradient is averaged with a ring AllReduce (`partitions` must be 1);
    * `ps`: the variable is split into `partitions` row ranges held by
      parameter servers; workers push gradient rows and pull the rows they
      read;
    * `allgather`: replicated, with its row-sparse gradient exchanged by an
      AllGather of the touched rows (Horovod's scheme; `partitions` must be
      1).

    Example: `#parallax.distribution<ps, partitions = 4>`
  }];
  let parameters = (ins EnumParameter<Parallax_Placement>:$placement,
                        "int64_t":$partitions);
  let assemblyFormat = "`<` $placement `,` `partitions` `=` $partitions `>`";
  let genVerifyDecl = 1;
}

def Parallax_WorldAttr : Parallax_Attr<"World", "world"> {
  let summary = "the number of data-parallel workers a module is planned for";
  let description = [{
    Attached to the module as `parallax.world` when the plan depends on a
    known number of workers (`parallax-compile --workers N`). A program
    planned for N workers refuses to start under any other world size.
    `workers = 0` marks a step distributed for any number of workers, read
    when the program runs (`parallax-compile` without `--workers`).

    Example: `module attributes {parallax.world = #parallax.world<workers = 4>}`
  }];
  let parameters = (ins "int64_t":$workers);
  let assemblyFormat = "`<` `workers` `=` $workers `>`";
  let genVerifyDecl = 1;
}

def Parallax_IndexRangeAttr : Parallax_Attr<"IndexRange", "index_range"> {
  let summary = "the values an integer graph input may hold";
  let description = [{
    Set by `--parallax-declare-index-ranges` in the
    `parallax.index_ranges` array of a step function argument whose values
    index something: `[low, high)`, or `ignored` (a loss's ignore_index)
    when present; `use` says what is indexed, for error messages. When
    only a strided part of the input indexes (a column sliced off it),
    `region` holds one (offset, size, stride) triple per dimension of the
    argument, and only those elements are checked. The
    generated entry points check every value of the input's data against
    each range before the first step (training) or before the model runs
    (inference).

    Example: `#parallax.index_range<low = -1000, high = 1000, use = "the indices of node 'emb' into 'table' (1000 rows)", region = [0, 4, 1, 2, 1, 1]>`
    (column 2 of a 4 x 3 input)
  }];
  let parameters = (ins "int64_t":$low, "int64_t":$high,
                        OptionalParameter<"std::optional<int64_t>">:$ignored,
                        StringRefParameter<"what the values index">:$use,
                        OptionalParameter<"::mlir::DenseI64ArrayAttr">:$region);
  let assemblyFormat = [{
    `<` `low` `=` $low `,` `high` `=` $high `,`
    (`ignored` `=` $ignored^ `,`)? `use` `=` $use (`,` `region` `=` $region^)?
    `>`
  }];
  let genVerifyDecl = 1;
}

/// A real-valued parameter (an APFloat holding a double), written as a
/// plain float literal.
class Parallax_RealParameter<string desc>
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
      double value;
      if ($_parser.parseFloat(value))
        return ::mlir::failure();
      return ::llvm::APFloat(value);
    }() }];
  let printer = "$_printer << $_self.convertToDouble()";
}
class Parallax_OptionalReal<string default>
    : Parallax_RealParameter<"defaults to " # default> {
  let defaultValue = "::llvm::APFloat(" # default # ")";
}
def Parallax_OptionalBool : AttrOrTypeParameter<"bool", "defaults to false"> {
  let defaultValue = "false";
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
      if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
        return true;
      if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
        return false;
      return $_parser.emitError($_parser.getCurrentLocation(),
                                "expected 'true' or 'false'");
    }() }];
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

def Parallax_SparsityAttr : Parallax_Attr<"Sparsity", "sparsity"> {
  let summary = "a variable's gradient kind and sparsity per global step";
  let description = [{
    Set by `--parallax-sparsity-analysis` on each trained variable:
    `gradient` is `sparse` when the variable's gradient is row-sparse (it
    is read only through gathers on axis 0), else `dense`; `rows` bounds
    the number of rows with a non-zero gradient in one global step (all
    workers), and `alpha` is `rows` over the variable's row count, the
    fraction of the variable that moves (1 for dense gradients). For a
    sparse gradient, `worker_rows` (optional) bounds or measures the rows
    one worker's batch alone touches: what a machine pushes and pulls is
    at most its workers' share, not the whole step's `rows`.

    Example: `#parallax.sparsity<sparse, alpha = 0.0128, rows = 128,
    worker_rows = 32>`
  }];
  let parameters = (ins EnumParameter<Parallax_GradientKind>:$gradient,
                        Parallax_RealParameter<"fraction of rows">:$alpha,
                        "int64_t":$rows,
                        OptionalParameter<"int64_t">:$workerRows);
  let assemblyFormat =
      "`<` $gradient `,` `alpha` `=` $alpha `,` `rows` `=` $rows "
      "(`,` `worker_rows` `=` $workerRows^)? `>`";
  let builders = [
    AttrBuilder<(ins "GradientKind":$gradient, "::llvm::APFloat":$alpha,
                     "int64_t":$rows), [{
      return $_get($_ctxt, gradient, alpha, rows, /*workerRows=*/0);
    }]>,
  ];
  let genVerifyDecl = 1;
}

def Parallax_OptimizerAttr : Parallax_Attr<"Optimizer", "optimizer"> {
  let summary = "an optimizer and its hyper-parameters";
  let description = [{
    The update rule `parallax.update` applies, with PyTorch's semantics
    (`torch.optim.SGD`, `Adagrad`, `Adam`, `AdamW`); omitted parameters take
    the values shown:

    * `sgd`: `w -= lr * (g + weight_decay * w)`;
    * `momentum`: `v = momentum * v + g'`, `w -= lr * v` (with `nesterov`,
      `w -= lr * (g' + momentum * v)`), `g' = g + weight_decay * w`;
    * `adagrad`: `h += g'^2`, `w -= lr / (1 + (t - 1) * lr_decay) * g' /
      (sqrt(h) + epsilon)`;
    * `adam` / `adamw`: bias-corrected first and second moments; `adamw`
      decays the weights by `lr * weight_decay` instead of adding
      `weight_decay * w` to the gradient.

    `t` is the 1-based step number, kept by the runtime. With a row-sparse
    gradient the update is lazy: only the rows it holds (repeated rows
    summed first) change, as TensorFlow's sparse apply ops do. For SGD and
    Adagrad this equals the dense update; for momentum and Adam rows
    without gradient keep their state instead of decaying it.

    Example: `#parallax.optimizer<adam, lr = 1.0e-03, beta2 = 9.800000e-01>`
  }];
  let parameters = (ins
    EnumParameter<Parallax_OptimizerKind>:$kind,
    Parallax_RealParameter<"learning rate">:$lr,
    Parallax_OptionalReal<"0.0">:$momentum,
    Parallax_OptionalBool:$nesterov,
    Parallax_OptionalReal<"0.9">:$beta1,
    Parallax_OptionalReal<"0.999">:$beta2,
    Parallax_OptionalReal<"1e-08">:$epsilon,
    Parallax_OptionalReal<"0.0">:$weight_decay,
    Parallax_OptionalReal<"0.0">:$lr_decay,
    Parallax_OptionalReal<"0.0">:$initial_accumulator_value);
  let assemblyFormat = [{
    `<` $kind `,` struct($lr, $momentum, $nesterov, $beta1, $beta2, $epsilon,
                         $weight_decay, $lr_decay, $initial_accumulator_value)
    `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The names of the per-variable state tensors this rule keeps, e.g.
    /// {"exp_avg", "exp_avg_sq"} for Adam (PyTorch's state names).
    ::llvm::SmallVector<::llvm::StringRef> getStateNames() const;
  }];
}

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXATTRS_TD
