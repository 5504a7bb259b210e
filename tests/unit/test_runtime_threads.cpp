// The kernels that split their work over a model's threads: the same bits as one thread, on
// any thread count, and with threads they do use them (the widest parallel region, as the
// profiler reports it).
#include "parallel.h"
#include "runtime_test_util.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

using namespace dlc::rt;

namespace {

// Runs `kernel` (which writes `out`) on one thread, then on each of `threadCounts`; compares
// bits (NaNs included).
template <typename T, typename Kernel>
void checkThreaded(const std::string &what, std::vector<T> &out, Kernel kernel,
                   std::initializer_list<int> threadCounts = {2, 3}) {
  std::fill(out.begin(), out.end(), T(-7));
  kernel();
  const std::vector<T> serial = out;
  for (int threads : threadCounts) {
    INFO(what << " on " << threads << " threads");
    std::fill(out.begin(), out.end(), T(-7));
    ThreadPool *pool = createThreadPool(threads);
    int widest = 0;
    {
      ThreadScope scope(pool);
      takeWidestRun();
      kernel();
      widest = takeWidestRun();
    }
    destroyThreadPool(pool);
    CHECK(std::memcmp(out.data(), serial.data(), out.size() * sizeof(T)) == 0);
    CHECK(widest == threads);
  }
}

// checkThreaded on convF32 with packed weights, over random input, weights and bias of p's
// sizes.
void checkThreadedConv(std::mt19937 &rng, const std::string &what, const ConvParams &p) {
  const WindowParams &w = p.window;
  const int64_t taps = w.kernel[0] * w.kernel[1] * w.kernel[2];
  std::vector<float> x = randomFloats(rng, w.batch * w.channels * w.in[0] * w.in[1] * w.in[2]),
                     weights = randomFloats(rng, p.outChannels * w.channels / p.groups * taps),
                     bias = randomFloats(rng, p.outChannels),
                     y(size_t(w.batch * p.outChannels * w.out[0] * w.out[1] * w.out[2]));
  std::vector<float> packed(packedConvWeightBytes(p) / sizeof(float)),
      workspace(convWorkspaceBytes(p) / sizeof(float));
  packConvWeights(p, weights.data(), packed.data());
  checkThreaded(what, y, [&] {
    convF32(p, x.data(), packed.data(), bias.data(), nullptr, y.data(), workspace.data());
  });
}

} // namespace

