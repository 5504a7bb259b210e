// How the com.microsoft ops that ONNX Runtime's transformer optimizer writes (fused attention,
// skip and embedding layer norms, the GELU family, FusedMatMul, FusedGemm, rotary embedding)
// become dlc ops: each is a composition of the ops its ONNX form would import to, so kernels,
// planning and gradients come with it. The semantics are ONNX Runtime's CPU kernels' (its
// ContribOperators documentation, checked against the kernels where they differ).
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace dlc {
namespace {

// The fill ONNX Runtime's attention adds for keys a causal mask hides, whatever
// mask_filter_value says (a padded and hidden key gets this value, not the sum).
constexpr double kLowestFloat = -std::numeric_limits<float>::max();

void requireInputs(NodeImporter &n, std::initializer_list<int> inputs) {
  for (int i : inputs)
    if (!n.hasInput(i))
      throw ImportError("input #" + std::to_string(i) + " is required");
}

// x + bias when the node has input `biasInput`.
Value withBias(NodeImporter &n, Value x, int biasInput) {
  if (!n.hasInput(biasInput))
    return x;
  Value sum = bin<AddOp>(n, x, n.input(biasInput));
  if (typeOf(sum) != typeOf(x))
    throw ImportError("the bias " + dimsString(n.inputType(biasInput).getShape()) +
                      " does not broadcast onto " + dimsString(typeOf(x).getShape()));
  return sum;
}

// 0, 1, ..., count - 1 laid along the last of `rank` dims.
Value positions(NodeImporter &n, int64_t count, int64_t rank) {
  if (count > kMaxBuiltConstantElements)
    throw ImportError("too many positions to build (" + std::to_string(count) + ")");
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = i;
  SmallVector<int64_t> shape(rank, 1);
  shape.back() = count;
  return int64Constant(n, shape, values, "positions");
}

// ---- Activations

OpImport geluFamily(bool tanhApproximation, int biasInput) {
  return {{}, [=](NodeImporter &n) -> Value {
            requireFloat32(n);
            Value x = biasInput >= 0 ? withBias(n, n.input(0), biasInput) : n.input(0);
            return geluOf(n, x, tanhApproximation);
          }};
}

// x * sigmoid(alpha x); alpha 1 is SiLU (ONNX Runtime fuses x * Sigmoid(x) into it).
OpImport quickGelu() {
  return floatComposition([](NodeImporter &n, Value x, Type f) {
    double alpha = n.floatAttr("alpha", 1.702f);
    Value scaled = alpha == 1.0 ? x : bin<MulOp>(n, x, scalar(n, alpha, f));
    return bin<MulOp>(n, x, un<SigmoidOp>(n, scaled));
  });
}

// X + bias + skip.
OpImport biasAdd() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            requireInputs(n, {1, 2});
            Value sum = bin<AddOp>(n, withBias(n, n.input(0), 1), n.input(2));
            if (typeOf(sum) != n.inputType(0))
              throw ImportError("skip must have the input's shape");
            return sum;
          }};
}

// ---- Products

// alpha * op(A) @ op(B), where op moves axis 0 before the last axis (transBatch) and then swaps
// the last two axes (trans); operands broadcast as MatMul's.
OpImport fusedMatMul() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto operand = [&](int i, const char *trans, const char *transBatch) {
              Value x = n.input(i);
              int64_t rank = typeOf(x).getRank();
              bool batch = n.intAttr(transBatch, 0) != 0, swap = n.intAttr(trans, 0) != 0;
              if ((batch || swap) && rank < 2)
                throw ImportError(std::string(trans) + "/" + transBatch +
                                  " need an operand of rank >= 2");
              SmallVector<int64_t> perm;
              for (int64_t d = 0; d < rank; ++d)
                perm.push_back(d);
              if (batch && rank > 2) {
                perm.erase(perm.begin());
                perm.insert(perm.end() - 1, 0);
              }
              if (swap)
                std::swap(perm[rank - 2], perm[rank - 1]);
              return llvm::is_sorted(perm) ? x : transposeValue(n, x, perm);
            };
            Value a = operand(0, "transA", "transBatchA"), b = operand(1, "transB", "transBatchB");
            Value product = matmulOf(n, a, b);
            double alpha = n.floatAttr("alpha", 1.0f);
            return alpha == 1.0 ? product
                                : bin<MulOp>(n, product, scalar(n, alpha, n.b.getF32Type()));
          }};
}

