// RUN: not parallax-opt %s --parallax-bucket-allreduce=bucket-bytes=0 2>&1 | FileCheck %s

// CHECK: error: bucket-bytes must be positive, got 0
module {}
