#include "compiler/Training.h"
#include "dialects/Locations.h"
#include "dialects/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <cstdlib>
#include <map>

using namespace mlir;

namespace dlc {

bool TrainOptions::parseOptimizer(const std::string &spec, std::string &error) {
  size_t colon = spec.find(':');
  optimizer = spec.substr(0, colon);
  if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw") {
    error = "--optimizer '" + optimizer + "' is not sgd, adam or adamw";
    return false;
  }
  std::map<std::string, float *> numbers = {{"lr", &learningRate},
                                            {"weight_decay", &weightDecay}};
  if (optimizer == "sgd")
    numbers["momentum"] = &momentum;
  else
    numbers.insert({{"beta1", &beta1}, {"beta2", &beta2}, {"eps", &eps}});
  std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    char *end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !std::isfinite(number) || number < 0) {
      error = "--optimizer " + optimizer + ": '" + item + "' needs a non-negative number";
      return false;
    }
    if (key == "nesterov" && optimizer == "sgd") {
      nesterov = number != 0;
      continue;
    }
    auto it = numbers.find(key);
    if (it == numbers.end()) {
      error = "--optimizer " + optimizer + ": unknown setting '" + key + "'";
      return false;
    }
    *it->second = float(number);
  }
  if (nesterov && momentum == 0) {
    error = "--optimizer sgd: nesterov needs a momentum";
    return false;
  }
  if (optimizer != "sgd" && (beta1 >= 1 || beta2 >= 1)) {
    error = "--optimizer " + optimizer + ": beta1 and beta2 must be below 1";
    return false;
  }
  return true;
}

float TrainOptions::defaultedLearningRate() const {
  return learningRate >= 0 ? learningRate : optimizer == "sgd" ? 0.01f : 0.001f;
}

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool matchesAny(const std::string &name, const std::vector<std::string> &prefixes) {
  return llvm::any_of(prefixes, [&](const std::string &p) { return name.rfind(p, 0) == 0; });
}

// An initializer's constant: the importer names it with a plain NameLoc.
std::string initializerName(ConstantOp op) {
  auto name = dyn_cast<NameLoc>(op.getLoc());
  return name ? name.getName().str() : "";
}

class TrainStepBuilder {
public:
  TrainStepBuilder(ModuleOp module, const TrainOptions &options)
      : module(module), options(options), b(module.getContext()) {}
  LogicalResult run();

private:
  LogicalResult moveWeightsToState(func::FuncOp forward);
  LogicalResult addLoss(func::FuncOp step);

  ModuleOp module;
  const TrainOptions &options;
  OpBuilder b;
};

LogicalResult TrainStepBuilder::moveWeightsToState(func::FuncOp forward) {
  // Running statistics are state too, but never trained, and each batch norm updates its
  // own: an initializer that is also read elsewhere (exporters merge equal initializers, so
  // a fresh model's running variance and scale are often one tensor of ones) gets a copy
  // per statistic, named after the node.
  llvm::DenseSet<Operation *> runningStats;
  forward.walk([&](BatchNormOp bn) {
    for (auto [index, suffix] : {std::pair{3u, ".running_mean"}, std::pair{4u, ".running_var"}}) {
      // Exporters also write the merged tensor as Identity(bias): look through it.
      Value stat = bn->getOperand(index);
      while (auto identity = stat.getDefiningOp<ReshapeOp>())
        if (identity.getInput().getType() == stat.getType())
          stat = identity.getInput();
        else
          break;
      auto c = stat.getDefiningOp<ConstantOp>();
      if (!c || !typeOf(c).getElementType().isF32())
        continue;
      if (!c->hasOneUse() || stat != bn->getOperand(index)) {
        b.setInsertionPoint(bn);
        std::string name = onnxNodeName(bn.getLoc());
        c = b.create<ConstantOp>(NameLoc::get(b.getStringAttr(name + suffix)), c.getType(),
                                 c.getValue());
        bn->setOperand(index, c);
      }
      runningStats.insert(c);
    }
  });
  std::vector<std::string> names;
  SmallVector<ConstantOp> state;
  bool anyTrainable = false;
  forward.walk([&](ConstantOp c) {
    std::string name = initializerName(c);
    if (name.empty() || !typeOf(c).getElementType().isF32())
      return;
    names.push_back(name);
    bool stat = runningStats.count(c);
    bool trainable = !stat && (options.trainable.empty() || matchesAny(name, options.trainable)) &&
                     !matchesAny(name, options.freeze);
    if (stat || trainable)
      state.push_back(c);
    anyTrainable |= trainable;
  });
  for (const auto *list : {&options.trainable, &options.freeze})
    for (const std::string &prefix : *list)
      if (llvm::none_of(names, [&](const std::string &n) {
            return n.rfind(prefix, 0) == 0;
          }))
        return forward.emitError("'") << prefix << "' (given to "
                                      << (list == &options.freeze ? "--freeze" : "--trainable")
                                      << ") names no float initializer of the model";
  if (!anyTrainable)
    return forward.emitError(names.empty()
                                 ? "--train: the model has no float weights to train"
                                 : "--train: every float weight is frozen");
  for (ConstantOp c : state) {
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr(kTensorNameAttr, b.getStringAttr(initializerName(c))),
        b.getNamedAttr(kStateAttr, b.getUnitAttr()),
        b.getNamedAttr(kInitialValueAttr, c.getValue())};
    if (!runningStats.count(c))
      attrs.push_back(b.getNamedAttr(kTrainableAttr, b.getUnitAttr()));
    unsigned index = forward.getNumArguments();
    forward.insertArgument(index, c.getType(), b.getDictionaryAttr(attrs), c.getLoc());
    c.replaceAllUsesWith(forward.getArgument(index));
    c.erase();
  }
  return success();
}

} // namespace

