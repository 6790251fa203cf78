#===- PrecompiledMLIRHeaders.cmake - Parse MLIR's headers once per library -===#
#
# Most of the time clang takes over one of Parallax's passes goes to
# parsing MLIR's headers (21.5 of 23 s for ParallelizeKernels.cpp). With
# clang, each compiler library precompiles the upstream headers its
# sources include most, and its sources start from that (9.5 s for the
# same file). GCC's precompiled headers are seven times larger and save a
# third: they are not used.
#
# Only stable upstream headers go in: Parallax's own (and TableGen's
# output) stay out, so editing a pass or a .td file never rebuilds the
# precompiled header.
#
#===----------------------------------------------------------------------===#

option(PARALLAX_PRECOMPILED_HEADERS
  "Precompile MLIR's headers for the compiler libraries (clang only)" ON)

set(PARALLAX_PRECOMPILED_MLIR_HEADERS
  <llvm/ADT/MapVector.h>
  <llvm/ADT/SetVector.h>
  <llvm/ADT/StringExtras.h>
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/Linalg/Transforms/Transforms.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/IRMapping.h>
  <mlir/IR/Matchers.h>
  <mlir/IR/PatternMatch.h>
  <mlir/IR/SymbolTable.h>
  <mlir/Pass/Pass.h>
  <mlir/Transforms/DialectConversion.h>
  <mlir/Transforms/GreedyPatternRewriteDriver.h>
  )

# parallax_precompile_mlir_headers(TARGET...): the objects of each TARGET
# (an add_mlir_library's obj.<name>) compile against the precompiled
# headers.
function(parallax_precompile_mlir_headers)
  if(NOT PARALLAX_PRECOMPILED_HEADERS OR
     NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    return()
  endif()
  foreach(target IN LISTS ARGN)
    target_precompile_headers(${target} PRIVATE
      ${PARALLAX_PRECOMPILED_MLIR_HEADERS})
    # Without the headers' times in it, ccache can cache the header.
    target_compile_options(${target} PRIVATE
      "SHELL:-Xclang -fno-pch-timestamp")
  endforeach()
endfunction()
