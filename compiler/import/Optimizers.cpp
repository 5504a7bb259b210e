// How the optimizer ops of the ai.onnx.preview.training domain (Adagrad, Momentum, Adam) become
// dlc ops: elementwise compositions of one update step. Each takes a learning rate R and a step
// count T (scalars, possibly run-time inputs), then for n tensors their values X, gradients G
// and per-tensor state (one or two tensors each), and returns the new values, then the new
// state, grouped by kind.
#include "compiler/import/Builders.h"

using namespace mlir;

namespace dlc {
namespace {

// One tensor's update: its new value and new state tensors.
struct Update {
  Value x;
  SmallVector<Value, 2> state;
};

// The inputs of one tensor, with R and T as scalars of its element type.
struct Step {
  Value r, t, x, g;
  SmallVector<Value, 2> state;
  Type f;
};

// R, T, then stateCount + 2 groups of n inputs each: X, G and the state tensors.
template <typename Rule> OpImport optimizer(int stateCount, Rule rule) {
  return {{}, [stateCount, rule](NodeImporter &n) -> OpImport::Results {
            int inputs = n.node.input_size(), groups = 2 + stateCount;
            if (inputs < 2 + groups || (inputs - 2) % groups != 0)
              throw ImportError("expects R, T and " + std::to_string(groups) +
                                " groups of equally many tensors, got " +
                                std::to_string(inputs) + " inputs");
            int count = (inputs - 2) / groups;
            for (int i = 0; i < 2 + groups * count; ++i)
              if (!n.hasInput(i))
                throw ImportError("input #" + std::to_string(i) + " is missing");
            if (typeOf(n.input(0)).getNumElements() != 1 ||
                typeOf(n.input(1)).getNumElements() != 1)
              throw ImportError("R and T must be scalars");
            std::vector<Update> updates;
            for (int k = 0; k < count; ++k) {
              requireFloat(n, 2 + k);
              Type f = n.inputType(2 + k).getElementType();
              Step step{reshape(n, castTo(n, n.input(0), f), {}),
                        reshape(n, castTo(n, n.input(1), f), {}),
                        n.input(2 + k),
                        n.input(2 + count + k),
                        {},
                        f};
              for (int s = 0; s < stateCount; ++s)
                step.state.push_back(n.input(2 + (2 + s) * count + k));
              for (int other = 1; other < groups; ++other)
                if (n.inputType(2 + other * count + k) != n.inputType(2 + k))
                  throw ImportError("input #" + std::to_string(2 + other * count + k) +
                                    " differs in type from the tensor it updates (input #" +
                                    std::to_string(2 + k) + ")");
              updates.push_back(rule(n, step));
            }
            OpImport::Results results;
            for (const Update &u : updates)
              results.push_back(u.x);
            for (int s = 0; s < stateCount; ++s)
              for (const Update &u : updates)
                results.push_back(u.state[s]);
            return results;
          }};
}

// norm_coefficient * X + G: the gradient with the L2 regularization term added.
Value regularized(NodeImporter &n, const Step &s) {
  double coefficient = n.floatAttr("norm_coefficient", 0.0f);
  return bin<AddOp>(n, bin<MulOp>(n, scalar(n, coefficient, s.f), s.x), s.g);
}

// a where T > 0, else b.
Value afterFirstStep(NodeImporter &n, const Step &s, Value a, Value b) {
  Value started = comparison<GreaterOp>(n, s.t, scalar(n, 0.0, s.f));
  return n.b.create<WhereOp>(n.loc(), typeOf(a).clone(broadcastOperands(a, b)), started, a, b);
}

// H += G^2; X -= R / (1 + T * decay_factor) * G / (sqrt(H) + epsilon).
OpImport adagrad() {
  return optimizer(1, [](NodeImporter &n, const Step &s) {
    Value g = regularized(n, s);
    Value decayed = bin<DivOp>(
        n, s.r,
        bin<AddOp>(n, scalar(n, 1.0, s.f),
                   bin<MulOp>(n, s.t, scalar(n, n.floatAttr("decay_factor", 0.0f), s.f))));
    Value h = bin<AddOp>(n, s.state[0], bin<MulOp>(n, g, g));
    Value scaleBy = bin<AddOp>(n, un<SqrtOp>(n, h), scalar(n, n.floatAttr("epsilon", 1e-6f), s.f));
    Value x = bin<SubOp>(n, s.x, bin<DivOp>(n, bin<MulOp>(n, decayed, g), scaleBy));
    return Update{x, {h}};
  });
}

// V = alpha V + beta' G (beta' = 1 at T = 0); X -= R V, or R (G + alpha V) in nesterov mode.
OpImport momentum() {
  return optimizer(1, [](NodeImporter &n, const Step &s) {
    for (const char *name : {"alpha", "beta", "norm_coefficient", "mode"})
      if (!n.attr(name))
        throw ImportError(std::string("attribute '") + name + "' is required");
    std::string mode = n.stringAttr("mode", "");
    if (mode != "standard" && mode != "nesterov")
      throw ImportError("mode must be 'standard' or 'nesterov', got '" + mode + "'");
    Value g = regularized(n, s);
    Value alpha = scalar(n, n.floatAttr("alpha", 0.0f), s.f);
    Value beta = afterFirstStep(n, s, scalar(n, n.floatAttr("beta", 0.0f), s.f),
                                scalar(n, 1.0, s.f));
    Value v = bin<AddOp>(n, bin<MulOp>(n, alpha, s.state[0]), bin<MulOp>(n, beta, g));
    Value direction = mode == "standard" ? v : bin<AddOp>(n, g, bin<MulOp>(n, alpha, v));
    return Update{bin<SubOp>(n, s.x, bin<MulOp>(n, s.r, direction)), {v}};
  });
}

// V = alpha V + (1 - alpha) G; H = beta H + (1 - beta) G^2; from T > 0 the rate is bias
// corrected, R sqrt(1 - beta^T) / (1 - alpha^T); X = (1 - norm_coefficient_post) *
// (X - R' V / (sqrt(H) + epsilon)).
OpImport adam() {
  return optimizer(2, [](NodeImporter &n, const Step &s) {
    double alpha = n.floatAttr("alpha", 0.9f), beta = n.floatAttr("beta", 0.999f);
    Value g = regularized(n, s);
    Value v = bin<AddOp>(n, bin<MulOp>(n, scalar(n, alpha, s.f), s.state[0]),
                         bin<MulOp>(n, scalar(n, 1.0 - alpha, s.f), g));
    Value h = bin<AddOp>(n, bin<MulOp>(n, scalar(n, beta, s.f), s.state[1]),
                         bin<MulOp>(n, scalar(n, 1.0 - beta, s.f), bin<MulOp>(n, g, g)));
    Value one = scalar(n, 1.0, s.f);
    auto oneMinusPower = [&](double base) {
      return bin<SubOp>(n, one, bin<PowOp>(n, scalar(n, base, s.f), s.t));
    };
    Value corrected =
        bin<DivOp>(n, bin<MulOp>(n, s.r, un<SqrtOp>(n, oneMinusPower(beta))), oneMinusPower(alpha));
    Value rate = afterFirstStep(n, s, corrected, s.r);
    Value scaleBy = bin<AddOp>(n, un<SqrtOp>(n, h), scalar(n, n.floatAttr("epsilon", 1e-6f), s.f));
    Value x = bin<SubOp>(n, s.x, bin<MulOp>(n, rate, bin<DivOp>(n, v, scaleBy)));
    x = bin<MulOp>(n, scalar(n, 1.0 - n.floatAttr("norm_coefficient_post", 0.0f), s.f), x);
    return Update{x, {v, h}};
  });
}

} // namespace

void addOptimizerImports(ImportTable &table) {
  table.insert({
      {"ai.onnx.preview.training.Adagrad", adagrad()},
      {"ai.onnx.preview.training.Momentum", momentum()},
      {"ai.onnx.preview.training.Adam", adam()},
  });
}

} // namespace dlc
