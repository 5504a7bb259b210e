// How feature-extraction ops of classic ML pipelines become dlc ops: the numeric ai.onnx.ml ops
// that are compositions (string encoders and tree ensembles are not supported), and the
// default domain's TfIdfVectorizer on integer tokens.
#include "compiler/import/Builders.h"

#include <cstring>
#include <limits>
#include <map>

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

// A constant of `shape` holding `values` as `T` (int32_t, int64_t or float).
template <typename T, typename V>
Value tableConstant(NodeImporter &n, ArrayRef<int64_t> shape, Type element, ArrayRef<V> values) {
  std::vector<char> bytes(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T v = static_cast<T>(values[i]);
    std::memcpy(&bytes[i * sizeof(T)], &v, sizeof(T));
  }
  return ConstantOp::fromBytes(n.b, n.loc(), RankedTensorType::get(shape, element), bytes,
                               "table");
}

// The pool's n-grams of one length, each with its output slot.
struct GramSet {
  std::vector<std::vector<int64_t>> grams;
  std::vector<int64_t> slots;
};

// TfIdfVectorizer's pool as n-grams per length within [minLength, maxLength]. A gram given twice
// keeps its later slot, as the reference's trie does.
std::map<int64_t, GramSet> poolGrams(NodeImporter &n, int64_t minLength, int64_t maxLength,
                                     int64_t &outputSize) {
  std::vector<int64_t> counts = n.intsAttr("ngram_counts"), slots = n.intsAttr("ngram_indexes"),
                       pool = n.intsAttr("pool_int64s");
  if (n.attr("pool_strings"))
    throw ImportError("string pools are not supported");
  if (counts.empty() || counts[0] != 0)
    throw ImportError("ngram_counts must start at 0");
  std::map<std::vector<int64_t>, int64_t> slotOf;
  int64_t gramId = 0;
  outputSize = 0;
  for (size_t length = 1; length <= counts.size(); ++length) {
    int64_t begin = counts[length - 1],
            end = length < counts.size() ? counts[length] : int64_t(pool.size());
    if (begin > end || end > int64_t(pool.size()) || (end - begin) % int64_t(length))
      throw ImportError("ngram_counts does not split the pool into whole n-grams");
    for (int64_t at = begin; at < end; at += length, ++gramId) {
      if (gramId >= int64_t(slots.size()) || slots[gramId] < 0 ||
          slots[gramId] >= kMaxBuiltConstantElements)
        throw ImportError("ngram_indexes must give each n-gram an output slot in range");
      outputSize = std::max(outputSize, slots[gramId] + 1);
      if (int64_t(length) >= minLength && int64_t(length) <= maxLength)
        slotOf[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + length)] =
            slots[gramId];
    }
  }
  std::map<int64_t, GramSet> byLength;
  for (auto &[gram, slot] : slotOf) {
    byLength[gram.size()].grams.push_back(gram);
    byLength[gram.size()].slots.push_back(slot);
  }
  return byLength;
}

