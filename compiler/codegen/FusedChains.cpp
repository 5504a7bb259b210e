// dlc.fused_elementwise on the CPU: the chain as a function of the generated source (the
// default), or as the runtime's interpreter over the same steps (--fused-chains interpret,
// for comparisons). Both apply each step's scalar definition (scalar_ops.h) and the vector
// math to the same elements in the same order, so they give the same bits.
//
// The function computes one chunk of the output: the steps between two vector-math steps run
// as one loop over the chunk, their values in registers; a value another loop or a math step
// reads goes through a chunk buffer on the stack. Inputs are read in place (same shape),
// once (a scalar), or gathered into a buffer (other broadcasts).
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

#include <set>

using namespace mlir;

namespace dlc {

namespace {

// A chain step as a constant expression of the runtime's step constructors.
std::string fusedStepLiteral(const DecodedFusedStep &decoded) {
  const dlc::rt::FusedStep &step = decoded.step;
  std::string a = std::to_string(step.a);
  switch (step.kind) {
  case dlc::rt::FusedStepKind::Unary:
    return "dlc::rt::unaryStep(dlc::rt::UnaryKind::" + decoded.kind.str() + ", " + a + ")";
  case dlc::rt::FusedStepKind::Binary:
    return "dlc::rt::binaryStep(dlc::rt::BinaryKind::" + decoded.kind.str() + ", " + a + ", " +
           std::to_string(step.b) + ")";
  case dlc::rt::FusedStepKind::Clip:
    return "dlc::rt::clipStep(" + a + ", " + floatLiteral(step.p0) + ", " +
           floatLiteral(step.p1) + ")";
  case dlc::rt::FusedStepKind::LeakyRelu:
    return "dlc::rt::leakyReluStep(" + a + ", " + floatLiteral(step.p0) + ")";
  }
  return "";
}

// How the chain reads an input, from its (repeat, period) indexing (FusedInput): a chunk that
// lies in one period of a repeat-1 input is a pointer into it, one that lies in one repeat is
// a single value; other chunks are gathered. `at` is the pointer's offset or the value's index,
// an expression of the chunk's first element `begin`.
enum class InputRead { Pointer, Scalar, Gathered };
struct ChainInput {
  InputRead read;
  int64_t repeat, period;
  std::string at;
};

// Chunks start at multiples of kFusedChunk (fusedChainF32), so whether a chunk stays inside
// one period or one repeat is known at compile time.
ChainInput chainInput(int64_t repeat, int64_t period, int64_t n, bool readByMathStep) {
  const int64_t chunk = dlc::rt::kFusedChunk;
  if (repeat == 1 && period >= n)
    return {InputRead::Pointer, repeat, period, "begin"};
  if (repeat == 1 && period % chunk == 0)
    return {InputRead::Pointer, repeat, period, "begin % " + std::to_string(period)};
  // A math step reads a chunk from memory: a value it reads is gathered (filled) too.
  if (!readByMathStep && period == 1)
    return {InputRead::Scalar, repeat, period, "0"};
  if (!readByMathStep && repeat % chunk == 0)
    return {InputRead::Scalar, repeat, period,
            "begin / " + std::to_string(repeat) + " % " + std::to_string(period)};
  return {InputRead::Gathered, repeat, period, ""};
}

bool isMathStep(const DecodedFusedStep &decoded) {
  dlc::rt::MathFunction function;
  return decoded.step.kind == dlc::rt::FusedStepKind::Unary &&
         dlc::rt::vectorMathOf(decoded.step.unary, function);
}

class ChainWriter {
public:
  ChainWriter(ArrayRef<DecodedFusedStep> steps, std::vector<ChainInput> inputs)
      : steps(steps), inputs(std::move(inputs)), numInputs(int(this->inputs.size())) {
    // Segments: each math step alone, the other steps in maximal runs between them.
    for (int s = 0; s < int(steps.size()); ++s) {
      bool math = isMathStep(steps[s]);
      if (s == 0 || math || isMathStep(steps[s - 1]))
        segmentStarts.push_back(s);
      segmentOf.push_back(int(segmentStarts.size()) - 1);
    }
    // A step's value is buffered when a later segment reads it; a math step's operand too.
    for (int s = 0; s < int(steps.size()); ++s)
      for (int slot : operands(steps[s]))
        if (slot >= numInputs &&
            (segmentOf[slot - numInputs] != segmentOf[s] || isMathStep(steps[s])))
          buffered.insert(slot);
    for (int s = 0; s < int(steps.size()); ++s)
      if (isMathStep(steps[s]) && s + 1 < int(steps.size()))
        buffered.insert(numInputs + s);
  }

