//===- ModelWeights.h - Initial weights from the ONNX model -----*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_MODELWEIGHTS_H
#define PARALLAX_LIB_RUNTIME_MODELWEIGHTS_H

#include "Checkpoint.h"

#include <string>
#include <vector>

namespace parallax::runtime {

/// The model file the program was compiled from (parallax_rt_set_model).
void setModelPath(const std::string &path);

/// Marks variable `name` as loaded from the model.
void markFromModel(const std::string &name);

/// Whether any variable is loaded from the model.
bool hasModelWeights();

/// Fills every marked variable with the model's initializer of its name,
/// from `path` (the compiled path when empty). Dies naming the file and
/// the initializer when it is missing, has another shape or dtype, or its
/// data is short: before any step.
void loadModelWeights(const std::vector<Variable> &variables,
                      const std::string &path);

/// `--init DIR`: every trainable variable from DIR/<name>.npy (the layout
/// --save writes; optimizer state starts at zero). Dies naming the file
/// and the variable when one is missing or differs, before any change.
void loadWeightsFromDirectory(const std::vector<Variable> &variables,
                              const std::string &dir);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_MODELWEIGHTS_H