// Batch norms (all of them, or those exported in training mode) normalize with the batch's
// statistics; where the running statistics are state, the step updates them too (PyTorch's
// momentum is 1 - ONNX's).
static void useBatchStatistics(func::FuncOp func, bool all) {
  SmallVector<BatchNormOp> norms;
  func.walk([&](BatchNormOp bn) {
    if (all || bn->hasAttr(kBatchStatisticsAttr))
      norms.push_back(bn);
  });
  OpBuilder b(func.getContext());
  for (BatchNormOp bn : norms) {
    b.setInsertionPoint(bn);
    Location loc = bn.getLoc();
    auto x = typeOf(bn.getInput());
    int64_t channels = x.getDimSize(1), count = x.getNumElements() / std::max<int64_t>(channels, 1);
    Value stats = b.create<BatchNormStatsOp>(
        loc, RankedTensorType::get({3, channels}, b.getF32Type()), bn.getInput(),
        bn.getEpsilonAttr());
    Value y = b.create<BatchNormApplyOp>(loc, bn.getType(), bn.getInput(), stats, bn.getScale(),
                                         bn.getBias());
    auto onnxMomentum = bn->getAttrOfType<FloatAttr>(kMomentumAttr);
    float momentum = 1.0f - (onnxMomentum ? onnxMomentum.getValue().convertToFloat() : 0.9f);
    if (isa<BlockArgument>(bn.getMean()) && isa<BlockArgument>(bn.getVariance()))
      b.create<BatchNormRunningUpdateOp>(loc, bn.getMean(), bn.getVariance(), stats,
                                         b.getF32FloatAttr(momentum),
                                         b.getI64IntegerAttr(count));
    bn.replaceAllUsesWith(y);
    bn.erase();
  }
}

// Dropout passes its input through (forward(), inference builds) or, in the train step,
// multiplies it by a fresh mask, each dropout with its own seed.
static void applyDropout(func::FuncOp func, bool train) {
  SmallVector<DropoutOp> dropouts;
  func.walk([&](DropoutOp d) { dropouts.push_back(d); });
  OpBuilder b(func.getContext());
  for (auto [seed, d] : llvm::enumerate(dropouts)) {
    Value y = d.getInput();
    if (train) {
      b.setInsertionPoint(d);
      Value mask = b.create<DropoutMaskOp>(d.getLoc(), d.getType(), d.getRatioAttr(),
                                           b.getI64IntegerAttr(int64_t(seed)));
      y = b.create<MulOp>(d.getLoc(), d.getType(), d.getInput(), mask);
    }
    d.replaceAllUsesWith(y);
    d.erase();
  }
}

void lowerTrainingModeOps(ModuleOp module) {
  module.walk([](func::FuncOp func) {
    useBatchStatistics(func, /*all=*/false);
    applyDropout(func, /*train=*/false);
  });
}

