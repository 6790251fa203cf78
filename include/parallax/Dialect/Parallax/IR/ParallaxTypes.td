//===- ParallaxTypes.td - Parallax types -------------------*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXTYPES_TD
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXTYPES_TD

include "parallax/Dialect/Parallax/IR/ParallaxDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Parallax_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Parallax_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Parallax_RowSparseType : Parallax_Type<"RowSparse", "row_sparse"> {
  let summary = "row-sparse tensor: a dense shape and a set of its rows";
  let description = [{
    A value of a tensor type of which only `rows` rows (slices along
    dimension 0) are stored: a `tensor<rows x i64>` of row indices into the
    dense tensor and a `tensor<rows x d1 x ... x T>` of row values. Indices
    may repeat; repeated rows add up when the value is densified. This is
    the gradient of a gather on axis 0 (TensorFlow's `IndexedSlices`).

    Example: `!parallax.row_sparse<tensor<50000x64xf32>, rows = 256>`
  }];
  let parameters = (ins "::mlir::RankedTensorType":$denseType,
                        "int64_t":$rows);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$denseType,
                                        "int64_t":$rows), [{
      return $_get(denseType.getContext(), denseType, rows);
    }]>
  ];
  let assemblyFormat = "`<` $denseType `,` `rows` `=` $rows `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The type of the row indices: `tensor<rows x i64>`.
    ::mlir::RankedTensorType getIndicesType() const;
    /// The type of the stored rows: `tensor<rows x d1 x ... x T>`.
    ::mlir::RankedTensorType getValuesType() const;
    /// The element type of the dense tensor.
    ::mlir::Type getElementType() const {
      return getDenseType().getElementType();
    }
  }];
}

def Parallax_AllReduceHandleType
    : Parallax_Type<"AllReduceHandle", "allreduce_handle"> {
  let summary = "an in-flight asynchronous allreduce";
  let description = [{
    Produced by `parallax.allreduce_start` and consumed by exactly one
    `parallax.allreduce_wait`, which yields tensors of the types the handle
    carries (those of the start's inputs). The runtime lowering converts a
    handle into its bucket number and its result buffers.

    Example: `!parallax.allreduce_handle<tensor<8x4xf32>, tensor<4xf32>>`
  }];
  let parameters = (ins
      ArrayRefParameter<"::mlir::Type", "the reduced tensors' types">:
          $resultTypes);
  let assemblyFormat = "`<` $resultTypes `>`";
  let genVerifyDecl = 1;
}

def Parallax_TensorOrRowSparse
    : AnyTypeOf<[AnyStaticShapeTensor, Parallax_RowSparseType],
                "statically shaped tensor or row-sparse value">;

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXTYPES_TD
