//===- ParallaxComputeOps.td - Tensor compute operations ---*- tablegen -*-===//
//
// Part of the Parallax project.
//
// Tensor-level compute ops at ONNX granularity. All operate on statically
// shaped tensors (the importer binds every dimension) and infer their result
// types, so the verifier checks every result against the op's semantics.
// Axes are normalised to non-negative values by the importer.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXCOMPUTEOPS_TD
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXCOMPUTEOPS_TD

include "parallax/Dialect/Parallax/IR/ParallaxDialect.td"
include "parallax/Dialect/Parallax/IR/ParallaxAttrs.td"
include "parallax/Dialect/Parallax/IR/ParallaxInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

defvar Parallax_Tensor = AnyStaticShapeTensor;
defvar Parallax_Differentiable =
    DeclareOpInterfaceMethods<Parallax_GradientOpInterface>;
def Parallax_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Parallax_IntTensor : StaticShapeTensorOf<[AnySignlessInteger]>;
def Parallax_BoolTensor : StaticShapeTensorOf<[I1]>;
def Parallax_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Parallax_NumberTensor : StaticShapeTensorOf<[AnyFloat, AnySignlessInteger]>;
def Parallax_Matrix : Type<And<[Parallax_NumberTensor.predicate,
                                 HasAnyRankOfPred<[2]>]>,
    "statically shaped 2-D tensor of numbers", "::mlir::RankedTensorType">;
def Parallax_Axis : ConfinedAttr<I64Attr, [IntNonNegative]>;

