// RUN: parallax-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{a variable is trainable, optimizer state or statistics, not several}}
parallax.variable trainable state @w : tensor<4xf32>

// -----

// expected-error @+1 {{a variable is trainable, optimizer state or statistics, not several}}
parallax.variable trainable statistics @w : tensor<4xf32>

// -----

// expected-error @+1 {{statistics variable must have a floating-point element type, got 'i64'}}
parallax.variable statistics @w : tensor<4xi64>

// -----

func.func @no_values() {
  // expected-error @+1 {{'parallax.batch_sum' op sums at least one value}}
  "parallax.batch_sum"() : () -> ()
  return
}

// -----

// expected-error @+1 {{state variable must have a floating-point element type, got 'i64'}}
parallax.variable state @w : tensor<4xi64>

// -----

parallax.variable @frozen : tensor<4xf32>
func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{cannot update '@frozen': the variable is not trainable}}
  parallax.apply_gradient @frozen, %g : tensor<4xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<4xf32>
func.func @f(%g: tensor<5xf32>) {
  // expected-error @+1 {{gradient 'tensor<5xf32>' does not match the type 'tensor<4xf32>' of variable '@w'}}
  parallax.apply_gradient @w, %g : tensor<5xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<4xf32>
func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{optimizer #parallax.optimizer<adam, lr = 1.000000e-01> keeps 2 state variable(s), got 0}}
  parallax.update @w, %g optimizer = <adam, lr = 0.1> : tensor<4xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<4xf32>
parallax.variable trainable @v : tensor<4xf32>
func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'@v' must be a state variable of type 'tensor<4xf32>'}}
  parallax.update @w, %g optimizer = <adagrad, lr = 0.1> state = [@v] : tensor<4xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<4xf32>
func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{learning rate must be positive, got 0}}
  parallax.update @w, %g optimizer = <sgd, lr = 0.0> : tensor<4xf32>
  return
}

// -----

func.func @f(%l: tensor<2x5xi64>) -> tensor<2x5x7xf32> {
  // expected-error @+1 {{result shape [2, 5, 7] must be the indices' shape [2, 5] with the depth at axis 1}}
  %h = parallax.one_hot %l axis = 1 : tensor<2x5xi64> -> tensor<2x5x7xf32>
  return %h : tensor<2x5x7xf32>
}

// -----

func.func @no_batch() -> tensor<f32> {
  // expected-error @+1 {{'parallax.random_uniform' op needs a batch dimension (dimension 0)}}
  %u = parallax.random_uniform seed = 0 salt = 0 stream = 0 : tensor<f32>
  return %u : tensor<f32>
}

// -----

func.func @partial_example() -> tensor<6x2xf32> {
  // expected-error @+1 {{'parallax.random_uniform' op dimension 0 (6) is not a whole number of examples of 4 rows}}
  %u = parallax.random_uniform seed = 0 salt = 0 stream = 0 rows_per_example = 4 : tensor<6x2xf32>
  return %u : tensor<6x2xf32>
}
