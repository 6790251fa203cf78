#!/usr/bin/env python3
"""Writes a small ONNX model whose names are not plain file names.

Usage: make_odd_names_model.py MODEL.onnx DATA_DIR

Initializers named like TensorFlow variables ('dense/kernel:0'), one that
would climb out of a directory ('../../evil'), an input 'in/x' and an
output '../escape'; DATA_DIR gets training data for it (the .npy files
named by the runtime's encoding: '/' as %2F, a leading '.' as %2E).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    model_path, data_dir = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(0)
    kernel = numpy_helper.from_array(
        rng.standard_normal((4, 2)).astype(np.float32), "dense/kernel:0")
    bias = numpy_helper.from_array(np.zeros(2, np.float32), "../../evil")
    nodes = [
        helper.make_node("MatMul", ["in/x", "dense/kernel:0"], ["h"]),
        helper.make_node("Add", ["h", "../../evil"], ["../escape"]),
        helper.make_node("Mul", ["../escape", "../escape"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "odd_names",
        [helper.make_tensor_value_info("in/x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("../escape", TensorProto.FLOAT,
                                       ["N", 2])],
        [kernel, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, model_path)
    os.makedirs(data_dir, exist_ok=True)
    np.save(os.path.join(data_dir, "in%2Fx.npy"),
            rng.standard_normal((8, 4)).astype(np.float32))


if __name__ == "__main__":
    main()
