// RUN: parallax-opt %s --split-input-file --verify-diagnostics

// Every inference and verifier error of the compute ops. Inference runs
// while parsing, so its errors come before operand constraints are checked.

// broadcast
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: 'tensor<2x3xf32>', 'tensor<4xf32>'}}
  %r = parallax.add %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

// where broadcast
func.func @f(%c: tensor<3xi1>, %a: tensor<2x4xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: 'tensor<3xi1>', 'tensor<2x4xf32>', 'tensor<2x4xf32>'}}
  %r = parallax.where %c, %a, %a : tensor<3xi1>, tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

// matmul k
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs 'tensor<2x3xf32>' has 3 columns, rhs 'tensor<4x5xf32>' has 4 rows}}
  %r = parallax.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

// matmul batch
func.func @f(%a: tensor<2x4x3xf32>, %b: tensor<5x3x2xf32>) {
  // expected-error @+1 {{batch dimensions of 'tensor<2x4x3xf32>' and 'tensor<5x3x2xf32>' are not broadcast-compatible}}
  %r = parallax.matmul %a, %b : tensor<2x4x3xf32>, tensor<5x3x2xf32>
  return
}

// -----

// matmul rank
func.func @f(%a: tensor<f32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{operands must be tensors of rank >= 1}}
  %r = "parallax.matmul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

// gemm k
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contracting dimensions differ: op(A) is 2x3, op(B) is 4x5}}
  %r = parallax.gemm %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

// gemm c
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %c: tensor<2x4xf32>) {
  // expected-error @+1 {{C 'tensor<2x4xf32>' does not broadcast to the result shape [2, 5]}}
  %r = parallax.gemm %a, %b, %c : tensor<2x3xf32>, tensor<3x5xf32>, tensor<2x4xf32>
  return
}

// -----

// gather axis
func.func @f(%t: tensor<4x8xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis 2 is out of range for 'tensor<4x8xf32>'}}
  %r = parallax.gather %t[%i] axis = 2 : tensor<4x8xf32>, tensor<3xi64>
  return
}

// -----

// transpose
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation [0, 0] is not a permutation of the dimensions of 'tensor<4x8xf32>'}}
  %r = parallax.transpose %a permutation = [0, 0] : tensor<4x8xf32>
  return
}

// -----

// concat none
func.func @f() {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{requires at least one input}}
  %r = "parallax.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

// concat axis
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for 'tensor<4x8xf32>'}}
  %r = parallax.concat %a, %a axis = 2 : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

// concat rank
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{inputs must have the rank and element type of 'tensor<4x8xf32>', got 'tensor<8xf32>'}}
  %r = parallax.concat %a, %b axis = 0 : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

// concat dims
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error @+1 {{inputs 'tensor<4x8xf32>' and 'tensor<4x7xf32>' differ in dimension 1, which is not the concatenation axis}}
  %r = parallax.concat %a, %b axis = 0 : tensor<4x8xf32>, tensor<4x7xf32>
  return
}

// -----

// slice count
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'offsets' must have 2 entries, got [0]}}
  %r = parallax.slice %a offsets = [0] sizes = [1, 1] strides = [1, 1] : tensor<4x8xf32>
  return
}

// -----

// slice size
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'sizes' entries must be >= 0, got [-1, 1]}}
  %r = parallax.slice %a offsets = [0, 0] sizes = [-1, 1] strides = [1, 1] : tensor<4x8xf32>
  return
}

// -----

// slice stride
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{strides must be non-zero, got [0, 1]}}
  %r = parallax.slice %a offsets = [0, 0] sizes = [1, 1] strides = [0, 1] : tensor<4x8xf32>
  return
}

// -----

// slice bounds
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{slice of dimension 0 (offset 2, size 2, stride 2) reads outside [0, 4)}}
  %r = parallax.slice %a offsets = [2, 0] sizes = [2, 8] strides = [2, 1] : tensor<4x8xf32>
  return
}

// -----

// tile
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'repeats' must have 2 entries, got [2]}}
  %r = parallax.tile %a repeats = [2] : tensor<4x8xf32>
  return
}

// -----

// pad negative
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'low' entries must be >= 0, got [0, -1]}}
  %r = parallax.pad constant %a low = [0, -1] high = [0, 0] : tensor<4x8xf32>
  return
}

// -----

// pad reflect
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{reflect padding of 4 needs dimension 0 to be larger, got 4}}
  %r = parallax.pad reflect %a low = [4, 0] high = [0, 0] : tensor<4x8xf32>
  return
}

// -----

// pad edge
func.func @f(%a: tensor<0x8xf32>) {
  // expected-error @+1 {{edge padding of empty dimension 0}}
  %r = parallax.pad edge %a low = [1, 0] high = [0, 0] : tensor<0x8xf32>
  return
}

// -----

