// RUN: parallax-opt %s --split-input-file --parallax-partition | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-partition="overrides=emb=16" | FileCheck %s --check-prefix=OVERRIDE
// RUN: parallax-opt %s --split-input-file --parallax-partition="servers=8" | FileCheck %s --check-prefix=SERVERS
// RUN: parallax-opt %s --split-input-file --parallax-partition="servers=4" | FileCheck %s --check-prefix=FOUR

// By default the counts --parallax-distribute recorded from the plan stay.
// CHECK: @emb : tensor<1000x8xf32> {distribution = #parallax.distribution<ps, partitions = 3>}
// CHECK: @small : tensor<2x8xf32> {distribution = #parallax.distribution<ps, partitions = 1>}
// CHECK: @dense : tensor<8x8xf32> {distribution = #parallax.distribution<allreduce, partitions = 1>}
// servers=S: one partition per server, at most one per row; other
// placements are left alone.
// FOUR: @emb : tensor<1000x8xf32> {distribution = #parallax.distribution<ps, partitions = 4>}
// FOUR: @small : tensor<2x8xf32> {distribution = #parallax.distribution<ps, partitions = 2>}
// FOUR: @dense : tensor<8x8xf32> {distribution = #parallax.distribution<allreduce, partitions = 1>}
// OVERRIDE: @emb : tensor<1000x8xf32> {distribution = #parallax.distribution<ps, partitions = 16>}
// OVERRIDE: @small : tensor<2x8xf32> {distribution = #parallax.distribution<ps, partitions = 1>}
// SERVERS: @emb : tensor<1000x8xf32> {distribution = #parallax.distribution<ps, partitions = 8>}
module attributes {parallax.world = #parallax.world<workers = 4>} {
  parallax.variable trainable @emb : tensor<1000x8xf32> {distribution = #parallax.distribution<ps, partitions = 3>}
  parallax.variable trainable @small : tensor<2x8xf32> {distribution = #parallax.distribution<ps, partitions = 1>}
  parallax.variable trainable @dense : tensor<8x8xf32> {distribution = #parallax.distribution<allreduce, partitions = 1>}
}
