//===- parallax-opt.cpp - Parallax optimizer driver -----------------------===//
//
// Part of the Parallax project.
//
// mlir-opt for Parallax: parses IR in the Parallax and upstream dialects,
// runs passes, prints the result. Used by the lit suite and by developers.
//
//===----------------------------------------------------------------------===//

#include "parallax/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::parallax::registerAllDialects(registry);
  mlir::parallax::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Parallax optimizer driver\n", registry));
}
