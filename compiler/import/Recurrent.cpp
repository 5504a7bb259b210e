// How ONNX recurrent layers (RNN, GRU, LSTM) become dlc ops.
//
// The sequence length is static, so a layer is unrolled at import time: the input projection of
// every step is one MatMul, then each step is a small MatMul with the recurrent weight and the
// cell's elementwise gates. Everything is written with existing dlc ops, so kernels, memory
// planning (each step's temporaries die with the step) and gradients come with them.
// Per-sample sequence lengths (a run-time input is fine) mask the state updates: a sample past
// its length keeps its state and emits zeros, as ONNX specifies.
#include "compiler/import/Builders.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace dlc {
namespace {

enum class CellKind { Rnn, Gru, Lstm };

bool usesAlpha(llvm::StringRef name) {
  return llvm::is_contained(
      {"affine", "leakyrelu", "thresholdedrelu", "scaledtanh", "hardsigmoid", "elu"}, name.lower());
}

bool usesBeta(llvm::StringRef name) {
  return llvm::is_contained({"affine", "scaledtanh", "hardsigmoid"}, name.lower());
}

// The activations of each direction: the attribute's (one list per direction), else the
// cell's defaults; alphas and betas are consumed in order by the functions that take them.
std::vector<std::vector<NamedActivation>> activations(NodeImporter &n, CellKind kind,
                                                 int64_t directions) {
  std::vector<std::string> defaults =
      kind == CellKind::Lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : kind == CellKind::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                              : std::vector<std::string>{"Tanh"};
  size_t perDirection = defaults.size();
  std::vector<std::string> names = n.stringsAttr("activations");
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != perDirection * directions)
    throw ImportError("activations has " + std::to_string(names.size()) + " entries; " +
                      std::to_string(perDirection * directions) + " expected (" +
                      std::to_string(perDirection) + " per direction)");
  std::vector<double> alphas = n.floatsAttr("activation_alpha"),
                      betas = n.floatsAttr("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<std::vector<NamedActivation>> result(directions);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string k = llvm::StringRef(names[i]).lower();
    NamedActivation a{names[i]};
    // The defaults of the ONNX ops of the same names.
    a.alpha = k == "leakyrelu" ? 0.01 : k == "hardsigmoid" ? 0.2 : 1.0;
    a.beta = k == "hardsigmoid" ? 0.5 : k == "affine" ? 0.0 : 1.0;
    if (usesAlpha(k) && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (usesBeta(k) && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    result[i / perDirection].push_back(a);
  }
  return result;
}

Value matmul2d(NodeImporter &n, Value a, Value b) {
  auto type = typeOf(a).clone({typeOf(a).getDimSize(0), typeOf(b).getDimSize(1)});
  return n.b.create<MatMulOp>(n.loc(), type, a, b);
}

// Row `index` of a [D, ...] input, without its leading dim.
Value directionOf(NodeImporter &n, Value v, int64_t index) {
  auto shape = typeOf(v).getShape();
  return reshape(n, sliceAxis(n, v, 0, index, 1, 1), shape.drop_front());
}

// `count` columns of a [rows, cols] matrix from `start`.
Value columns(NodeImporter &n, Value m, int64_t start, int64_t count) {
  return sliceAxis(n, m, 1, start, 1, count);
}

struct Layer {
  CellKind kind;
  int64_t steps, batch, hidden, gates;
  std::optional<double> clip;
  bool inputForget = false, linearBeforeReset = false;
  Value sequenceLengths;            // null when every sample runs all steps
  Value initialHidden, initialCell; // [D, B, H], or null for zeros
};

struct DirectionResult {
  SmallVector<Value> outputs; // [batch, hidden] per step, in time order
  Value lastHidden, lastCell;
};

DirectionResult runDirection(NodeImporter &n, const Layer &l, Value x, int64_t d, bool reverse,
                             const std::vector<NamedActivation> &act) {
  Type f = typeOf(x).getElementType();
  int64_t H = l.hidden, B = l.batch, GH = l.gates * H;
  auto act0 = [&](Value v) {
    if (l.clip)
      v = n.b.create<ClipOp>(n.loc(), typeOf(v), v, n.b.getF32FloatAttr(-*l.clip),
                             n.b.getF32FloatAttr(*l.clip));
    return v;
  };
  auto gate = [&](int which, Value v) { return activationOf(n, act[which], act0(v)); };

  Value weightT = transposeValue(n, directionOf(n, n.input(1), d), {1, 0});    // [I, G*H]
  Value recurrentT = transposeValue(n, directionOf(n, n.input(2), d), {1, 0}); // [H, G*H]
  // The input projection of every step at once, with the biases that add to it.
  int64_t inputSize = typeOf(x).getDimSize(2);
  Value projected = matmul2d(n, reshape(n, x, {l.steps * B, inputSize}), weightT);
  Value resetBias; // GRU with linear_before_reset: R's candidate bias stays inside the reset
  if (n.hasInput(3)) {
    Value bias = directionOf(n, n.input(3), d); // [2 * G * H]: W's biases, then R's
    Value inputBias = sliceAxis(n, bias, 0, 0, 1, GH),
          recurrentBias = sliceAxis(n, bias, 0, GH, 1, GH);
    if (l.linearBeforeReset) {
      resetBias = sliceAxis(n, recurrentBias, 0, 2 * H, 1, H);
      recurrentBias = concatAxis(
          n, {sliceAxis(n, recurrentBias, 0, 0, 1, 2 * H), broadcastTo(n, scalar(n, 0.0, f), {H})},
          0);
    }
    projected = bin<AddOp>(n, projected, bin<AddOp>(n, inputBias, recurrentBias));
  }
  projected = reshape(n, projected, {l.steps, B, GH});

  Value zeros = broadcastTo(n, scalar(n, 0.0, f), {B, H});
  auto initial = [&](Value state) { return state ? directionOf(n, state, d) : zeros; };
  Value h = initial(l.initialHidden);
  Value c = l.kind == CellKind::Lstm ? initial(l.initialCell) : Value();
  Value peepholes[3]; // input, output, forget
  if (l.kind == CellKind::Lstm && n.hasInput(7)) {
    Value p = directionOf(n, n.input(7), d);
    for (int i = 0; i < 3; ++i)
      peepholes[i] = sliceAxis(n, p, 0, i * H, 1, H);
  }

  DirectionResult r;
  r.outputs.resize(l.steps);
  for (int64_t s = 0; s < l.steps; ++s) {
    int64_t t = reverse ? l.steps - 1 - s : s;
    Value xw = reshape(n, sliceAxis(n, projected, 0, t, 1, 1), {B, GH});
    Value newH, newC;
    if (l.kind == CellKind::Rnn) {
      newH = gate(0, bin<AddOp>(n, xw, matmul2d(n, h, recurrentT)));
    } else if (l.kind == CellKind::Lstm) {
      Value g = bin<AddOp>(n, xw, matmul2d(n, h, recurrentT)); // gates i, o, f, c
      Value in = columns(n, g, 0, H), out = columns(n, g, H, H), forget = columns(n, g, 2 * H, H);
      if (peepholes[0]) {
        in = bin<AddOp>(n, in, bin<MulOp>(n, peepholes[0], c));
        forget = bin<AddOp>(n, forget, bin<MulOp>(n, peepholes[2], c));
      }
      Value i = gate(0, in);
      Value fg = l.inputForget ? bin<SubOp>(n, scalar(n, 1.0, f), i) : gate(0, forget);
      newC =
          bin<AddOp>(n, bin<MulOp>(n, fg, c), bin<MulOp>(n, i, gate(1, columns(n, g, 3 * H, H))));
      if (peepholes[1])
        out = bin<AddOp>(n, out, bin<MulOp>(n, peepholes[1], newC));
      newH = bin<MulOp>(n, gate(0, out), activationOf(n, act[2], newC));
    } else {
      // GRU gates z, r, h.
      Value zr =
          bin<AddOp>(n, columns(n, xw, 0, 2 * H), matmul2d(n, h, columns(n, recurrentT, 0, 2 * H)));
      Value z = gate(0, columns(n, zr, 0, H)), reset = gate(0, columns(n, zr, H, H));
      Value recurrentH = columns(n, recurrentT, 2 * H, H), candidate;
      if (l.linearBeforeReset) {
        Value hr = matmul2d(n, h, recurrentH);
        if (resetBias)
          hr = bin<AddOp>(n, hr, resetBias);
        candidate = bin<AddOp>(n, columns(n, xw, 2 * H, H), bin<MulOp>(n, reset, hr));
      } else {
        candidate = bin<AddOp>(n, columns(n, xw, 2 * H, H),
                               matmul2d(n, bin<MulOp>(n, reset, h), recurrentH));
      }
      Value hc = gate(1, candidate);
      newH = bin<AddOp>(n, hc, bin<MulOp>(n, z, bin<SubOp>(n, h, hc))); // (1-z) hc + z h
    }
    Value y = newH;
    if (l.sequenceLengths) {
      Value running =
          reshape(n,
                  comparison<LessOp>(n, intScalar(n, t, typeOf(l.sequenceLengths).getElementType()),
                                     l.sequenceLengths),
                  {B, 1});
      auto keep = [&](Value next, Value old) {
        return n.b.create<WhereOp>(n.loc(), typeOf(next), running, next, old).getResult();
      };
      y = keep(newH, zeros);
      newH = keep(newH, h);
      if (newC)
        newC = keep(newC, c);
    }
    h = newH;
    c = newC;
    r.outputs[t] = y;
  }
  r.lastHidden = h;
  r.lastCell = c;
  return r;
}

// Inputs: X, W, R, B, sequence_lens, initial_h (, initial_c, P for LSTM).
// Outputs: Y [T, D, B, H], Y_h [D, B, H] (, Y_c); batch first with layout=1.
OpImport recurrent(CellKind kind) {
  return {{}, [kind](NodeImporter &n) -> OpImport::Results {
            requireFloat32(n);
            Layer l;
            l.kind = kind;
            l.gates = kind == CellKind::Lstm ? 4 : kind == CellKind::Gru ? 3 : 1;
            bool batchFirst = n.intAttr("layout", 0) != 0;
            Value x = n.input(0);
            if (typeOf(x).getRank() != 3)
              throw ImportError("X must have rank 3");
            if (batchFirst)
              x = transposeValue(n, x, {1, 0, 2});
            l.steps = typeOf(x).getDimSize(0);
            l.batch = typeOf(x).getDimSize(1);
            std::string direction = n.stringAttr("direction", "forward");
            if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
              throw ImportError("unknown direction '" + direction + "'");
            int64_t directions = direction == "bidirectional" ? 2 : 1;
            auto r = n.inputType(2).getShape();
            if (r.size() != 3 || r[0] != directions || r[1] % l.gates || r[1] / l.gates != r[2])
              throw ImportError("R must be [" + std::to_string(directions) + ", " +
                                std::to_string(l.gates) + " * hidden, hidden], got " +
                                dimsString(r));
            l.hidden = r[2];
            if (n.attr("hidden_size") && n.intAttr("hidden_size", 0) != l.hidden)
              throw ImportError("hidden_size does not match R");
            int64_t H = l.hidden, I = typeOf(x).getDimSize(2), B = l.batch;
            auto expect = [&](int input, SmallVector<int64_t> shape, const char *name) {
              if (n.hasInput(input) && n.inputType(input).getShape() != ArrayRef<int64_t>(shape))
                throw ImportError(std::string(name) + " must be " + dimsString(shape) + ", got " +
                                  dimsString(n.inputType(input).getShape()));
            };
            int64_t GH = l.gates * H;
            expect(1, {directions, GH, I}, "W");
            expect(3, {directions, 2 * GH}, "B");
            SmallVector<int64_t> stateShape = batchFirst ? SmallVector<int64_t>{B, directions, H}
                                                         : SmallVector<int64_t>{directions, B, H};
            expect(5, stateShape, "initial_h");
            if (kind == CellKind::Lstm) {
              expect(6, stateShape, "initial_c");
              expect(7, {directions, 3 * H}, "P");
              l.inputForget = n.intAttr("input_forget", 0) != 0;
            }
            if (kind == CellKind::Gru)
              l.linearBeforeReset = n.intAttr("linear_before_reset", 0) != 0;
            if (n.attr("clip"))
              l.clip = n.floatAttr("clip", 0.0f);
            if (l.steps > kMaxUnrolledSteps)
              throw ImportError("a sequence of " + std::to_string(l.steps) +
                                " steps is too long to unroll (at most " +
                                std::to_string(kMaxUnrolledSteps) + ")");
            if (l.steps == 0 || B == 0)
              throw ImportError("empty sequence or batch");
            if (n.hasInput(4)) {
              expect(4, {B}, "sequence_lens");
              Type lengths = n.inputType(4).getElementType();
              if (!lengths.isSignlessInteger(32) && !lengths.isSignlessInteger(64))
                throw ImportError("sequence_lens must be int32");
              const ConstTensor *known = n.constantOrNull(4);
              bool allFull =
                  known && llvm::all_of(known->asInts(), [&](int64_t v) { return v == l.steps; });
              if (!allFull)
                l.sequenceLengths = n.input(4);
            }
            auto state = [&](int input) {
              if (!n.hasInput(input))
                return Value();
              return batchFirst ? transposeValue(n, n.input(input), {1, 0, 2}) : n.input(input);
            };
            l.initialHidden = state(5);
            if (kind == CellKind::Lstm)
              l.initialCell = state(6);
            auto acts = activations(n, kind, directions);
            SmallVector<Value> perDirectionY, lastH, lastC;
            for (int64_t d = 0; d < directions; ++d) {
              bool reverse = direction == "reverse" || d == 1;
              DirectionResult res = runDirection(n, l, x, d, reverse, acts[d]);
              SmallVector<Value> steps;
              for (Value y : res.outputs)
                steps.push_back(reshape(n, y, {1, 1, B, H}));
              perDirectionY.push_back(concatAxis(n, steps, 0));
              lastH.push_back(reshape(n, res.lastHidden, {1, B, H}));
              if (res.lastCell)
                lastC.push_back(reshape(n, res.lastCell, {1, B, H}));
            }
            Value y = concatAxis(n, perDirectionY, 1), yh = concatAxis(n, lastH, 0);
            Value yc = lastC.empty() ? Value() : concatAxis(n, lastC, 0);
            if (batchFirst) {
              y = transposeValue(n, y, {2, 0, 1, 3});
              yh = transposeValue(n, yh, {1, 0, 2});
              if (yc)
                yc = transposeValue(n, yc, {1, 0, 2});
            }
            OpImport::Results results{y, yh};
            if (yc)
              results.push_back(yc);
            return results;
          }};
}

} // namespace

void addRecurrentImports(ImportTable &table) {
  table.insert({{"RNN", recurrent(CellKind::Rnn)},
                {"GRU", recurrent(CellKind::Gru)},
                {"LSTM", recurrent(CellKind::Lstm)}});
}

} // namespace dlc
