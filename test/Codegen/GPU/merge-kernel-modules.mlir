// RUN: parallax-opt %s --parallax-gpu-merge-kernel-modules | FileCheck %s

// Two outlined kernels (each with its own copy of a declaration) become
// one module; the launches name the kernels by their old modules and the
// node their location names, if any.
// CHECK: gpu.module @step_kernels {
// CHECK-NEXT: func.func private @helper()
// CHECK-NOT: func.func private @helper()
// CHECK: gpu.func @step_kernel() kernel
// CHECK: gpu.func @step_kernel_0__features_0_Conv() kernel
// CHECK: }
// CHECK-NOT: gpu.module
// CHECK: gpu.launch_func @step_kernels::@step_kernel blocks
// CHECK: gpu.launch_func @step_kernels::@step_kernel_0__features_0_Conv blocks
module attributes {gpu.container_module} {
  gpu.module @step_kernel {
    func.func private @helper()
    gpu.func @step_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    func.func private @helper()
    gpu.func @step_kernel() kernel {
      gpu.return
    } loc(fused["/features/0/Conv"("model.onnx":0:0), "/features/1/Relu"])
  }
  func.func @step() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
