// How the ai.onnx.ml ops dlc supports become dlc ops: the numeric ones that are compositions
// (string encoders and tree ensembles are not supported).
#include "compiler/import/Builders.h"

using namespace mlir;

namespace dlc {
namespace {

// 1 where x > threshold, else 0, in x's type.
OpImport binarizer() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat(n);
            Type f = n.inputType(0).getElementType();
            Value above =
                comparison<GreaterOp>(n, n.input(0), scalar(n, n.floatAttr("threshold", 0.0f), f));
            return castTo(n, above, f);
          }};
}

// The elements of the last axis at the (flattened) indices; a 1-D input gives one row.
OpImport arrayFeatureExtractor() {
  return {{}, [](NodeImporter &n) -> Value {
            auto x = n.inputType(0).getShape();
            auto indices = n.inputType(1);
            if (x.empty())
              throw ImportError("X must have at least one dim");
            if (!indices.getElementType().isInteger(64))
              throw ImportError("Y must be int64");
            int64_t count = indices.getNumElements();
            SmallVector<int64_t> shape(x.drop_back());
            shape.push_back(count);
            Value picked = n.b.create<GatherOp>(n.loc(), n.inputType(0).clone(shape), n.input(0),
                                                reshape(n, n.input(1), {count}), x.size() - 1);
            return x.size() == 1 ? reshape(n, picked, {1, count}) : picked;
          }};
}

} // namespace

void addMlImports(ImportTable &table) {
  table.insert({
      {"ai.onnx.ml.Binarizer", binarizer()},
      {"ai.onnx.ml.ArrayFeatureExtractor", arrayFeatureExtractor()},
  });
}

} // namespace dlc
