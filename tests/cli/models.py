"""The small ONNX models the cli suite compiles, written into its work folder."""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def make_models(work):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    opset = [helper.make_opsetid("", 13)]
    unsupported = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="relu1"),
         helper.make_node("StringNormalizer", ["a"], ["b"], name="sn1"),
         helper.make_node("Unique", ["b"], ["y"], name="unique1")],
        "g", [x], [y]), opset_imports=opset)
    w = numpy_helper.from_array(np.ones((4, 5), np.float32), "w")
    mismatch = helper.make_model(helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm1")], "g", [x], [y], [w]),
        opset_imports=opset)
    wrong_dtype = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_int")], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT32, [2])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [2])]), opset_imports=opset)
    dynamic = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_dyn")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])]), opset_imports=opset)
    # complex64: an element type dlc does not support.
    complex_init = helper.make_tensor("c", TensorProto.COMPLEX64, [2, 3], [1 + 0j] * 6)
    used_complex = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["c"], ["h"], name="relu_complex")], "g", [x],
        [helper.make_tensor_value_info("h", TensorProto.COMPLEX64, [2, 3])], [complex_init]),
        opset_imports=opset)
    unused_complex = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y], [complex_init]),
        opset_imports=opset)
    dead_unknown_op = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu"),
         helper.make_node("Frobnicate", ["x"], ["unused"], name="dead")], "g", [x], [y]),
        opset_imports=opset)
    # A 2-D Gather over constants, evaluated at compile time, with an index out of range.
    table = numpy_helper.from_array(np.arange(6, dtype=np.int64).reshape(2, 3), "table")
    constant_gather = helper.make_model(helper.make_graph(
        [helper.make_node("Constant", [], ["table"], name="table", value=table),
         helper.make_node("Constant", [], ["rows"], name="rows",
                          value=numpy_helper.from_array(np.array([1, 5], np.int64), "rows")),
         helper.make_node("Gather", ["table", "rows"], ["picked"], name="pick", axis=0),
         helper.make_node("Cast", ["picked"], ["pickedf"], name="tofloat", to=TensorProto.FLOAT),
         helper.make_node("Reshape", ["pickedf", "shape"], ["flat"], name="flatten"),
         helper.make_node("Add", ["x", "flat"], ["y"], name="add")], "g", [x], [y],
        [numpy_helper.from_array(np.array([2, 3], np.int64), "shape")]), opset_imports=opset)
    # ONNX Runtime's contrib ops dlc refuses, each with its reason, and one it does not know.
    contrib = helper.make_model(helper.make_graph(
        [helper.make_node("DynamicQuantizeMatMul", ["x", "w8", "scale"], ["a"], name="dqmm",
                          domain="com.microsoft"),
         helper.make_node("Conv", ["a"], ["b"], name="blocked", domain="com.microsoft.nchwc"),
         helper.make_node("GroupQueryAttention", ["b"], ["y"], name="gqa",
                          domain="com.microsoft")], "g", [x], [y],
        [numpy_helper.from_array(np.ones((3, 3), np.int8), "w8"),
         numpy_helper.from_array(np.ones(1, np.float32), "scale")]),
        opset_imports=opset + [helper.make_opsetid("com.microsoft", 1),
                               helper.make_opsetid("com.microsoft.nchwc", 1)])
    return {"dynamic": save(dynamic, os.path.join(work, "dynamic.onnx")),
            "contrib": save(contrib, os.path.join(work, "contrib.onnx")),
            "constant_gather": save(constant_gather, os.path.join(work, "constant_gather.onnx")),
            "dead_unknown_op": save(dead_unknown_op, os.path.join(work, "dead_unknown_op.onnx")),
            "used_complex": save(used_complex, os.path.join(work, "used_complex.onnx")),
            "unused_complex": save(unused_complex, os.path.join(work, "unused_complex.onnx")),
            "unsupported": save(unsupported, os.path.join(work, "unsupported.onnx")),
            "mismatch": save(mismatch, os.path.join(work, "mismatch.onnx")),
            "wrong_dtype": save(wrong_dtype, os.path.join(work, "wrong_dtype.onnx"))}
