// The ONNX importer on models built here with the ONNX protobuf API.
#include "compiler/import/Importer.h"
#include "compiler/Pipeline.h"
#include "dialects/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "onnx/onnx_pb.h"
#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

namespace {

onnx::ValueInfoProto tensorInfo(const std::string &name, std::vector<int64_t> dims,
                                int dtype = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto *t = info.mutable_type()->mutable_tensor_type();
  t->set_elem_type(dtype);
  for (int64_t d : dims)
    t->mutable_shape()->add_dim()->set_dim_value(d);
  return info;
}

onnx::NodeProto *addNode(onnx::GraphProto &g, const std::string &op, const std::string &name,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto *n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto &i : inputs)
    n->add_input(i);
  for (auto &o : outputs)
    n->add_output(o);
  return n;
}

onnx::AttributeProto intAttribute(const std::string &name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

int countDlcOps(mlir::ModuleOp module) {
  int ops = 0;
  module->walk([&](mlir::Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "dlc")
      ++ops;
  });
  return ops;
}

onnx::ModelProto makeModel(int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto *o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  return m;
}

// A fresh file per call: ctest runs each case in its own process, several at once.
std::string writeTemp(const std::string &bytes, const std::string &suffix) {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("dlc_unit", suffix.substr(1), path))
    return "";
  std::ofstream(std::string(path), std::ios::binary) << bytes;
  return std::string(path);
}

struct Imported {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<std::string> errors;
};

void importModel(Imported &out, const std::string &bytes) {
  mlir::DialectRegistry registry;
  dlc::registerAll(registry);
  out.context.appendDialectRegistry(registry);
  std::string path = writeTemp(bytes, ".onnx");
  out.module = dlc::importOnnxFile(out.context, path, out.errors);
  std::remove(path.c_str());
}

} // namespace

TEST_CASE("importer builds a verified function with node-name locations") {
  onnx::ModelProto m = makeModel();
  auto &g = *m.mutable_graph();
  *g.add_input() = tensorInfo("x", {2, 3});
  *g.add_output() = tensorInfo("y", {2, 4});
  auto *w = g.add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(4);
  for (int i = 0; i < 12; ++i)
    w->add_float_data(0.5f * i);
  addNode(g, "MatMul", "mm", {"x", "w"}, {"h"});
  addNode(g, "Relu", "act", {"h"}, {"y"});

  Imported imp;
  importModel(imp, m.SerializeAsString());
  REQUIRE(imp.errors.empty());
  REQUIRE(imp.module);
  REQUIRE(mlir::succeeded(mlir::verify(*imp.module)));
  auto func = imp.module->lookupSymbol<mlir::func::FuncOp>("forward");
  REQUIRE(func);
  CHECK(func.getNumArguments() == 1);
  CHECK(func.getArgAttrOfType<mlir::StringAttr>(0, dlc::kTensorNameAttr).str() == "x");
  // The MatMul of a matrix by a matrix imports as a Gemm, located at its ONNX node.
  int gemms = 0, relus = 0, constants = 0;
  func.walk([&](mlir::Operation *op) {
    if (llvm::isa<dlc::GemmOp>(op)) {
      ++gemms;
      auto fused = llvm::dyn_cast<mlir::FusedLoc>(op->getLoc());
      REQUIRE(fused);
      CHECK(llvm::cast<mlir::StringAttr>(fused.getMetadata()).str() == "MatMul");
      CHECK(llvm::cast<mlir::NameLoc>(fused.getLocations()[0]).getName().str() == "mm");
    }
    relus += llvm::isa<dlc::ReluOp>(op);
    constants += llvm::isa<dlc::ConstantOp>(op);
  });
  CHECK(gemms == 1);
  CHECK(relus == 1);
  CHECK(constants == 1);
}

TEST_CASE("importer reports every unsupported op at once, with node name and opset") {
  onnx::ModelProto m = makeModel(12);
  auto &g = *m.mutable_graph();
  *g.add_input() = tensorInfo("x", {4});
  *g.add_output() = tensorInfo("y", {4});
  addNode(g, "StringNormalizer", "first", {"x"}, {"a"});
  addNode(g, "Relu", "ok", {"a"}, {"b"});
  addNode(g, "Unique", "second", {"b"}, {"c"});
  addNode(g, "StringNormalizer", "third", {"c"}, {"d"});
  addNode(g, "StringNormalizer", "fourth", {"d"}, {"y"});
  Imported imp;
  importModel(imp, m.SerializeAsString());
  CHECK(!imp.module);
  // Each op once, at its first node, then a summary.
  REQUIRE(imp.errors.size() == 3);
  CHECK(imp.errors[0] == "node 'first' (StringNormalizer): op StringNormalizer (opset 12) is not "
                         "supported (and 2 more nodes)");
  CHECK(imp.errors[1] == "node 'second' (Unique): op Unique (opset 12) is not supported");
  CHECK(imp.errors[2] == "2 unsupported ops: StringNormalizer x3, Unique x1");
}

TEST_CASE("importer ignores unsupported ops that only compute folded shapes") {
  // Shape -> Gather -> Unsqueeze -> Concat feeding Reshape: the exporter idiom for flatten.
  onnx::ModelProto m = makeModel();
  auto &g = *m.mutable_graph();
  *g.add_input() = tensorInfo("x", {2, 3, 4});
  *g.add_output() = tensorInfo("y", {2, 12});
  addNode(g, "Shape", "shape", {"x"}, {"s"});
  auto *idx = g.add_initializer();
  idx->set_name("zero");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_int64_data(0);
  auto *minus1 = g.add_initializer();
  minus1->set_name("minus1");
  minus1->set_data_type(onnx::TensorProto::INT64);
  minus1->add_dims(1);
  minus1->add_int64_data(-1);
  addNode(g, "Gather", "batch", {"s", "zero"}, {"b"});
  auto *axes = g.add_initializer();
  axes->set_name("axes0");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  addNode(g, "Unsqueeze", "unsq", {"b", "axes0"}, {"b1"});
  *addNode(g, "Concat", "cat", {"b1", "minus1"}, {"target"})->add_attribute() =
      intAttribute("axis", 0);
  addNode(g, "Reshape", "flat", {"x", "target"}, {"y"});
  Imported imp;
  importModel(imp, m.SerializeAsString());
  INFO((imp.errors.empty() ? std::string() : imp.errors[0]));
  REQUIRE(imp.module);
  // Only the reshape: the shape math was evaluated at compile time.
  CHECK(countDlcOps(*imp.module) == 1);
}

