// How ONNX Attention (opset 23 on) becomes dlc ops: scaled dot-product attention written with
// MatMul, Softmax and masks, so kernels, planning and gradients come with it.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace dlc {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// 0 where allowed, -inf elsewhere.
Value maskToBias(NodeImporter &n, Value allowed, Type f) {
  return n.b.create<WhereOp>(n.loc(), typeOf(allowed).clone(f), allowed, scalar(n, 0.0, f),
                             scalar(n, kMinusInfinity, f));
}

// The causal and sliding-window masks: key j is visible to query i by `offset + i - j`, where
// the offset is a constant (past length) or, with nonpad_kv_seqlen, per batch at run time.
struct Frontier {
  int64_t q, kv, offset = 0;
  Value perBatchOffset; // [B, 1, 1, 1] int64, or null

  Value difference(NodeImporter &n) const {
    if (dimsProduct({q, kv}) > kMaxBuiltConstantElements)
      throw ImportError("the " + std::to_string(q) + " x " + std::to_string(kv) +
                        " attention mask is too large to build");
    std::vector<int64_t> values;
    for (int64_t i = 0; i < q; ++i)
      for (int64_t j = 0; j < kv; ++j)
        values.push_back(offset + i - j);
    Value d = int64Constant(n, {q, kv}, values, "attention_positions");
    return perBatchOffset ? bin<AddOp>(n, d, perBatchOffset) : d;
  }
};

// Each of a key head's `group` query heads reads that head's [B, H_kv, ...] slice.
Value repeatHeads(NodeImporter &n, Value x, int64_t heads, int64_t kvHeads) {
  if (heads == kvHeads)
    return x;
  std::vector<int64_t> groupOf;
  for (int64_t h = 0; h < heads; ++h)
    groupOf.push_back(h / (heads / kvHeads));
  SmallVector<int64_t> shape(typeOf(x).getShape());
  shape[1] = heads;
  return n.b.create<GatherOp>(n.loc(), typeOf(x).clone(shape), x,
                              int64Constant(n, {heads}, groupOf, "attention_groups"), 1);
}

