//===- parallax-translate.cpp - Parallax translation driver ---------------===//
//
// Part of the Parallax project.
//
// Translates between MLIR and other formats (see registerAllTranslations).
//
//===----------------------------------------------------------------------===//

#include "parallax/InitAll.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::parallax::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Parallax translation driver\n"));
}