  std::string body() {
    // (An empty chunk never comes; saying so keeps GCC from warning that the buffers a math
    // step reads may be uninitialized.)
    std::string text = "  DLC_NO_CONTRACT\n  if (len <= 0)\n    return;\n";
    for (int i = 0; i < numInputs; ++i) {
      std::string x = "x" + std::to_string(i), source = "in[" + std::to_string(i) + "]";
      switch (inputs[i].read) {
      case InputRead::Pointer:
        text += "  const float *" + x + " = " + source + " + " + inputs[i].at + ";\n";
        break;
      case InputRead::Scalar:
        text += "  const float " + x + " = " + source + "[" + inputs[i].at + "];\n";
        break;
      case InputRead::Gathered:
        text += "  alignas(64) float " + x + "[dlc::rt::kFusedChunk];\n";
        text += "  dlc::rt::fusedInputChunk({" + source + ", " + std::to_string(inputs[i].repeat) +
                ", " + std::to_string(inputs[i].period) + "}, begin, len, " + x + ");\n";
        break;
      }
    }
    for (int slot : buffered)
      text += "  alignas(64) float b" + std::to_string(slot) + "[dlc::rt::kFusedChunk];\n";
    for (size_t g = 0; g < segmentStarts.size(); ++g) {
      int first = segmentStarts[g];
      int end = g + 1 < segmentStarts.size() ? segmentStarts[g + 1] : int(steps.size());
      text += isMathStep(steps[first]) ? mathStep(first) : loop(first, end);
    }
    return text;
  }

private:
  static std::vector<int> operands(const DecodedFusedStep &decoded) {
    if (decoded.step.kind == dlc::rt::FusedStepKind::Binary)
      return {decoded.step.a, decoded.step.b};
    return {decoded.step.a};
  }
  bool isLast(int s) const { return s + 1 == int(steps.size()); }

  // The slot's chunk as a pointer (a math step's operand).
  std::string pointer(int slot) const {
    if (slot < numInputs)
      return "x" + std::to_string(slot); // a pointer or gathered; a scalar is gathered
    return "b" + std::to_string(slot);
  }
  // Whether the segment's loop reads the slot from memory (not a register or a scalar).
  bool readsMemory(int slot, int segment) const {
    if (slot < numInputs)
      return inputs[slot].read != InputRead::Scalar;
    return segmentOf[slot - numInputs] != segment || isMathStep(steps[slot - numInputs]);
  }
  // The slot's element in the loop of `segment`: in a block, memory is read through the
  // block's staged copy r<slot>[l]; in the tail, element j directly.
  std::string element(int slot, int segment, bool block) const {
    std::string name = std::to_string(slot);
    if (!readsMemory(slot, segment))
      return (slot < numInputs ? "x" : "v") + name; // a scalar input, or a register
    if (block)
      return "r" + name + "[l]";
    return (slot < numInputs ? "x" : "b") + name + "[j]";
  }

  std::string expression(const DecodedFusedStep &decoded, int segment, bool block) const {
    const dlc::rt::FusedStep &step = decoded.step;
    std::string a = element(step.a, segment, block);
    switch (step.kind) {
    case dlc::rt::FusedStepKind::Unary:
      return "dlc::rt::scalar::" + decoded.kind.str() + "Unary()(" + a + ")";
    case dlc::rt::FusedStepKind::Binary:
      return "dlc::rt::scalar::" + decoded.kind.str() + "Op()(" + a + ", " +
             element(step.b, segment, block) + ")";
    case dlc::rt::FusedStepKind::Clip:
      return "dlc::rt::scalar::clampValue(" + a + ", " + floatLiteral(step.p0) + ", " +
             floatLiteral(step.p1) + ")";
    case dlc::rt::FusedStepKind::LeakyRelu:
      return "dlc::rt::scalar::leakyReluValue(" + a + ", " + floatLiteral(step.p0) + ")";
    }
    return "";
  }

