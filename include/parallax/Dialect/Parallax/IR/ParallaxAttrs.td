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

    Example: `module attributes {parallax.world = #parallax.world<workers = 4>}`
  }];
  let parameters = (ins "int64_t":$workers);
  let assemblyFormat = "`<` `workers` `=` $workers `>`";
  let genVerifyDecl = 1;
}

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXATTRS_TD
