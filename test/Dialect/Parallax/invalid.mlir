// RUN: parallax-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{unknown Parallax dialect attribute 'parallax.workers'}}
module attributes {parallax.workers = 4} {}

// -----

module {
  // expected-error @+1 {{'parallax.world' is only valid on a builtin.module}}
  func.func @f() attributes {parallax.world = #parallax.world<workers = 2>} {
    return
  }
}

// -----

// expected-error @+1 {{'parallax.world' must be a #parallax.world attribute, got 4 : i64}}
module attributes {parallax.world = 4} {}

// -----

// expected-error @+1 {{workers must be at least 0 (0: any number, known at run time), got -1}}
module attributes {parallax.world = #parallax.world<workers = -1>} {}

// -----

// expected-error @+1 {{partitions must be at least 1, got 0}}
parallax.variable trainable @w : tensor<8x4xf32> {distribution = #parallax.distribution<ps, partitions = 0>}

// -----

// expected-error @+1 {{placement 'allreduce' keeps the variable whole: partitions must be 1, got 2}}
parallax.variable trainable @w : tensor<8x4xf32> {distribution = #parallax.distribution<allreduce, partitions = 2>}

// -----

// expected-error @+1 {{placement 'allgather' keeps the variable whole: partitions must be 1, got 4}}
parallax.variable trainable @w : tensor<8x4xf32> {distribution = #parallax.distribution<allgather, partitions = 4>}

// -----

// expected-error @+1 {{row-sparse dense type must have rank >= 1, got 'tensor<f32>'}}
func.func private @f(!parallax.row_sparse<tensor<f32>, rows = 1>)

// -----

// expected-error @+1 {{row-sparse dense type must be statically shaped, got 'tensor<?x4xf32>'}}
func.func private @f(!parallax.row_sparse<tensor<?x4xf32>, rows = 1>)

// -----

// expected-error @+1 {{row-sparse row count must be non-negative, got -2}}
func.func private @f(!parallax.row_sparse<tensor<8x4xf32>, rows = -2>)

// -----

// expected-error @+1 {{initial value must be an elements attribute}}
parallax.variable trainable @w : tensor<2xf32> = [1.0, 2.0]

// -----

// expected-error @+1 {{'parallax.variable' op element type must be an integer or floating-point type, got 'index'}}
parallax.variable @w : tensor<2xindex>

// -----

// expected-error @+1 {{'parallax.variable' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of any type values}}
parallax.variable trainable @w : tensor<?x2xf32>

// -----

// expected-error @+1 {{'parallax.variable' op initial value type 'tensor<3xf32>' does not match the variable type 'tensor<2xf32>'}}
"parallax.variable"() <{sym_name = "w", type = tensor<2xf32>, initial_value = dense<1.0> : tensor<3xf32>}> : () -> ()

// -----

// expected-error @+1 {{'parallax.variable' op trainable variable must have a floating-point element type, got 'i32'}}
parallax.variable trainable @w : tensor<2xi32>

// -----

// expected-error @+1 {{'parallax.variable' op only trainable variables have a distribution; a frozen variable is replicated as a constant}}
parallax.variable @w : tensor<2xf32> {distribution = #parallax.distribution<allreduce, partitions = 1>}

// -----

// expected-error @+1 {{'parallax.variable' op cannot split a scalar variable into 2 partitions}}
parallax.variable trainable @w : tensor<f32> {distribution = #parallax.distribution<ps, partitions = 2>}

// -----

// expected-error @+1 {{'parallax.variable' op cannot split 3 rows into 4 partitions}}
parallax.variable trainable @w : tensor<3x8xf32> {distribution = #parallax.distribution<ps, partitions = 4>}

// -----

func.func @f() {
  // expected-error @+1 {{'parallax.variable' op expects parent op 'builtin.module'}}
  parallax.variable trainable @w : tensor<2xf32>
  return
}

// -----

func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'parallax.read' op '@missing' does not reference a parallax.variable}}
  %0 = parallax.read @missing : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func private @not_a_variable()
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'parallax.read' op '@not_a_variable' does not reference a parallax.variable}}
  %0 = parallax.read @not_a_variable : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

parallax.variable trainable @w : tensor<2xf32>
func.func @f() -> tensor<3xf32> {
  // expected-error @+1 {{'parallax.read' op result type 'tensor<3xf32>' does not match the type 'tensor<2xf32>' of variable '@w'}}
  %0 = parallax.read @w : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

parallax.variable @c : tensor<2xf32> = dense<1.0>
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{'parallax.assign' op cannot assign to '@c': the variable is neither trainable nor statistics}}
  parallax.assign @c, %v : tensor<2xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<2xf32>
func.func @f(%v: tensor<2xf64>) {
  // expected-error @+1 {{'parallax.assign' op value type 'tensor<2xf64>' does not match the type 'tensor<2xf32>' of variable '@w'}}
  parallax.assign @w, %v : tensor<2xf64>
  return
}

// -----

func.func @f(%i: tensor<4xi64>, %v: tensor<4x8xf32>) {
  // expected-error @+1 {{'parallax.row_sparse.pack' op failed to verify that indices type matches the row-sparse type}}
  %0 = "parallax.row_sparse.pack"(%i, %v) : (tensor<4xi64>, tensor<4x8xf32>) -> !parallax.row_sparse<tensor<100x8xf32>, rows = 3>
  return
}

// -----

func.func @f(%i: tensor<4xi64>, %v: tensor<4x7xf32>) {
  // expected-error @+1 {{'parallax.row_sparse.pack' op failed to verify that values type matches the row-sparse type}}
  %0 = "parallax.row_sparse.pack"(%i, %v) : (tensor<4xi64>, tensor<4x7xf32>) -> !parallax.row_sparse<tensor<100x8xf32>, rows = 4>
  return
}

// -----

func.func @f(%g: !parallax.row_sparse<tensor<100x8xf32>, rows = 4>) {
  // expected-error @+1 {{'parallax.row_sparse.unpack' op failed to verify that indices type matches the row-sparse type}}
  %i, %v = "parallax.row_sparse.unpack"(%g) : (!parallax.row_sparse<tensor<100x8xf32>, rows = 4>) -> (tensor<5xi64>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%g: !parallax.row_sparse<tensor<100x8xf32>, rows = 4>) {
  // expected-error @+1 {{'parallax.row_sparse.unpack' op failed to verify that values type matches the row-sparse type}}
  %i, %v = "parallax.row_sparse.unpack"(%g) : (!parallax.row_sparse<tensor<100x8xf32>, rows = 4>) -> (tensor<4xi64>, tensor<4x8xf16>)
  return
}

// -----

func.func @f(%g: !parallax.row_sparse<tensor<100x8xf32>, rows = 4>) {
  // expected-error @+1 {{'parallax.row_sparse.to_dense' op failed to verify that result is the dense type of the row-sparse value}}
  %d = "parallax.row_sparse.to_dense"(%g) : (!parallax.row_sparse<tensor<100x8xf32>, rows = 4>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'parallax.allreduce' op requires at least one input}}
  "parallax.allreduce"() <{reduction = 0 : i32}> : () -> ()
  return
}

// -----

func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{'parallax.allreduce' op 'mean' reduction requires floating-point tensors, got 'tensor<4xi32>'}}
  %0 = parallax.allreduce mean %x : tensor<4xi32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+2 {{'parallax.allreduce' op failed to infer returned types}}
  // expected-error @+1 {{'parallax.allreduce' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  %0 = "parallax.allreduce"(%x) <{reduction = 0 : i32}> : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @f(%x: tensor<4xi32>) {
  // expected-error @+1 {{'parallax.allreduce_start' op 'mean' reduction requires floating-point tensors, got 'tensor<4xi32>'}}
  %h = parallax.allreduce_start mean %x : tensor<4xi32>
  %0 = parallax.allreduce_wait %h : tensor<4xi32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'parallax.allreduce_start' op handle must be consumed by exactly one parallax.allreduce_wait in the same block}}
  %h = parallax.allreduce_start sum %x : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'parallax.allreduce_start' op handle must be consumed by exactly one parallax.allreduce_wait in the same block}}
  %h = parallax.allreduce_start sum %x : tensor<4xf32>
  %0 = parallax.allreduce_wait %h : tensor<4xf32>
  %1 = parallax.allreduce_wait %h : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>, %c: i1) {
  // expected-error @+1 {{'parallax.allreduce_start' op handle must be consumed by exactly one parallax.allreduce_wait in the same block}}
  %h = parallax.allreduce_start sum %x : tensor<4xf32>
  scf.if %c {
    %0 = parallax.allreduce_wait %h : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%h: !parallax.allreduce_handle<tensor<4xf32>>) {
  // expected-error @+1 {{'parallax.allreduce_wait' op handle must come directly from a parallax.allreduce_start}}
  %0 = parallax.allreduce_wait %h : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  %h = parallax.allreduce_start sum %x : tensor<4xf32>
  // expected-error @+1 {{'parallax.allreduce_wait' op result types must be the types its handle carries}}
  %0 = "parallax.allreduce_wait"(%h) : (!parallax.allreduce_handle<tensor<4xf32>>) -> tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  %h = parallax.allreduce_start sum %x : tensor<4xf32>
  // expected-error @+2 {{use of value '%h' expects different type than prior uses: '!parallax.allreduce_handle<tensor<8xf32>>' vs '!parallax.allreduce_handle<tensor<4xf32>>'}}
  // expected-note @-2 {{prior use here}}
  %0 = parallax.allreduce_wait %h : tensor<8xf32>
  return
}

// -----

// expected-error @+1 {{an allreduce handle carries ranked tensor types, not 'i32'}}
func.func @f(%h: !parallax.allreduce_handle<i32>)

// -----

func.func @f(%x: tensor<4xf32>, %y: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  // expected-error @+1 {{'parallax.allreduce' op names 1 variables for 2 inputs}}
  %0:2 = parallax.allreduce sum %x, %y for ["w"] : tensor<4xf32>, tensor<2xf32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<2xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'parallax.allreduce_start' op names 2 variables for 1 inputs}}
  %h = parallax.allreduce_start sum %x for ["w", "b"] : tensor<4xf32>
  %0 = parallax.allreduce_wait %h : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'parallax.allgather' op input must have rank >= 1: rows are gathered along dimension 0}}
  %0 = parallax.allgather %x : tensor<f32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'parallax.allgather' op result 'tensor<8x4xf32>' must have the element type and trailing dimensions of the input 'tensor<2x8xf32>'}}
  %0 = parallax.allgather %x : tensor<2x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'parallax.allgather' op result 'tensor<8x8xf16>' must have the element type and trailing dimensions of the input 'tensor<2x8xf32>'}}
  %0 = parallax.allgather %x : tensor<2x8xf32> -> tensor<8x8xf16>
  return
}