// activation(Gemm(A, B, C)) with the activation's own attributes as activation_*.
OpImport fusedGemm() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            Value y = gemmOf(n);
            std::string activation = n.stringAttr("activation", "");
            if (activation.empty())
              return y;
            // Their defaults as ONNX LeakyRelu and HardSigmoid have them.
            bool hardSigmoid = activation == "HardSigmoid";
            NamedActivation a{activation,
                              n.floatAttr("activation_alpha", hardSigmoid ? 0.2f : 0.01f),
                              n.floatAttr("activation_beta", 0.5f)};
            return activationOf(n, a, y);
          }};
}

// FastGelu(X @ W + bias).
OpImport gemmFastGelu() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            return geluOf(n, withBias(n, matmulOf(n, n.input(0), n.input(1)), 2), true);
          }};
}

// ---- Norms

// Output 0 normalizes s = input + skip (+ bias) over the last axis, scaled by gamma (and
// shifted by beta); then mean and inv_std_var (the reduced axis kept) and s itself, which
// pre-norm models carry on as the residual. The simplified form is the RMS norm, without beta
// and mean.
OpImport skipNorm(bool simplified) {
  return {{}, [simplified](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            requireInputs(n, {1, 2});
            Value x = n.input(0);
            Value sum = withBias(n, bin<AddOp>(n, x, n.input(1)), simplified ? 3 : 4);
            if (typeOf(sum) != typeOf(x))
              throw ImportError("skip " + dimsString(n.inputType(1).getShape()) +
                                " does not broadcast onto the input " +
                                dimsString(typeOf(x).getShape()));
            int64_t last = typeOf(x).getRank() - 1;
            double epsilon = n.floatAttr("epsilon", 1e-12f);
            Value y, mean, invStdDev;
            if (simplified) {
              std::tie(y, invStdDev) = rootMeanSquareNormalize(n, sum, {last}, epsilon);
              // ONNX Runtime leaves the mean of the simplified norm at zero.
              mean = broadcastTo(n, scalar(n, 0.0, n.b.getF32Type()),
                                 typeOf(invStdDev).getShape());
            } else {
              Standardized s = standardizeWithStatistics(n, sum, {last}, epsilon);
              y = s.y;
              mean = s.mean;
              invStdDev = s.invStdDev;
            }
            y = bin<MulOp>(n, y, n.input(2));
            if (!simplified && n.hasInput(3))
              y = bin<AddOp>(n, y, n.input(3));
            if (typeOf(y) != typeOf(x))
              throw ImportError("gamma and beta must broadcast onto the input's last axis");
            return {y, mean, invStdDev, sum};
          }};
}

// LayerNorm(word[ids] + position[position_ids or 0..S-1] + segment[segment_ids]), the count
// of mask entries equal to 1 per row as mask_index (int32 [B], zeros without a mask), and the
// sum before the norm.
OpImport embedLayerNorm() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireInputs(n, {0, 2, 3, 5, 6});
            auto ids = n.inputType(0).getShape();
            if (ids.size() != 2 || !n.inputType(0).getElementType().isInteger())
              throw ImportError("input_ids must be an integer [batch, sequence] tensor");
            for (int table : {2, 3, 4})
              if (n.hasInput(table))
                requireFloat32(n, table);
            int64_t batch = ids[0], length = ids[1];
            auto lookup = [&](int table, Value indices) {
              auto rows = n.inputType(table).getShape();
              if (rows.size() != 2)
                throw ImportError("embedding tables must be [rows, hidden]");
              SmallVector<int64_t> shape(typeOf(indices).getShape());
              shape.push_back(rows[1]);
              return n.b.create<GatherOp>(n.loc(), n.inputType(table).clone(shape), n.input(table),
                                          indices, 0)
                  .getResult();
            };
            Value sum = lookup(2, n.input(0));
            Value positionIds =
                n.hasInput(8) ? n.input(8) : reshape(n, positions(n, length, 1), {1, length});
            sum = bin<AddOp>(n, sum, lookup(3, positionIds));
            if (n.hasInput(1) != n.hasInput(4))
              throw ImportError("segment_ids and segment_embedding must be given together");
            if (n.hasInput(1))
              sum = bin<AddOp>(n, sum, lookup(4, n.input(1)));
            auto hidden = n.inputType(2).getShape()[1];
            if (typeOf(sum).getShape() != ArrayRef<int64_t>({batch, length, hidden}))
              throw ImportError("the embeddings do not add up to [batch, sequence, hidden]");
            Standardized s =
                standardizeWithStatistics(n, sum, {2}, n.floatAttr("epsilon", 1e-12f));
            Value y = bin<AddOp>(n, bin<MulOp>(n, s.y, n.input(5)), n.input(6));
            if (typeOf(y) != typeOf(sum))
              throw ImportError("gamma and beta must be [hidden]");
            Type i32 = n.b.getI32Type();
            Value maskIndex;
            if (n.hasInput(7)) {
              if (n.inputType(7).getShape() != ArrayRef<int64_t>({batch, length}))
                throw ImportError("mask must be [batch, sequence]");
              Type f = n.b.getF32Type();
              Value one = intScalar(n, 1, n.inputType(7).getElementType());
              Value ones = castTo(n, comparison<EqualOp>(n, n.input(7), one), f);
              maskIndex = castTo(n, red<ReduceSumOp>(n, ones, {1}, false), i32);
            } else {
              maskIndex = broadcastTo(n, intScalar(n, 0, i32), {batch});
            }
            return {y, maskIndex, sum};
          }};
}

