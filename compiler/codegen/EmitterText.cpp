// What every emitter writes with: the KernelEmitter's statements and definitions, and the C++
// spellings of element types, dtypes, literals and epilogues.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>

using namespace mlir;

namespace dlc {

std::string KernelEmitter::array(ArrayRef<int64_t> values) {
  // A zero-length array is not valid C++; a rank-0 shape still needs a valid pointer.
  return arrayOf("int64_t", {values.empty() ? "0" : list(values)}, true);
}

std::string KernelEmitter::arrayOf(const std::string &type, ArrayRef<std::string> initializers,
                                   bool constantInitializers) {
  std::string name = "a" + std::to_string(arrays++);
  line(std::string(constantInitializers ? "static " : "") + "const " + type + " " + name +
       "[] = {" + llvm::join(initializers, ", ") + "};");
  return name;
}

std::string cType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  // float16, bfloat16 and float8 travel as their bits; no kernel computes on them (the importer
  // widens them first, casts convert them).
  if (t.isF16() || t.isBF16())
    return "uint16_t";
  if (isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type, Float8E5M2FNUZType, Float8E8M0Type,
          Float4E2M1Type>(t))
    return "uint8_t";
  // 4- and 2-bit integers take a byte each, signed ones sign-extended.
  if (t.isInteger(4) || t.isInteger(2))
    return t.isUnsignedInteger() ? "uint8_t" : "int8_t";
  // isInteger(w) ignores signedness: the unsigned types are told apart first.
  if (t.isUnsignedInteger(64))
    return "uint64_t";
  if (t.isUnsignedInteger(32))
    return "uint32_t";
  if (t.isUnsignedInteger(16))
    return "uint16_t";
  if (t.isUnsignedInteger(8) || t.isInteger(1))
    return "uint8_t";
  if (t.isInteger(64))
    return "int64_t";
  if (t.isInteger(32))
    return "int32_t";
  if (t.isInteger(16))
    return "int16_t";
  if (t.isInteger(8))
    return "int8_t";
  return "";
}

std::string roundingEnumerator(StringRef roundMode) {
  switch (roundingNamed(roundMode)) {
  case rt::Rounding::Down:
    return "dlc::rt::Rounding::Down";
  case rt::Rounding::Nearest:
    return "dlc::rt::Rounding::Nearest";
  case rt::Rounding::Up:
    break;
  }
  return "dlc::rt::Rounding::Up";
}

std::string dtypeEnum(Type t) {
  if (t.isF32())
    return "DLC_F32";
  if (t.isF64())
    return "DLC_F64";
  if (t.isF16())
    return "DLC_F16";
  if (t.isBF16())
    return "DLC_BF16";
  if (t.isFloat8E4M3FN())
    return "DLC_F8E4M3FN";
  if (t.isFloat8E4M3FNUZ())
    return "DLC_F8E4M3FNUZ";
  if (t.isFloat8E5M2())
    return "DLC_F8E5M2";
  if (t.isFloat8E5M2FNUZ())
    return "DLC_F8E5M2FNUZ";
  if (isa<Float8E8M0Type>(t))
    return "DLC_F8E8M0";
  if (isa<Float4E2M1Type>(t))
    return "DLC_F4E2M1";
  if (t.isUnsignedInteger(4))
    return "DLC_U4";
  if (t.isUnsignedInteger(2))
    return "DLC_U2";
  if (t.isInteger(4))
    return "DLC_I4";
  if (t.isInteger(2))
    return "DLC_I2";
  if (t.isUnsignedInteger(64))
    return "DLC_U64";
  if (t.isUnsignedInteger(32))
    return "DLC_U32";
  if (t.isUnsignedInteger(16))
    return "DLC_U16";
  if (t.isUnsignedInteger(8))
    return "DLC_U8";
  if (t.isInteger(64))
    return "DLC_I64";
  if (t.isInteger(32))
    return "DLC_I32";
  if (t.isInteger(16))
    return "DLC_I16";
  if (t.isInteger(1))
    return "DLC_BOOL";
  return "DLC_I8";
}

