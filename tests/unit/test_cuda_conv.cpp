// The CUDA target's cuDNN convolution: which convolutions cuDNN takes and the descriptors'
// shapes (dlc::cuda::cudnnConvShape), checked against the CPU runtime's convolution by running
// the CUDA runtime's emulated cuDNN call (plain loops over those descriptors) on random
// convolutions of 1 to 3 spatial dims.
#include "dlc_cuda_calls.h"
#include "dlc_kernels.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace dlc::rt;

TEST_CASE("cuDNN takes a convolution iff its padding gives dlc's output size, and its result is "
          "the CPU convolution's",
          "[cuda][conv]") {
  std::mt19937 rng(1201);
  dlc_cuda_context *context = nullptr;
  REQUIRE(dlc_cuda_context_create(0, &context) == DLC_OK);
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int spatial = int(randomInt(rng, 1, 3));
    ConvParams p{};
    WindowParams &w = p.window;
    w.batch = randomInt(rng, 1, 2);
    p.groups = randomInt(rng, 1, 3);
    w.channels = p.groups * randomInt(rng, 1, 3);
    p.outChannels = p.groups * randomInt(rng, 1, 3);
    int64_t padEnd[3] = {0, 0, 0};
    bool symmetricSize = true, empty = false;
    for (int d = 0; d < 3; ++d) {
      const bool used = d >= 3 - spatial;
      w.in[d] = used ? randomInt(rng, 1, 9) : 1;
      w.kernel[d] = used ? randomInt(rng, 1, 3) : 1;
      w.stride[d] = used ? randomInt(rng, 1, 3) : 1;
      w.dilation[d] = used ? randomInt(rng, 1, 2) : 1;
      w.padBegin[d] = used ? randomInt(rng, 0, 2) : 0;
      padEnd[d] = used ? randomInt(rng, 0, 2) : 0;
      const int64_t reach = w.dilation[d] * (w.kernel[d] - 1) + 1;
      const int64_t extent = w.in[d] + w.padBegin[d] + padEnd[d] - reach;
      empty = empty || extent < 0;
      w.out[d] = extent < 0 ? 0 : extent / w.stride[d] + 1;
      const int64_t symmetric = w.in[d] + 2 * w.padBegin[d] - reach;
      symmetricSize = symmetricSize && symmetric >= 0 && symmetric / w.stride[d] + 1 == w.out[d];
    }
    if (empty)
      continue;
    INFO("trial " << trial << ", " << spatial << "-d");
    dlc::cuda::CudnnConvShape shape;
    const bool ok = dlc::cuda::cudnnConvShape(p, shape);
    REQUIRE(ok == symmetricSize);
    if (!ok) {
      ++refused;
      continue;
    }
    ++accepted;
    CHECK(shape.spatial == (spatial == 3 ? 3 : 2));
    CHECK((shape.input[0] == w.batch && shape.input[1] == w.channels &&
           shape.filter[0] == p.outChannels && shape.filter[1] == w.channels / p.groups &&
           shape.output[0] == w.batch && shape.output[1] == p.outChannels &&
           shape.groups == p.groups));

    const int64_t inElements = w.batch * w.channels * w.in[0] * w.in[1] * w.in[2];
    const int64_t outElements = w.batch * p.outChannels * w.out[0] * w.out[1] * w.out[2];
    const int64_t weightElements =
        p.outChannels * (w.channels / p.groups) * w.kernel[0] * w.kernel[1] * w.kernel[2];
    std::vector<float> x = randomFloats(rng, size_t(inElements), -1.0f, 1.0f);
    std::vector<float> weight = randomFloats(rng, size_t(weightElements), -1.0f, 1.0f);
    std::vector<float> expected(static_cast<size_t>(outElements));
    std::vector<float> actual(static_cast<size_t>(outElements), NAN);
    std::vector<float> workspace(convWorkspaceBytes(p) / sizeof(float) + 1);
    convF32(p, x.data(), weight.data(), nullptr, nullptr, expected.data(), workspace.data());

    dlc::cuda::ConvPlan *plan = nullptr;
    size_t workspaceBytes = 0;
    REQUIRE(dlc::cuda::createConv(context, shape, false, 0, &plan, &workspaceBytes) == nullptr);
    REQUIRE(dlc::cuda::conv(context, plan, x.data(), weight.data(), actual.data(), nullptr) ==
            nullptr);
    dlc::cuda::destroyConv(plan);
    for (size_t i = 0; i < expected.size(); ++i)
      REQUIRE(std::fabs(actual[i] - expected[i]) <= 1e-5f * (1.0f + std::fabs(expected[i])));
  }
  // A tensor of more than 2^31 - 1 elements (cuDNN's strides are ints): the direct kernel's.
  ConvParams big{};
  big.window = {1,         1 << 16,   {1, 1, 1 << 16}, {1, 1, 1 << 16},
                {1, 1, 1}, {1, 1, 1}, {0, 0, 0},       {1, 1, 1}};
  big.outChannels = 1;
  big.groups = 1;
  dlc::cuda::CudnnConvShape shape;
  CHECK_FALSE(dlc::cuda::cudnnConvShape(big, shape));
  big.window.in[2] = big.window.out[2] = 1 << 14;
  CHECK(dlc::cuda::cudnnConvShape(big, shape));
  dlc_cuda_context_release(context);
  // Both kinds occur (the seed is fixed: a change of the generator shows here).
  CHECK(accepted > 100);
  CHECK(refused > 50);
}