// ---- Attention

// The additive mask of ONNX Runtime's attention over scores [B, N, S, T]: keys the padding
// mask removes get mask_filter_value, keys after the query's position (unidirectional) the
// lowest float instead. The padding mask is 1-D [B] (keys from that index on are padding),
// [2B] (ends, then starts), 2-D [B, T] or 3-D [B, S, T] (keys whose value is <= 0 are padding).
Value attentionMask(NodeImporter &n, int maskInput, int64_t batch, int64_t queries, int64_t keys,
                    int64_t past) {
  Type f = n.b.getF32Type();
  double fill = n.floatAttr("mask_filter_value", -10000.0f);
  Value bias;
  if (n.hasInput(maskInput)) {
    Value mask = n.input(maskInput);
    auto shape = typeOf(mask).getShape();
    Type element = typeOf(mask).getElementType();
    if (!element.isInteger(32))
      throw ImportError("the mask must be int32");
    Value padded; // bool, broadcast onto [B, 1, S or 1, T]
    Value keyIndex = positions(n, keys, 4);
    auto perBatch = [&](int64_t from) {
      Value lengths = castTo(n, sliceAxis(n, mask, 0, from, 1, batch), n.b.getI64Type());
      return reshape(n, lengths, {batch, 1, 1, 1});
    };
    if (shape == ArrayRef<int64_t>({batch})) {
      padded = comparison<GreaterEqualOp>(n, keyIndex, perBatch(0));
    } else if (shape == ArrayRef<int64_t>({2 * batch})) {
      padded = bin<OrOp>(n, comparison<GreaterEqualOp>(n, keyIndex, perBatch(0)),
                         comparison<LessOp>(n, keyIndex, perBatch(batch)));
    } else if (shape == ArrayRef<int64_t>({batch, keys}) ||
               shape == ArrayRef<int64_t>({batch, queries, keys})) {
      Value rows = reshape(n, mask, {batch, 1, shape.size() == 3 ? queries : 1, keys});
      padded = comparison<LessEqualOp>(n, rows, intScalar(n, 0, element));
    } else {
      throw ImportError("mask " + dimsString(shape) + " is none of [" + std::to_string(batch) +
                        "], [" + std::to_string(2 * batch) + "], [" + std::to_string(batch) +
                        ", " + std::to_string(keys) + "] and [" + std::to_string(batch) + ", " +
                        std::to_string(queries) + ", " + std::to_string(keys) + "]");
    }
    bias = n.b.create<WhereOp>(n.loc(), typeOf(padded).clone(f), padded, scalar(n, fill, f),
                               scalar(n, 0.0, f));
  }
  if (n.intAttr("unidirectional", 0)) {
    Value hidden = boolMask(n, {queries, keys}, [&](int64_t i) {
      return i % keys > past + i / keys;
    });
    Value open = bias ? bias : scalar(n, 0.0, f);
    auto shape = broadcastShapes(typeOf(hidden).getShape(), typeOf(open).getShape());
    if (failed(shape))
      throw ImportError("the mask does not broadcast onto [" + std::to_string(queries) + ", " +
                        std::to_string(keys) + "]");
    bias = n.b.create<WhereOp>(n.loc(), RankedTensorType::get(*shape, f), hidden,
                               scalar(n, kLowestFloat, f), open);
  }
  return bias;
}

