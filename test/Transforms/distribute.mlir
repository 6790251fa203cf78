// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=4 --parallax-distribute=workers=4 --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=HYBRID
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=4 --parallax-distribute="workers=4 strategy=allreduce" --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=ALLREDUCE
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=4 --parallax-distribute="workers=4 strategy=ps" --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=PS
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=2 --parallax-distribute=workers=2 --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=ALLGATHER
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=1 --parallax-distribute=workers=1 --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=ONE
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=1 --parallax-distribute="workers=1 strategy=allreduce" | FileCheck %s --check-prefix=ONE-ALLREDUCE
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=4 --parallax-distribute=workers=4 --parallax-optimizer="optimizer=adagrad lr=0.1" --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=OPTIMIZER
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis --parallax-distribute="workers-at-run-time workers-at-run-time-servers=2" --parallax-bucket-allreduce --parallax-async-allreduce | FileCheck %s --check-prefix=RUNTIME
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=2 --parallax-distribute="workers-at-run-time workers-at-run-time-servers=2" --parallax-bucket-allreduce --parallax-async-allreduce --parallax-partition | FileCheck %s --check-prefix=RUNTIME

// An embedding read through a gather (sparse) and two dense weights.
parallax.variable trainable @emb : tensor<1000x8xf32> = dense<0.5>
parallax.variable trainable @w1 : tensor<8x8xf32> = dense<0.25>
parallax.variable trainable @w2 : tensor<8x4xf32> = dense<0.25>
func.func @forward(%ids: tensor<4x2xi64>) -> tensor<f32> {
  %e = parallax.read @emb : tensor<1000x8xf32>
  %a = parallax.read @w1 : tensor<8x8xf32>
  %b = parallax.read @w2 : tensor<8x4xf32>
  %x = parallax.gather %e[%ids] axis = 0 : tensor<1000x8xf32>, tensor<4x2xi64>
  %h = parallax.matmul %x, %a : tensor<4x2x8xf32>, tensor<8x8xf32>
  %t = parallax.tanh %h : tensor<4x2x8xf32>
  %y = parallax.matmul %t, %b : tensor<4x2x8xf32>, tensor<8x4xf32>
  %l = parallax.reduce mean %y axes = [0, 1, 2] : tensor<4x2x4xf32>
  return %l : tensor<f32>
}

// Hybrid on 4 workers: the table goes to 4 parameter-server partitions,
// the step pulls the rows it reads and pushes the row-sparse gradient; the
// dense gradients share one bucket, started where the last of them is
// computed and waited on before their updates.
// HYBRID: module attributes {parallax.world = #parallax.world<workers = 4>}
// HYBRID: @emb {{.*}}distribution = #parallax.distribution<ps, partitions = 4>
// HYBRID: @w1 {{.*}}distribution = #parallax.distribution<allreduce, partitions = 1>
// HYBRID: @w2 {{.*}}distribution = #parallax.distribution<allreduce, partitions = 1>
// HYBRID: func.func @train_step
// HYBRID-NOT: parallax.read @emb
// HYBRID: %[[IDS:.*]] = parallax.reshape %arg0 : tensor<4x2xi64> -> tensor<8xi64>
// HYBRID: %[[ROWS:.*]] = parallax.pull @emb[%[[IDS]] : tensor<8xi64>] : tensor<8x8xf32>
// HYBRID: parallax.reshape %[[ROWS]] : tensor<8x8xf32> -> tensor<4x2x8xf32>
// HYBRID: %[[H:.*]] = parallax.allreduce_start mean %{{.*}}, %{{.*}} for ["w2", "w1"] : tensor<8x4xf32>, tensor<8x8xf32>
// HYBRID: %[[G:.*]] = parallax.row_sparse.pack
// HYBRID: parallax.push @emb, %[[G]] : !parallax.row_sparse<tensor<1000x8xf32>, rows = 8>
// HYBRID: %[[R:.*]]:2 = parallax.allreduce_wait %[[H]] : tensor<8x4xf32>, tensor<8x8xf32>
// HYBRID: parallax.apply_gradient @w1, %[[R]]#1
// HYBRID: parallax.apply_gradient @w2, %[[R]]#0

// AllReduce only: the table's gradient is densified and averaged too.
// ALLREDUCE: @emb {{.*}}distribution = #parallax.distribution<allreduce, partitions = 1>
// ALLREDUCE: parallax.read @emb
// ALLREDUCE: %[[D:.*]] = parallax.row_sparse.to_dense
// ALLREDUCE: parallax.allreduce_start mean {{.*}}%[[D]] for ["w2", "w1", "emb"] : {{.*}}tensor<1000x8xf32>
// ALLREDUCE-NOT: parallax.push