namespace {

LogicalResult TrainStepBuilder::addLoss(func::FuncOp step) {
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  int outputIndex = -1;
  for (unsigned i = 0; i < step.getNumResults(); ++i) {
    auto name = step.getResultAttrOfType<StringAttr>(i, kTensorNameAttr);
    if (options.lossOutput.empty() ? step.getNumResults() == 1
                                   : name && name.getValue() == options.lossOutput)
      outputIndex = i;
  }
  if (outputIndex < 0)
    return step.emitError(options.lossOutput.empty()
                              ? "the model has several outputs: choose the one the loss is "
                                "computed on with --loss-output"
                              : "--loss-output '" + options.lossOutput +
                                    "' is not a graph output of the model");
  Value y = ret.getOperand(outputIndex);
  auto yType = typeOf(y);
  if (!yType.getElementType().isF32())
    return step.emitError("the loss output must be float32, got ") << yType;
  Location loc = y.getLoc();
  b.setInsertionPoint(ret);
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  auto mean = [&](Value v) {
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < typeOf(v).getRank(); ++d)
      axes.push_back(d);
    return b.create<ReduceMeanOp>(loc, scalarType, v, b.getDenseI64ArrayAttr(axes));
  };
  const std::string &loss = options.loss;
  Type labelsType = yType;
  if (loss == "cross_entropy") {
    if (yType.getRank() < 2)
      return step.emitError("cross_entropy needs an output of rank >= 2 ([N, C, ...]), got ")
             << yType;
    SmallVector<int64_t> labels = {yType.getDimSize(0)};
    labels.append(yType.getShape().begin() + 2, yType.getShape().end());
    labelsType = RankedTensorType::get(labels, b.getI64Type());
  } else if (loss == "none") {
    if (yType.getNumElements() != 1)
      return step.emitError("--loss none needs a scalar loss output, got ") << yType;
  } else if (loss != "mse" && loss != "l1" && loss != "bce_with_logits") {
    return step.emitError("--loss '") << loss
                                      << "' is not mse, cross_entropy, bce_with_logits, l1 or none";
  }
  Value labels;
  if (loss != "none") {
    unsigned index = step.getNumArguments();
    step.insertArgument(index, labelsType,
                        b.getDictionaryAttr(
                            b.getNamedAttr(kTensorNameAttr, b.getStringAttr("labels"))),
                        loc);
    labels = step.getArgument(index);
  }
  Value value;
  if (loss == "cross_entropy") {
    Value logProbs = b.create<SoftmaxOp>(loc, yType, y, b.getI64IntegerAttr(1), b.getBoolAttr(true));
    value = b.create<NllLossOp>(loc, scalarType, logProbs, labels);
  } else if (loss == "mse") {
    Value diff = b.create<SubOp>(loc, yType, y, labels);
    value = mean(b.create<MulOp>(loc, yType, diff, diff));
  } else if (loss == "l1") {
    value = mean(b.create<AbsOp>(loc, yType, b.create<SubOp>(loc, yType, y, labels)));
  } else if (loss == "bce_with_logits") {
    // max(x, 0) - x * t + log(1 + exp(-|x|)): PyTorch's stable form.
    Value positive = b.create<ReluOp>(loc, yType, y);
    Value xt = b.create<MulOp>(loc, yType, y, labels);
    Value tail = b.create<SoftplusOp>(
        loc, yType, b.create<NegOp>(loc, yType, b.create<AbsOp>(loc, yType, y)));
    value = mean(b.create<AddOp>(loc, yType, b.create<SubOp>(loc, yType, positive, xt), tail));
  } else {
    value = b.create<ReshapeOp>(loc, scalarType, y);
  }
  ret->setOperands(value);
  step.setType(b.getFunctionType(step.getArgumentTypes(), {scalarType}));
  step.setAllResultAttrs(ArrayRef<DictionaryAttr>{b.getDictionaryAttr(
      {b.getNamedAttr(kTensorNameAttr, b.getStringAttr("loss")),
       b.getNamedAttr("dlc.loss", b.getUnitAttr())})});
  return success();
}

LogicalResult TrainStepBuilder::run() {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("no function @forward to train");
  if (failed(moveWeightsToState(forward)))
    return failure();
  b.setInsertionPointToEnd(module.getBody());
  auto step = cast<func::FuncOp>(b.clone(*forward));
  step.setSymName("train_step");
  // forward() evaluates in inference mode, whatever mode the model was exported in.
  forward.walk([](BatchNormOp bn) { bn->removeAttr(kBatchStatisticsAttr); });
  applyDropout(forward, /*train=*/false);
  // What the generated train step needs at run time beyond the update ops' attributes.
  step->setAttr("dlc.optimizer",
                b.getDictionaryAttr({b.getNamedAttr("lr", b.getF32FloatAttr(
                                                              options.defaultedLearningRate())),
                                     b.getNamedAttr("beta1", b.getF32FloatAttr(options.beta1)),
                                     b.getNamedAttr("beta2", b.getF32FloatAttr(options.beta2))}));
  useBatchStatistics(step, /*all=*/true);
  applyDropout(step, /*train=*/true);
  return addLoss(step);
}

} // namespace

bool buildTrainStep(ModuleOp module, const TrainOptions &options) {
  return succeeded(TrainStepBuilder(module, options).run());
}

} // namespace dlc