// softmax(scale q k^T + attention_bias + mask) v over heads: q [B, N, S, H], k and v
// [B, N, T, H]; the result as [B, S, N * Hv].
Value attend(NodeImporter &n, Value q, Value k, Value v, int maskInput, int biasInput,
             int64_t past) {
  auto qs = typeOf(q).getShape(), ks = typeOf(k).getShape(), vs = typeOf(v).getShape();
  int64_t batch = qs[0], heads = qs[1], queries = qs[2], keys = ks[2];
  if (ks[0] != batch || vs[0] != batch || ks[1] != heads || vs[1] != heads || ks[3] != qs[3] ||
      vs[2] != keys)
    throw ImportError("query, key and value do not fit: " + dimsString(qs) + ", " +
                      dimsString(ks) + ", " + dimsString(vs));
  Type f = n.b.getF32Type();
  double scale = n.floatAttr("scale", 0.0f);
  if (scale == 0.0)
    scale = 1.0 / std::sqrt(double(qs[3]));
  Value scores = n.b.create<MatMulOp>(n.loc(), typeOf(q).clone({batch, heads, queries, keys}), q,
                                      transposeValue(n, k, {0, 1, 3, 2}));
  scores = bin<MulOp>(n, scores, scalar(n, scale, f));
  auto scoreType = typeOf(scores);
  if (n.hasInput(biasInput))
    scores = bin<AddOp>(n, scores, n.input(biasInput));
  if (Value mask = attentionMask(n, maskInput, batch, queries, keys, past))
    scores = bin<AddOp>(n, scores, mask);
  if (typeOf(scores) != scoreType)
    throw ImportError("attention_bias or the mask does not broadcast onto the scores " +
                      dimsString(scoreType.getShape()));
  Value probabilities = n.b.create<SoftmaxOp>(n.loc(), scoreType, scores, 3, false);
  Value y = n.b.create<MatMulOp>(n.loc(), scoreType.clone({batch, heads, queries, vs[3]}),
                                 probabilities, v);
  return reshape(n, transposeValue(n, y, {0, 2, 1, 3}), {batch, queries, heads * vs[3]});
}

void refuseAttributes(NodeImporter &n, std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (n.intAttr(name, 0))
      throw ImportError(std::string("attribute '") + name + "' is not supported");
}

// Attention: input [B, S, Din] projected by one weight [Din, Dq + Dk + Dv] (and bias) into
// q, k and v, with an optional past [2, B, N, P, H] put before k and v; present is the two
// concatenated.
OpImport msAttention() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            requireInputs(n, {1});
            refuseAttributes(n, {"do_rotary", "past_present_share_buffer"});
            if (n.hasInput(6))
              throw ImportError("past_sequence_length is not supported");
            int64_t heads = n.intAttr("num_heads", 0);
            auto in = n.inputType(0).getShape(), w = n.inputType(1).getShape();
            if (in.size() != 3 || w.size() != 2)
              throw ImportError("input must be [batch, sequence, hidden] and weights a matrix");
            std::vector<int64_t> sizes = n.intsAttr("qkv_hidden_sizes");
            if (sizes.empty())
              sizes.assign(3, w[1] / 3);
            if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != w[1])
              throw ImportError("the weights' " + std::to_string(w[1]) +
                                " columns do not split into q, k and v of qkv_hidden_sizes " +
                                dimsString(sizes));
            Value qkv = withBias(n, matmulOf(n, n.input(0), n.input(1)), 2);
            Value q = splitHeads(n, sliceAxis(n, qkv, 2, 0, 1, sizes[0]), heads, "Q");
            Value k = splitHeads(n, sliceAxis(n, qkv, 2, sizes[0], 1, sizes[1]), heads, "K");
            Value v = splitHeads(n, sliceAxis(n, qkv, 2, sizes[0] + sizes[1], 1, sizes[2]), heads,
                                 "V");
            int64_t past = 0;
            if (n.hasInput(4)) {
              auto ps = n.inputType(4).getShape();
              auto ks = typeOf(k).getShape();
              if (ps.size() != 5 || ps[0] != 2 || ps[1] != ks[0] || ps[2] != heads ||
                  ps[4] != ks[3] || sizes[1] != sizes[2])
                throw ImportError("past " + dimsString(ps) + " is not [2, " +
                                  std::to_string(ks[0]) + ", " + std::to_string(heads) +
                                  ", past, " + std::to_string(ks[3]) + "]");
              past = ps[3];
              auto half = [&](int64_t i) {
                return reshape(n, sliceAxis(n, n.input(4), 0, i, 1, 1), ArrayRef(ps).drop_front());
              };
              k = concatAxis(n, {half(0), k}, 2);
              v = concatAxis(n, {half(1), v}, 2);
            }
            Value y = attend(n, q, k, v, 3, 5, past);
            Value present = sizes[1] == sizes[2]
                                ? concatAxis(n, {insertUnitDim(n, k, 0), insertUnitDim(n, v, 0)}, 0)
                                : Value();
            if (!present)
              return {y};
            return {y, present};
          }};
}

