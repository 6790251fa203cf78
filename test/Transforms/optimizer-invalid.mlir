// RUN: not parallax-opt %s --parallax-optimizer="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not parallax-opt %s --parallax-optimizer="lr=-1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not parallax-opt %s --parallax-optimizer="optimizer=adam beta1=1.5" 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not parallax-opt %s --parallax-optimizer="optimizer=sgd nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not parallax-opt %s --parallax-optimizer="optimizer=adagrad" 2>&1 | FileCheck %s --check-prefix=TAKEN

// UNKNOWN: for the --optimizer option: Cannot find option named 'lamb'!
// LR: error: invalid optimizer: learning rate must be positive, got -1
// BETA: error: invalid optimizer: momentum, beta1 and beta2 must lie in [0, 1)
// NESTEROV: error: invalid optimizer: nesterov needs the momentum optimizer with a non-zero momentum
// TAKEN: error: cannot create optimizer state 'w.sum': the name is taken
parallax.variable trainable @w : tensor<4xf32> = dense<0.5>
parallax.variable @w.sum : tensor<4xf32> = dense<0.5>
func.func @train_step(%g: tensor<4xf32>) {
  parallax.apply_gradient @w, %g : tensor<4xf32>
  return
}