// Windows x[i], x[i+d], ..., x[i+(n-1)d] per row, compared with every pool n-gram of length n
// at once; the matches counted for each skip distance d (unigrams once, at d = 1, as the
// reference counts them) and summed into their output slots by a constant 0/1 matrix. Then
// TF keeps the counts, IDF marks presence, both scaled by the weights where given.
OpImport tfIdfVectorizer() {
  return {{}, [](NodeImporter &n) -> Value {
            auto xType = n.inputType(0);
            Type token = xType.getElementType();
            if (!token.isInteger(32) && !token.isInteger(64))
              throw ImportError("needs int32 or int64 tokens (string tokens are not supported)");
            if (xType.getRank() > 2)
              throw ImportError("input must be [C] or [B, C]");
            int64_t minLength = n.intAttr("min_gram_length", 0),
                    maxLength = n.intAttr("max_gram_length", 0),
                    maxSkip = n.intAttr("max_skip_count", 0);
            if (minLength < 1 || maxLength < minLength || maxSkip < 0)
              throw ImportError("needs 1 <= min_gram_length <= max_gram_length and "
                                "max_skip_count >= 0");
            std::string mode = n.stringAttr("mode", "");
            if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
              throw ImportError("mode must be TF, IDF or TFIDF, got '" + mode + "'");
            int64_t outputSize = 0;
            std::map<int64_t, GramSet> byLength = poolGrams(n, minLength, maxLength, outputSize);
            // An int32 token never equals a pool entry outside int32's range: such a gram's
            // slot stays 0.
            if (token.isInteger(32))
              for (auto &[length, set] : byLength)
                for (size_t g = set.grams.size(); g-- > 0;)
                  if (llvm::any_of(set.grams[g], [](int64_t v) {
                        return v < std::numeric_limits<int32_t>::min() ||
                               v > std::numeric_limits<int32_t>::max();
                      })) {
                    set.grams.erase(set.grams.begin() + g);
                    set.slots.erase(set.slots.begin() + g);
                  }
            std::vector<float> weights;
            for (double w : n.floatsAttr("weights"))
              weights.push_back(float(w));
            if (!weights.empty() && int64_t(weights.size()) < outputSize)
              throw ImportError("weights has " + std::to_string(weights.size()) +
                                " values for " + std::to_string(outputSize) + " output slots");
            weights.resize(weights.empty() ? 0 : outputSize);

            int64_t rows = xType.getRank() == 2 ? xType.getDimSize(0) : 1;
            int64_t columns = xType.getRank() == 0 ? 1 : xType.getShape().back();
            Value tokens = reshape(n, n.input(0), {rows, columns, 1});
            Type f32 = n.b.getF32Type();
            Value counts = broadcastTo(n, scalar(n, 0, f32), {rows, outputSize});
            int64_t windowsBuilt = 0;
            for (auto &[length, set] : byLength) {
              int64_t grams = set.grams.size();
              if (!grams)
                continue;
              if (grams * outputSize > kMaxBuiltConstantElements)
                throw ImportError("the pool's output table is too large to build");
              Value matches;
              int64_t maxDistance = length == 1 ? 1 : std::min(maxSkip, columns) + 1;
              for (int64_t distance = 1; distance <= maxDistance; ++distance) {
                int64_t windows = columns - (length - 1) * distance;
                if (windows <= 0)
                  break;
                if (++windowsBuilt > 4096)
                  throw ImportError("too many n-gram lengths and skips to unroll");
                Value match;
                for (int64_t k = 0; k < length; ++k) {
                  std::vector<int64_t> column;
                  for (const auto &gram : set.grams)
                    column.push_back(gram[k]);
                  Value pattern =
                      token.isInteger(64)
                          ? tableConstant<int64_t>(n, {1, 1, grams}, token, ArrayRef(column))
                          : tableConstant<int32_t>(n, {1, 1, grams}, token, ArrayRef(column));
                  Value equal = comparison<EqualOp>(
                      n, sliceAxis(n, tokens, 1, k * distance, 1, windows), pattern);
                  match = match ? bin<AndOp>(n, match, equal) : equal;
                }
                Value found = red<ReduceSumOp>(n, castTo(n, match, f32), {1}, false);
                matches = matches ? bin<AddOp>(n, matches, found) : found;
              }
              if (!matches)
                continue;
              std::vector<float> toSlots(grams * outputSize, 0.0f);
              for (int64_t g = 0; g < grams; ++g)
                toSlots[g * outputSize + set.slots[g]] = 1.0f;
              Value slotTable =
                  tableConstant<float>(n, {grams, outputSize}, f32, ArrayRef(toSlots));
              counts = bin<AddOp>(n, counts, matmulOf(n, matches, slotTable));
            }
            Value result = counts;
            if (mode == "IDF")
              result = castTo(n, comparison<GreaterOp>(n, counts, scalar(n, 0, f32)), f32);
            if (mode != "TF" && !weights.empty())
              result = bin<MulOp>(n, result,
                                  tableConstant<float>(n, {outputSize}, f32, ArrayRef(weights)));
            return xType.getRank() == 2 ? result : reshape(n, result, {outputSize});
          }};
}

} // namespace

void addMlImports(ImportTable &table) {
  table.insert({
      {"TfIdfVectorizer", tfIdfVectorizer()},
      {"ai.onnx.ml.Binarizer", binarizer()},
      {"ai.onnx.ml.ArrayFeatureExtractor", arrayFeatureExtractor()},
  });
}

} // namespace dlc
