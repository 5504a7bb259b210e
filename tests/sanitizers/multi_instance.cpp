// The generated API's threading rule under ThreadSanitizer: one model instance per thread, the weights
// shared read-only by all instances. Built against libdigits.a compiled with -fsanitize=thread
// (see run_tsan_multi_instance.py); any data race is a TSan report, which fails the test.
//   usage: multi_instance samples.npy [seed]
//
// 1. References: one instance on the main thread runs each of kThreads distinct input batches.
// 2. C++ class: the main thread creates kThreads digits::Model (one on a caller-provided
//    arena); thread t runs instance t kRuns times, cycling through the inputs, and compares
//    each output with its reference bit for bit. The main thread destroys the instances in a
//    shuffled order.
// 3. C API: thread t creates its own instance (digits_create), runs it kRuns times
//    (digits_run and digits_run_checked), waits for the others, then destroys the instance
//    another thread created (a seeded derangement), all threads at once.
// Exits 1 on any mismatch or failed call.
#include "digits.h"
#include "dlc_npy.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;
constexpr int kRuns = 50;
constexpr int kBatch = digits::k_image_shape[0], kClasses = digits::k_logits_shape[1];
constexpr int kImage = digits::k_image_shape[1] * digits::k_image_shape[2] *
                       digits::k_image_shape[3];
constexpr size_t kInputFloats = size_t(kBatch) * kImage, kOutputFloats = size_t(kBatch) * kClasses;

std::atomic<int> failures{0};

void fail(const char *what, int thread, int run) {
  std::fprintf(stderr, "FAIL: %s (thread %d, run %d)\n", what, thread, run);
  ++failures;
}

// Input batch v: the samples rotated by v images and scaled, so every batch differs.
std::vector<float> makeInput(const float *samples, int v) {
  std::vector<float> input(kInputFloats);
  for (int i = 0; i < kBatch; ++i)
    for (int p = 0; p < kImage; ++p)
      input[size_t(i) * kImage + p] =
          samples[size_t((i + v) % kBatch) * kImage + p] * (1.0f + 0.25f * float(v));
  return input;
}

