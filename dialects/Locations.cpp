#include "dialects/Locations.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace dlc {

static SmallVector<NameLoc, 2> nameLocations(Location loc) {
  SmallVector<NameLoc, 2> out;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        out.push_back(name);
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    out.push_back(name);
  }
  return out;
}

static SmallVector<std::string, 2> names(Location loc) {
  SmallVector<std::string, 2> out;
  for (NameLoc name : nameLocations(loc))
    out.push_back(name.getName().str());
  return out;
}

Location onnxNodeLocation(MLIRContext *context, StringRef opType, StringRef node,
                          StringRef value, Location file) {
  // The node's name (for diagnostics) and its output's name (for memory reports).
  return FusedLoc::get(context,
                       {NameLoc::get(StringAttr::get(context, node), file),
                        NameLoc::get(StringAttr::get(context, value))},
                       StringAttr::get(context, opType));
}

Location locationComputing(Location producer, Location consumer) {
  auto from = nameLocations(producer), to = nameLocations(consumer);
  auto fused = dyn_cast<FusedLoc>(producer);
  if (from.empty() || to.empty() || !fused || !isa<FusedLoc>(consumer))
    return consumer;
  return FusedLoc::get(producer.getContext(), {from.front(), to.back()}, fused.getMetadata());
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
