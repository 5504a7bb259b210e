// How ONNX signal-processing ops become dlc ops. Window functions are compile-time constants
// (their size must be one); DFT and STFT are MatMuls with constant cosine and sine matrices of
// the transform length (a direct DFT: O(n^2), meant for the short transforms of feature
// extraction, at most kMaxDftLength points).
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace dlc {
namespace {

constexpr int64_t kMaxDftLength = 4096;

Value floatConstant(NodeImporter &n, ArrayRef<int64_t> shape, const std::vector<float> &values,
                    const char *name) {
  std::vector<char> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return ConstantOp::fromBytes(n.b, n.loc(), RankedTensorType::get(shape, n.b.getF32Type()),
                               bytes, name);
}

// A scalar integer input that must be known at compile time.
int64_t constantScalar(NodeImporter &n, int input, const char *what) {
  const ConstTensor &c = n.constInput(input);
  if (c.numElements() != 1)
    throw ImportError(std::string(what) + " must be a scalar");
  return c.asInts()[0];
}

// The result as output_datatype (a float32 table cast when another type is asked for).
Value asOutputDatatype(NodeImporter &n, Value table) {
  int64_t type = n.intAttr("output_datatype", 1);
  Type element = elementTypeFor(*n.b.getContext(), type);
  if (!element)
    throw ImportError("output_datatype " + dtypeName(type) + " is not supported");
  return castTo(n, table, element);
}

// Hann, Hamming and Blackman: sums of cosines of 2 pi k n / N (N = size when periodic, else
// size - 1), as the ONNX reference evaluates them.
OpImport window(std::vector<double> coefficients) {
  return {{0}, [coefficients](NodeImporter &n) -> Value {
            int64_t size = constantScalar(n, 0, "size");
            if (size < 0 || size > kMaxBuiltConstantElements)
              throw ImportError("size " + std::to_string(size) + " is out of range");
            double period = n.intAttr("periodic", 1) ? double(size) : double(size - 1);
            std::vector<float> values(size);
            for (int64_t i = 0; i < size; ++i) {
              double v = 0;
              for (size_t k = 0; k < coefficients.size(); ++k)
                v += coefficients[k] * (k ? std::cos(2.0 * M_PI * double(k * i) / period) : 1.0);
              values[i] = float(v);
            }
            return asOutputDatatype(n, floatConstant(n, {size}, values, "window"));
          }};
}

// MelWeightMatrix [dft_length / 2 + 1, num_mel_bins]: triangular filters between mel-spaced
// edges, computed as the ONNX reference does (its mel step divides by num_mel_bins + 2).
OpImport melWeightMatrix() {
  return {{0, 1, 2, 3, 4}, [](NodeImporter &n) -> Value {
            int64_t mels = constantScalar(n, 0, "num_mel_bins");
            int64_t dftLength = constantScalar(n, 1, "dft_length");
            int64_t sampleRate = constantScalar(n, 2, "sample_rate");
            if (mels < 1 || mels > kMaxDftLength || dftLength < 1 || dftLength > kMaxDftLength ||
                sampleRate < 1)
              throw ImportError("num_mel_bins and dft_length must lie in [1, " +
                                std::to_string(kMaxDftLength) +
                                "] and sample_rate must be positive");
            auto hertz = [&](int input) {
              const ConstTensor &c = n.constInput(input);
              if (c.numElements() != 1)
                throw ImportError("the edge frequencies must be scalars");
              return c.asDoubles()[0];
            };
            auto mel = [](double f) { return 2595.0 * std::log1p(f / 700.0) / std::log(10.0); };
            double low = mel(hertz(3)), high = mel(hertz(4));
            double step = (high - low) / double(mels + 2);
            int64_t spectrum = dftLength / 2 + 1;
            std::vector<int64_t> edges(mels + 2);
            for (int64_t i = 0; i < mels + 2; ++i) {
              double f = 700.0 * std::expm1((double(i) * step + low) / 2595.0 * std::log(10.0));
              double bin = std::floor(double(dftLength + 1) * f / double(sampleRate));
              if (!(bin >= 0 && bin < double(spectrum)))
                throw ImportError("the edge frequencies fall outside the spectrum's " +
                                  std::to_string(spectrum) + " bins");
              edges[i] = int64_t(bin);
            }
            std::vector<float> table(spectrum * mels, 0.0f);
            for (int64_t i = 0; i < mels; ++i) {
              int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
              if (center == left)
                table[center * mels + i] = 1.0f;
              for (int64_t j = left; center > left && j <= center; ++j)
                table[j * mels + i] = float(double(j - left) / double(center - left));
              for (int64_t j = center; j < right; ++j)
                table[j * mels + i] = float(double(right - j) / double(right - center));
            }
            return asOutputDatatype(n, floatConstant(n, {spectrum, mels}, table, "mel_weights"));
          }};
}

// The complex signal of `x` [..., 1 or 2] as real and imaginary parts (null imaginary part for
// a real signal), without the last dim.
std::pair<Value, Value> complexParts(NodeImporter &n, Value x) {
  auto shape = typeOf(x).getShape();
  if (shape.empty() || (shape.back() != 1 && shape.back() != 2))
    throw ImportError("the last dim must be 1 (real) or 2 (complex)");
  int64_t rank = shape.size();
  auto part = [&](int64_t i) { return reshape(n, sliceAxis(n, x, rank - 1, i, 1, 1),
                                              shape.drop_back()); };
  return {part(0), shape.back() == 2 ? part(1) : Value()};
}

// out = sum_j in_j f(j k) along the last axis of `in` ([..., rows]), as in x F with F[j][k] =
// f(2 pi j k / length) for the first `rows` inputs and `cols` outputs.
Value transform(NodeImporter &n, Value in, int64_t rows, int64_t cols, int64_t length,
                double (*f)(double), double scale, const char *name) {
  if (rows * cols > kMaxBuiltConstantElements)
    throw ImportError("the transform matrix is too large to build");
  std::vector<float> m(rows * cols);
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t k = 0; k < cols; ++k)
      m[j * cols + k] = float(scale * f(2.0 * M_PI * double((j * k) % length) / double(length)));
  return matmulOf(n, in, floatConstant(n, {rows, cols}, m, name));
}

double cosine(double a) { return std::cos(a); }
double sine(double a) { return std::sin(a); }

// The DFT of [..., n] signals along their last axis (real `re`, imaginary `im` or null):
// [..., bins, 2]. `inverse` conjugates and divides by the length; `onesided` keeps the
// non-negative frequencies of a forward transform, or, inverse, reads a one-sided spectrum and
// returns the real signal [..., length, 1].
Value dftLastAxis(NodeImporter &n, Value re, Value im, int64_t length, bool inverse,
                  bool onesided) {
  if (length < 1 || length > kMaxDftLength)
    throw ImportError("dft_length " + std::to_string(length) + " is out of range (1 to " +
                      std::to_string(kMaxDftLength) + ")");
  int64_t available = typeOf(re).getShape().back();
  double scale = inverse ? 1.0 / double(length) : 1.0;
  auto truncated = [&](Value v, int64_t rows) {
    return rows < available ? sliceAxis(n, v, typeOf(v).getRank() - 1, 0, 1, rows) : v;
  };
  if (inverse && onesided) {
    // x_t = (1/L) sum over the one-sided bins of w_k (Re_k cos - Im_k sin), w_k = 2 for the
    // bins that stand for a conjugate pair.
    int64_t bins = std::min(available, length / 2 + 1);
    std::vector<float> weights(bins);
    for (int64_t k = 0; k < bins; ++k)
      weights[k] = (k == 0 || 2 * k == length) ? 1.0f : 2.0f;
    Value w = floatConstant(n, {bins}, weights, "irfft_weights");
    Value y = transform(n, bin<MulOp>(n, truncated(re, bins), w), bins, length, length, cosine,
                        scale, "dft_cos");
    if (im)
      y = bin<SubOp>(n, y, transform(n, bin<MulOp>(n, truncated(im, bins), w), bins, length,
                                     length, sine, scale, "dft_sin"));
    return insertUnitDim(n, y, typeOf(y).getRank());
  }
  int64_t rows = std::min(available, length);
  int64_t cols = onesided && !inverse ? length / 2 + 1 : length;
  re = truncated(re, rows);
  // Forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin), scaled.
  double sign = inverse ? 1.0 : -1.0;
  Value outRe = transform(n, re, rows, cols, length, cosine, scale, "dft_cos");
  Value outIm = transform(n, re, rows, cols, length, sine, sign * scale, "dft_sin");
  if (im) {
    im = truncated(im, rows);
    outRe = bin<SubOp>(n, outRe, transform(n, im, rows, cols, length, sine, sign * scale,
                                           "dft_sin"));
    outIm = bin<AddOp>(n, outIm, transform(n, im, rows, cols, length, cosine, scale, "dft_cos"));
  }
  int64_t rank = typeOf(outRe).getRank();
  return concatAxis(n, {insertUnitDim(n, outRe, rank), insertUnitDim(n, outIm, rank)}, rank);
}

OpImport dft() {
  return {{1, 2}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            if (rank < 2)
              throw ImportError("the input needs a signal axis and the real/imaginary axis");
            int64_t axis = n.version >= 20 ? (n.hasInput(2) ? constantScalar(n, 2, "axis") : -2)
                                           : n.intAttr("axis", 1);
            axis = normalizeAxis(axis, rank);
            if (axis == rank - 1)
              throw ImportError("axis must not be the last (real/imaginary) dim");
            bool inverse = n.intAttr("inverse", 0) != 0, onesided = n.intAttr("onesided", 0) != 0;
            if (onesided && shape.back() == 2 && !inverse)
              throw ImportError("a one-sided forward DFT needs a real input");
            int64_t length = n.hasInput(1) ? constantScalar(n, 1, "dft_length")
                             : inverse && onesided ? 2 * (shape[axis] - 1)
                                                   : shape[axis];
            // Move the signal axis last, transform, and move the bins back.
            SmallVector<int64_t> perm;
            for (int64_t d = 0; d < rank - 1; ++d)
              if (d != axis)
                perm.push_back(d);
            perm.push_back(axis);
            perm.push_back(rank - 1);
            auto [re, im] = complexParts(n, transposeValue(n, n.input(0), perm));
            Value y = dftLastAxis(n, re, im, length, inverse, onesided);
            SmallVector<int64_t> back(rank);
            for (int64_t d = 0; d < rank; ++d)
              back[perm[d]] = d;
            return transposeValue(n, y, back);
          }};
}