TEST_CASE("threaded kernels: the serial bits on any thread count, every thread used",
          "[threads]") {
  std::mt19937 rng(5);
  SECTION("unary ops") {
    std::vector<float> x = randomFloats(rng, 100003, -4, 4), y(x.size());
    for (UnaryKind kind : {UnaryKind::Exp, UnaryKind::Tanh, UnaryKind::Erf})
      checkThreaded("unary", y, [&] { unary(kind, x.data(), y.data(), int64_t(x.size())); });
  }
  SECTION("binary ops, by rows and along one flat run") {
    const int64_t rows = 37, cols = 3001;
    std::vector<float> a = randomFloats(rng, rows * cols), b = randomFloats(rng, cols),
                       y(a.size());
    const int64_t aStrides[] = {cols, 1}, rowStrides[] = {0, 1}, shape[] = {rows, cols};
    checkThreaded("row broadcast", y, [&] {
      binary(BinaryKind::Div, a.data(), aStrides, b.data(), rowStrides, y.data(), shape, 2);
    });
    const int64_t flat[] = {rows * cols}, one[] = {1}, scalar[] = {0};
    checkThreaded("flat", y, [&] {
      binary(BinaryKind::Pow, a.data(), one, a.data(), scalar, y.data(), flat, 1);
    });
  }
  SECTION("softmax over the last axis and over a middle one") {
    std::vector<float> x = randomFloats(rng, 1000 * 257, -8, 8), y(x.size());
    checkThreaded("last axis", y, [&] { softmax(x.data(), y.data(), 1000, 257, 1, false); });
    checkThreaded("middle axis", y, [&] { softmax(x.data(), y.data(), 4, 257, 75, true); });
  }
  SECTION("reductions: over the last axis, a leading one, and two apart") {
    const int64_t shape[] = {6, 40, 1031};
    std::vector<float> x = randomFloats(rng, 6 * 40 * 1031, -2, 2);
    // Output strides per input dim (0: reduced), as the compiler writes them.
    const int64_t lastAxis[] = {40, 1, 0}, leadingAxes[] = {0, 0, 1}, outerAndLast[] = {0, 1, 0};
    std::vector<float> rows(6 * 40), columns(1031), middle(40);
    checkThreaded("last axis", rows, [&] {
      reduce(ReduceKind::Sum, x.data(), shape, lastAxis, 3, rows.data(), 240, 1031);
    });
    checkThreaded("leading axes", columns, [&] {
      reduce(ReduceKind::Mean, x.data(), shape, leadingAxes, 3, columns.data(), 1031, 240);
    });
    // A channels-last global pool of few channels over many positions (chunks of positions)
    // and of more channels (blocks of channels only).
    const int64_t pooled[] = {1, 12544, 48}, pooledStrides[] = {0, 0, 1};
    std::vector<float> map = randomFloats(rng, 12544 * 48, -2, 2), means(48);
    checkThreaded("channels-last global pool", means, [&] {
      reduce(ReduceKind::Mean, map.data(), pooled, pooledStrides, 3, means.data(), 48, 12544);
    });
    const int64_t widePool[] = {1, 3000, 200};
    std::vector<float> wideMeans(200);
    checkThreaded("channels-last global pool of 200 channels", wideMeans, [&] {
      reduce(ReduceKind::Max, map.data(), widePool, pooledStrides, 3, wideMeans.data(), 200, 3000);
    });
    const int64_t wide[] = {1, 40, 100003};
    std::vector<float> big = randomFloats(rng, 40 * 100003, -2, 2);
    checkThreaded("first and last axes", middle, [&] {
      reduce(ReduceKind::Max, big.data(), wide, outerAndLast, 3, middle.data(), 40, 100003);
    });
  }
  SECTION("concat of a batch of one, and gather") {
    std::vector<float> a = randomFloats(rng, 3 * 40000), b = randomFloats(rng, 5 * 40000),
                       c = randomFloats(rng, 4 * 40000), y(12 * 40000);
    const void *inputs[] = {a.data(), b.data(), c.data()};
    const int64_t axisSizes[] = {3, 5, 4};
    checkThreaded("concat", y, [&] {
      concat(inputs, axisSizes, 3, y.data(), 1, 40000, sizeof(float));
    });
    std::vector<float> table = randomFloats(rng, 1000 * 768), rows(400 * 768);
    std::vector<int64_t> indices;
    for (int64_t i = 0; i < 400; ++i)
      indices.push_back((i * 389) % 1000 - (i % 3 == 0 ? 1000 : 0));
    checkThreaded("gather", rows, [&] {
      CHECK(gather(table.data(), indices.data(), 400, rows.data(), 1, 1000, 768, sizeof(float)));
    });
  }
  SECTION("slice: attention's Q of a QKV product, and a reversed middle dim") {
    std::vector<float> qkv = randomFloats(rng, 512 * 2304), q(512 * 768);
    const int64_t inShape[] = {1, 512, 2304}, starts[] = {0, 0, 768}, steps[] = {1, 1, 1},
                  outShape[] = {1, 512, 768};
    checkThreaded("slice", q, [&] {
      slice(qkv.data(), q.data(), sizeof(float), inShape, starts, steps, outShape, 3);
    });
    // Rows 510, 508, ..., 2 of the first 1000 columns.
    std::vector<float> reversed(255 * 1000);
    const int64_t backStarts[] = {0, 510, 0}, backSteps[] = {1, -2, 1},
                  backShape[] = {1, 255, 1000};
    checkThreaded("reversed slice", reversed, [&] {
      slice(qkv.data(), reversed.data(), sizeof(float), inShape, backStarts, backSteps,
            backShape, 3);
    });
    CHECK(reversed[0] == qkv[510 * 2304]);
    CHECK(reversed[254 * 1000 + 999] == qkv[2 * 2304 + 999]);
  }
  SECTION("products with packed weights: by rows, by columns, and a grid of both") {
    // 200 rows are three blocks of rows: 2 or 3 threads take rows, 4 a 2 x 2 grid; 64 rows
    // are one block, split by columns, as is one row (a classifier head: its own loop, worth
    // splitting though it does few multiply-adds). The epilogue's bias and residual follow
    // each part.
    for (auto [m, n, k] : {std::array<int64_t, 3>{200, 300, 300}, {64, 300, 300},
                           {1, 1000, 512}}) {
      std::vector<float> a = randomFloats(rng, m * k), b = randomFloats(rng, k * n),
                         bias = randomFloats(rng, n), residual = randomFloats(rng, m * n),
                         packed(packedGemmBBytes(k, n) / sizeof(float)), c(size_t(m * n));
      packGemmB(false, k, n, b.data(), n, packed.data());
      const GemmEpilogue epilogue{nullptr, bias.data(), residual.data(), n, false, 0.0f, 0.0f};
      checkThreaded(
          "gemm of " + std::to_string(m) + " rows", c,
          [&] {
            sgemmPackedB(false, m, n, k, 1.0f, a.data(), k, packed.data(), 0.0f, c.data(), n,
                         epilogue);
          },
          {2, 3, 4});
    }
  }
  SECTION("a Winograd convolution with few tiles (its positions' GEMMs split)") {
    ConvParams p = conv3x3(64, 128, 13); // 49 tiles
    p.packedWeights = true;
    REQUIRE(winogradApplies(p));
    checkThreadedConv(rng, "winograd", p);
  }
  SECTION("an im2col convolution on a 7x7 map (its matrix built by channels, then split)") {
    ConvParams p = conv3x3(160, 96, 7); // 160 channels: not the padded planes; 16 tiles
    p.packedWeights = true;
    REQUIRE_FALSE(winogradApplies(p));
    REQUIRE_FALSE(paddedPlanesApply(p));
    checkThreadedConv(rng, "im2col 7x7", p);
  }
  SECTION("a convolution of many small groups (threads take whole groups), 3x3 and 1x1") {
    for (int64_t kernel : {3, 1}) {
      ConvParams p = conv3x3(160, 160, 14); // RegNet's groups of 16 channels
      p.groups = 10;
      if (kernel == 1) {
        p.window.kernel[1] = p.window.kernel[2] = 1;
        p.window.padBegin[1] = p.window.padBegin[2] = 0;
      }
      p.packedWeights = true;
      p.epilogue.activation = Activation::Relu;
      checkThreadedConv(rng, "grouped conv", p);
    }
  }
  SECTION("a convolution of few channels over padded planes (threads take bands of rows)") {
    ConvParams p = conv3x3(16, 32, 40); // YOLO's early layers: 3x3 stride 2
    for (int d = 1; d < 3; ++d) {
      p.window.stride[d] = 2;
      p.window.out[d] = 20;
    }
    p.packedWeights = true;
    p.epilogue.activation = Activation::Silu;
    REQUIRE(paddedPlanesApply(p));
    checkThreadedConv(rng, "banded planes", p);
  }
  SECTION("an im2col convolution whose chunks are narrow (threads split each chunk's columns)") {
    // ResNet-50's layer2.0 conv2: 3x3 stride 2, 56 -> 28; the 1 MiB workspace holds 8 output
    // rows, 224 columns of 1152 rows.
    ConvParams p = conv3x3(128, 128, 56);
    for (int d = 1; d < 3; ++d) {
      p.window.stride[d] = 2;
      p.window.out[d] = 28;
    }
    p.packedWeights = true;
    REQUIRE_FALSE(winogradApplies(p));
    checkThreadedConv(rng, "strided im2col conv", p);
  }
  SECTION("transpose, also with a batch of one first") {
    const int64_t shape[] = {64, 33, 129}, perm[] = {2, 0, 1};
    std::vector<float> x = randomFloats(rng, 64 * 33 * 129), y(x.size());
    checkThreaded("transpose", y, [&] {
      transpose(x.data(), y.data(), sizeof(float), shape, perm, 3);
    });
    const int64_t image[] = {1, 32, 61, 67}, toChannelsLast[] = {0, 2, 3, 1};
    std::vector<float> nchw = randomFloats(rng, 32 * 61 * 67), nhwc(nchw.size());
    checkThreaded("to channels-last", nhwc, [&] {
      transpose(nchw.data(), nhwc.data(), sizeof(float), image, toChannelsLast, 4);
    });
  }
  SECTION("batched matmul, one product per head") {
    const int64_t batch = 12, m = 37, n = 45, k = 29;
    std::vector<float> a = randomFloats(rng, batch * m * k), b = randomFloats(rng, k * n),
                       c(batch * m * n);
    std::vector<int64_t> aOffsets, bOffsets(batch, 0);
    for (int64_t i = 0; i < batch; ++i)
      aOffsets.push_back(i * m * k);
    checkThreaded("batched matmul", c, [&] {
      batchedMatmulF32(a.data(), aOffsets.data(), b.data(), bOffsets.data(), c.data(), batch, m,
                       n, k);
    });
  }
}