TEST_CASE("importer rejects bad files with one clear error") {
  Imported garbage;
  importModel(garbage, std::string(300, '\x07'));
  CHECK(!garbage.module);
  REQUIRE(garbage.errors.size() == 1);
  CHECK(garbage.errors[0].find("not a valid ONNX model") != std::string::npos);

  onnx::ModelProto m = makeModel();
  auto &g = *m.mutable_graph();
  *g.add_input() = tensorInfo("a", {2, 3});
  *g.add_input() = tensorInfo("b", {4, 5});
  *g.add_output() = tensorInfo("y", {2, 5});
  addNode(g, "MatMul", "mm", {"a", "b"}, {"y"});
  Imported mismatch;
  importModel(mismatch, m.SerializeAsString());
  CHECK(!mismatch.module);
  REQUIRE(mismatch.errors.size() == 1);
  CHECK(mismatch.errors[0] == "node 'mm' (MatMul): inner dims differ: [2,3] x [4,5]");

  std::string full = m.SerializeAsString();
  Imported truncated;
  importModel(truncated, full.substr(0, full.size() / 2));
  CHECK(!truncated.module);
  CHECK(!truncated.errors.empty());
}

TEST_CASE("importer accepts pre-opset-7 models only where op semantics are unchanged") {
  for (auto [op, ok] : {std::pair<const char *, bool>{"Relu", false}, {"GlobalAveragePool", true}}) {
    onnx::ModelProto m = makeModel(1);
    auto &g = *m.mutable_graph();
    *g.add_input() = tensorInfo("x", {1, 2, 3, 3});
    *g.add_output() = tensorInfo("y", {1, 2, std::string(op) == "Relu" ? 3 : 1,
                                       std::string(op) == "Relu" ? 3 : 1});
    addNode(g, op, "n", {"x"}, {"y"});
    Imported imp;
    importModel(imp, m.SerializeAsString());
    INFO(op);
    CHECK(bool(imp.module) == ok);
    if (!ok)
      CHECK(imp.errors.at(0).find("semantics differ") != std::string::npos);
  }
}

TEST_CASE("importer reports a failing node once, not the nodes that read its result") {
  // Reshape's shape is a graph input: the root cause. Relu, Add and the graph output depend on
  // it and must stay silent.
  onnx::ModelProto m = makeModel();
  auto &g = *m.mutable_graph();
  *g.add_input() = tensorInfo("x", {2, 6});
  *g.add_input() = tensorInfo("shape", {2}, onnx::TensorProto::INT64);
  *g.add_output() = tensorInfo("y", {3, 4});
  addNode(g, "Reshape", "reshape", {"x", "shape"}, {"r"});
  addNode(g, "Relu", "relu", {"r"}, {"a"});
  addNode(g, "Add", "add", {"a", "r"}, {"y"});
  Imported imp;
  importModel(imp, m.SerializeAsString());
  CHECK(!imp.module);
  REQUIRE(imp.errors.size() == 1);
  CHECK(imp.errors[0].rfind("node 'reshape' (Reshape): input #1 ('shape') must be a "
                            "compile-time constant: it is a graph input",
                            0) == 0);
}

TEST_CASE("importer folds shape arithmetic through Reshape, Where and ConstantOfShape") {
  // The exporter idiom for expand's target: Where(Equal(s, -1 * ones), ones, s), with s the
  // reshaped Concat of a folded dim and -1.
  onnx::ModelProto m = makeModel();
  auto &g = *m.mutable_graph();
  *g.add_input() = tensorInfo("x", {3, 1});
  *g.add_output() = tensorInfo("y", {3, 4});
  auto addInt64 = [&](const std::string &name, std::vector<int64_t> values) {
    auto *t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(values.size());
    for (int64_t v : values)
      t->add_int64_data(v);
  };
  addInt64("minus_one", {-1});
  addInt64("four", {4});
  addInt64("flat", {-1});
  *addNode(g, "Concat", "concat", {"minus_one", "four"}, {"c"})->add_attribute() =
      intAttribute("axis", 0);
  addNode(g, "Reshape", "reshape", {"c", "flat"}, {"s"});
  addNode(g, "Shape", "shape", {"s"}, {"len"});
  auto *fill = addNode(g, "ConstantOfShape", "ones", {"len"}, {"ones"});
  auto *value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  addInt64("neg", {-1});
  addNode(g, "Mul", "mul", {"ones", "neg"}, {"minus_ones"});
  addNode(g, "Equal", "equal", {"s", "minus_ones"}, {"is_open"});
  addNode(g, "Where", "where", {"is_open", "ones", "s"}, {"target"});
  addNode(g, "Expand", "expand", {"x", "target"}, {"y"});
  Imported imp;
  importModel(imp, m.SerializeAsString());
  INFO((imp.errors.empty() ? std::string() : imp.errors[0]));
  REQUIRE(imp.module);
  // The broadcast: everything else was evaluated at compile time.
  CHECK(countDlcOps(*imp.module) == 1);
}