std::string list(ArrayRef<int64_t> values) {
  std::string s;
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s;
}

std::string floatLiteral(double value) {
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9gf", value);
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos && s.find("inf") == std::string::npos)
    s.insert(s.size() - 1, ".0");
  return s;
}

dlc::rt::Epilogue epilogueOf(Operation *op) {
  using dlc::rt::Activation;
  dlc::rt::Epilogue epilogue{Activation::None, 0.0f, 0.0f, 0.0f};
  auto activation = op->getAttrOfType<StringAttr>(kActivationAttr);
  if (!activation)
    return epilogue;
  auto param = [&](const char *name) {
    return float(op->getAttrOfType<FloatAttr>(name).getValueAsDouble());
  };
  // The op's verifier has checked the name and its parameters.
  epilogue.activation = llvm::StringSwitch<Activation>(activation.getValue())
#define DLC_ACTIVATION_CASE(name, attribute) .Case(attribute, Activation::name)
                            DLC_ACTIVATIONS(DLC_ACTIVATION_CASE)
#undef DLC_ACTIVATION_CASE
                            .Default(Activation::None);
  if (epilogue.activation == Activation::Clip) {
    epilogue.min = param(kActivationMinAttr);
    epilogue.max = param(kActivationMaxAttr);
  } else if (epilogue.activation == Activation::LeakyRelu) {
    epilogue.alpha = param(kActivationAlphaAttr);
  }
  return epilogue;
}

std::string epilogueLiteral(const dlc::rt::Epilogue &epilogue) {
  static const char *const names[] = {
#define DLC_ACTIVATION_NAME(name, attribute) #name,
      DLC_ACTIVATIONS(DLC_ACTIVATION_NAME)
#undef DLC_ACTIVATION_NAME
  };
  return std::string("{dlc::rt::Activation::") + names[int(epilogue.activation)] + ", " +
         floatLiteral(epilogue.min) + ", " + floatLiteral(epilogue.max) + ", " +
         floatLiteral(epilogue.alpha) + "}";
}

std::string commentText(const std::string &s) {
  std::string out;
  for (char c : s)
    out += static_cast<unsigned char>(c) < 0x20 || c == '\\' ? '?' : c;
  return out;
}

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '?') // '?': no trigraph such as "??=" can form
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

void KernelEmitter::checkedCall(const std::string &call) {
  line("if (const char *error = " + call + ")");
  line("  return error;");
}

void KernelEmitter::fallibleCall(const std::string &call, const std::string &reason) {
  line("if (!" + call + ")");
  line("  return " + cString(currentOp + ": " + reason) + ";");
}

int KernelEmitter::faultCode(const std::string &reason) {
  faults.push_back(currentOp + ": " + reason);
  return int(faults.size());
}

std::string KernelEmitter::defineFusedChain(const std::string &chainBody) {
  auto [it, fresh] = chainsByBody.try_emplace(chainBody, "chain" + std::to_string(chainCount));
  if (!fresh)
    return it->second;
  std::string name = "chain" + std::to_string(chainCount++);
  kernels << "// " << commentText(currentOp) << "\nDLC_CHAIN_BODY void " << name
          << "(const float *const *in, float *out, int64_t begin, int64_t len) {\n"
          << chainBody << "}\nDLC_FUSED_CHAIN(" << name << ")\n\n";
  return name;
}

std::string KernelEmitter::defineKernel(const std::string &params, const std::string &kernelBody,
                                        int64_t blockThreads) {
  std::string name = "kernel" + std::to_string(kernelCount++);
  kernels << "DLC_GLOBAL DLC_LAUNCH_BOUNDS(" << blockThreads << ") void " << name << "(" << params
          << ") {\n"
          << kernelBody << "}\n\n";
  return name;
}

} // namespace dlc
