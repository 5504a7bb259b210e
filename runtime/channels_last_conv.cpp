#include "channels_last_conv.h"

#include "clamp.h"
#include "conv_shape.h"
#include "gemm.h"
#include "parallel.h"
#include "shares.h"

#include <algorithm>
#include <numeric>

namespace dlc {
namespace rt {

bool isChannelsLastDepthwise(const ConvParams &p) {
  return isDepthwise(p) && p.outChannels == p.groups;
}

bool channelsLastApplies(const ConvParams &p) {
  const WindowParams &w = p.window;
  if (p.planarInput)
    return isPlanar(w) && p.groups == 1 && w.channels <= kMaxPlanarInputChannels;
  return isPlanar(w) && (isChannelsLastDepthwise(p) || (isPointwise(w) && p.groups == 1));
}

namespace {
// Channels a depthwise task takes through all its rows before the next ones: as many as keep
// the input rows one output row reads in L1, so that each input row comes from L2 once, not
// once for each output row reading it (14x14 maps of 672 channels ran at a third of the
// multiply-add rate, row after row of all channels). Whole blocks of the widest vectors; where
// not even one block's rows fit (wide maps), all channels, which the row kernel takes a few
// columns at a time.
constexpr int64_t kDepthwiseWindowBytes = 32 * 1024, kDepthwiseChannelBlock = 64;
int64_t depthwiseChannelGroup(const WindowParams &w) {
  const int64_t windowRows = (w.kernel[1] - 1) * w.dilation[1] + 1;
  const int64_t bytesPerChannel = windowRows * w.in[2] * int64_t(sizeof(float));
  const int64_t group =
      kDepthwiseWindowBytes / bytesPerChannel / kDepthwiseChannelBlock * kDepthwiseChannelBlock;
  return group > 0 ? group : w.channels;
}

// The activation a row kernel applies in registers, of those it takes; any other is applied
// to the rows after (inRegisters false).
RowActivation rowActivation(const Epilogue &epilogue) {
  RowActivation a;
  a.clamp = epilogueClamp(epilogue, a.lo, a.hi);
  a.applyMath = !a.clamp && epilogueMath(epilogue, a.math);
  return a;
}
bool inRegisters(const RowActivation &a) { return a.clamp || a.applyMath; }
} // namespace

// Channels-last depthwise: threads take runs of output rows (batch x height), each through
// its rows a group of channels at a time.
void depthwiseChannelsLastF32(const ConvParams &p, const float *x, const float *packedW,
                              const float *bias, const float *residual, float *y) {
  const WindowParams &w = p.window;
  const int64_t channels = w.channels, rowFloats = w.out[2] * channels;
  const int64_t imageFloats = w.in[1] * w.in[2] * channels;
  const int64_t group = depthwiseChannelGroup(w);
  const RowActivation activation = rowActivation(p.epilogue);
  parallelFor(w.batch * w.out[1], 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = 0; c < channels; c += group)
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / w.out[1], o1 = row % w.out[1];
        depthwiseNhwcRow({x + n * imageFloats, w.in[1], w.in[2], channels, c,
                          std::min(c + group, channels), packedW, bias,
                          residual ? residual + row * rowFloats : nullptr, y + row * rowFloats,
                          w.out[2], w.kernel[1], w.kernel[2], o1 * w.stride[1] - w.padBegin[1],
                          w.stride[2], w.padBegin[2], w.dilation[1], w.dilation[2],
                          activation});
      }
    if (!inRegisters(activation))
      applyEpilogue(p.epilogue, y + begin * rowFloats, (end - begin) * rowFloats);
  });
}

// Channels-last over planar input: threads take runs of output rows, each row all its
// channels (the image's rows a window reads stay in the first-level cache for all of them).
void planarInputChannelsLastF32(const ConvParams &p, const float *x, const float *packedW,
                                const float *bias, const float *residual, float *y) {
  const WindowParams &w = p.window;
  const int64_t rowFloats = w.out[2] * p.outChannels;
  const int64_t imageFloats = w.channels * w.in[1] * w.in[2];
  const RowActivation activation = rowActivation(p.epilogue);
  parallelFor(w.batch * w.out[1], 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / w.out[1], o1 = row % w.out[1];
      planarInputRow({x + n * imageFloats, w.channels, w.in[1], w.in[2], packedW, bias,
                      residual ? residual + row * rowFloats : nullptr, y + row * rowFloats,
                      p.outChannels, w.out[2], w.kernel[1], w.kernel[2],
                      o1 * w.stride[1] - w.padBegin[1], w.stride[2], w.padBegin[2],
                      w.dilation[1], w.dilation[2], activation});
    }
    if (!inRegisters(activation))
      applyEpilogue(p.epilogue, y + begin * rowFloats, (end - begin) * rowFloats);
  });
}

namespace {
// Pixels per product of a channels-last pointwise convolution at most (an image's blocks are
// near-equal: 196 pixels are 65, 65 and 66, not 96, 96 and 4): the GEMM's own row block, so
// the block's output is still in cache when its bias, residual and activation are applied.
constexpr int64_t kPointwisePixelBlock = 96;
// Input channels up to which the pointwise kernel (pointwise_kernel.h) beats the GEMM: its
// tiles read the pixels unpacked and finish bias, residual and clamp in registers, which
// outweighs the GEMM's better reuse only while the sums are short.
constexpr int64_t kPointwiseKernelMaxChannels = 256;
// Pixel blocks per thread from which uneven shares (5 and 4 of 9) cost less than splitting
// each block's output channels.
constexpr int64_t kEvenBlocksPerThread = 4;
// Pixels a block keeps at least where blocks are made more to share out (four AVX-512 register
// tiles' rows).
constexpr int64_t kMinSharedBlock = 48;

} // namespace