OpImport attention() {
  return {
      {}, [](NodeImporter &n) -> OpImport::Results {
        requireFloat32(n);
        Value q = n.input(0), k = n.input(1), v = n.input(2);
        Type f = typeOf(q).getElementType();
        int64_t rank = typeOf(q).getRank();
        if (rank != 3 && rank != 4)
          throw ImportError("Q must have rank 3 or 4");
        if (typeOf(k).getRank() != rank || typeOf(v).getRank() != rank)
          throw ImportError("Q, K and V must have the same rank");
        if (rank == 3) {
          int64_t qHeads = n.intAttr("q_num_heads", 0), kvHeads = n.intAttr("kv_num_heads", 0);
          q = splitHeads(n, q, qHeads, "Q");
          k = splitHeads(n, k, kvHeads, "K");
          v = splitHeads(n, v, kvHeads, "V");
        }
        auto qs = typeOf(q).getShape();
        int64_t batch = qs[0], heads = qs[1], qLength = qs[2];
        if (n.hasInput(4) != n.hasInput(5))
          throw ImportError("past_key and past_value must be given together");
        bool hasNonpad = n.version >= 24 && n.hasInput(6);
        if (hasNonpad && n.hasInput(4))
          throw ImportError("nonpad_kv_seqlen cannot be combined with past_key/past_value");
        int64_t past = 0;
        if (n.hasInput(4)) {
          past = n.inputType(4).getDimSize(2);
          k = concatAxis(n, {n.input(4), k}, 2);
          v = concatAxis(n, {n.input(5), v}, 2);
        }
        Value presentKey = k, presentValue = v;
        auto ks = typeOf(k).getShape(), vs = typeOf(v).getShape();
        if (ks[0] != batch || vs[0] != batch || ks[3] != qs[3] || ks[2] != vs[2] || ks[1] != vs[1])
          throw ImportError("Q, K and V (with the past) do not fit: " + dimsString(qs) + ", " +
                            dimsString(ks) + ", " + dimsString(vs));
        int64_t kvLength = ks[2], kvHeads = ks[1];
        if (heads % kvHeads)
          throw ImportError(std::to_string(heads) + " query heads do not group over " +
                            std::to_string(kvHeads) + " key/value heads");

        // The additive bias over [q, kv]: mask, causal frontier, window, key padding.
        SmallVector<Value> biases;
        if (n.hasInput(3)) {
          Value mask = n.input(3);
          auto ms = typeOf(mask).getShape();
          if (ms.empty() || ms.back() > kvLength)
            throw ImportError("attn_mask " + dimsString(ms) + " does not fit " +
                              std::to_string(kvLength) + " keys");
          bool isBool = typeOf(mask).getElementType().isInteger(1);
          if (!isBool && typeOf(mask).getElementType() != f)
            throw ImportError("attn_mask must be bool or Q's element type");
          if (ms.back() < kvLength) { // masks cover the keys before the padding
            SmallVector<int64_t> padShape(ms);
            padShape.back() = kvLength - ms.back();
            Value fill =
                isBool ? broadcastTo(n, intScalar(n, 0, typeOf(mask).getElementType()), padShape)
                       : broadcastTo(n, scalar(n, kMinusInfinity, f), padShape);
            mask = concatAxis(n, {mask, fill}, ms.size() - 1);
          }
          biases.push_back(isBool ? maskToBias(n, mask, f) : mask);
        }
        Frontier frontier{qLength, kvLength, past, Value()};
        Value nonpad;
        if (hasNonpad) {
          nonpad = reshape(n, castTo(n, n.input(6), n.b.getI64Type()), {batch, 1, 1, 1});
          frontier.perBatchOffset = bin<SubOp>(n, nonpad, intScalar(n, qLength, n.b.getI64Type()));
        }
        Type i64 = n.b.getI64Type();
        Value allowed;
        auto require = [&](Value condition) {
          allowed = allowed ? bin<AndOp>(n, allowed, condition) : condition;
        };
        if (n.intAttr("is_causal", 0))
          require(comparison<GreaterEqualOp>(n, frontier.difference(n), intScalar(n, 0, i64)));
        int64_t left = n.intAttr("left_window_size", -1),
                right = n.intAttr("right_window_size", -1);
        if (left < -1 || right < -1)
          throw ImportError("window sizes must be -1 or non-negative");
        if (left >= 0)
          require(comparison<LessEqualOp>(n, frontier.difference(n), intScalar(n, left, i64)));
        if (right >= 0)
          require(comparison<GreaterEqualOp>(n, frontier.difference(n), intScalar(n, -right, i64)));
        if (nonpad) {
          if (kvLength > kMaxBuiltConstantElements)
            throw ImportError("too many keys to mask");
          std::vector<int64_t> keys(kvLength);
          for (int64_t j = 0; j < kvLength; ++j)
            keys[j] = j;
          require(
              comparison<LessOp>(n, int64Constant(n, {kvLength}, keys, "attention_keys"), nonpad));
        }
        if (allowed)
          biases.push_back(maskToBias(n, allowed, f));

        // Grouped-query attention: each K/V head serves a group of query heads.
        k = repeatHeads(n, k, heads, kvHeads);
        v = repeatHeads(n, v, heads, kvHeads);

        // Q and K are each scaled by sqrt(scale), as the reference does.
        double scale = n.attr("scale") ? n.floatAttr("scale", 1.0f) : 1.0 / std::sqrt(qs[3]);
        Value rootScale = scalar(n, std::sqrt(scale), f);
        Value keysT = transposeValue(n, bin<MulOp>(n, k, rootScale), {0, 1, 3, 2});
        Value scores =
            n.b.create<MatMulOp>(n.loc(), typeOf(q).clone({batch, heads, qLength, kvLength}),
                                 bin<MulOp>(n, q, rootScale), keysT);
        double softcap = n.floatAttr("softcap", 0.0f);
        if (softcap > 0)
          scores = bin<MulOp>(n, un<TanhOp>(n, bin<DivOp>(n, scores, scalar(n, softcap, f))),
                              scalar(n, softcap, f));
        Value qkOutput = scores, biased = scores;
        for (Value bias : biases)
          biased = bin<AddOp>(n, biased, bias);
        if (typeOf(biased) != typeOf(scores))
          throw ImportError("attn_mask does not broadcast to the scores " +
                            dimsString(typeOf(scores).getShape()));
        int64_t mode = n.intAttr("qk_matmul_output_mode", 0);
        if (mode < 0 || mode > 3)
          throw ImportError("qk_matmul_output_mode must be 0 to 3");
        if (mode == 2)
          qkOutput = biased;
        Value probabilities = n.b.create<SoftmaxOp>(n.loc(), typeOf(biased), biased, 3, false);
        if (!biases.empty()) {
          // A row whose keys are all masked attends to nothing (softmax would be 0/0).
          Value bias = biases[0];
          for (Value b : ArrayRef<Value>(biases).drop_front())
            bias = bin<AddOp>(n, bias, b);
          Value rowMax = red<ReduceMaxOp>(n, bias, {typeOf(bias).getRank() - 1}, true);
          Value masked = comparison<EqualOp>(n, rowMax, scalar(n, kMinusInfinity, f));
          probabilities = n.b.create<WhereOp>(n.loc(), typeOf(probabilities), masked,
                                              scalar(n, 0.0, f), probabilities);
        }
        if (mode == 3)
          qkOutput = probabilities;
        Value y = n.b.create<MatMulOp>(
            n.loc(), typeOf(q).clone({batch, heads, qLength, typeOf(v).getDimSize(3)}),
            probabilities, v);
        if (rank == 3)
          y = reshape(n, transposeValue(n, y, {0, 2, 1, 3}),
                      {batch, qLength, heads * typeOf(v).getDimSize(3)});
        return {y, presentKey, presentValue, qkOutput};
      }};
}

