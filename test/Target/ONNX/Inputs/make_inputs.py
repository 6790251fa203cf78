#!/usr/bin/env python3
"""Writes the binary ONNX fixtures of the importer tests (committed; rerun
with Debian's /usr/bin/python3 and python3-onnx to regenerate).

  mlp.onnx            a 2-layer MLP with PyTorch-style dotted initializer
                      names and a symbolic batch dimension
  external.onnx/.bin  the same weights stored as external data
  external-short.onnx external data whose file is shorter than the tensor
  external-missing.onnx  external data whose file does not exist
  bad-raw-size.onnx   an initializer whose raw_data has the wrong size
  old-opset.onnx      an opset-9 model (imported through the converter)
"""

import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).parent


def mlp(weights_external=None):
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "fc1.weight")
    b1 = numpy_helper.from_array(np.zeros(8, np.float32), "fc1.bias")
    w2 = numpy_helper.from_array(rng.standard_normal((3, 8)).astype(np.float32), "fc2.weight")
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="/fc1/Gemm", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="/relu/Relu"),
        helper.make_node("MatMul", ["r", "w2t"], ["logits"], name="/fc2/MatMul"),
        helper.make_node("Transpose", ["fc2.weight"], ["w2t"], name="/fc2/Transpose"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss"], name="/loss/SCE"),
    ]
    # Topological order: the Transpose must come before the MatMul.
    nodes[2], nodes[3] = nodes[3], nodes[2]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("y", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [w1, b1, w2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def save_external(model, name, location, truncate=None):
    model = onnx.ModelProto.FromString(model.SerializeToString())
    onnx.external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=location, size_threshold=0)
    onnx.save_model(model, str(HERE / name))


def main():
    model = mlp()
    onnx.checker.check_model(model)
    onnx.save(model, str(HERE / "mlp.onnx"))

    save_external(model, "external.onnx", "external.bin")
    data = (HERE / "external.bin").read_bytes()
    save_external(model, "external-short.onnx", "external-short.bin")
    (HERE / "external-short.bin").write_bytes(data[: len(data) // 2])
    save_external(model, "external-missing.onnx", "no-such-file.bin")
    (HERE / "no-such-file.bin").unlink()

    bad = onnx.ModelProto.FromString(model.SerializeToString())
    bad.graph.initializer[1].raw_data = bad.graph.initializer[1].raw_data[:-4]
    onnx.save(bad, str(HERE / "bad-raw-size.onnx"))

    old = helper.make_model(
        helper.make_graph(
            [helper.make_node("Add", ["a", "b"], ["c"], name="add")], "old",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3])]),
        opset_imports=[helper.make_opsetid("", 9)])
    old.ir_version = 4
    onnx.save(old, str(HERE / "old-opset.onnx"))


if __name__ == "__main__":
    main()
