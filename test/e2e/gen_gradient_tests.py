#!/usr/bin/python3
"""Generates gradients.mlir: one gradient check per differentiable op.

Each case is a float64 module whose trainable variables are the op's
differentiable operands (random values) and whose loss is
sum(op(...) * R) for a random R. The test differentiates it with
--parallax-autodiff=return-gradients, compiles it, and compares every
gradient with PyTorch's autograd (float64, recorded here) to 1e-7
relative: a driver counts the mismatching elements and prints the count.

Run with Debian's interpreter (PyTorch): /usr/bin/python3 gen_gradient_tests.py
"""

import pathlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).parent
torch.manual_seed(0)


def literal(array):
    array = np.asarray(array)
    if array.ndim == 0:
        value = array[()]
        if array.dtype == np.bool_:
            return "true" if value else "false"
        if np.issubdtype(array.dtype, np.integer):
            return str(int(value))
        text = "%.17g" % value
        return text if any(c in text for c in ".en") else text + ".0"
    return "[" + ", ".join(literal(a) for a in array) + "]"


def ttype(array):
    array = np.asarray(array)
    element = {np.dtype("float64"): "f64", np.dtype("int64"): "i64",
               np.dtype("bool"): "i1"}[array.dtype]
    return "tensor<" + "".join(f"{d}x" for d in array.shape) + element + ">"


def rand(*shape, low=-1.0, high=1.0):
    return low + (high - low) * torch.rand(shape, dtype=torch.float64)


class Case:
    """`op` is the MLIR text of the op with {x0}.., {c0}.. for the
    variables and constants and {t0}.. {ct0}.. for their types; `torch_fn`
    computes the same from torch tensors."""

    def __init__(self, name, op, torch_fn, variables, constants=()):
        self.name, self.op, self.torch_fn = name, op, torch_fn
        self.variables = [v.clone().requires_grad_(True) for v in variables]
        self.constants = list(constants)

    def module(self):
        y = self.torch_fn(*self.variables, *self.constants)
        weights = rand(*y.shape)
        (y * weights).sum().backward()
        fmt = {}
        lines = []
        for i, v in enumerate(self.variables):
            a = v.detach().numpy()
            lines.append(f"parallax.variable trainable @x{i} : {ttype(a)} = "
                         f"dense<{literal(a)}>")
            fmt[f"x{i}"], fmt[f"t{i}"] = f"%x{i}", ttype(a)
        lines.append("func.func @forward() -> (tensor<f64> {parallax.name = \"loss\"}) {")
        for i, v in enumerate(self.variables):
            lines.append(f"  %x{i} = parallax.read @x{i} : {fmt[f't{i}']}")
        for i, c in enumerate(self.constants):
            a = c.numpy() if isinstance(c, torch.Tensor) else np.asarray(c)
            lines.append(f"  %c{i} = arith.constant dense<{literal(a)}> : {ttype(a)}")
            fmt[f"c{i}"], fmt[f"ct{i}"] = f"%c{i}", ttype(a)
        w = weights.numpy()
        axes = ", ".join(str(d) for d in range(w.ndim))
        lines += [f"  %y = {self.op.format(**fmt)}",
                  f"  %w = arith.constant dense<{literal(w)}> : {ttype(w)}",
                  f"  %p = parallax.mul %y, %w : {ttype(w)}, {ttype(w)}",
                  f"  %loss = parallax.reduce sum %p axes = [{axes}] : {ttype(w)}",
                  "  return %loss : tensor<f64>", "}"]
        return "\n".join(lines) + "\n"

    def driver(self):
        types = [ttype(v.detach().numpy()) for v in self.variables]
        results = ", ".join(["tensor<f64>"] + types)
        lines = ["func.func private @printMemrefF64(memref<*xf64>)",
                 "func.func @main() {",
                 f"  %r:{len(types) + 1} = func.call @train_step() : () -> ({results})",
                 "  %bad0 = arith.constant dense<0.0> : tensor<f64>"]
        for i, (v, t) in enumerate(zip(self.variables, types)):
            g = v.grad.numpy()
            axes = ", ".join(str(d) for d in range(g.ndim))
            b = ", ".join([t] * 2)
            lines += [
                f"  %e{i} = arith.constant dense<{literal(g)}> : {t}",
                f"  %d{i} = parallax.sub %r#{i + 1}, %e{i} : {b}",
                f"  %ad{i} = parallax.abs %d{i} : {t}",
                f"  %ae{i} = parallax.abs %e{i} : {t}",
                f"  %rt{i} = parallax.mul %ae{i}, %rtol : {t}, tensor<f64>",
                f"  %tol{i} = parallax.add %rt{i}, %atol : {t}, tensor<f64>",
                f"  %off{i} = parallax.greater %ad{i}, %tol{i} : {b}",
                f"  %n{i} = parallax.cast %off{i} : {t.replace('f64', 'i1')} -> {t}",
                f"  %s{i} = parallax.reduce sum %n{i} axes = [{axes}] : {t}",
                f"  %bad{i + 1} = parallax.add %bad{i}, %s{i} : tensor<f64>, tensor<f64>"]
        lines.insert(3, "  %rtol = arith.constant dense<1.0e-07> : tensor<f64>")
        lines.insert(4, "  %atol = arith.constant dense<1.0e-10> : tensor<f64>")
        n = len(self.variables)
        lines += [f"  %flat = parallax.reshape %bad{n} : tensor<f64> -> tensor<1xf64>",
                  "  %buf = bufferization.to_buffer %flat read_only : tensor<1xf64> to memref<1xf64>",
                  "  %any = memref.cast %buf : memref<1xf64> to memref<*xf64>",
                  "  func.call @printMemrefF64(%any) : (memref<*xf64>) -> ()",
                  "  return", "}",
                  "// CHECK: data =", "// CHECK-NEXT: [0]"]
        return "\n".join(lines) + "\n"


