// RUN: parallax-opt %s --split-input-file --parallax-optimizer="optimizer=adam lr=0.001" | FileCheck %s --check-prefix=ADAM
// RUN: parallax-opt %s --split-input-file --parallax-optimizer="optimizer=adagrad lr=0.1 initial-accumulator-value=0.1" | FileCheck %s --check-prefix=ADAGRAD
// RUN: parallax-opt %s --split-input-file --parallax-optimizer | FileCheck %s --check-prefix=SGD
// RUN: parallax-opt %s --split-input-file --parallax-optimizer="optimizer=momentum lr=0.5 nesterov=true" | FileCheck %s --check-prefix=MOMENTUM
// RUN: parallax-opt %s --split-input-file --parallax-optimizer="optimizer=adamw" | FileCheck %s --check-prefix=ADAMW

// Each apply_gradient becomes an update; the optimizer's state tensors
// become `state` variables beside their variable, named after PyTorch's.
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>
parallax.variable trainable @bias : tensor<4xf32> = dense<0.5>

// ADAM: parallax.variable trainable @emb
// ADAM-NEXT: parallax.variable state @emb.exp_avg : tensor<10x4xf32> = dense<0.000000e+00>
// ADAM-NEXT: parallax.variable state @emb.exp_avg_sq : tensor<10x4xf32> = dense<0.000000e+00>
// ADAM-NEXT: parallax.variable trainable @bias
// ADAM: parallax.update @emb, %{{.*}} optimizer = <adam, lr = 1.000000e-03> state = [@emb.exp_avg, @emb.exp_avg_sq] : !parallax.row_sparse<tensor<10x4xf32>, rows = 2>
// ADAM: parallax.update @bias, %{{.*}} optimizer = <adam, lr = 1.000000e-03> state = [@bias.exp_avg, @bias.exp_avg_sq] : tensor<4xf32>
// ADAM-NOT: apply_gradient

// ADAGRAD: parallax.variable state @emb.sum : tensor<10x4xf32> = dense<1.000000e-01>
// ADAGRAD: parallax.update @emb, %{{.*}} optimizer = <adagrad, lr = 1.000000e-01, epsilon = 1.000000e-10, initial_accumulator_value = 1.000000e-01> state = [@emb.sum]

// SGD-NOT: state
// SGD: parallax.update @emb, %{{.*}} optimizer = <sgd, lr = 1.000000e-02> : !parallax.row_sparse

// MOMENTUM: parallax.variable state @emb.momentum_buffer
// MOMENTUM: parallax.update @emb, %{{.*}} optimizer = <momentum, lr = 5.000000e-01, momentum = 9.000000e-01, nesterov = true> state = [@emb.momentum_buffer]

// AdamW decays weights by 0.01 unless told otherwise, as torch.optim.AdamW.
// ADAMW: parallax.update @emb, %{{.*}} optimizer = <adamw, lr = 1.000000e-02, weight_decay = 1.000000e-02> state
func.func @train_step(%ids: tensor<2xi64>, %rows: tensor<2x4xf32>, %g: tensor<4xf32>) {
  %sparse = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<10x4xf32>, rows = 2>
  parallax.apply_gradient @emb, %sparse : !parallax.row_sparse<tensor<10x4xf32>, rows = 2>
  parallax.apply_gradient @bias, %g : tensor<4xf32>
  return
}