// PS only: every variable is pulled whole or by rows and pushed.
// PS: @w1 {{.*}}distribution = #parallax.distribution<ps, partitions = 4>
// PS: @w2 {{.*}}distribution = #parallax.distribution<ps, partitions = 4>
// PS-DAG: parallax.pull @w1 : tensor<8x8xf32>
// PS-DAG: parallax.pull @w2 : tensor<8x4xf32>
// PS-NOT: allreduce
// PS: parallax.push @emb
// PS: parallax.push @w1
// PS: parallax.push @w2

// 2 workers: AllGather moves the table's rows in fewer rounds than PS for
// the same bytes; the gathered rows are averaged over the workers.
// ALLGATHER: @emb {{.*}}distribution = #parallax.distribution<allgather, partitions = 1>
// ALLGATHER: %[[I:.*]], %[[V:.*]] = parallax.row_sparse.unpack
// ALLGATHER: %[[AI:.*]] = parallax.allgather %[[I]] for "emb" : tensor<8xi64> -> tensor<16xi64>
// ALLGATHER: %[[AV:.*]] = parallax.allgather %[[V]] for "emb" : tensor<8x8xf32> -> tensor<16x8xf32>
// ALLGATHER: %[[HALF:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// ALLGATHER: %[[MEAN:.*]] = parallax.mul %[[AV]], %[[HALF]]
// ALLGATHER: %[[P:.*]] = parallax.row_sparse.pack %[[AI]], %[[MEAN]] : !parallax.row_sparse<tensor<1000x8xf32>, rows = 16>
// ALLGATHER: parallax.apply_gradient @emb, %[[P]]

// Any number of workers (read at run time): the world is marked 0, the
// paper's rule places the sparse table on servers where the cost model for
// 2 workers would have chosen AllGather, and the dense weights on
// AllReduce; partitions follow workers-at-run-time-servers.
// RUNTIME: module attributes {parallax.world = #parallax.world<workers = 0>}
// RUNTIME: @emb {{.*}}distribution = #parallax.distribution<ps, partitions = 2>
// RUNTIME: @w1 {{.*}}distribution = #parallax.distribution<allreduce, partitions = 1>
// RUNTIME-NOT: parallax.allgather
// RUNTIME: parallax.pull @emb
// RUNTIME: parallax.allreduce_start mean
// RUNTIME: parallax.push @emb

// The servers apply the optimizer: push carries it and its state.
// OPTIMIZER: parallax.variable state @emb.sum
// OPTIMIZER: parallax.push @emb, %{{.*}} optimizer = <adagrad, lr = 1.000000e-01, epsilon = 1.000000e-10> state = [@emb.sum]
// OPTIMIZER: parallax.update @w1

// One worker: nothing to exchange. The table is gathered from that worker
// alone (updated in place, no parameter store), the dense gradients go
// straight to their updates: no collective, no push or pull.
// ONE: module attributes {parallax.world = #parallax.world<workers = 1>}
// ONE: @emb {{.*}}distribution = #parallax.distribution<allgather, partitions = 1>
// ONE: @w1 {{.*}}distribution = #parallax.distribution<allreduce, partitions = 1>
// ONE-LABEL: func.func @train_step
// ONE-NOT: parallax.allreduce
// ONE-NOT: parallax.allgather
// ONE-NOT: parallax.push
// ONE-NOT: parallax.pull
// ONE: %[[G:.*]] = parallax.row_sparse.pack
// ONE-NOT: parallax.allreduce
// ONE: parallax.apply_gradient @emb, %[[G]] : !parallax.row_sparse<tensor<1000x8xf32>, rows = 8>
// ONE-NOT: parallax.allreduce
// ONE-NOT: parallax.allgather

// Forced AllReduce on one worker: the table's gradient is densified, and
// still not reduced.
// ONE-ALLREDUCE: @emb {{.*}}distribution = #parallax.distribution<allreduce, partitions = 1>
// ONE-ALLREDUCE-LABEL: func.func @train_step
// ONE-ALLREDUCE: %[[D:.*]] = parallax.row_sparse.to_dense
// ONE-ALLREDUCE-NOT: parallax.allreduce
// ONE-ALLREDUCE: parallax.apply_gradient @emb, %[[D]]
