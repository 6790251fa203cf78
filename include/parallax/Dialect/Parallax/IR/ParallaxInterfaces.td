//===- ParallaxInterfaces.td - Parallax op interfaces ------*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXINTERFACES_TD
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXINTERFACES_TD

include "mlir/IR/OpBase.td"

def Parallax_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::parallax";
  let description = [{
    The reverse-mode derivative rule of a differentiable op, used by
    `--parallax-autodiff`. Given the gradient of the loss with respect to
    each result, the rule builds (at the builder's insertion point, after
    the op) the gradient with respect to each operand: a tensor of the
    operand's type, a `!parallax.row_sparse` value whose dense type is the
    operand's type, or a null value for an operand the loss does not
    depend on through this op (indices, shapes, zero derivatives). The rule
    of each op lives beside the op's definition in
    lib/Dialect/Parallax/IR/GradientRules.cpp.
  }];
  let methods = [
    InterfaceMethod<[{
        Appends one gradient (or null) per operand to `operandGradients`.
        `resultGradients` has one dense tensor per result, of the result's
        type. Emits an error and fails for a configuration without a rule.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>
  ];
}

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXINTERFACES_TD