// STFT: frames of frame_length samples, frame_step apart, each multiplied by the window and
// transformed: [batch, frames, bins, 2].
OpImport stft() {
  return {{1, 3}, [](NodeImporter &n) -> Value {
            requireFloat32(n);
            auto shape = n.inputType(0).getShape();
            if (shape.size() != 3)
              throw ImportError("the signal must be [batch, length, 1 or 2]");
            int64_t step = constantScalar(n, 1, "frame_step");
            int64_t frameLength = n.hasInput(3)   ? constantScalar(n, 3, "frame_length")
                                  : n.hasInput(2) ? n.inputType(2).getShape()[0]
                                                  : 0;
            if (step < 1 || frameLength < 1 || frameLength > shape[1])
              throw ImportError("frame_step and frame_length must be positive and frames must "
                                "fit the signal");
            if (n.hasInput(2) && n.inputType(2).getShape() != ArrayRef<int64_t>{frameLength})
              throw ImportError("the window must have frame_length elements");
            int64_t frames = (shape[1] - frameLength) / step + 1;
            if (frames * frameLength > kMaxBuiltConstantElements)
              throw ImportError("too many frames");
            std::vector<int64_t> at(frames * frameLength);
            for (int64_t f = 0; f < frames; ++f)
              for (int64_t t = 0; t < frameLength; ++t)
                at[f * frameLength + t] = f * step + t;
            std::vector<char> bytes(at.size() * 8);
            std::memcpy(bytes.data(), at.data(), bytes.size());
            Value table = ConstantOp::fromBytes(
                n.b, n.loc(), RankedTensorType::get({frames, frameLength}, n.b.getI64Type()),
                bytes, "stft_frames");
            Value framed = n.b.create<GatherOp>(
                n.loc(), n.inputType(0).clone({shape[0], frames, frameLength, shape[2]}),
                n.input(0), table, 1);
            auto [re, im] = complexParts(n, framed);
            if (n.hasInput(2)) {
              requireFloat32(n, 2);
              re = bin<MulOp>(n, re, n.input(2));
              if (im)
                im = bin<MulOp>(n, im, n.input(2));
            }
            bool onesided = n.intAttr("onesided", 1) != 0;
            if (onesided && im)
              throw ImportError("a one-sided STFT needs a real signal");
            return dftLastAxis(n, re, im, frameLength, false, onesided);
          }};
}

} // namespace

void addSignalImports(ImportTable &table) {
  table.insert({{"HannWindow", window({0.5, -0.5})},
                {"HammingWindow", window({25.0 / 46.0, -(1.0 - 25.0 / 46.0)})},
                {"BlackmanWindow", window({0.42, -0.5, 0.08})},
                {"DFT", dft()},
                {"STFT", stft()},
                {"MelWeightMatrix", melWeightMatrix()}});
}

} // namespace dlc