  // Steps [first, end) as one pass over the chunk: blocks of kBlock elements, whose reads are
  // copied into locals first and whose writes leave from locals last (so that the output may
  // alias an input, and GCC's -O2 vectorizer needs no run-time alias checks or epilogue),
  // then the last elements one by one.
  std::string loop(int first, int end) const {
    const int segment = segmentOf[first];
    std::set<int> reads;
    for (int s = first; s < end; ++s)
      for (int slot : operands(steps[s]))
        if (readsMemory(slot, segment))
          reads.insert(slot);
    // Where each written value goes: the output, or its buffer.
    auto destination = [&](int s, const std::string &index) {
      return isLast(s) ? "out[begin + " + index + "]"
                       : "b" + std::to_string(numInputs + s) + "[" + index + "]";
    };
    auto written = [&](int s) { return isLast(s) || buffered.count(numInputs + s); };
    std::string text = "  {\n    constexpr int64_t kBlock = 16;\n    int64_t j = 0;\n"
                       "    for (; j + kBlock <= len; j += kBlock) {\n";
    for (int slot : reads) {
      std::string name = std::to_string(slot);
      text += "      float r" + name + "[kBlock];\n      for (int64_t l = 0; l < kBlock; ++l)\n" +
              "        r" + name + "[l] = " + (slot < numInputs ? "x" : "b") + name + "[j + l];\n";
    }
    for (int s = first; s < end; ++s)
      if (written(s))
        text += "      float w" + std::to_string(numInputs + s) + "[kBlock];\n";
    text += "      for (int64_t l = 0; l < kBlock; ++l) {\n";
    for (int s = first; s < end; ++s) {
      std::string name = std::to_string(numInputs + s);
      text += "        const float v" + name + " = " + expression(steps[s], segment, true) + ";\n";
      if (written(s))
        text += "        w" + name + "[l] = v" + name + ";\n";
    }
    text += "      }\n";
    for (int s = first; s < end; ++s)
      if (written(s))
        text += "      for (int64_t l = 0; l < kBlock; ++l)\n        " + destination(s, "j + l") +
                " = w" + std::to_string(numInputs + s) + "[l];\n";
    text += "    }\n    for (; j < len; ++j) {\n";
    for (int s = first; s < end; ++s) {
      std::string name = std::to_string(numInputs + s);
      text += "      const float v" + name + " = " + expression(steps[s], segment, false) + ";\n";
      if (written(s))
        text += "      " + destination(s, "j") + " = v" + name + ";\n";
    }
    return text + "    }\n  }\n";
  }

  std::string mathStep(int s) const {
    int slot = numInputs + s;
    return "  dlc::rt::mathRow(dlc::rt::MathFunction::" + steps[s].kind.str() + ", " +
           pointer(steps[s].step.a) + ", " +
           (isLast(s) ? std::string("out + begin") : "b" + std::to_string(slot)) + ", len);\n";
  }

  ArrayRef<DecodedFusedStep> steps;
  std::vector<ChainInput> inputs;
  int numInputs;
  std::vector<int> segmentStarts, segmentOf;
  std::set<int> buffered;
};

} // namespace

LogicalResult emitFusedChain(Operation *op, KernelEmitter &e) {
  auto fused = cast<FusedElementwiseOp>(op);
  FailureOr<SmallVector<DecodedFusedStep>> steps = decodeFusedSteps(fused);
  if (failed(steps))
    return failure();
  auto outShape = tensorType(fused.getOutput()).getShape();
  const int64_t n = tensorType(fused.getOutput()).getNumElements();
  std::vector<std::string> inputLiterals, inputPointers;
  std::vector<ChainInput> inputs;
  std::set<int> mathOperands;
  for (const DecodedFusedStep &step : *steps)
    if (isMathStep(step))
      mathOperands.insert(step.step.a);
  for (auto [i, input] : llvm::enumerate(fused.getInputs())) {
    auto [repeat, period] = *fusedInputIndexing(tensorType(input).getShape(), outShape);
    inputPointers.push_back(e.ptr(input));
    inputLiterals.push_back("{" + inputPointers.back() + ", " + std::to_string(repeat) + ", " +
                            std::to_string(period) + "}");
    inputs.push_back(chainInput(repeat, period, n, mathOperands.count(int(i))));
  }
  if (e.interpretFusedChains) {
    std::vector<std::string> stepLiterals;
    for (const DecodedFusedStep &step : *steps)
      stepLiterals.push_back(fusedStepLiteral(step));
    std::string stepArray = e.arrayOf("dlc::rt::FusedStep", stepLiterals, true);
    std::string inputArray = e.arrayOf("dlc::rt::FusedInput", inputLiterals, false);
    e.line("dlc::rt::fusedElementwiseF32(" + inputArray + ", " +
           std::to_string(inputLiterals.size()) + ", " + stepArray + ", " +
           std::to_string(stepLiterals.size()) + ", " + e.ptr(fused.getOutput()) + ", " +
           std::to_string(n) + ");");
    return success();
  }
  std::string name = e.defineFusedChain(ChainWriter(*steps, inputs).body());
  std::string inputArray = e.arrayOf("float *", inputPointers, false);
  e.line("dlc::rt::fusedChainF32(" + name + "_versions, " + inputArray + ", " +
         e.ptr(fused.getOutput()) + ", " + std::to_string(n) + ");");
  return success();
}

} // namespace dlc