// reduce axes
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axes [1, 0] must be sorted, distinct dimensions of 'tensor<4x8xf32>'}}
  %r = parallax.reduce sum %a axes = [1, 0] : tensor<4x8xf32>
  return
}

// -----

// conv rank
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{input must be N x C x D1.. (rank >= 3) and the filter of the same rank}}
  %r = parallax.conv %a, %a strides = [] pads = [] dilations = [] groups = 1 : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

// conv groups
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{filter 'tensor<4x3x3x3xf32>' with 2 groups does not match the 3 input channels of 'tensor<1x3x8x8xf32>'}}
  %r = parallax.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 2 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv bias
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias must be a 4-element vector, got 'tensor<3xf32>'}}
  %r = parallax.conv %x, %w, %b strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>
  return
}

// -----

// conv pads
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'pads' must have 4 entries, got [0, 0]}}
  %r = parallax.conv %x, %w strides = [1, 1] pads = [0, 0] dilations = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv window
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{window of 9 elements is larger than the padded spatial dimension 0 of 8}}
  %r = parallax.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [4, 4] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// conv stride
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' entries must be >= 1, got [0, 1]}}
  %r = parallax.conv %x, %w strides = [0, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// pool rank
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{input must be N x C x D1.. (rank >= 3)}}
  %r = parallax.pool max %a kernel = [2] strides = [1] pads = [0, 0] : tensor<4x8xf32>
  return
}

// -----

// pool kernel
func.func @f(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'kernel' must have 2 entries, got [2]}}
  %r = parallax.pool max %x kernel = [2] strides = [1, 1] pads = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
  return
}

// -----

// pool window
func.func @f(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{window of 9 elements is larger than the padded spatial dimension 0 of 8}}
  %r = parallax.pool average %x kernel = [9, 1] strides = [1, 1] pads = [0, 0, 0, 0] : tensor<1x3x8x8xf32>
  return
}

// -----

// max_pool_grad output shape
func.func @f(%x: tensor<1x3x8x8xf32>, %y: tensor<1x3x3x3xf32>) {
  // expected-error @+1 {{output 'tensor<1x3x3x3xf32>' is not the pooling's result 'tensor<1x3x4x4xf32>'}}
  %r = parallax.max_pool_grad %x, %y, %y kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<1x3x8x8xf32>, tensor<1x3x3x3xf32>
  return
}

// -----

// max_pool_grad kernel
func.func @f(%x: tensor<1x3x8x8xf32>, %y: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'kernel' must have 2 entries, got [3]}}
  %r = parallax.max_pool_grad %x, %y, %y kernel = [3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>
  return
}

// -----

// max_pool_grad output gradient type
func.func @f(%x: tensor<1x3x8x8xf32>, %y: tensor<1x3x4x4xf32>, %dy: tensor<1x3x4x4xf64>) {
  // expected-error @+1 {{'parallax.max_pool_grad' op failed to verify that all of {output, output_grad} have same type}}
  %r = "parallax.max_pool_grad"(%x, %y, %dy) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf64>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// loss rank
func.func @f(%s: tensor<4xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{input must be N x C x D1.. (rank >= 2)}}
  %r = parallax.nll_loss mean %s, %l : tensor<4xf32>, tensor<4xi64>
  return
}

// -----

// loss labels
func.func @f(%s: tensor<4x10xf32>, %l: tensor<5xi64>) {
  // expected-error @+1 {{labels 'tensor<5xi64>' must have shape [4] for input 'tensor<4x10xf32>'}}
  %r = parallax.softmax_cross_entropy mean %s, %l : tensor<4x10xf32>, tensor<5xi64>
  return
}

// -----

// loss weights
func.func @f(%s: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<9xf32>) {
  // expected-error @+1 {{weights must be a vector of 10 'f32', got 'tensor<9xf32>'}}
  %r = parallax.softmax_cross_entropy sum %s, %l, %w : tensor<4x10xf32>, tensor<4xi64>, tensor<9xf32>
  return
}

// -----

// clip
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'parallax.clip' op min 2.000000e+00 is greater than max 1.000000e+00}}
  %r = parallax.clip %a {min = 2.0 : f64, max = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

// reshape
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'parallax.reshape' op cannot reshape 'tensor<4x8xf32>' (32 elements) to 'tensor<5x6xf32>' (30 elements)}}
  %r = parallax.reshape %a : tensor<4x8xf32> -> tensor<5x6xf32>
  return
}

// -----

// expand
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'parallax.expand' op 'tensor<4x8xf32>' does not broadcast to 'tensor<4x2xf32>'}}
  %r = parallax.expand %a : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}

// -----

// softmax
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'parallax.softmax' op axis 2 is out of range for 'tensor<4x8xf32>'}}
  %r = parallax.softmax %a axis = 2 : tensor<4x8xf32>
  return
}

// -----