// Channels-last pointwise: (pixels x in channels) times the packed (in x out channels)
// weights, in blocks of one image's pixels, each block's output channels in one or more
// parts of whole weight panels, the items split over the threads (each item's product on
// one thread); the input's channels times the image's inputScale row where there is one.
void pointwiseChannelsLastF32(const ConvParams &p, const float *x, const float *packedW,
                              const float *bias, const float *residual, float *y,
                              const float *inputScale) {
  const WindowParams &w = p.window;
  const int64_t plane = product3(w.out), in = w.channels, out = p.outChannels;
  const int64_t threads = activeThreadCount();
  int64_t imageBlocks = (plane + kPointwisePixelBlock - 1) / kPointwisePixelBlock;
  // Few blocks that do not share out evenly become as many more as make them share out, where
  // the GEMM packs them and each keeps kMinSharedBlock pixels: a 14x14 plane's 3 blocks of 65
  // pixels became 4 of 49 on 2 threads, each packed once (split into parts, below, each part
  // packs its block again: MobileNetV3's 672 -> 112 projections 105 -> 95 us).
  if (in > kPointwiseKernelMaxChannels && w.batch * imageBlocks < kEvenBlocksPerThread * threads) {
    const int64_t shared = (w.batch * imageBlocks + threads - 1) / threads * threads;
    if (shared % w.batch == 0 && plane / (shared / w.batch) >= kMinSharedBlock)
      imageBlocks = shared / w.batch;
  }
  const int64_t pixelBlocks = w.batch * imageBlocks;
  if (pixelBlocks == 0 || out == 0)
    return;
  // A 7x7 plane is one block, which left every thread but one idle (EfficientNet-B0's and
  // MobileNetV2's last convolutions ran as fast on two threads as on one), and 3 blocks on 2
  // threads keep one idle a third of the time: a few blocks that do not share out evenly
  // split their output channels too, into just enough parts of whole weight panels (each
  // part's product packs the block's pixels again). The sums of an output do not depend on
  // its part, so the results do not depend on the thread count.
  const int64_t panels = (out + kPackCols - 1) / kPackCols;
  const int64_t parts =
      pixelBlocks % threads == 0 || pixelBlocks >= kEvenBlocksPerThread * threads
          ? 1
          : std::min(panels, threads / std::gcd(pixelBlocks, threads));
  const int64_t workPerItem =
      std::max<int64_t>(1, (plane + imageBlocks - 1) / imageBlocks * in * out / parts);
  // Blocks of whole register tiles (a multiple of 12 pixels, but the image's last) leave one
  // short tile per image, not one per block: 3 blocks of a 14x14 plane, 72 + 60 + 64 pixels
  // rather than 65 + 65 + 66, made its 672 -> 112 projection 5% faster on one thread. Not
  // where the blocks share out over the threads by design (made to share out, or split into
  // parts), whose shares they would unbalance.
  const int64_t align =
      threads == 1 || (parts == 1 && pixelBlocks >= kEvenBlocksPerThread * threads) ? kPackRows
                                                                                       : 1;
  float lo, hi;
  const bool clamp = epilogueClamp(p.epilogue, lo, hi);
  static_assert(kPointwiseKernelMaxChannels <= kMaxBlockDepth,
                "the kernel reads one block of packed weights");
  parallelFor(pixelBlocks * parts, (kMinWorkPerPart + workPerItem - 1) / workPerItem,
              [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t block = item / parts, part = item % parts;
      const int64_t image = block / imageBlocks, inImage = block % imageBlocks;
      const int64_t first = image * plane + shareStart(plane, imageBlocks, inImage, align);
      const int64_t count =
          image * plane + shareStart(plane, imageBlocks, inImage + 1, align) - first;
      const int64_t column = shareStart(out, parts, part, kPackCols);
      const int64_t columns = shareStart(out, parts, part + 1, kPackCols) - column;
      const float *scale = inputScale ? inputScale + image * in : nullptr;
      float *yBlock = y + first * out + column;
      const float *columnBias = bias ? bias + column : nullptr;
      const float *residualBlock = residual ? residual + first * out + column : nullptr;
      if (in <= kPointwiseKernelMaxChannels) {
        // A scaled input is scaled into a block on the stack first (in cache, vectorised;
        // scaling each value as the tile broadcasts it cost a scalar product and a shuffle
        // per multiply-add pair).
        alignas(64) float scaled[kPointwisePixelBlock * kPointwiseKernelMaxChannels];
        const float *xBlock = x + first * in;
        if (scale) {
          for (int64_t r = 0; r < count; ++r)
            for (int64_t c = 0; c < in; ++c)
              scaled[r * in + c] = xBlock[r * in + c] * scale[c];
          xBlock = scaled;
        }
        // One block of packed weights: panel after panel of kPackCols x in floats.
        pointwiseNhwc({xBlock, count, in, columns, out, packedW + column * in, columnBias,
                       residualBlock, yBlock, clamp, lo, hi});
      } else {
        const PackedOperand weights{packedW, panels * kPackCols, column};
        GemmArgs product{false, false, count, columns, in, 1.0f, x + first * in, in, nullptr, 0,
                         0.0f, yBlock, out, {}, weights,
                         {nullptr, columnBias, residualBlock, out, clamp, lo, hi}, scale};
        sgemmOn(selectedCpuIsa(), product);
      }
      if (clamp)
        continue;
      if (columns == out)
        applyEpilogue(p.epilogue, yBlock, count * out);
      else
        for (int64_t r = 0; r < count; ++r)
          applyEpilogue(p.epilogue, yBlock + r * out, columns);
    }
  });
}

} // namespace rt
} // namespace dlc