// MultiHeadAttention: q, k and v already projected ([B, S, D]; k and v may come as
// [B, N, L, H], used as they are), a packed bias [bq | bk | bv] added inside, optional
// past_key and past_value [B, N, P, H] put before k and v.
OpImport multiHeadAttention() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            if (!n.hasInput(1) || !n.hasInput(2) || n.inputType(0).getRank() != 3)
              throw ImportError("packed q/k/v forms are not supported (query, key and value "
                                "must be given separately)");
            if (n.hasInput(8) || n.hasInput(9))
              throw ImportError("past_sequence_length and cache_indirection are not supported");
            int64_t heads = n.intAttr("num_heads", 0);
            int64_t hidden = n.inputType(0).getDimSize(2);
            Value q = n.input(0), k = n.input(1), v = n.input(2);
            bool projectedKv = n.inputType(1).getRank() == 3;
            if (n.hasInput(3)) {
              auto bs = n.inputType(3).getShape();
              int64_t kvHidden = projectedKv ? n.inputType(1).getDimSize(2) : 0;
              int64_t vHidden = projectedKv ? n.inputType(2).getDimSize(2) : 0;
              if (bs.size() != 1 || (projectedKv && bs[0] != hidden + kvHidden + vHidden))
                throw ImportError("bias " + dimsString(bs) + " is not [bq | bk | bv]");
              q = bin<AddOp>(n, q, sliceAxis(n, n.input(3), 0, 0, 1, hidden));
              if (projectedKv) {
                k = bin<AddOp>(n, k, sliceAxis(n, n.input(3), 0, hidden, 1, kvHidden));
                v = bin<AddOp>(n, v, sliceAxis(n, n.input(3), 0, hidden + kvHidden, 1, vHidden));
              }
            }
            q = splitHeads(n, q, heads, "query");
            if (projectedKv) {
              k = splitHeads(n, k, heads, "key");
              v = splitHeads(n, v, heads, "value");
            } else if (n.inputType(1).getRank() != 4 || n.inputType(2).getRank() != 4) {
              throw ImportError("key and value must both be [B, L, D] or both [B, N, L, H]");
            }
            int64_t past = 0;
            if (n.hasInput(6) != n.hasInput(7))
              throw ImportError("past_key and past_value must be given together");
            if (n.hasInput(6)) {
              past = n.inputType(6).getDimSize(2);
              k = concatAxis(n, {n.input(6), k}, 2);
              v = concatAxis(n, {n.input(7), v}, 2);
            }
            return {attend(n, q, k, v, 4, 5, past), k, v};
          }};
}