// log softmax
func.func @f(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'parallax.log_softmax' op axis 5 is out of range for 'tensor<4x8xf32>'}}
  %r = parallax.log_softmax %a axis = 5 : tensor<4x8xf32>
  return
}

// -----

// batch norm rank
func.func @f(%a: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'parallax.batch_norm' op input must be N x C x ..., got 'tensor<4xf32>'}}
  %r = parallax.batch_norm %a, %c, %c, %c, %c epsilon = 1.0e-5 : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// batch norm channels
func.func @f(%a: tensor<2x3x4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'parallax.batch_norm' op scale, bias, mean and variance must have one element per channel (3), got 'tensor<4xf32>'}}
  %r = parallax.batch_norm %a, %c, %c, %c, %c epsilon = 1.0e-5 : tensor<2x3x4xf32>, tensor<4xf32>
  return
}

// -----

// layer norm axis
func.func @f(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'parallax.layer_norm' op axis 2 is out of range for 'tensor<4x8xf32>'}}
  %r = parallax.layer_norm %a, %g axis = 2 epsilon = 1.0e-5 : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

// layer norm scale
func.func @f(%a: tensor<4x8xf32>, %g: tensor<7xf32>) {
  // expected-error @+1 {{'parallax.layer_norm' op scale and bias must broadcast to the normalised shape [8], got 'tensor<7xf32>'}}
  %r = parallax.layer_norm %a, %g axis = 1 epsilon = 1.0e-5 : tensor<4x8xf32>, tensor<7xf32>
  return
}

// -----

// exp on ints
func.func @f(%a: tensor<4xi32>) {
  // expected-error @+1 {{'parallax.exp' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %r = parallax.exp %a : tensor<4xi32>
  return
}

// -----

// dynamic shapes
func.func @f(%a: tensor<?xf32>) {
  // expected-error @+1 {{'parallax.relu' op operand #0 must be statically shaped tensor of floating-point or signless integer values, but got 'tensor<?xf32>'}}
  %r = parallax.relu %a : tensor<?xf32>
  return
}

// -----

func.func @filter_grad_groups_do_not_divide(%x: tensor<2x6x9x9xf32>, %dy: tensor<2x4x7x7xf32>) -> tensor<4x2x3x3xf32> {
  // expected-error @+1 {{input channels (6) and output gradient channels (4) must be multiples of groups (3)}}
  %r = parallax.conv_filter_grad %x, %dy kernel = [3, 3] strides = [1, 1] dilations = [1, 1] groups = 3 : tensor<2x6x9x9xf32>, tensor<2x4x7x7xf32>
  return %r : tensor<4x2x3x3xf32>
}

// -----

func.func @segment_reduce_prod(%d: tensor<6x4xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{a segment reduction is sum, mean or max, not prod}}
  %r = parallax.segment_reduce prod %d bounds %b : tensor<6x4xf32>, tensor<3xi64>
  return
}

// -----

func.func @segment_reduce_empty_bounds(%d: tensor<6x4xf32>, %b: tensor<0xi64>) {
  // expected-error @+1 {{bounds must be 1-D with one more element than there are bags, got 'tensor<0xi64>'}}
  %r = parallax.segment_reduce sum %d bounds %b : tensor<6x4xf32>, tensor<0xi64>
  return
}

// -----

func.func @segment_reduce_grad_shape(%dy: tensor<3x4xf32>, %d: tensor<6x4xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{output_grad 'tensor<3x4xf32>' must have the forward result's type, 'tensor<2x4xf32>'}}
  %r = parallax.segment_reduce_grad sum %dy, %d bounds %b : tensor<3x4xf32>, tensor<6x4xf32>, tensor<3xi64>
  return
}

// -----

func.func @input_grad_filter_features(%dy: tensor<2x4x6x6xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  // expected-error @+1 {{output gradient must be N x M x O1.. (rank >= 3) and the filter M x C x K1.. of the same rank and M}}
  %r = parallax.conv_input_grad %dy, %w input_spatial = [8, 8] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x4x6x6xf32>, tensor<5x3x3x3xf32>
  return %r : tensor<2x3x8x8xf32>
}

// -----

func.func @input_grad_spatial_rank(%dy: tensor<2x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  // expected-error @+1 {{'input_spatial' must have 2 entries, got [8]}}
  %r = parallax.conv_input_grad %dy, %w input_spatial = [8] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x4x6x6xf32>, tensor<4x3x3x3xf32>
  return %r : tensor<2x3x8x8xf32>
}

// -----

func.func @input_grad_wrong_output_size(%dy: tensor<2x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  // expected-error @+1 {{output gradient 'tensor<2x4x5x5xf32>' does not have the spatial shape [6, 6] of the forward convolution's result}}
  %r = parallax.conv_input_grad %dy, %w input_spatial = [8, 8] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>
  return %r : tensor<2x3x8x8xf32>
}
