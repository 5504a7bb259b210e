// Shared by the training-kernel tests: gradients by central differences.
#ifndef DLC_TESTS_UNIT_GRAD_TEST_UTIL_H
#define DLC_TESTS_UNIT_GRAD_TEST_UTIL_H

#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <vector>

namespace grad_test {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using Forward = std::function<std::vector<float>(const std::vector<float> &)>;

// dL/dx by central differences of L(x) = sum_i dy[i] * f(x)[i], L summed in double. The step
// divides by the perturbation as actually rounded into x. Terms with dy[i] == 0 are left out,
// so a test can mask outputs that are constant but infinite.
inline std::vector<double> numericGrad(std::vector<float> x, const std::vector<float> &dy,
                                const Forward &f, float h) {
  auto loss = [&](const std::vector<float> &v) {
    std::vector<float> y = f(v);
    REQUIRE(y.size() == dy.size());
    double sum = 0.0;
    for (size_t i = 0; i < y.size(); ++i)
      if (dy[i] != 0.0f)
        sum += double(dy[i]) * double(y[i]);
    return sum;
  };
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float xi = x[i], up = xi + h, down = xi - h;
    x[i] = up;
    double lossUp = loss(x);
    x[i] = down;
    double lossDown = loss(x);
    x[i] = xi;
    grad[i] = (lossUp - lossDown) / (double(up) - double(down));
  }
  return grad;
}

} // namespace grad_test

#endif // DLC_TESTS_UNIT_GRAD_TEST_UTIL_H
