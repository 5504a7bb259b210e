// dlc.fused_elementwise: its step text, its inputs' broadcast indexing and its verifier.
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstdio>

using namespace mlir;

namespace dlc {

std::optional<rt::UnaryKind> unaryKindNamed(StringRef name) {
#define DLC_UNARY_CASE(kind, gradFrom) .Case(#kind, rt::UnaryKind::kind)
  return llvm::StringSwitch<std::optional<rt::UnaryKind>>(name) DLC_UNARY_KINDS(DLC_UNARY_CASE)
      .Default(std::nullopt);
#undef DLC_UNARY_CASE
}

std::optional<rt::BinaryKind> binaryKindNamed(StringRef name) {
#define DLC_BINARY_CASE(kind, onFloats) .Case(#kind, rt::BinaryKind::kind)
  return llvm::StringSwitch<std::optional<rt::BinaryKind>>(name) DLC_BINARY_KINDS(DLC_BINARY_CASE)
      .Default(std::nullopt);
#undef DLC_BINARY_CASE
}

std::optional<rt::CompareKind> compareKindNamed(StringRef name) {
  return llvm::StringSwitch<std::optional<rt::CompareKind>>(name)
      .Case("Equal", rt::CompareKind::Equal)
      .Case("Less", rt::CompareKind::Less)
      .Case("LessEqual", rt::CompareKind::LessEqual)
      .Case("Greater", rt::CompareKind::Greater)
      .Case("GreaterEqual", rt::CompareKind::GreaterEqual)
      .Default(std::nullopt);
}

rt::Rounding roundingNamed(StringRef roundMode) {
  return roundMode == "down"      ? rt::Rounding::Down
         : roundMode == "nearest" ? rt::Rounding::Nearest
                                  : rt::Rounding::Up;
}

namespace {

// Only the kinds defined on floats: the bitwise ops and shifts are integer-only.
std::optional<rt::BinaryKind> floatBinaryKindNamed(StringRef name) {
#define DLC_FLOAT_BINARY_CASE(kind, onFloats)                                                  \
  .Case(#kind, onFloats ? std::optional(rt::BinaryKind::kind) : std::nullopt)
  return llvm::StringSwitch<std::optional<rt::BinaryKind>>(name)
      DLC_BINARY_KINDS(DLC_FLOAT_BINARY_CASE)
      .Default(std::nullopt);
#undef DLC_FLOAT_BINARY_CASE
}

// A step's kind with the number of slots and parameters it takes.
struct StepShape {
  rt::FusedStep step;
  unsigned slots, params;
};

std::optional<StepShape> stepShapeOf(StringRef kind) {
  if (kind == "Clip")
    return StepShape{rt::clipStep(0, 0.0f, 0.0f), 1, 2};
  if (kind == "LeakyRelu")
    return StepShape{rt::leakyReluStep(0, 0.0f), 1, 1};
  if (auto unary = unaryKindNamed(kind))
    return StepShape{rt::unaryStep(*unary, 0), 1, 0};
  if (auto binary = floatBinaryKindNamed(kind))
    return StepShape{rt::binaryStep(*binary, 0, 0), 2, 0};
  return std::nullopt;
}

} // namespace

bool isFusedUnaryKind(StringRef kind) { return unaryKindNamed(kind).has_value(); }
bool isFusedBinaryKind(StringRef kind) { return floatBinaryKindNamed(kind).has_value(); }

std::optional<std::pair<int64_t, int64_t>> fusedInputIndexing(ArrayRef<int64_t> inShape,
                                                              ArrayRef<int64_t> outShape) {
  if (inShape.size() > outShape.size())
    return std::nullopt;
  const size_t offset = outShape.size() - inShape.size();
  // From the innermost dim out: broadcast dims before the first kept one multiply `repeat`,
  // kept dims multiply `period`, and a kept dim after a broadcast one that follows kept ones
  // breaks the single (i / repeat) % period pattern.
  int64_t repeat = 1, period = 1;
  bool kept = false, keptEnded = false;
  for (size_t d = outShape.size(); d-- > 0;) {
    int64_t in = d >= offset ? inShape[d - offset] : 1;
    if (outShape[d] == 1) {
      if (in != 1)
        return std::nullopt;
      continue;
    }
    // An empty tensor may have other dims whose product leaves int64: no indexing then.
    if (in == outShape[d]) {
      auto next = checkedMul(period, in);
      if (keptEnded || !next)
        return std::nullopt;
      kept = true;
      period = *next;
    } else if (in == 1) {
      auto next = checkedMul(repeat, outShape[d]);
      if (kept)
        keptEnded = true;
      else if (!next)
        return std::nullopt;
      else
        repeat = *next;
    } else {
      return std::nullopt;
    }
  }
  return std::make_pair(repeat, period);
}

std::string fusedStepText(StringRef kind, ArrayRef<int64_t> slots, ArrayRef<float> params) {
  std::string text = kind.str();
  for (int64_t slot : slots)
    text += " " + std::to_string(slot);
  for (float param : params) {
    // Nine significant digits read back as the same float.
    char digits[32];
    std::snprintf(digits, sizeof digits, "%.9g", double(param));
    text += " " + std::string(digits);
  }
  return text;
}

FailureOr<SmallVector<DecodedFusedStep>> decodeFusedSteps(FusedElementwiseOp op) {
  const int64_t numInputs = op.getInputs().size();
  ArrayAttr texts = op.getSteps();
  if (texts.empty())
    return op.emitOpError("has no steps");
  if (numInputs + int64_t(texts.size()) > rt::kFusedMaxSlots)
    return op.emitOpError("has ") << numInputs << " inputs and " << texts.size()
                                  << " steps; at most " << rt::kFusedMaxSlots << " slots in all";
  SmallVector<DecodedFusedStep> steps;
  for (auto [index, attr] : llvm::enumerate(texts)) {
    StringRef text = cast<StringAttr>(attr).getValue();
    auto fail = [&, index = index]() {
      return op.emitOpError("step ") << index << " ('" << text << "'): ";
    };
    SmallVector<StringRef> tokens;
    llvm::SplitString(text, tokens, " ");
    if (tokens.empty())
      return fail() << "is empty";
    std::optional<StepShape> shape = stepShapeOf(tokens[0]);
    if (!shape)
      return fail() << "'" << tokens[0] << "' is not a float32 unary or binary kind, Clip or "
                    << "LeakyRelu";
    if (tokens.size() != 1 + shape->slots + shape->params)
      return fail() << "takes " << shape->slots << " slot(s) and " << shape->params
                    << " parameter(s)";
    int64_t slots[2] = {0, 0};
    for (unsigned i = 0; i < shape->slots; ++i)
      if (tokens[1 + i].getAsInteger(10, slots[i]) || slots[i] < 0 ||
          slots[i] >= numInputs + int64_t(index))
        return fail() << "reads '" << tokens[1 + i] << "', not an input or an earlier step";
    float params[2] = {0.0f, 0.0f};
    for (unsigned i = 0; i < shape->params; ++i) {
      double value;
      if (tokens[1 + shape->slots + i].getAsDouble(value))
        return fail() << "parameter '" << tokens[1 + shape->slots + i] << "' is not a number";
      params[i] = float(value);
    }
    rt::FusedStep step = shape->step;
    step.a = int32_t(slots[0]);
    step.b = int32_t(slots[1]);
    step.p0 = params[0];
    step.p1 = params[1];
    steps.push_back({step, tokens[0]});
  }
  return steps;
}

LogicalResult FusedElementwiseOp::verify() {
  auto outShape = getOutput().getType().getShape();
  for (auto [index, input] : llvm::enumerate(getInputs()))
    if (!fusedInputIndexing(cast<RankedTensorType>(input.getType()).getShape(), outShape))
      return emitOpError("input ") << index << " does not broadcast onto the result with its "
                                   << "non-1 dims adjacent";
  return decodeFusedSteps(*this);
}

} // namespace dlc
