//===- ParallaxDialect.h - Parallax dialect, types, attributes --*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXDIALECT_H
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXDIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

// Attributes and types first: the dialect's discardable-attribute helpers
// name them.
#include "parallax/Dialect/Parallax/IR/ParallaxEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxTypes.h.inc"

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h.inc"

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXDIALECT_H
