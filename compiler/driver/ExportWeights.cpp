// `dlc export-weights`: a trained state file (save_state) back into the ONNX model it was
// compiled from, so the trained model goes through `dlc compile` (or any ONNX tool) again.
#include "compiler/driver/Driver.h"

#include "onnx/onnx_pb.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace dlc {
namespace {

struct StateTensor {
  uint64_t kind, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// Reads a state file (runtime/dlc_state.h); every length is checked against the file.
bool readState(const std::string &data, std::map<std::string, StateTensor> &tensors,
               std::string &error) {
  size_t at = 0;
  auto take = [&](void *out, size_t n) {
    if (data.size() - at < n)
      return false;
    std::memcpy(out, data.data() + at, n);
    at += n;
    return true;
  };
  auto u64 = [&](uint64_t &v) { return take(&v, 8); };
  char magic[8];
  uint32_t version;
  uint64_t step, count, stateBytes;
  float rate;
  if (!take(magic, 8) || std::memcmp(magic, "DLCSTATE", 8) != 0 || !take(&version, 4) ||
      version != 1 || !u64(step) || !take(&rate, 4) || !u64(count)) {
    error = "not a dlc state file (version 1)";
    return false;
  }
  struct Entry {
    std::string name;
    StateTensor tensor;
    uint64_t offset, bytes;
  };
  std::vector<Entry> entries;
  for (uint64_t i = 0; i < count; ++i) {
    Entry e;
    uint64_t length, rank;
    if (!u64(length) || length > data.size() - at) {
      error = "truncated state file";
      return false;
    }
    e.name = data.substr(at, length);
    at += length;
    if (!u64(e.tensor.kind) || !u64(e.tensor.dtype) || !u64(rank) || rank > 64) {
      error = "truncated state file";
      return false;
    }
    for (uint64_t d = 0; d < rank; ++d) {
      uint64_t dim;
      if (!u64(dim)) {
        error = "truncated state file";
        return false;
      }
      e.tensor.shape.push_back(static_cast<int64_t>(dim));
    }
    if (!u64(e.offset) || !u64(e.bytes)) {
      error = "truncated state file";
      return false;
    }
    entries.push_back(std::move(e));
  }
  if (!u64(stateBytes) || data.size() - at != stateBytes) {
    error = "truncated state file";
    return false;
  }
  for (Entry &e : entries) {
    if (e.offset > stateBytes || e.bytes > stateBytes - e.offset) {
      error = "damaged state file: '" + e.name + "' lies outside the state";
      return false;
    }
    e.tensor.bytes = data.substr(at + e.offset, e.bytes);
    tensors[e.name] = std::move(e.tensor);
  }
  return true;
}

bool readFile(const std::string &path, std::string &out) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  out = bytes.str();
  return bool(file);
}

} // namespace

int exportWeightsCommand(const std::string &statePath, const std::string &modelPath,
                         const std::string &outPath) {
  auto fail = [](const std::string &file, const std::string &message) {
    std::cerr << "dlc: error: " << file << ": " << message << "\n";
    return 1;
  };
  std::string stateData, modelData, error;
  if (!readFile(statePath, stateData))
    return fail(statePath, "cannot read the file");
  std::map<std::string, StateTensor> state;
  if (!readState(stateData, state, error))
    return fail(statePath, error);
  onnx::ModelProto model;
  if (!readFile(modelPath, modelData) || !model.ParseFromString(modelData) || !model.has_graph())
    return fail(modelPath, "not a valid ONNX model");
  auto *graph = model.mutable_graph();
  std::map<std::string, onnx::TensorProto *> initializers;
  for (auto &init : *graph->mutable_initializer())
    initializers[init.name()] = &init;
  auto matches = [](const onnx::TensorProto &t, const StateTensor &s) {
    return uint64_t(t.data_type()) == s.dtype &&
           std::vector<int64_t>(t.dims().begin(), t.dims().end()) == s.shape;
  };
  // Running statistics that training gave a tensor of their own are named after their node
  // (NODE.running_mean / NODE.running_var): they become new initializers of that node.
  std::map<std::string, std::pair<onnx::NodeProto *, int>> ownStatistics;
  for (auto &node : *graph->mutable_node())
    if (node.op_type() == "BatchNormalization" && node.input_size() == 5)
      for (auto [index, suffix] : {std::pair{3, ".running_mean"}, std::pair{4, ".running_var"}})
        ownStatistics[node.name() + suffix] = {&node, index};
  int written = 0;
  for (const auto &[name, tensor] : state) {
    if (tensor.kind == 2) // optimizer moments stay in the state file
      continue;
    onnx::TensorProto *init = nullptr;
    if (auto it = initializers.find(name); it != initializers.end()) {
      init = it->second;
    } else if (auto own = ownStatistics.find(name); own != ownStatistics.end()) {
      init = graph->add_initializer();
      init->set_name(name);
      init->set_data_type(int(tensor.dtype));
      for (int64_t d : tensor.shape)
        init->add_dims(d);
      own->second.first->set_input(own->second.second, name);
    }
    if (!init || !matches(*init, tensor))
      return fail(statePath, "state tensor '" + name + "' has no initializer of its dtype and "
                             "shape in " + modelPath + ": the state is of another model");
    onnx::TensorProto fresh;
    fresh.set_name(init->name());
    fresh.set_data_type(init->data_type());
    *fresh.mutable_dims() = init->dims();
    fresh.set_raw_data(tensor.bytes);
    *init = std::move(fresh);
    ++written;
  }
  std::string out;
  if (!model.SerializeToString(&out))
    return fail(outPath, "cannot serialize the model");
  std::ofstream file(outPath, std::ios::binary);
  file.write(out.data(), out.size());
  file.close();
  if (!file) {
    std::remove(outPath.c_str());
    return fail(outPath, "cannot write the file");
  }
  std::cout << "wrote " << written << " tensors into " << outPath << "\n";
  return 0;
}

} // namespace dlc