// Rotates each head's first rotary_embedding_dim features by cos_cache and sin_cache
// [max position, R/2] at position_ids ([B, S], or [1]: the first position, then one per
// token); input [B, S, N * H] or [B, N, S, H]. ONNX's RotaryEmbedding (opset 23) computes the
// same once the caches are gathered.
OpImport msRotaryEmbedding() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            requireInputs(n, {1, 2, 3});
            if (n.intAttr("is_packed_batching", 0))
              throw ImportError("packed batching is not supported");
            if (n.floatAttr("scale", 1.0f) != 1.0f)
              throw ImportError("scale other than 1 is not supported");
            auto shape = n.inputType(0).getShape();
            if (shape.size() != 3 && shape.size() != 4)
              throw ImportError("input must be [B, S, N * H] or [B, N, S, H]");
            int64_t batch = shape[0], length = shape.size() == 3 ? shape[1] : shape[2];
            auto cache = n.inputType(2).getShape();
            if (cache.size() != 2 || n.inputType(3).getShape() != cache)
              throw ImportError("cos_cache and sin_cache must both be [positions, R/2]");
            int64_t rotated = n.intAttr("rotary_embedding_dim", 0);
            if (rotated == 0)
              rotated = 2 * cache[1];
            if (rotated != 2 * cache[1])
              throw ImportError("the caches hold " + std::to_string(cache[1]) +
                                " angles per position, not rotary_embedding_dim / 2");
            int64_t heads = n.intAttr("num_heads", 0);
            if (shape.size() == 3 && heads == 0) {
              if (shape[2] % rotated)
                throw ImportError("num_heads is needed: the head size is not the rotated size");
              heads = shape[2] / rotated;
            }
            Value ids = n.input(1);
            auto idShape = n.inputType(1).getShape();
            if (idShape == ArrayRef<int64_t>({1})) {
              Value start = castTo(n, reshape(n, ids, {1, 1}), n.b.getI64Type());
              ids = broadcastTo(n, bin<AddOp>(n, start, positions(n, length, 2)), {batch, length});
            } else if (idShape != ArrayRef<int64_t>({batch, length})) {
              throw ImportError("position_ids must be [batch, sequence] or [1]");
            }
            auto gathered = [&](int input) {
              return n.b.create<GatherOp>(n.loc(),
                                          n.inputType(input).clone({batch, length, cache[1]}),
                                          n.input(input), ids, 0)
                  .getResult();
            };
            return rotaryEmbeddingOf(n, n.input(0), gathered(2), gathered(3), heads, rotated,
                                     n.intAttr("interleaved", 0) != 0);
          }};
}

} // namespace

void addOrtContribImports(ImportTable &table) {
  const std::string ms = "com.microsoft.";
  const std::map<std::string, OpImport> ops = {
      {"Gelu", geluFamily(false, -1)},
      {"BiasGelu", geluFamily(false, 1)},
      {"FastGelu", geluFamily(true, 1)},
      {"QuickGelu", quickGelu()},
      {"BiasAdd", biasAdd()},
      {"FusedMatMul", fusedMatMul()},
      {"FusedGemm", fusedGemm()},
      {"GemmFastGelu", gemmFastGelu()},
      {"SkipLayerNormalization", skipNorm(false)},
      {"SkipSimplifiedLayerNormalization", skipNorm(true)},
      {"EmbedLayerNormalization", embedLayerNorm()},
      {"Attention", msAttention()},
      {"MultiHeadAttention", multiHeadAttention()},
      {"RotaryEmbedding", msRotaryEmbedding()},
  };
  for (const auto &[name, import] : ops)
    table.insert({ms + name, import});
}

std::string whyNotImported(const std::string &op) {
  static const std::map<std::string, std::string> reasons = [] {
    std::map<std::string, std::string> r;
    for (const char *name : {"DynamicQuantizeLSTM", "DynamicQuantizeMatMul", "MatMulIntegerToFloat",
                             "MatMulNBits", "QAttention", "QGemm", "QLinearAdd", "QLinearMul",
                             "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax",
                             "QLinearConcat", "QLinearAveragePool", "QLinearGlobalAveragePool",
                             "QLinearConv", "QLinearWhere"})
      r[std::string("com.microsoft.") + name] =
          std::string(name) + " is a quantized contrib op: dlc has no integer kernels yet; "
                              "compile the float model";
    for (const char *name : {"Conv", "ReorderInput", "ReorderOutput", "MaxPool", "AveragePool",
                             "GlobalMaxPool", "GlobalAveragePool", "Upsample"})
      r[std::string("com.microsoft.nchwc.") + name] =
          "ONNX Runtime's NCHWc layout ops hold weights blocked for the CPU the optimizer ran "
          "on: save the model at --opt_level 2 or lower";
    return r;
  }();
  auto it = reasons.find(op);
  return it == reasons.end() ? "" : it->second;
}

} // namespace dlc
