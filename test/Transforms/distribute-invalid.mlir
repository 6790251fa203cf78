// RUN: parallax-opt %s --split-input-file --parallax-distribute=workers=4 --verify-diagnostics
// RUN: not parallax-opt %s --split-input-file --parallax-distribute="workers=4 strategy=ring" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not parallax-opt %s --split-input-file --parallax-distribute 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not parallax-opt %s --split-input-file --parallax-distribute="cluster=machines=2,workers-per-machine=2 workers=8" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not parallax-opt %s --split-input-file --parallax-distribute="workers-at-run-time workers=2" 2>&1 | FileCheck %s --check-prefix=RUNTIME
// RUN: not parallax-opt %s --split-input-file --parallax-distribute="workers-at-run-time workers-at-run-time-servers=0" 2>&1 | FileCheck %s --check-prefix=SERVERS

// STRATEGY: for the --strategy option: Cannot find option named 'ring'!
// UNKNOWN: error: the number of workers is unknown: give workers=N, a cluster, or a parallax.world
// CLUSTER: error: the plan is for 8 workers, but the cluster has 4
// RUNTIME: error: workers-at-run-time excludes workers, a cluster and a parallax.world
// SERVERS: error: workers-at-run-time-servers must be positive, got 0

// expected-error @+1 {{nothing to plan: no variable has a gradient (run --parallax-autodiff and --parallax-sparsity-analysis)}}
module {
  parallax.variable trainable @w : tensor<4xf32> = dense<0.5>
}

// -----

// A module planned for another world size.
// expected-error @+1 {{the plan is for 4 workers, but the module's world has 2}}
module attributes {parallax.world = #parallax.world<workers = 2>} {
  parallax.variable trainable @w : tensor<4xf32> {sparsity = #parallax.sparsity<dense, alpha = 1.0, rows = 4>}
}