/// Defines `inferReturnTypes` of an InferTypeOpAdaptor op by calling the C++
/// function `fn(context, location, adaptor, inferredReturnTypes)`.
class Parallax_InferWith<string fn> {
  code body = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return }] # fn # [{(context, location, adaptor, types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Parallax_UnaryOp<string mnemonic, Type type, string onnx,
                       list<Trait> traits = [Parallax_Differentiable]>
    : Parallax_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType],
                                        traits)> {
  let summary = "elementwise " # mnemonic # " (ONNX " # onnx # ")";
  let description = "Example: `%y = parallax." # mnemonic #
                    " %x : tensor<4x8xf32>`";
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Parallax_NegOp : Parallax_UnaryOp<"neg", Parallax_NumberTensor, "Neg"> {
  let hasFolder = 1;
}
def Parallax_AbsOp : Parallax_UnaryOp<"abs", Parallax_NumberTensor, "Abs"> {
  let hasFolder = 1;
}
def Parallax_SignOp : Parallax_UnaryOp<"sign", Parallax_NumberTensor, "Sign">;
def Parallax_ReluOp : Parallax_UnaryOp<"relu", Parallax_NumberTensor, "Relu">;
def Parallax_ExpOp : Parallax_UnaryOp<"exp", Parallax_FloatTensor, "Exp">;
def Parallax_LogOp : Parallax_UnaryOp<"log", Parallax_FloatTensor, "Log">;
def Parallax_SqrtOp : Parallax_UnaryOp<"sqrt", Parallax_FloatTensor, "Sqrt">;
def Parallax_ReciprocalOp
    : Parallax_UnaryOp<"reciprocal", Parallax_FloatTensor, "Reciprocal">;
def Parallax_SigmoidOp
    : Parallax_UnaryOp<"sigmoid", Parallax_FloatTensor, "Sigmoid">;
def Parallax_TanhOp : Parallax_UnaryOp<"tanh", Parallax_FloatTensor, "Tanh">;
def Parallax_ErfOp : Parallax_UnaryOp<"erf", Parallax_FloatTensor, "Erf">;
def Parallax_FloorOp : Parallax_UnaryOp<"floor", Parallax_FloatTensor, "Floor">;
def Parallax_CeilOp : Parallax_UnaryOp<"ceil", Parallax_FloatTensor, "Ceil">;
def Parallax_SinOp : Parallax_UnaryOp<"sin", Parallax_FloatTensor, "Sin">;
def Parallax_CosOp : Parallax_UnaryOp<"cos", Parallax_FloatTensor, "Cos">;
def Parallax_NotOp : Parallax_UnaryOp<"not", Parallax_BoolTensor, "Not", []> {
  let hasFolder = 1;
}

class Parallax_BinaryOp<string mnemonic, Type type, string onnx,
                        bit isPredicate = 0,
                        list<Trait> traits = [Parallax_Differentiable]>
    : Parallax_Op<mnemonic, !listconcat([Pure, SameOperandsElementType,
                                         InferTypeOpAdaptor], traits)> {
  let summary = "elementwise " # mnemonic #
                " with numpy broadcasting (ONNX " # onnx # ")";
  let description = "The operands are broadcast to a common shape as in "
      "numpy; the result has that shape and "
      # !if(isPredicate, "element type `i1`", "the operands' element type")
      # ".\n\nExample: `%z = parallax." # mnemonic #
      " %x, %y : tensor<4x8xf32>, tensor<8xf32>`";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = Parallax_InferWith<
      !if(isPredicate, "inferPredicateBroadcast",
                       "inferElementwiseBroadcast")>.body;
}

def Parallax_AddOp : Parallax_BinaryOp<"add", Parallax_NumberTensor, "Add"> {
  let hasFolder = 1;
}
def Parallax_SubOp : Parallax_BinaryOp<"sub", Parallax_NumberTensor, "Sub"> {
  let hasFolder = 1;
}
def Parallax_MulOp : Parallax_BinaryOp<"mul", Parallax_NumberTensor, "Mul"> {
  let hasFolder = 1;
}
def Parallax_DivOp : Parallax_BinaryOp<"div", Parallax_NumberTensor, "Div"> {
  let hasFolder = 1;
}
def Parallax_PowOp : Parallax_BinaryOp<"pow", Parallax_FloatTensor, "Pow">;
def Parallax_MaxOp : Parallax_BinaryOp<"max", Parallax_NumberTensor, "Max"> {
  let hasFolder = 1;
}
def Parallax_MinOp : Parallax_BinaryOp<"min", Parallax_NumberTensor, "Min"> {
  let hasFolder = 1;
}
def Parallax_AndOp : Parallax_BinaryOp<"and", Parallax_BoolTensor, "And", 0, []>;
def Parallax_OrOp : Parallax_BinaryOp<"or", Parallax_BoolTensor, "Or", 0, []>;
def Parallax_XorOp : Parallax_BinaryOp<"xor", Parallax_BoolTensor, "Xor", 0, []>;
def Parallax_EqualOp
    : Parallax_BinaryOp<"equal", Parallax_Tensor, "Equal", 1, []> {
  let hasFolder = 1;
}
def Parallax_LessOp
    : Parallax_BinaryOp<"less", Parallax_NumberTensor, "Less", 1, []> {
  let hasFolder = 1;
}
def Parallax_LessEqualOp
    : Parallax_BinaryOp<"less_equal", Parallax_NumberTensor, "LessOrEqual", 1, []> {
  let hasFolder = 1;
}
def Parallax_GreaterOp
    : Parallax_BinaryOp<"greater", Parallax_NumberTensor, "Greater", 1, []> {
  let hasFolder = 1;
}
def Parallax_GreaterEqualOp
    : Parallax_BinaryOp<"greater_equal", Parallax_NumberTensor,
                        "GreaterOrEqual", 1, []> {
  let hasFolder = 1;
}

def Parallax_WhereOp : Parallax_Op<"where", [Pure, Parallax_Differentiable, InferTypeOpAdaptor,
    AllElementTypesMatch<["true_value", "false_value"]>]> {
  let summary = "elementwise select with numpy broadcasting (ONNX Where)";
  let description = [{
    Example: `%r = parallax.where %mask, %x, %y : tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>`
  }];
  let arguments = (ins Parallax_BoolTensor:$condition,
                       Parallax_Tensor:$true_value,
                       Parallax_Tensor:$false_value);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    type($condition) `,` type($true_value) `,` type($false_value)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferWhere">.body;
  let hasFolder = 1;
}

def Parallax_OneHotOp : Parallax_Op<"one_hot", [Pure]> {
  let summary = "indicator tensor of class indices along a new axis";
  let description = [{
    Inserts a dimension of size `depth` at `axis` of the result:
    `result[..., c, ...] = (indices[...] == c) ? 1 : 0`. An index outside
    `[0, depth)` gives an all-zero slice (this is how ignored labels drop
    out of a loss gradient).

    Example: `%h = parallax.one_hot %labels axis = 1 : tensor<4x6xi64> -> tensor<4x10x6xf32>`
  }];
  let arguments = (ins Parallax_IndexTensor:$indices, Parallax_Axis:$axis);
  let results = (outs Parallax_NumberTensor:$result);
  let assemblyFormat =
      "$indices `axis` `=` $axis attr-dict `:` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def Parallax_CastOp : Parallax_Op<"cast", [Pure, Parallax_Differentiable, SameOperandsAndResultShape]> {
  let summary = "elementwise conversion of the element type (ONNX Cast)";
  let description = [{
    Float to integer conversion truncates toward zero; to `i1` yields
    `x != 0`, as ONNX specifies.

    Example: `%i = parallax.cast %x : tensor<4xf32> -> tensor<4xi64>`
  }];
  let arguments = (ins Parallax_Tensor:$input);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Parallax_ClipOp : Parallax_Op<"clip", [Pure, Parallax_Differentiable, SameOperandsAndResultType]> {
  let summary = "elementwise clamp to [min, max] (ONNX Clip)";
  let description = [{
    Either bound may be absent.

    Example: `%y = parallax.clip %x {max = 6.0 : f64, min = 0.0 : f64} : tensor<4xf32>`
  }];
  let arguments = (ins Parallax_NumberTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Parallax_NumberTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Parallax_MatMulOp : Parallax_Op<"matmul", [Pure, Parallax_Differentiable, SameOperandsElementType,
    InferTypeOpAdaptor]> {
  let summary = "numpy matrix product (ONNX MatMul)";
  let description = [{
    1-D operands are promoted to matrices as in numpy and the added
    dimension removed from the result; batch dimensions broadcast.

    Example: `%c = parallax.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32>`
  }];
  let arguments = (ins Parallax_NumberTensor:$lhs,
                       Parallax_NumberTensor:$rhs);
  let results = (outs Parallax_NumberTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = Parallax_InferWith<"inferMatMul">.body;
}

def Parallax_GemmOp : Parallax_Op<"gemm", [Pure, Parallax_Differentiable, SameOperandsElementType,
    InferTypeOpAdaptor]> {
  let summary = "alpha * op(A) @ op(B) + beta * C (ONNX Gemm)";
  let description = [{
    `op(X)` is `X` transposed when `trans_a` / `trans_b` is set. `C` is
    optional and broadcasts (unidirectionally) to the `M x N` result.

    Example:

    ```mlir
    %y = parallax.gemm %x, %w, %b transpose_b alpha = 2.0
        : tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Parallax_Matrix:$a, Parallax_Matrix:$b,
                       Optional<Parallax_NumberTensor>:$c,
                       UnitAttr:$trans_a, UnitAttr:$trans_b,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta);
  let results = (outs Parallax_NumberTensor:$result);
  // Attributes that inference reads are part of the format, not attr-dict:
  // the parser infers result types before attr-dict entries become
  // properties.
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? (`transpose_a` $trans_a^)? (`transpose_b` $trans_b^)?
    (`alpha` `=` $alpha^)? (`beta` `=` $beta^)? attr-dict `:` type($a) `,`
    type($b) (`,` type($c)^)?
  }];
  let extraClassDefinition = Parallax_InferWith<"inferGemm">.body;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Parallax_GatherOp : Parallax_Op<"gather", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "take slices along an axis at the given indices (ONNX Gather)";
  let description = [{
    `result[i0..i(a-1), j..., k...] = data[i0..i(a-1), indices[j...], k...]`
    for axis `a`. A gather of a variable on axis 0 is an embedding lookup:
    its gradient is row-sparse. Indices are normalised (non-negative) by
    the importer when they are constant; out-of-range indices at run time
    are an error.

    Example: `%e = parallax.gather %table[%ids] axis = 0 : tensor<1000x64xf32>, tensor<8x16xi64>`
  }];
  let arguments = (ins Parallax_Tensor:$data, Parallax_IndexTensor:$indices,
                       Parallax_Axis:$axis);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = [{
    $data `[` $indices `]` `axis` `=` $axis attr-dict `:` type($data) `,`
    type($indices)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferGather">.body;
  let hasFolder = 1;
}

def Parallax_ReshapeOp : Parallax_Op<"reshape", [Pure, Parallax_Differentiable,
    SameOperandsAndResultElementType]> {
  let summary = "reinterpret the shape, keeping the row-major element order";
  let description = [{
    Also the form of ONNX Flatten, Squeeze and Unsqueeze.

    Example: `%r = parallax.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>`
  }];
  let arguments = (ins Parallax_Tensor:$input);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Parallax_ExpandOp : Parallax_Op<"expand", [Pure, Parallax_Differentiable,
    SameOperandsAndResultElementType]> {
  let summary = "broadcast to a larger shape (ONNX Expand)";
  let description = [{
    Aligning shapes on the right, each input dimension must be 1 or equal
    to the result's.

    Example: `%e = parallax.expand %x : tensor<4x1xf32> -> tensor<2x4x8xf32>`
  }];
  let arguments = (ins Parallax_Tensor:$input);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Parallax_TransposeOp : Parallax_Op<"transpose", [Pure, Parallax_Differentiable,
    InferTypeOpAdaptor]> {
  let summary = "permute dimensions (ONNX Transpose)";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    Example: `%t = parallax.transpose %x permutation = [1, 0] : tensor<4x8xf32>`
  }];
  let arguments = (ins Parallax_Tensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = [{
    $input `permutation` `=` $permutation attr-dict `:` type($input)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferTranspose">.body;
  let hasFolder = 1;
}

def Parallax_ConcatOp : Parallax_Op<"concat", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "join tensors along an axis (ONNX Concat)";
  let description = [{
    Example: `%c = parallax.concat %a, %b axis = 1 : tensor<4x8xf32>, tensor<4x2xf32>`
  }];
  let arguments = (ins Variadic<Parallax_Tensor>:$inputs, Parallax_Axis:$axis);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = "$inputs `axis` `=` $axis attr-dict `:` type($inputs)";
  let extraClassDefinition = Parallax_InferWith<"inferConcat">.body;
  let hasFolder = 1;
}

def Parallax_SliceOp : Parallax_Op<"slice", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "strided slice with static bounds (ONNX Slice, Split)";
  let description = [{
    `result[i...] = input[offsets[d] + i[d] * strides[d] ...]`, one entry per
    dimension. Strides may be negative (a reversed slice); every accessed
    index must lie inside the input.

    Example: `%s = parallax.slice %x offsets = [0, 2] sizes = [4, 3] strides = [1, 1] : tensor<4x8xf32>`
  }];
  let arguments = (ins Parallax_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `sizes` `=` $sizes `strides` `=` $strides
    attr-dict `:` type($input)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferSlice">.body;
  let hasFolder = 1;
}

def Parallax_TileOp : Parallax_Op<"tile", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "repeat a tensor along each dimension (ONNX Tile)";
  let description = [{
    Example: `%t = parallax.tile %x repeats = [2, 1] : tensor<4x8xf32>`
  }];
  let arguments = (ins Parallax_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = "$input `repeats` `=` $repeats attr-dict `:` type($input)";
  let extraClassDefinition = Parallax_InferWith<"inferTile">.body;
  let hasFolder = 1;
}

def Parallax_PadOp : Parallax_Op<"pad", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "pad each dimension at both ends (ONNX Pad)";
  let description = [{
    `low[d]` / `high[d]` elements are added before / after dimension `d`,
    filled with `value` (mode `constant`), mirrored (`reflect`) or
    repeated from the edge (`edge`).

    Example: `%p = parallax.pad constant %x low = [0, 1] high = [0, 2] value = 0.0 : tensor<4x8xf32>`
  }];
  let arguments = (ins Parallax_PadMode:$mode, Parallax_Tensor:$input,
                       DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Parallax_Tensor:$result);
  let assemblyFormat = [{
    $mode $input `low` `=` $low `high` `=` $high (`value` `=` $value^)?
    attr-dict `:` type($input)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferPad">.body;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalisation
//===----------------------------------------------------------------------===//

def Parallax_ReduceOp : Parallax_Op<"reduce", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "reduce over axes (ONNX ReduceSum/Mean/Max/Min/Prod)";
  let description = [{
    Reduces the listed axes (sorted, distinct); with `keepdims` they stay as
    size-1 dimensions. An empty axis list reduces nothing (the importer
    turns ONNX's "no axes" into the list of all axes).

    Example: `%s = parallax.reduce mean %x axes = [1] keepdims : tensor<4x8xf32>`
  }];
  let arguments = (ins Parallax_ReduceKind:$kind,
                       Parallax_NumberTensor:$input,
                       DenseI64ArrayAttr:$axes, UnitAttr:$keepdims);
  let results = (outs Parallax_NumberTensor:$result);
  let assemblyFormat = [{
    $kind $input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:`
    type($input)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferReduce">.body;
}

def Parallax_SegmentReduceOp : Parallax_Op<"segment_reduce", [Pure,
    Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "reduce consecutive runs of rows (the bags of nn.EmbeddingBag)";
  let description = [{
    `result[s, k...]` reduces `data[j, k...]` over the rows of bag `s`,
    `bounds[s] <= j < bounds[s + 1]`, with `sum`, `mean` or `max`; an empty
    bag gives 0 (PyTorch's EmbeddingBag). `bounds` has one more element than
    the result has bags: PyTorch's offsets followed by the number of rows.
    Bounds must not decrease and must lie in `[0, rows]`; any other bound
    ends the program with a message naming the node. The importer writes it
    for PyTorch's export of `nn.EmbeddingBag` (a Loop slicing the ids bag by
    bag), after a gather of the table, so the table's gradient stays
    row-sparse.

    Example: `%b = parallax.segment_reduce mean %rows bounds %offsets : tensor<12x8xf32>, tensor<5xi64>`
  }];
  let arguments = (ins Parallax_ReduceKind:$kind, Parallax_FloatTensor:$data,
                       Parallax_IndexTensor:$bounds);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $data `bounds` $bounds attr-dict `:` type($data) `,` type($bounds)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferSegmentReduce">.body;
}

def Parallax_SegmentReduceGradOp : Parallax_Op<"segment_reduce_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "the gradient of a segment_reduce with respect to its rows";
  let description = [{
    Given `output_grad`, the gradient of `segment_reduce kind data bounds`,
    gives the gradient with respect to `data`: each row receives its bag's
    gradient (`sum`), divided by the bag's size (`mean`), or, per element,
    only where it is the bag's first maximum (`max`, as PyTorch's
    EmbeddingBag picks one maximum). A row in no bag gets 0. Not
    differentiable.

    Example: `%d = parallax.segment_reduce_grad max %dy, %rows bounds %offsets : tensor<4x8xf32>, tensor<12x8xf32>, tensor<5xi64>`
  }];
  let arguments = (ins Parallax_ReduceKind:$kind,
                       Parallax_FloatTensor:$output_grad,
                       Parallax_FloatTensor:$data,
                       Parallax_IndexTensor:$bounds);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $output_grad `,` $data `bounds` $bounds attr-dict `:`
    type($output_grad) `,` type($data) `,` type($bounds)
  }];
  let extraClassDefinition =
      Parallax_InferWith<"inferSegmentReduceGrad">.body;
}

class Parallax_SoftmaxLikeOp<string mnemonic, string onnx>
    : Parallax_Op<mnemonic, [Pure, SameOperandsAndResultType,
                             Parallax_Differentiable]> {
  let summary = mnemonic # " along one axis (ONNX " # onnx # ", opset >= 13)";
  let description = "Example: `%p = parallax." # mnemonic #
                    " %x axis = 1 : tensor<4x8xf32>`";
  let arguments = (ins Parallax_FloatTensor:$input, Parallax_Axis:$axis);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Parallax_SoftmaxOp : Parallax_SoftmaxLikeOp<"softmax", "Softmax">;
def Parallax_LogSoftmaxOp : Parallax_SoftmaxLikeOp<"log_softmax", "LogSoftmax">;

def Parallax_BatchNormOp : Parallax_Op<"batch_norm", [Pure, Parallax_Differentiable,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["scale", "bias", "mean", "variance"]>]> {
  let summary = "batch normalisation with given statistics (ONNX BatchNormalization)";
  let description = [{
    `(x - mean[c]) / sqrt(variance[c] + epsilon) * scale[c] + bias[c]` over
    channel dimension 1 of an `N x C x ...` input.

    Example:

    ```mlir
    %y = parallax.batch_norm %x, %s, %b, %m, %v epsilon = 1.0e-05 : tensor<2x3x8x8xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Parallax_FloatTensor:$input, Parallax_FloatTensor:$scale,
                       Parallax_FloatTensor:$bias, Parallax_FloatTensor:$mean,
                       Parallax_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance `epsilon` `=` $epsilon
    attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

def Parallax_BatchSumOp : Parallax_Op<"batch_sum", [Pure,
    Parallax_Differentiable,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "sum partial values over every slice of the batch";
  let description = [{
    Each input is a partial value computed from this device's examples
    (a per-channel sum, an example count); the result is its sum over the
    whole batch. On one device that is the input itself. When the batch is
    split across data-parallel workers, `--parallax-distribute` makes it an
    `allreduce sum` of the inputs (one message), or, with
    `batch-statistics=local`, the input again (per-worker statistics).
    Synchronised BatchNorm is built on it; its gradient is the batch sum of
    the result gradients (the op is its own adjoint).

    `min_devices`, when present, is the fewest devices whose partial values
    make a meaningful result: a training-mode BatchNorm with one value per
    channel on each device needs the sums of at least two (a variance of
    one value is undefined; PyTorch refuses it too). Lowering it on one
    device, or with per-device statistics, or for a number of workers that
    is smaller or not known until the program runs, is an error naming the
    node.

    Example:

    ```mlir
    %s, %n = parallax.batch_sum %partial, %count : tensor<8xf32>, tensor<1xf32>
    %t, %m = parallax.batch_sum %partial, %count {min_devices = 2 : i64} : tensor<8xf32>, tensor<1xf32>
    ```
  }];
  let arguments = (ins Variadic<Parallax_FloatTensor>:$inputs,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$min_devices);
  let results = (outs Variadic<Parallax_FloatTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def Parallax_LayerNormOp : Parallax_Op<"layer_norm", [Pure, Parallax_Differentiable,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "normalise over the trailing dimensions (ONNX LayerNormalization)";
  let description = [{
    Normalises over dimensions `axis..rank-1`, then multiplies by `scale`
    and adds `bias` (both of the normalised shape, or broadcastable to it).

    Example:

    ```mlir
    %y = parallax.layer_norm %x, %g, %b axis = 2 epsilon = 1.0e-05 : tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Parallax_FloatTensor:$input, Parallax_FloatTensor:$scale,
                       Optional<Parallax_FloatTensor>:$bias,
                       Parallax_Axis:$axis, F32Attr:$epsilon);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? `axis` `=` $axis `epsilon` `=` $epsilon
    attr-dict `:` type($input) `,` type($scale) (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Parallax_ConvOp : Parallax_Op<"conv", [Pure, Parallax_Differentiable, SameOperandsElementType,
    InferTypeOpAdaptor]> {
  let summary = "grouped N-d convolution, NC... layout (ONNX Conv)";
  let description = [{
    `input` is `N x C x D1 x ... x Dk`, `filter` is
    `M x C/groups x K1 x ... x Kk`, optional `bias` is `M`. `pads` holds the
    k leading pads then the k trailing pads, as in ONNX.

    Example:

    ```mlir
    %y = parallax.conv %x, %w, %b strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1
        : tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Parallax_FloatTensor:$input, Parallax_FloatTensor:$filter,
                       Optional<Parallax_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       ConfinedAttr<I64Attr, [IntPositive]>:$groups);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? `strides` `=` $strides `pads` `=` $pads
    `dilations` `=` $dilations `groups` `=` $groups attr-dict `:`
    type($input) `,` type($filter) (`,` type($bias)^)?
  }];
  let extraClassDefinition = Parallax_InferWith<"inferConv">.body;
}

def Parallax_ConvFilterGradOp : Parallax_Op<"conv_filter_grad",
    [Pure, SameOperandsElementType, InferTypeOpAdaptor]> {
  let summary = "the filter gradient of an unpadded convolution";
  let description = [{
    The gradient of `conv(input, filter)` (no pads, `groups` groups) with
    respect to a `M x C/groups x K1 x ... x Kk` filter, given the gradient
    `output_grad` (`N x M x O1 x ... x Ok`) of its result:
    `dW[m, c, k...] = sum over n, o... of
    input[n, g(m) * C/groups + c, o * strides + k * dilations] *
    output_grad[n, m, o...]`, where `g(m) = m / (M/groups)` is filter m's
    group. `kernel` is the filter's spatial shape; `output_grad`'s spatial
    shape must be the forward convolution's. Autodiff writes it for every
    convolution (on the padded input); the lowering computes an ungrouped
    f32 one from the forward convolution's own patches, a grouped one as
    one loop nest over every group. Not differentiable.

    Example:

    ```mlir
    %dw = parallax.conv_filter_grad %x, %dy kernel = [3, 3] strides = [1, 1] dilations = [1, 1]
        : tensor<2x3x10x10xf32>, tensor<2x16x8x8xf32>
    %dd = parallax.conv_filter_grad %x, %dz kernel = [3, 3] strides = [1, 1] dilations = [1, 1] groups = 3
        : tensor<2x3x10x10xf32>, tensor<2x3x8x8xf32>
    ```
  }];
  let arguments = (ins Parallax_FloatTensor:$input,
                       Parallax_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>,
                                         "1">:$groups);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad `kernel` `=` $kernel `strides` `=` $strides
    `dilations` `=` $dilations (`groups` `=` $groups^)? attr-dict `:`
    type($input) `,` type($output_grad)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferConvFilterGrad">.body;
}

def Parallax_ConvInputGradOp : Parallax_Op<"conv_input_grad",
    [Pure, SameOperandsElementType, InferTypeOpAdaptor]> {
  let summary = "the input gradient of an ungrouped convolution";
  let description = [{
    The gradient of `conv(input, filter)` (one group) with respect to an
    `N x C x I1 x ... x Ik` input (`input_spatial` = `[I1, ..., Ik]`),
    given the `M x C x K1 x ... x Kk` filter and the gradient
    `output_grad` (`N x M x O1 x ... x Ok`) of its result:
    `dX[n, c, i...] = sum over m, k..., o... with
    o * strides + k * dilations - leading pads = i of
    filter[m, c, k...] * output_grad[n, m, o...]`. `output_grad`'s spatial
    shape must be the forward convolution's. Autodiff writes it where the
    filter is larger than the input or the convolution is strided (a
    transposed convolution would copy the whole filter, or multiply the
    zeros between a strided gradient's elements); the lowering is one
    matrix product, the filter read transposed times `output_grad` as
    `[M, N*O]`, and a sum of each kernel position's columns into the
    strided window of the input it came from (col2im). Not
    differentiable.

    Example:

    ```mlir
    %dx = parallax.conv_input_grad %dy, %w input_spatial = [8, 8] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1]
        : tensor<2x16x4x4xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Parallax_FloatTensor:$output_grad,
                       Parallax_FloatTensor:$filter,
                       DenseI64ArrayAttr:$input_spatial,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $output_grad `,` $filter `input_spatial` `=` $input_spatial
    `strides` `=` $strides `pads` `=` $pads `dilations` `=` $dilations
    attr-dict `:` type($output_grad) `,` type($filter)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferConvInputGrad">.body;
}

def Parallax_MaxPoolGradOp : Parallax_Op<"max_pool_grad",
    [Pure, SameOperandsElementType, AllTypesMatch<["output", "output_grad"]>,
     InferTypeOpAdaptor]> {
  let summary = "the input gradient of a max pooling with overlapping, padded "
                "or ragged windows";
  let description = [{
    The gradient of `output = pool max input` (the same `kernel`,
    `strides`, `pads` and `ceil_mode`) with respect to its `N x C x D1 ...`
    input, given the gradient `output_grad` of `output`: each window's
    gradient is shared evenly among the window's elements equal to its
    maximum, `dX[n, c, i...] = sum over the windows o containing i with
    input[n, c, i...] == output[n, c, o...] of output_grad[n, c, o...] /
    (the number of such elements in window o)`. Autodiff writes it for
    max pooling whose windows do not tile the input exactly. The lowering
    copies no window: one elementwise pass over the output counts each
    window's maxima and divides `output_grad` by the count, then one pass
    per residue class of the input positions (modulo the stride, per
    dimension) writes that class's strided part of dX, each element adding
    the shares of the windows whose maximum it is. Not differentiable.

    Example:

    ```mlir
    %dx = parallax.max_pool_grad %x, %y, %dy kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1]
        : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
    ```
  }];
  let arguments = (ins Parallax_FloatTensor:$input,
                       Parallax_FloatTensor:$output,
                       Parallax_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, UnitAttr:$ceil_mode);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output `,` $output_grad `kernel` `=` $kernel
    `strides` `=` $strides `pads` `=` $pads (`ceil_mode` $ceil_mode^)?
    attr-dict `:` type($input) `,` type($output)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferMaxPoolGrad">.body;
}

def Parallax_PoolOp : Parallax_Op<"pool", [Pure, Parallax_Differentiable, InferTypeOpAdaptor]> {
  let summary = "N-d max or average pooling, NC... layout (ONNX MaxPool, AveragePool)";
  let description = [{
    Windows of `kernel` elements with the given strides and pads (k leading
    then k trailing). Average pooling divides by the window's size when
    `count_include_pad` is set, else by the number of non-pad elements.
    `ceil_mode` rounds the output size up.

    Example:

    ```mlir
    %y = parallax.pool max %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] : tensor<2x3x8x8xf32>
    ```
  }];
  let arguments = (ins Parallax_PoolKind:$kind, Parallax_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $input `kernel` `=` $kernel `strides` `=` $strides `pads` `=` $pads
    (`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)?
    attr-dict `:` type($input)
  }];
  let extraClassDefinition = Parallax_InferWith<"inferPool">.body;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

class Parallax_LossOp<string mnemonic, string onnx, string formula>
    : Parallax_Op<mnemonic, [Pure, InferTypeOpAdaptor,
                             Parallax_Differentiable]> {
  let summary = formula # " (ONNX " # onnx # ")";
  let description = [{
    `input` is `N x C` or `N x C x D1 ...` (class dimension 1), `labels` is
    `N` or `N x D1 ...` with class indices. `weights` (optional, `C`)
    weights each class. Examples whose label equals `ignore_index` (when
    given) count neither in the loss nor in the mean's denominator. With
    reduction `mean` the result is the weighted mean (a scalar), with `sum`
    the sum, with `none` one loss per label.
  }];
  let arguments = (ins Parallax_LossReduction:$reduction,
                       Parallax_FloatTensor:$input,
                       Parallax_IndexTensor:$labels,
                       Optional<Parallax_FloatTensor>:$weights,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Parallax_FloatTensor:$result);
  let assemblyFormat = [{
    $reduction $input `,` $labels (`,` $weights^)? attr-dict `:`
    type($input) `,` type($labels) (`,` type($weights)^)?
  }];
  let extraClassDefinition = Parallax_InferWith<"inferClassificationLoss">.body;
}

def Parallax_SoftmaxCrossEntropyOp : Parallax_LossOp<"softmax_cross_entropy",
    "SoftmaxCrossEntropyLoss", "cross entropy of softmax(input) and labels">;
def Parallax_NegativeLogLikelihoodOp : Parallax_LossOp<"nll_loss",
    "NegativeLogLikelihoodLoss", "negative log-likelihood of log-probabilities">;

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXCOMPUTEOPS_TD
