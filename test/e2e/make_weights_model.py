#!/usr/bin/env python3
"""Writes an embedding model and variants of it, for the tests of weights
loaded from the model when a training program starts.

Usage: make_weights_model.py DIR ROWS [--sparse-external]

DIR/model.onnx       a ROWS x 16 table (embedded), a 16 x 4 projection,
                     loss = mean((table[ids] @ proj)^2)
DIR/external.onnx    the same weights as external data (external.data)
DIR/shape.onnx       the table with ROWS + 1 rows
DIR/dtype.onnx       the table in float64
DIR/renamed.onnx     the table under another name
DIR/data/ids.npy     training data: 16 examples of 4 ids

With --sparse-external only DIR/huge.onnx is written: the table as
external data in a sparse file of zeros (no disk space, any size).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DIM = 16


def model(table, proj, table_name="table"):
    nodes = [
        helper.make_node("Gather", [table_name, "ids"], ["rows"]),
        helper.make_node("MatMul", ["rows", "proj"], ["y"]),
        helper.make_node("Mul", ["y", "y"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "weights",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [table if isinstance(table, onnx.TensorProto)
         else numpy_helper.from_array(table, table_name),
         numpy_helper.from_array(proj, "proj")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m


def main():
    out, rows = sys.argv[1], int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    proj = rng.standard_normal((DIM, 4)).astype(np.float32)
    if "--sparse-external" in sys.argv:
        table = onnx.TensorProto()
        table.name, table.data_type = "table", TensorProto.FLOAT
        table.dims.extend([rows, DIM])
        table.data_location = TensorProto.EXTERNAL
        for key, value in [("location", "huge.data"), ("offset", "0"),
                           ("length", str(rows * DIM * 4))]:
            entry = table.external_data.add()
            entry.key, entry.value = key, value
        with open(os.path.join(out, "huge.data"), "wb") as f:
            f.truncate(rows * DIM * 4)
        onnx.save(model(table, proj), os.path.join(out, "huge.onnx"))
    else:
        table = rng.standard_normal((rows, DIM)).astype(np.float32)
        onnx.save(model(table, proj), os.path.join(out, "model.onnx"))
        onnx.save(model(table, proj), os.path.join(out, "external.onnx"),
                  save_as_external_data=True, all_tensors_to_one_file=True,
                  location="external.data", size_threshold=0)
        grown = np.concatenate([table, np.zeros((1, DIM), np.float32)])
        onnx.save(model(grown, proj), os.path.join(out, "shape.onnx"))
        onnx.save(model(table.astype(np.float64), proj),
                  os.path.join(out, "dtype.onnx"))
        onnx.save(model(table, proj, table_name="other"),
                  os.path.join(out, "renamed.onnx"))
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    ids = rng.integers(0, min(rows, 1000), size=(16, 4), dtype=np.int64)
    np.save(os.path.join(out, "data", "ids.npy"), ids)


if __name__ == "__main__":
    main()
