// RUN: not parallax-opt %s --split-input-file --parallax-partition="overrides=small=3" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not parallax-opt %s --split-input-file --parallax-partition="overrides=dense=2" 2>&1 | FileCheck %s --check-prefix=PLACEMENT
// RUN: not parallax-opt %s --split-input-file --parallax-partition="overrides=nothing=2" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not parallax-opt %s --split-input-file --parallax-partition="overrides=small" 2>&1 | FileCheck %s --check-prefix=SYNTAX

// ROWS: error: cannot split 2 rows of 'small' into 3 partitions
// PLACEMENT: error: cannot partition 'dense': it is not placed on parameter servers
// UNKNOWN: error: partition override for unknown variable 'nothing'
// SYNTAX: error: bad partition override 'small': expected name=P with P >= 1
module attributes {parallax.world = #parallax.world<workers = 4>} {
  parallax.variable trainable @small : tensor<2x8xf32> {distribution = #parallax.distribution<ps, partitions = 1>}
  parallax.variable trainable @dense : tensor<8x8xf32> {distribution = #parallax.distribution<allreduce, partitions = 1>}
}
