#!/usr/bin/python3
"""Writes shape-only ONNX models with the variable sizes of the Parallax
paper's benchmarks (../shared/PARALLAX-PAPER.md), for planning at scale:

  lm1b      input and sampled-softmax embeddings 793,471 x 512 (sparse,
            ~813M elements), an LSTM cell and projection (~9.4M dense);
            per-worker batch 128 x 20 tokens, 8,192 sampled classes
  nmt       source and target embeddings 36,549 x 1,024 (sparse, ~75M),
            seven 1,024-unit recurrent layers and the output projection
            (~96M dense); batch 128 x 30 tokens
  resnet50  ~25.6M dense parameters (a classifier stack of the same size:
            the plan depends only on variable sizes and gradient kinds);
            batch 64

The graphs compute a loss of the right kind from the right variables, not
the original networks. The weights live in an external data file that is a
sparse file (a hole: no disk space, all zeros): the models are valid ONNX,
and `parallax-compile --plan-only` never reads the data. Plan them, e.g.:

  build/bin/parallax-compile OUT/lm1b.onnx --bind batch=128,positions=2560 \\
      --plan-only --cluster machines=8,workers-per-machine=6,bandwidth=100Gbps,latency=5us \\
      --print-plan

Needs only Debian's python3-onnx: /usr/bin/python3 paper_models.py OUT
"""

import argparse
import os
import pathlib

import onnx
from onnx import TensorProto, helper


class Builder:
    def __init__(self, name, data_file):
        self.name, self.data_file = name, data_file
        self.nodes, self.inits, self.offset = [], [], 0
        self.count = 0

    def weight(self, name, dims):
        """A float initializer whose data is a range of the hole file."""
        t = TensorProto()
        t.name, t.data_type = name, TensorProto.FLOAT
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        length = 4
        for d in dims:
            length *= d
        for key, value in [("location", self.data_file.name),
                           ("offset", str(self.offset)), ("length", str(length))]:
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.inits.append(t)
        return name

    def op(self, op_type, inputs, **attrs):
        self.count += 1
        out = f"{op_type.lower()}{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def const(self, values):
        self.count += 1
        name = f"c{self.count}"
        self.nodes.append(helper.make_node(
            "Constant", [], [name],
            value=helper.make_tensor(name, TensorProto.INT64, [len(values)], values)))
        return name

    def save(self, out_dir, inputs, loss):
        graph = helper.make_graph(
            self.nodes, self.name, inputs,
            [helper.make_tensor_value_info(loss, TensorProto.FLOAT, [])],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        # The data: a hole of the right size (truncate allocates nothing).
        with open(self.data_file, "wb") as f:
            f.truncate(self.offset)
        onnx.save(model, str(out_dir / f"{self.name}.onnx"))
        print(f"{self.name}: {self.offset / 4 / 1e6:.1f}M parameters, "
              f"{self.data_file} (sparse file)")


def tokens(name, steps):
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", steps])


def lm1b(out_dir):
    vocab, dim, hidden, steps, sampled = 793_471, 512, 2048, 20, 8192
    b = Builder("lm1b", out_dir / "lm1b.weights")
    emb = b.weight("input_embedding", [vocab, dim])
    softmax = b.weight("softmax_embedding", [vocab, dim])
    cell = b.weight("lstm_kernel", [2 * dim, 4 * hidden])
    proj = b.weight("lstm_projection", [hidden, dim])
    x = b.op("Gather", [emb, "tokens"])                     # B x T x 512
    h = b.op("Tanh", [b.op("MatMul", [b.op("Concat", [x, x], axis=2), cell])])
    h = b.op("ReduceSum", [b.op("Reshape", [h, b.const([0, steps, 4, hidden])]),
                           b.const([2])], keepdims=0)        # B x T x 2048
    p = b.op("Reshape", [b.op("MatMul", [h, proj]), b.const([-1, dim])])
    # Sampled softmax: the targets' and the samples' rows of the softmax
    # embedding (a gather: row-sparse gradient).
    ids = b.op("Concat", [b.op("Reshape", ["targets", b.const([-1])]), "samples"], axis=0)
    rows = b.op("Gather", [softmax, ids])
    logits = b.op("MatMul", [p, b.op("Transpose", [rows], perm=[1, 0])])
    loss = b.op("SoftmaxCrossEntropyLoss", [logits, "labels"])
    b.save(out_dir, [tokens("tokens", steps), tokens("targets", steps),
                     helper.make_tensor_value_info("samples", TensorProto.INT64, [sampled]),
                     helper.make_tensor_value_info("labels", TensorProto.INT64, ["positions"])],
           loss)


def nmt(out_dir):
    vocab, dim, layers, steps = 36_549, 1024, 7, 30
    b = Builder("nmt", out_dir / "nmt.weights")
    src = b.op("Gather", [b.weight("encoder_embedding", [vocab, dim]), "source"])
    tgt = b.op("Gather", [b.weight("decoder_embedding", [vocab, dim]), "target_in"])
    h = b.op("Add", [src, tgt])
    for i in range(layers):
        cell = b.weight(f"layer{i}_kernel", [2 * dim, 4 * dim])
        z = b.op("MatMul", [b.op("Concat", [h, h], axis=2), cell])
        z = b.op("ReduceSum", [b.op("Reshape", [z, b.const([0, steps, 4, dim])]),
                               b.const([2])], keepdims=0)
        h = b.op("Tanh", [z])
    logits = b.op("MatMul", [h, b.weight("output_projection", [dim, vocab])])
    logits = b.op("Transpose", [logits], perm=[0, 2, 1])     # B x V x T
    loss = b.op("SoftmaxCrossEntropyLoss", [logits, "target_out"])
    b.save(out_dir, [tokens("source", steps), tokens("target_in", steps),
                     tokens("target_out", steps)], loss)


def resnet50(out_dir):
    b = Builder("resnet50", out_dir / "resnet50.weights")
    x = "features"
    for i, (n, m) in enumerate([(2048, 8192), (8192, 1000)]):
        x = b.op("Relu", [b.op("MatMul", [x, b.weight(f"layer{i}_weight", [n, m])])])
    x = b.op("MatMul", [x, b.weight("head_weight", [1000, 600])])
    loss = b.op("SoftmaxCrossEntropyLoss", [x, "labels"])
    b.save(out_dir, [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 2048]),
                     helper.make_tensor_value_info("labels", TensorProto.INT64, ["batch"])],
           loss)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for make in (lm1b, nmt, resnet50):
        make(args.out)


if __name__ == "__main__":
    main()