// -----

module attributes {parallax.world = #parallax.world<workers = 4>} {
  func.func @f(%x: tensor<2x8xf32>) {
    // expected-error @+1 {{'parallax.allgather' op result has 6 rows, but 4 workers with 2 rows each gather 8}}
    %0 = parallax.allgather %x : tensor<2x8xf32> -> tensor<6x8xf32>
    return
  }
}

// -----

func.func @f(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'parallax.allgather' op result rows (7) must be a multiple of the input rows (2)}}
  %0 = parallax.allgather %x : tensor<2x8xf32> -> tensor<7x8xf32>
  return
}

// -----

module attributes {parallax.world = #parallax.world<workers = 2>} {
  func.func @f(%x: tensor<4xf32>) {
    // expected-error @+1 {{'parallax.broadcast' op root 2 is not a worker of a module planned for 2 workers}}
    %0 = parallax.broadcast %x root 2 : tensor<4xf32>
    return
  }
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'parallax.broadcast' op attribute 'root' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = parallax.broadcast %x root -1 : tensor<4xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<8x4xf32> {distribution = #parallax.distribution<allreduce, partitions = 1>}
func.func @f(%g: tensor<8x4xf32>) {
  // expected-error @+1 {{'parallax.push' op variable '@w' is placed 'allreduce', but push and pull need placement 'ps'}}
  parallax.push @w, %g : tensor<8x4xf32>
  return
}

// -----

parallax.variable @c : tensor<8x4xf32>
func.func @f(%g: tensor<8x4xf32>) {
  // expected-error @+1 {{'parallax.push' op cannot push a gradient to '@c': the variable is not trainable}}
  parallax.push @c, %g : tensor<8x4xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<8x4xf32>
func.func @f(%g: !parallax.row_sparse<tensor<9x4xf32>, rows = 2>) {
  // expected-error @+1 {{'parallax.push' op gradient '!parallax.row_sparse<tensor<9x4xf32>, rows = 2>' does not match the type 'tensor<8x4xf32>' of variable '@w'}}
  parallax.push @w, %g : !parallax.row_sparse<tensor<9x4xf32>, rows = 2>
  return
}

// -----

func.func @f(%g: tensor<8x4xf32>) {
  // expected-error @+1 {{'parallax.push' op '@w' does not reference a parallax.variable}}
  parallax.push @w, %g : tensor<8x4xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<8x4xf32> {distribution = #parallax.distribution<allgather, partitions = 1>}
func.func @f(%i: tensor<2xi64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'parallax.pull' op variable '@w' is placed 'allgather', but push and pull need placement 'ps'}}
  %0 = parallax.pull @w[%i : tensor<2xi64>] : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

parallax.variable trainable @s : tensor<f32>
func.func @f(%i: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'parallax.pull' op cannot pull rows of scalar variable '@s'}}
  %0 = parallax.pull @s[%i : tensor<2xi64>] : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

parallax.variable trainable @w : tensor<8x4xf32>
func.func @f(%i: tensor<2xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'parallax.pull' op result type 'tensor<3x4xf32>' does not match 'tensor<2x4xf32>': one row of '@w' per index}}
  %0 = parallax.pull @w[%i : tensor<2xi64>] : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

parallax.variable trainable @w : tensor<8x4xf32>
func.func @f() -> tensor<4x4xf32> {
  // expected-error @+1 {{'parallax.pull' op result type 'tensor<4x4xf32>' does not match 'tensor<8x4xf32>': '@w' whole}}
  %0 = parallax.pull @w : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

parallax.variable trainable @w : tensor<8x4xf32>
func.func @f(%i: tensor<2xi32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'parallax.pull' op operand #0 must be 1D tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = parallax.pull @w[%i : tensor<2xi32>] : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{an index range needs low < high, got [5, 5)}}
func.func private @empty(tensor<4xi64> {parallax.index_ranges = [#parallax.index_range<low = 5, high = 5, use = "x">]})

// -----

// expected-error @+1 {{an index range's region holds (offset, size, stride) triples of non-negative numbers}}
func.func private @region(tensor<4xi64> {parallax.index_ranges = [#parallax.index_range<low = 0, high = 5, use = "x", region = [0, 4]>]})

// -----

// expected-error @+1 {{'parallax.index_ranges' must be an array of #parallax.index_range}}
func.func private @ranges(tensor<4xi64> {parallax.index_ranges = [1 : i64]})

// -----

// expected-error @+1 {{'parallax.from_model' needs the module's 'parallax.model'}}
parallax.variable trainable @w : tensor<4xf32> {parallax.from_model}

// -----

module attributes {parallax.model = "/m.onnx"} {
  // expected-error @+1 {{a variable loaded from the model has no initial value of its own}}
  parallax.variable trainable @w : tensor<4xf32> = dense<1.0> {parallax.from_model}
}

// -----

// expected-error @+1 {{'parallax.model' must be a string on a builtin.module}}
func.func @f() attributes {parallax.model = "/m.onnx"} {
  return
}

// -----

// expected-error @+1 {{'parallax.segmented_by' must name the offsets input, got 1 : i64}}
func.func private @bags(tensor<4xi64> {parallax.segmented_by = 1 : i64})

// -----

// expected-error @+1 {{'parallax.segmented_by' is on argument 0, which is not 1-D}}
func.func @bags(%ids: tensor<2x2xi64> {parallax.segmented_by = "offsets"}) {
  return
}

// -----

// expected-error @+1 {{'parallax.segment_count' is on argument 1, which is not an i64 scalar}}
func.func @count(%ids: tensor<4xi64> {parallax.segmented_by = "offsets"}, %count: tensor<1xi64> {parallax.segment_count = "offsets"}) {
  return
}

// -----

// A library call must name a declared function of its operands' buffers
// and scalars.
func.func @library_call_undeclared(%x: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'parallax.library_call' op calls 'nowhere', which is not a declared function}}
  %y = parallax.library_call @nowhere(%x) outs(%init) scalars = [] : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @takes_one_scalar(memref<*xf32>, memref<*xf32>, i64)
func.func @library_call_mismatch(%x: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'parallax.library_call' op calls 'takes_one_scalar' of type '(memref<*xf32>, memref<*xf32>, i64) -> ()' with ('memref<*xf32>', 'memref<*xf32>', 'i64', 'i64')}}
  %y = parallax.library_call @takes_one_scalar(%x) outs(%init) scalars = [1, 2] : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @slot_not_a_string() {
  // expected-error @+1 {{'parallax.global_buffer_slot' must be a string on an op of one result}}
  %b = memref.alloc() {parallax.global_buffer_slot = 1 : i64} : memref<4xf32>
  return
}
