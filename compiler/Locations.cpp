#include "compiler/Locations.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace dlc {

static SmallVector<std::string, 2> names(Location loc) {
  SmallVector<std::string, 2> out;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        out.push_back(name.getName().str());
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    out.push_back(name.getName().str());
  }
  return out;
}

std::string onnxNodeName(Location loc) {
  auto all = names(loc);
  return all.empty() ? "" : all.front();
}

std::string onnxValueName(Location loc) {
  auto all = names(loc);
  return all.empty() ? "" : all.back();
}

std::string onnxComputedValue(Location loc) {
  auto all = names(loc);
  return all.size() < 2 ? "" : all.back();
}

std::string onnxOpType(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (auto type = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      return type.str();
  return "";
}

} // namespace dlc