TEST_CASE("a region's parts: each run once, a slow thread's share taken over", "[threads]") {
  SECTION("claimed ranges hand out every item once, under contention") {
    constexpr int kOwners = 3;
    constexpr int64_t kItems = 200000;
    ClaimedRanges ranges;
    ranges.reset(kItems, kOwners);
    std::vector<std::atomic<int>> claimed(kItems);
    std::vector<std::thread> owners;
    for (int owner = 0; owner < kOwners; ++owner)
      owners.emplace_back([&, owner] {
        for (int64_t item; (item = ranges.claim(owner)) >= 0;)
          claimed[size_t(item)].fetch_add(1);
      });
    for (std::thread &owner : owners)
      owner.join();
    int64_t once = 0;
    for (const std::atomic<int> &count : claimed)
      once += count.load() == 1;
    CHECK(once == kItems);
  }
  SECTION("an owner alone works through its own range, then the others' from their ends") {
    ClaimedRanges ranges;
    ranges.reset(7, 2);
    std::vector<int64_t> order;
    for (int64_t item; (item = ranges.claim(1)) >= 0;)
      order.push_back(item);
    CHECK(order == std::vector<int64_t>{3, 4, 5, 6, 2, 1, 0});
  }
  SECTION("the thread that is done first takes over the rest of a stalled thread's share") {
    // The caller's share is parts 0-3; its first part stalls, so the worker, done with 4-7,
    // goes on with 3, 2 and 1.
    constexpr int kParts = 8;
    struct Run {
      std::atomic<int> runs[kParts];
      std::thread::id thread[kParts];
    } run{};
    ThreadPool *pool = createThreadPool(2);
    {
      ThreadScope scope(pool);
      parallelRun(
          kParts,
          [](void *context, int part) {
            Run &r = *static_cast<Run *>(context);
            if (part == 0)
              std::this_thread::sleep_for(std::chrono::milliseconds(200));
            r.runs[part].fetch_add(1);
            r.thread[part] = std::this_thread::get_id();
          },
          &run);
    }
    destroyThreadPool(pool);
    int byCaller = 0;
    for (int part = 0; part < kParts; ++part) {
      CHECK(run.runs[part].load() == 1);
      byCaller += run.thread[part] == std::this_thread::get_id();
    }
    CHECK(byCaller == 1);
  }
}
