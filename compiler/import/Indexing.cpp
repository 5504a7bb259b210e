// How ONNX's indexed reads and writes become dlc ops: ScatterElements/ScatterND (and the KV
// cache update TensorScatter built on them), GatherND and TopK.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace dlc {
namespace {

// The reduction of ScatterElements/ScatterND: add and mul from opset 16, max and min from 18.
std::string scatterReduction(NodeImporter &n) {
  std::string reduction = n.version >= 16 ? n.stringAttr("reduction", "none") : "none";
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      !(n.version >= 18 && (reduction == "max" || reduction == "min")))
    throw ImportError("unknown reduction '" + reduction + "'");
  return reduction;
}

// TensorScatter: `update` written into the cache along `axis`, sample b from position
// write_indices[b] on (wrapping around in circular mode): a ScatterElements whose indices are
// write_indices[b] + s.
OpImport tensorScatter() {
  return {{}, [](NodeImporter &n) -> Value {
            RankedTensorType cache = n.inputType(0), update = n.inputType(1);
            int64_t rank = cache.getRank();
            if (rank < 2 || update.getRank() != rank)
              throw ImportError("past_cache and update must have one rank, at least 2");
            int64_t axis = normalizeAxis(n.intAttr("axis", -2), rank);
            if (axis == 0)
              throw ImportError("axis must not be the batch axis");
            std::string mode = n.stringAttr("mode", "linear");
            if (mode != "linear" && mode != "circular")
              throw ImportError("unknown mode '" + mode + "'");
            for (int64_t d = 0; d < rank; ++d)
              if (d == axis ? update.getDimSize(d) > cache.getDimSize(d)
                            : update.getDimSize(d) != cache.getDimSize(d))
                throw ImportError("update " + dimsString(update.getShape()) +
                                  " does not fit the cache " + dimsString(cache.getShape()));
            Type i64 = n.b.getI64Type();
            int64_t length = update.getDimSize(axis);
            SmallVector<int64_t> along(rank, 1);
            along[axis] = length;
            std::vector<int64_t> steps(length);
            for (int64_t s = 0; s < length; ++s)
              steps[s] = s;
            std::vector<char> bytes(steps.size() * 8);
            std::memcpy(bytes.data(), steps.data(), bytes.size());
            Value index = ConstantOp::fromBytes(n.b, n.loc(), RankedTensorType::get(along, i64),
                                                bytes, "scatter_steps");
            if (n.hasInput(2)) {
              if (n.inputType(2).getShape() != ArrayRef<int64_t>{cache.getDimSize(0)})
                throw ImportError("write_indices must hold one index per batch sample");
              SmallVector<int64_t> perSample(rank, 1);
              perSample[0] = cache.getDimSize(0);
              index = bin<AddOp>(n, reshape(n, castTo(n, n.input(2), i64), perSample), index);
            }
            if (mode == "circular")
              index = bin<ModOp>(n, index, scalar(n, double(cache.getDimSize(axis)), i64));
            index = broadcastTo(n, index, update.getShape());
            return n.b.create<ScatterElementsOp>(n.loc(), cache, n.input(0), index, n.input(1),
                                                 axis, "none");
          }};
}

// ScatterElements, and Scatter (its name before opset 11).
OpImport scatterElements() {
  return {{}, [](NodeImporter &n) -> Value {
            auto data = n.inputType(0), idx = n.inputType(1), updates = n.inputType(2);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), data.getRank());
            bool fits =
                data.getRank() == idx.getRank() && updates == idx.clone(data.getElementType());
            for (int64_t d = 0; fits && d < data.getRank(); ++d)
              fits = d == axis || idx.getDimSize(d) <= data.getDimSize(d);
            if (!fits)
              throw ImportError("indices " + dimsString(idx.getShape()) + " and updates " +
                                dimsString(updates.getShape()) + " do not fit data " +
                                dimsString(data.getShape()));
            return n.b.create<ScatterElementsOp>(n.loc(), data, n.input(0), n.input(1), n.input(2),
                                                 axis, scatterReduction(n));
          }};
}