def unary(name, fn, low=-1.0, high=1.0):
    return Case(name, f"parallax.{name} {{x0}} : {{t0}}", fn,
                [rand(2, 3, low=low, high=high)])


def binary(name, fn, b_shape=(3,), low=-1.0, high=1.0):
    return Case(name, f"parallax.{name} {{x0}}, {{x1}} : {{t0}}, {{t1}}", fn,
                [rand(2, 3, low=low, high=high), rand(*b_shape, low=low, high=high)])


def cases():
    x23 = rand(2, 3)
    yield unary("neg", torch.neg)
    yield unary("abs", torch.abs)
    yield unary("relu", torch.relu)
    yield unary("exp", torch.exp)
    yield unary("log", torch.log, 0.5, 2.0)
    yield unary("sqrt", torch.sqrt, 0.5, 2.0)
    yield unary("reciprocal", torch.reciprocal, 0.5, 2.0)
    yield unary("sigmoid", torch.sigmoid)
    yield unary("tanh", torch.tanh)
    yield unary("erf", torch.erf)
    yield unary("sin", torch.sin)
    yield unary("cos", torch.cos)
    yield unary("floor", torch.floor)
    yield unary("ceil", torch.ceil)
    yield unary("sign", torch.sign)
    yield binary("add", torch.add)
    yield binary("sub", torch.sub, (2, 1))
    yield binary("mul", torch.mul)
    yield binary("div", torch.div, (3,), 0.5, 2.0)
    yield binary("pow", torch.pow, (3,), 0.5, 2.0)
    yield binary("max", torch.maximum, (2, 3))
    yield binary("min", torch.minimum, (2, 3))
    mask = torch.tensor([[True, False, True], [False, True, True]])
    yield Case("where", "parallax.where {c0}, {x0}, {x1} : {ct0}, {t0}, {t1}",
               lambda a, b, c: torch.where(c, a, b), [x23, rand(3)], [mask])
    yield Case("cast", "parallax.cast {x0} : {t0} -> tensor<2x3xf64>",
               lambda a: a * 1, [x23])
    yield Case("clip", "parallax.clip {x0} {{max = 0.5 : f64, min = -0.25 : f64}} : {t0}",
               lambda a: a.clamp(-0.25, 0.5), [x23])
    yield Case("matmul", "parallax.matmul {x0}, {x1} : {t0}, {t1}",
               torch.matmul, [rand(2, 3, 4), rand(4, 5)])
    yield Case("matmul_vector_matrix", "parallax.matmul {x0}, {x1} : {t0}, {t1}",
               torch.matmul, [rand(4), rand(2, 4, 3)])
    yield Case("matmul_matrix_vector", "parallax.matmul {x0}, {x1} : {t0}, {t1}",
               torch.matmul, [rand(3, 4), rand(4)])
    yield Case("gemm", "parallax.gemm {x0}, {x1}, {x2} alpha = 2.0 beta = 0.5 : {t0}, {t1}, {t2}",
               lambda a, b, c: 2.0 * a @ b + 0.5 * c, [rand(2, 3), rand(3, 4), rand(4)])
    yield Case("gemm_transposed",
               "parallax.gemm {x0}, {x1}, {x2} transpose_a transpose_b : {t0}, {t1}, {t2}",
               lambda a, b, c: a.T @ b.T + c, [rand(3, 2), rand(4, 3), rand(2, 1)])
    ids = torch.tensor([[0, 2], [2, 3]])
    yield Case("gather_rows", "parallax.gather {x0}[{c0}] axis = 0 : {t0}, {ct0}",
               lambda t, i: t[i], [rand(5, 3)], [ids])
    yield Case("gather_axis1", "parallax.gather {x0}[{c0}] axis = 1 : {t0}, {ct0}",
               lambda t, i: t[:, i], [rand(2, 5, 3)], [ids])
    yield Case("reshape", "parallax.reshape {x0} : {t0} -> tensor<3x2xf64>",
               lambda a: a.reshape(3, 2), [x23])
    yield Case("expand", "parallax.expand {x0} : {t0} -> tensor<4x2x3xf64>",
               lambda a: a.expand(4, 2, 3), [rand(2, 1)])
    yield Case("transpose", "parallax.transpose {x0} permutation = [2, 0, 1] : {t0}",
               lambda a: a.permute(2, 0, 1), [rand(2, 3, 4)])
    yield Case("concat", "parallax.concat {x0}, {x1} axis = 1 : {t0}, {t1}",
               lambda a, b: torch.cat([a, b], 1), [x23, rand(2, 2)])
    yield Case("slice", "parallax.slice {x0} offsets = [1, 0] sizes = [2, 3] strides = [2, 3] : {t0}",
               lambda a: a[1:5:2, 0:9:3], [rand(5, 9)])
    yield Case("slice_reversed", "parallax.slice {x0} offsets = [4, 1] sizes = [3, 2] strides = [-2, 1] : {t0}",
               lambda a: a.flip(0)[0:5:2, 1:3], [rand(5, 4)])
    yield Case("tile", "parallax.tile {x0} repeats = [2, 3] : {t0}",
               lambda a: a.repeat(2, 3), [x23])
    yield Case("pad", "parallax.pad constant {x0} low = [1, 0] high = [2, 1] value = 0.5 : {t0}",
               lambda a: F.pad(a, (0, 1, 1, 2), value=0.5), [x23])
    x4 = rand(1, 2, 4, 5)
    yield Case("pad_reflect", "parallax.pad reflect {x0} low = [0, 0, 1, 2] high = [0, 0, 2, 1] : {t0}",
               lambda a: F.pad(a, (2, 1, 1, 2), mode="reflect"), [x4])
    yield Case("pad_edge", "parallax.pad edge {x0} low = [0, 0, 1, 2] high = [0, 0, 2, 1] : {t0}",
               lambda a: F.pad(a, (2, 1, 1, 2), mode="replicate"), [x4])
    for kind, fn in [("sum", lambda a: a.sum(1, keepdim=True)),
                     ("mean", lambda a: a.mean((0, 2))),
                     ("max", lambda a: a.amax(1, keepdim=True)),
                     ("min", lambda a: a.amin((0, 2))),
                     ("prod", lambda a: a.prod(1, keepdim=True))]:
        axes, keep = ("[1]", " keepdims") if kind in ("sum", "max", "prod") else ("[0, 2]", "")
        yield Case(f"reduce_{kind}", f"parallax.reduce {kind} {{x0}} axes = {axes}{keep} : {{t0}}",
                   fn, [rand(2, 3, 4, low=0.5, high=1.5)])
    yield Case("softmax", "parallax.softmax {x0} axis = 1 : {t0}",
               lambda a: torch.softmax(a, 1), [rand(2, 4, 3)])
    yield Case("log_softmax", "parallax.log_softmax {x0} axis = 2 : {t0}",
               lambda a: torch.log_softmax(a, 2), [rand(2, 4, 3)])
    yield Case("batch_norm",
               "parallax.batch_norm {x0}, {x1}, {x2}, {x3}, {x4} epsilon = 1.0e-05 : {t0}, {t1}",
               lambda x, s, b, m, v: (x - m[:, None, None]) / torch.sqrt(
                   v[:, None, None] + 1e-5) * s[:, None, None] + b[:, None, None],
               [rand(2, 3, 4, 4), rand(3), rand(3), rand(3), rand(3, low=0.5, high=1.5)])
    yield Case("layer_norm",
               "parallax.layer_norm {x0}, {x1}, {x2} axis = 1 epsilon = 1.0e-05 : {t0}, {t1}, {t2}",
               lambda x, s, b: (x - x.mean((1, 2), keepdim=True)) / torch.sqrt(
                   x.var((1, 2), unbiased=False, keepdim=True) + 1e-5) * s + b,
               [rand(2, 3, 4), rand(3, 4), rand(4)])
    yield Case("conv",
               "parallax.conv {x0}, {x1}, {x2} strides = [2, 1] pads = [1, 0, 1, 2] dilations = [1, 2] groups = 1 : {t0}, {t1}, {t2}",
               lambda x, w, b: F.conv2d(F.pad(x, (0, 2, 1, 1)), w, b, (2, 1), 0, (1, 2)),
               [rand(2, 3, 7, 6), rand(4, 3, 3, 2), rand(4)])
    yield Case("conv_grouped",
               "parallax.conv {x0}, {x1}, {x2} strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 2 : {t0}, {t1}, {t2}",
               lambda x, w, b: F.conv2d(x, w, b, 1, 1, 1, 2),
               [rand(2, 4, 5, 5), rand(6, 2, 3, 3), rand(6)])
    yield Case("pool_max_overlapping",
               "parallax.pool max {x0} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : {t0}",
               lambda x: F.max_pool2d(x, 3, 2, 1), [rand(1, 2, 7, 7)])
    yield Case("pool_average_padded",
               "parallax.pool average {x0} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] count_include_pad : {t0}",
               lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=True), [rand(1, 2, 6, 6)])
    yield Case("pool_average_ceil",
               "parallax.pool average {x0} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode : {t0}",
               lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               [rand(1, 2, 6, 6)])
    yield Case("pool_max", "parallax.pool max {x0} kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] : {t0}",
               lambda x: F.max_pool2d(x, 2), [rand(2, 3, 4, 6)])
    yield Case("pool_average", "parallax.pool average {x0} kernel = [3] strides = [3] pads = [0, 0] : {t0}",
               lambda x: F.avg_pool1d(x, 3), [rand(2, 3, 6)])
    labels = torch.tensor([[1, 0, 3], [2, 2, 4]])
    weights = rand(5, low=0.5, high=1.5)
    yield Case("softmax_cross_entropy",
               "parallax.softmax_cross_entropy mean {x0}, {c0}, {c1} {{ignore_index = 4 : i64}} : {t0}, {ct0}, {ct1}",
               lambda x, l, w: F.cross_entropy(x, l, w, ignore_index=4),
               [rand(2, 5, 3)], [labels, weights])
    yield Case("nll_loss",
               "parallax.nll_loss sum {x0}, {c0} : {t0}, {ct0}",
               lambda x, l: F.nll_loss(x, l, reduction="sum"),
               [rand(2, 5, 3)], [labels])
    yield Case("nll_loss_none",
               "parallax.nll_loss none {x0}, {c0} : {t0}, {ct0}",
               lambda x, l: F.nll_loss(x, l, reduction="none"),
               [rand(2, 5, 3)], [labels])
    # Depthwise (MobileNet's stride-2 blocks) and grouped with several
    # filters per group, strided and dilated: one grouped convolution and
    # one conv_filter_grad, not a slice per group.
    yield Case("conv_depthwise_strided",
               "parallax.conv {x0}, {x1}, {x2} strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 4 : {t0}, {t1}, {t2}",
               lambda x, w, b: F.conv2d(x, w, b, 2, 1, 1, 4),
               [rand(2, 4, 7, 7), rand(4, 1, 3, 3), rand(4)])
    yield Case("conv_grouped_strided_dilated",
               "parallax.conv {x0}, {x1}, {x2} strides = [2, 1] pads = [0, 1, 2, 1] dilations = [1, 2] groups = 2 : {t0}, {t1}, {t2}",
               lambda x, w, b: F.conv2d(F.pad(x, (1, 1, 0, 2)), w, b, (2, 1), 0, (1, 2), 2),
               [rand(1, 4, 8, 9), rand(6, 2, 3, 2), rand(6)])
    # Bags of rows as nn.EmbeddingBag reduces them (ids 0..6 into the rows),
    # with an empty bag; and rows of more than one dimension.
    bounds = torch.tensor([0, 2, 2, 5, 7])
    for kind in ("sum", "mean", "max"):
        yield Case(f"segment_reduce_{kind}",
                   f"parallax.segment_reduce {kind} {{x0}} bounds {{c0}} : {{t0}}, {{ct0}}",
                   lambda d, b, kind=kind: F.embedding_bag(
                       torch.arange(d.shape[0]), d, b[:-1], mode=kind),
                   [rand(7, 3)], [bounds])
    yield Case("segment_reduce_rows_3d",
               "parallax.segment_reduce sum {x0} bounds {c0} : {t0}, {ct0}",
               lambda d, b: torch.stack([d[b[i]:b[i + 1]].sum(0)
                                         for i in range(len(b) - 1)]),
               [rand(7, 2, 3)], [bounds])
    # Overlapping windows in the other shapes the scatter meets: SqueezeNet's
    # ceil-mode windows past the input, stride 1, a stride longer than the
    # window, a rectangular window with unequal strides, three dimensions.
    yield Case("pool_max_ceil",
               "parallax.pool max {x0} kernel = [3, 3] strides = [2, 2] pads = [0, 0, 0, 0] ceil_mode : {t0}",
               lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True), [rand(2, 2, 8, 8)])
    yield Case("pool_max_stride1",
               "parallax.pool max {x0} kernel = [3, 3] strides = [1, 1] pads = [1, 1, 1, 1] : {t0}",
               lambda x: F.max_pool2d(x, 3, 1, 1), [rand(1, 2, 5, 5)])
    yield Case("pool_max_gapped",
               "parallax.pool max {x0} kernel = [2, 2] strides = [3, 3] pads = [0, 0, 0, 0] : {t0}",
               lambda x: F.max_pool2d(x, 2, 3), [rand(1, 2, 8, 8)])
    yield Case("pool_average_rectangular",
               "parallax.pool average {x0} kernel = [2, 3] strides = [1, 2] pads = [0, 1, 0, 1] count_include_pad : {t0}",
               lambda x: F.avg_pool2d(x, (2, 3), (1, 2), (0, 1)), [rand(2, 3, 5, 7)])
    yield Case("pool_max_3d",
               "parallax.pool max {x0} kernel = [2, 2, 3] strides = [1, 2, 2] pads = [0, 0, 1, 0, 0, 1] : {t0}",
               lambda x: F.max_pool3d(x, (2, 2, 3), (1, 2, 2), (0, 0, 1)), [rand(1, 2, 3, 5, 6)])
    # Input gradients through conv_input_grad (a product and col2im): a
    # filter larger than its input at stride 1 (most of the 3x3 kernel
    # reaches only padding), and a 1-d strided, dilated convolution.
    yield Case("conv_filter_larger_than_input",
               "parallax.conv {x0}, {x1}, {x2} strides = [1, 1] pads = [1, 2, 1, 0] dilations = [1, 1] groups = 1 : {t0}, {t1}, {t2}",
               lambda x, w, b: F.conv2d(F.pad(x, (2, 0, 1, 1)), w, b),
               [rand(2, 3, 2, 1), rand(8, 3, 3, 3), rand(8)])
    yield Case("conv_1d_strided_dilated",
               "parallax.conv {x0}, {x1} strides = [3] pads = [2, 1] dilations = [2] groups = 1 : {t0}, {t1}",
               lambda x, w: F.conv1d(F.pad(x, (2, 1)), w, None, 3, 0, 2),
               [rand(2, 3, 11), rand(4, 3, 3)])


def main():
    all_cases = list(cases())
    runs, bodies = [], []
    for case in all_cases:
        n = case.name
        runs.append(
            f"// RUN: parallax-opt %t/{n}.mlir --parallax-autodiff=return-gradients=true 2>/dev/null"
            f" | %python %S/splice.py %t/{n}.driver | parallax-opt --parallax-lower-to-llvm"
            f" | %run_main | FileCheck %t/{n}.driver")
        bodies.append(f"//--- {n}.mlir\n{case.module()}//--- {n}.driver\n"
                      f"// mismatches of {n}\n{case.driver()}")
    header = [
        "// Generated by gen_gradient_tests.py (PyTorch): do not edit.",
        "// Gradient checks: the gradient every rule builds, compiled and run in",
        "// float64, against PyTorch's autograd (1e-7 relative).",
        "// RUN: rm -rf %t && split-file %s %t"]
    text = "\n".join(header + runs) + "\n\n" + "\n".join(bodies)
    (HERE / "gradients.mlir").write_text(text)
    print(f"{len(all_cases)} gradient checks")


if __name__ == "__main__":
    main()
