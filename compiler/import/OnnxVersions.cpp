#include "compiler/import/OnnxVersions.h"

#include <algorithm>
#include <map>
#include <vector>

namespace dlc {
namespace {

struct History {
  int maxOpset = 0;
  std::map<std::string, std::vector<int>> versions;
};

const History &history() {
  static const History h = [] {
    History built;
#define DLC_ONNX_MAX_OPSET(n) built.maxOpset = n;
#define DLC_ONNX_OP(name, ...) built.versions[#name] = std::vector<int> __VA_ARGS__;
#include "compiler/import/OnnxOpVersions.inc"
#undef DLC_ONNX_OP
#undef DLC_ONNX_MAX_OPSET
    return built;
  }();
  return h;
}

} // namespace

int onnxMaxOpset() { return history().maxOpset; }

int onnxOpVersion(const std::string &op, int opset) {
  auto it = history().versions.find(op);
  if (it == history().versions.end())
    return 0;
  const std::vector<int> &v = it->second; // ascending
  auto after = std::upper_bound(v.begin(), v.end(), opset);
  return after == v.begin() ? 0 : *(after - 1);
}

int onnxOpFirstVersion(const std::string &op) {
  auto it = history().versions.find(op);
  return it == history().versions.end() ? 0 : it->second.front();
}

} // namespace dlc