// ONNX RotaryEmbedding: the caches are [B, S, rotary_embedding_dim / 2], or rows of a
// [positions, rotary_embedding_dim / 2] table picked by position_ids.
OpImport rotaryEmbedding() {
  return {{}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto shape = n.inputType(0).getShape();
            int64_t heads = shape.size() == 4 ? shape[1] : n.intAttr("num_heads", 0);
            if (shape.size() == 3 && (heads <= 0 || shape[2] % heads))
              throw ImportError("num_heads must divide the hidden size");
            int64_t head = shape.size() == 4 ? shape[3] : shape[2] / heads;
            int64_t rotated = n.intAttr("rotary_embedding_dim", 0);
            if (rotated == 0)
              rotated = head;
            int64_t batch = shape[0], length = shape.size() == 4 ? shape[2] : shape[1];
            auto angles = [&](int input) {
              Value cache = n.input(input);
              if (n.hasInput(3)) // rows of the cache picked by position
                cache = n.b.create<GatherOp>(
                    n.loc(), typeOf(cache).clone({batch, length, typeOf(cache).getDimSize(1)}),
                    cache, n.input(3), 0);
              return cache;
            };
            return rotaryEmbeddingOf(n, n.input(0), angles(1), angles(2), heads, rotated,
                                     n.intAttr("interleaved", 0) != 0);
          }};
}

// [B, T, last] holding one value per head (or one shared by all when last is 1) ->
// [B, last, T, 1].
Value headScalars(NodeImporter &n, Value x) {
  auto s = typeOf(x).getShape();
  return transposeValue(n, reshape(n, x, {s[0], s[1], s[2], 1}), {0, 2, 1, 3});
}