bool same(const std::vector<float> &a, const std::vector<float> &b) {
  return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A reusable barrier (C++17 has no std::barrier).
class Barrier {
public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    int generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation != generation_; });
    }
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_, waiting_ = 0, generation_ = 0;
};

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s samples.npy [seed]\n", argv[0]);
    return 2;
  }
  dlc::npy::Array samples;
  std::string error;
  if (!dlc::npy::load(argv[1], samples, &error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  if (samples.dtype != DLC_F32 || samples.data.size() != sizeof(float) * kInputFloats) {
    std::fprintf(stderr, "error: expected %d float32 8x8 images\n", kBatch);
    return 1;
  }
  unsigned seed = argc == 3 ? unsigned(std::strtoul(argv[2], nullptr, 10))
                            : unsigned(std::random_device()());
  std::printf("seed %u (rerun with: %s %s %u)\n", seed, argv[0], argv[1], seed);
  std::mt19937 rng(seed);

  // 1. References, one instance on the main thread.
  std::vector<std::vector<float>> inputs, refs;
  {
    digits::Model model;
    if (model.init() != DLC_OK) {
      std::fprintf(stderr, "error: cannot create the reference model\n");
      return 1;
    }
    for (int v = 0; v < kThreads; ++v) {
      inputs.push_back(makeInput(reinterpret_cast<const float *>(samples.data.data()), v));
      refs.emplace_back(kOutputFloats);
      if (model.run(inputs[v].data(), refs[v].data()) != DLC_OK) {
        std::fprintf(stderr, "error: the reference run failed\n");
        return 1;
      }
    }
    for (int v = 1; v < kThreads; ++v)
      if (same(refs[v], refs[0])) {
        std::fprintf(stderr, "error: input batches %d and 0 give the same output\n", v);
        return 1;
      }
  }

  // 2. C++ class: created on the main thread, one instance per worker, destroyed shuffled.
  {
    std::unique_ptr<void, AlignedFree> arena(std::aligned_alloc(
        64, (digits::kArenaBytes + 63) / 64 * 64));
    std::vector<std::unique_ptr<digits::Model>> models;
    for (int t = 0; t < kThreads; ++t) {
      models.push_back(std::make_unique<digits::Model>());
      digits::Options options;
      if (t == kThreads - 1)
        options.arena = arena.get(); // one instance on caller memory
      if (models[t]->init(options) != DLC_OK) {
        std::fprintf(stderr, "error: cannot create instance %d\n", t);
        return 1;
      }
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        std::vector<float> out(kOutputFloats);
        for (int r = 0; r < kRuns; ++r) {
          int v = (t + r) % kThreads;
          std::fill(out.begin(), out.end(), -1.0f);
          if (models[t]->run(inputs[v].data(), out.data()) != DLC_OK)
            fail("digits::Model::run failed", t, r);
          else if (!same(out, refs[v]))
            fail("digits::Model::run output differs from the reference", t, r);
        }
      });
    for (auto &thread : threads)
      thread.join();
    std::vector<int> order(kThreads);
    for (int t = 0; t < kThreads; ++t)
      order[t] = t;
    std::shuffle(order.begin(), order.end(), rng);
    std::printf("C++ class: %d threads x %d runs; destroyed on the main thread in the order",
                kThreads, kRuns);
    for (int t : order) {
      std::printf(" %d", t);
      models[t].reset();
    }
    std::printf("\n");
  }

  // 3. C API: created in the workers, destroyed concurrently by other workers.
  {
    // Thread t destroys the instance of thread victim[t]: each thread hands over to the next
    // one in a shuffled cycle, so no thread destroys its own instance.
    std::vector<int> cycle(kThreads), victim(kThreads);
    for (int t = 0; t < kThreads; ++t)
      cycle[t] = t;
    std::shuffle(cycle.begin(), cycle.end(), rng);
    for (int i = 0; i < kThreads; ++i)
      victim[cycle[i]] = cycle[(i + 1) % kThreads];
    std::vector<digits_model *> models(kThreads, nullptr);
    Barrier created(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        digits_model *model = nullptr;
        if (digits_create(nullptr, &model) != DLC_OK || !model)
          fail("digits_create failed", t, -1);
        models[t] = model;
        const dlc_model_info *info = digits_info();
        std::vector<float> out(kOutputFloats);
        for (int r = 0; model && r < kRuns; ++r) {
          int v = (t + 3 * r) % kThreads;
          std::fill(out.begin(), out.end(), -1.0f);
          dlc_status status;
          if (r % 2) {
            const void *in[] = {inputs[v].data()};
            void *outs[] = {out.data()};
            status = digits_run(model, in, outs);
          } else {
            dlc_tensor in = {DLC_F32, info->inputs[0].rank, info->inputs[0].shape,
                             inputs[v].data()};
            dlc_tensor o = {DLC_F32, info->outputs[0].rank, info->outputs[0].shape, out.data()};
            status = digits_run_checked(model, &in, 1, &o, 1);
          }
          if (status != DLC_OK)
            fail("digits_run failed", t, r);
          else if (!same(out, refs[v]))
            fail("digits_run output differs from the reference", t, r);
        }
        created.wait(); // every instance created and done running
        digits_destroy(models[victim[t]]);
      });
    for (auto &thread : threads)
      thread.join();
    std::printf("C API: %d threads x %d runs; thread t destroyed the instance of thread",
                kThreads, kRuns);
    for (int t = 0; t < kThreads; ++t)
      std::printf(" %d->%d", t, victim[t]);
    std::printf("\n");
  }

  if (failures) {
    std::printf("FAILED: %d mismatches or failed calls\n", failures.load());
    return 1;
  }
  std::printf("OK: every run of every instance matched its reference bit for bit\n");
  return 0;
}