// Index tuples of length k address slices of the data: indices [..., k] of int64.
int64_t tupleLength(NodeImporter &n, RankedTensorType idx, int64_t limit) {
  if (!idx.getElementType().isSignlessInteger(64) || idx.getRank() < 1)
    throw ImportError("indices must be an int64 tensor of rank >= 1");
  int64_t k = idx.getShape().back();
  if (k < 1 || k > limit)
    throw ImportError("index tuples of length " + std::to_string(k) + " do not fit " +
                      std::to_string(limit) + " dims");
  return k;
}

OpImport scatterND() {
  return {{}, [](NodeImporter &n) -> Value {
            auto data = n.inputType(0), idx = n.inputType(1);
            int64_t k = tupleLength(n, idx, data.getRank());
            SmallVector<int64_t> updates(idx.getShape().drop_back());
            llvm::append_range(updates, data.getShape().drop_front(k));
            if (n.inputType(2) != data.clone(updates))
              throw ImportError("updates must be " + dimsString(updates) + ", got " +
                                dimsString(n.inputType(2).getShape()));
            return n.b.create<ScatterNDOp>(n.loc(), data, n.input(0), n.input(1), n.input(2),
                                           scatterReduction(n));
          }};
}

OpImport gatherND() {
  return {{}, [](NodeImporter &n) -> Value {
            auto data = n.inputType(0), idx = n.inputType(1);
            int64_t batch = n.version >= 12 ? n.intAttr("batch_dims", 0) : 0;
            if (batch < 0 || batch >= std::min(data.getRank(), idx.getRank()))
              throw ImportError("batch_dims " + std::to_string(batch) + " is out of range");
            for (int64_t d = 0; d < batch; ++d)
              if (data.getDimSize(d) != idx.getDimSize(d))
                throw ImportError("batch dim " + std::to_string(d) +
                                  " differs: " + dimsString(data.getShape()) + " vs " +
                                  dimsString(idx.getShape()));
            int64_t k = tupleLength(n, idx, data.getRank() - batch);
            SmallVector<int64_t> shape(idx.getShape().drop_back());
            llvm::append_range(shape, data.getShape().drop_front(batch + k));
            return n.b.create<GatherNDOp>(n.loc(), data.clone(shape), n.input(0), n.input(1),
                                          batch);
          }};
}

// Values and int64 indices of the k best along the axis (always sorted, which satisfies
// sorted=0 too).
OpImport topK() {
  return {{1}, [](NodeImporter &n) -> OpImport::Results {
            auto x = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", -1), x.getRank());
            int64_t k = n.version < 10 ? n.intAttr("k", -1) : [&] {
              const ConstTensor &c = n.constInput(1);
              if (c.numElements() != 1)
                throw ImportError("K must hold one value");
              return c.asInts()[0];
            }();
            if (k < 0 || k > x.getDimSize(axis))
              throw ImportError("k " + std::to_string(k) + " is outside [0, " +
                                std::to_string(x.getDimSize(axis)) + "]");
            if (x.getElementType().isInteger(1))
              throw ImportError("TopK of bool is not supported");
            SmallVector<int64_t> shape(x.getShape());
            shape[axis] = k;
            Value indices =
                n.b.create<TopKOp>(n.loc(), x.clone(shape).clone(n.b.getI64Type()), n.input(0),
                                   axis, n.version < 11 || n.intAttr("largest", 1) != 0);
            return {gatherElements(n, n.input(0), indices, axis), indices};
          }};
}

} // namespace

void addIndexingImports(ImportTable &table) {
  table.insert({
      {"ScatterElements", scatterElements()},
      {"Scatter", scatterElements()},
      {"ScatterND", scatterND()},
      {"GatherND", gatherND()},
      {"TopK", topK().withLegacyVersions()},
      {"TensorScatter", tensorScatter()},
  });
}

} // namespace dlc