// LinearAttention: the recurrence S_t = exp(g_t) S_{t-1} + k_t (beta_t (v_t - exp(g_t)
// S_{t-1}^T k_t))^T, o_t = scale q_t^T S_t (decay and the delta correction per update_rule),
// unrolled over the static sequence. The state is float32 [B, H_kv, d_k, d_v]; query heads
// read their key head's state.
OpImport linearAttention() {
  return {{}, [](NodeImporter &n) -> OpImport::Results {
            for (int i : {0, 1, 2})
              requireFloat32(n, i);
            std::string rule = n.stringAttr("update_rule", "gated_delta");
            if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
              throw ImportError("unknown update_rule '" + rule + "'");
            bool gated = rule == "gated" || rule == "gated_delta";
            bool delta = rule == "delta" || rule == "gated_delta";
            if (gated != n.hasInput(4) || delta != n.hasInput(5))
              throw ImportError("update_rule '" + rule + "' " +
                                (gated ? "needs" : "takes no") + " decay and " +
                                (delta ? "needs" : "takes no") + " beta");
            int64_t heads = n.intAttr("q_num_heads", 0), kvHeads = n.intAttr("kv_num_heads", 0);
            if (heads <= 0 || kvHeads <= 0 || heads % kvHeads)
              throw ImportError("q_num_heads must be a positive multiple of kv_num_heads");
            for (int i : {0, 1, 2})
              if (n.inputType(i).getRank() != 3)
                throw ImportError("query, key and value must have rank 3");
            Value q = splitHeads(n, n.input(0), heads, "query"),
                  k = splitHeads(n, n.input(1), kvHeads, "key"),
                  v = splitHeads(n, n.input(2), kvHeads, "value");
            auto qs = typeOf(q).getShape(), ks = typeOf(k).getShape(), vs = typeOf(v).getShape();
            int64_t batch = qs[0], steps = qs[2], dk = qs[3], dv = vs[3];
            if (ks[0] != batch || vs[0] != batch || ks[2] != steps || vs[2] != steps ||
                ks[3] != dk)
              throw ImportError("query, key and value disagree on batch, length or d_k");
            if (steps > kMaxUnrolledSteps)
              throw ImportError("sequences longer than " + std::to_string(kMaxUnrolledSteps) +
                                " steps are not supported");
            Type f = n.b.getF32Type();
            SmallVector<int64_t> stateShape{batch, kvHeads, dk, dv};
            Value state; // null while it is all zeros
            if (n.hasInput(3)) {
              requireFloat32(n, 3);
              if (n.inputType(3).getShape() != ArrayRef<int64_t>(stateShape))
                throw ImportError("past_state must be " + dimsString(stateShape));
              state = n.input(3);
            }
            Value decay, beta;
            for (int i : {4, 5})
              if (n.hasInput(i)) {
                requireFloat32(n, i);
                auto shape = n.inputType(i).getShape();
                if (shape.size() != 3 || shape[0] != batch || shape[1] != steps)
                  throw ImportError(std::string(i == 4 ? "decay" : "beta") +
                                    " must be [batch, length, ...]");
              }
            if (gated) {
              int64_t last = n.inputType(4).getShape().back();
              if (last != kvHeads && last != kvHeads * dk)
                throw ImportError("decay's last dim must be kv_num_heads or kv_num_heads * d_k");
              // [B, H_kv, T, 1 or d_k], exponentiated once.
              decay = un<ExpOp>(n, last == kvHeads ? headScalars(n, n.input(4))
                                                   : splitHeads(n, n.input(4), kvHeads, "decay"));
            }
            if (delta) {
              int64_t last = n.inputType(5).getShape().back();
              if (last != kvHeads && last != 1)
                throw ImportError("beta's last dim must be kv_num_heads or 1");
              beta = headScalars(n, n.input(5)); // [B, H_kv or 1, T, 1]
            }
            auto step = [&](Value x, int64_t t) { return sliceAxis(n, x, 2, t, 1, 1); };
            auto matmul = [&](Value a, Value b, int64_t rows, int64_t cols) {
              SmallVector<int64_t> shape(typeOf(a).getShape());
              shape[2] = rows;
              shape[3] = cols;
              return n.b.create<MatMulOp>(n.loc(), typeOf(a).clone(shape), a, b).getResult();
            };
            SmallVector<Value> outputs;
            for (int64_t t = 0; t < steps; ++t) {
              Value kt = step(k, t), vt = step(v, t); // [B, H_kv, 1, d]
              if (gated && state) // exp(g_t) [B, H_kv, 1, 1 or d_k] scales the rows of S
                state = bin<MulOp>(n, state, transposeValue(n, step(decay, t), {0, 1, 3, 2}));
              if (delta) {
                if (state)
                  vt = bin<SubOp>(n, vt, matmul(kt, state, 1, dv));
                vt = bin<MulOp>(n, vt, step(beta, t));
              }
              Value write = matmul(transposeValue(n, kt, {0, 1, 3, 2}), vt, dk, dv);
              state = state ? bin<AddOp>(n, state, write) : write;
              outputs.push_back(matmul(step(q, t), repeatHeads(n, state, heads, kvHeads), 1, dv));
            }
            double scale = n.floatAttr("scale", 0.0f);
            if (scale == 0.0)
              scale = 1.0 / std::sqrt(double(dk));
            Value y = bin<MulOp>(n, concatAxis(n, outputs, 2), scalar(n, scale, f));
            y = reshape(n, transposeValue(n, y, {0, 2, 1, 3}), {batch, steps, heads * dv});
            if (!state)
              state = broadcastTo(n, scalar(n, 0.0, f), stateShape);
            return {y, state};
          }};
}

} // namespace

void addAttentionImports(ImportTable &table) {
  table.insert({{"Attention", attention()},
                {"RotaryEmbedding", rotaryEmbedding()},
                {"LinearAttention", linearAttention()}});
}

} // namespace dlc
