// Lifecycle of CUDA models and contexts, on a model generated with --target cuda (built with
// -DDLC_MODEL=NAME -include NAME.h; on a GPU by nvcc, or emulated on the host): models sharing
// one context, the context released before or after its models, two contexts (two streams)
// used from two threads at once, run() on device buffers, CUDA graphs (replayed while the
// pointers stay, captured again when they change), and the refused arguments. Every run must
// reproduce the first one's outputs. Usage: cuda_lifecycle INPUT.npy
#include "dlc_cuda_calls.h" // device buffers, also in emulation
#include "dlc_npy.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#define DLC_JOIN2(a, b) a##b
#define DLC_JOIN(a, b) DLC_JOIN2(a, b)
#define DLC_MODEL_FN(suffix) DLC_JOIN(DLC_MODEL, suffix)
using ModelHandle = DLC_JOIN(DLC_MODEL, _model);

namespace {

// Counted from two threads in the two-streams case.
std::atomic<int> failures{0};

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s (%s)\n", what.c_str(), dlc_cuda_last_error());
    ++failures;
  }
}

const dlc_model_info *info() { return DLC_MODEL_FN(_info)(); }

// The single output of one host run.
std::vector<float> runOnce(ModelHandle *model, const std::vector<const void *> &inputs) {
  std::vector<float> output(info()->outputs[0].bytes / sizeof(float));
  void *outputs[] = {output.data()};
  dlc_status status = DLC_MODEL_FN(_run_host)(model, inputs.data(), outputs);
  expect(status == DLC_OK, std::string("run_host: ") + DLC_MODEL_FN(_last_error)(model));
  return output;
}

bool close(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-5f * (1.0f + std::fabs(b[i]))))
      return false;
  return true;
}

// Two threads, each creating a model with `options` and running it several times, all of
// whose outputs match `reference`.
bool twoThreadsMatch(dlc_cuda_options options, const std::vector<const void *> &inputs,
                     const std::vector<float> &reference) {
  // Emulated, the kernels run on the host one after another: a few runs check the host side,
  // many would only take time.
#ifdef DLC_CUDA_EMULATE
  const int runs = 3;
#else
  const int runs = 20;
#endif
  std::vector<std::thread> threads;
  bool ok[2] = {false, false};
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      dlc_cuda_options own = options;
      ModelHandle *m = nullptr;
      if (DLC_MODEL_FN(_create)(&own, &m) != DLC_OK)
        return;
      bool same = true;
      for (int i = 0; i < runs; ++i)
        same = same && close(runOnce(m, inputs), reference);
      DLC_MODEL_FN(_destroy)(m);
      ok[t] = same;
    });
  for (std::thread &t : threads)
    t.join();
  return ok[0] && ok[1];
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2 || info()->num_inputs != 1 || info()->num_outputs != 1 ||
      info()->outputs[0].dtype != DLC_F32) {
    std::fprintf(stderr, "usage: %s INPUT.npy (a model of one input and one float output)\n",
                 argv[0]);
    return 2;
  }
  dlc::npy::Array input;
  std::string error;
  if (!dlc::npy::load(argv[1], input, &error) || input.data.size() != info()->inputs[0].bytes) {
    std::fprintf(stderr, "%s: %s\n", argv[1], error.empty() ? "wrong size" : error.c_str());
    return 1;
  }
  const std::vector<const void *> inputs = {input.data.data()};

  // Refused arguments.
  ModelHandle *model = nullptr;
  expect(DLC_MODEL_FN(_create)(nullptr, &model) == DLC_INVALID_ARGUMENT && !model,
         "create without options");
  dlc_cuda_options negative = {-1, nullptr, 0};
  expect(DLC_MODEL_FN(_create)(&negative, &model) == DLC_INVALID_ARGUMENT && !model,
         "create on device -1");
  dlc_cuda_context *context = nullptr;
  expect(dlc_cuda_context_create(-1, &context) == DLC_INVALID_ARGUMENT && !context,
         "context on device -1");
  dlc_cuda_context_release(nullptr);
  expect(DLC_MODEL_FN(_run_host)(nullptr, inputs.data(), nullptr) == DLC_INVALID_ARGUMENT,
         "run without a model");

  // A model with its own context gives the reference output.
  dlc_cuda_options own = {0, nullptr, 0};
  expect(DLC_MODEL_FN(_create)(&own, &model) == DLC_OK, "create");
  if (!model)
    return 1;
  const std::vector<float> reference = runOnce(model, inputs);
  void *noOutputs[] = {nullptr};
  expect(DLC_MODEL_FN(_run_host)(model, inputs.data(), noOutputs) == DLC_INVALID_ARGUMENT,
         "run without an output buffer");

  // run() on device buffers, then synchronize.
  {
    dlc_cuda_context *shared = nullptr;
    expect(dlc_cuda_context_create(0, &shared) == DLC_OK, "context");
    void *deviceInput = nullptr, *deviceOutput = nullptr;
    expect(!dlc::cuda::allocate(shared, info()->inputs[0].bytes, &deviceInput) &&
               !dlc::cuda::allocate(shared, info()->outputs[0].bytes, &deviceOutput) &&
               !dlc::cuda::copyToDevice(shared, deviceInput, input.data.data(),
                                        info()->inputs[0].bytes),
           "device buffers");
    dlc_cuda_options options = {0, shared, 0};
    ModelHandle *onShared = nullptr;
    expect(DLC_MODEL_FN(_create)(&options, &onShared) == DLC_OK, "create on a context");
    const void *deviceInputs[] = {deviceInput};
    void *deviceOutputs[] = {deviceOutput};
    expect(DLC_MODEL_FN(_run)(onShared, deviceInputs, deviceOutputs) == DLC_OK, "run");
    std::vector<float> output(reference.size());
    expect(!dlc::cuda::copyToHost(shared, output.data(), deviceOutput, info()->outputs[0].bytes) &&
               DLC_MODEL_FN(_synchronize)(onShared) == DLC_OK,
           "synchronize");
    expect(close(output, reference), "run on device buffers matches run_host");
    DLC_MODEL_FN(_destroy)(onShared);
    dlc::cuda::deallocate(shared, deviceInput);
    dlc::cuda::deallocate(shared, deviceOutput);
    dlc_cuda_context_release(shared);
  }

  // CUDA graphs: run_host (fixed staging buffers) replays one graph; run() on device buffers
  // replays it into the same output (cleared in between, so a replay that computed nothing
  // shows) and captures a new one for another output buffer.
  {
    dlc_cuda_context *shared = nullptr;
    expect(dlc_cuda_context_create(0, &shared) == DLC_OK, "graph context");
    dlc_cuda_options options = {0, shared, 1};
    ModelHandle *graphed = nullptr;
    expect(DLC_MODEL_FN(_create)(&options, &graphed) == DLC_OK, "create with cuda_graph");
    const size_t outBytes = info()->outputs[0].bytes;
    void *deviceInput = nullptr, *outA = nullptr, *outB = nullptr;
    expect(!dlc::cuda::allocate(shared, info()->inputs[0].bytes, &deviceInput) &&
               !dlc::cuda::allocate(shared, outBytes, &outA) &&
               !dlc::cuda::allocate(shared, outBytes, &outB) &&
               !dlc::cuda::copyToDevice(shared, deviceInput, input.data.data(),
                                        info()->inputs[0].bytes),
           "graph device buffers");
    if (graphed && deviceInput && outA && outB) {
      for (int i = 0; i < 3; ++i)
        expect(close(runOnce(graphed, inputs), reference), "run_host replaying its graph");
      const std::vector<float> zeros(reference.size(), 0.0f);
      std::vector<float> output(reference.size());
      const void *deviceInputs[] = {deviceInput};
      for (void *out : {outA, outA, outB}) {
        void *deviceOutputs[] = {out};
        expect(!dlc::cuda::copyToDevice(shared, out, zeros.data(), outBytes) &&
                   DLC_MODEL_FN(_run)(graphed, deviceInputs, deviceOutputs) == DLC_OK &&
                   !dlc::cuda::copyToHost(shared, output.data(), out, outBytes) &&
                   DLC_MODEL_FN(_synchronize)(graphed) == DLC_OK,
               "run with cuda_graph");
        expect(close(output, reference), out == outB ? "a graph captured for new pointers"
                                                     : "a graph replayed on device buffers");
      }
    }
    DLC_MODEL_FN(_destroy)(graphed);
    for (void *buffer : {deviceInput, outA, outB})
      dlc::cuda::deallocate(shared, buffer);
    dlc_cuda_context_release(shared);
  }

  // Three models on one context; the context released first, then the models in order.
  {
    dlc_cuda_context *shared = nullptr;
    expect(dlc_cuda_context_create(0, &shared) == DLC_OK, "shared context");
    dlc_cuda_options options = {0, shared, 0};
    ModelHandle *models[3] = {};
    for (ModelHandle *&m : models)
      expect(DLC_MODEL_FN(_create)(&options, &m) == DLC_OK, "create on the shared context");
    dlc_cuda_context_release(shared);
    for (ModelHandle *m : models)
      if (m)
        expect(close(runOnce(m, inputs), reference), "model on a released context");
    for (ModelHandle *m : models)
      DLC_MODEL_FN(_destroy)(m);
  }
  // The models destroyed first (in reverse order), then the context.
  {
    dlc_cuda_context *shared = nullptr;
    expect(dlc_cuda_context_create(0, &shared) == DLC_OK, "second shared context");
    dlc_cuda_options options = {0, shared, 0};
    ModelHandle *first = nullptr, *second = nullptr;
    expect(DLC_MODEL_FN(_create)(&options, &first) == DLC_OK &&
               DLC_MODEL_FN(_create)(&options, &second) == DLC_OK,
           "two models on one context");
    if (first && second)
      expect(close(runOnce(first, inputs), reference) && close(runOnce(second, inputs), reference),
             "two models on one context");
    DLC_MODEL_FN(_destroy)(second);
    DLC_MODEL_FN(_destroy)(first);
    dlc_cuda_context_release(shared);
  }
  // Two contexts (two streams) from two threads at once.
  expect(twoThreadsMatch({0, nullptr, 0}, inputs, reference), "two streams at once");
  // Two threads, each with a model replaying CUDA graphs, on one shared context (one stream):
  // one model's capture must not record the other's work.
  {
    dlc_cuda_context *shared = nullptr;
    expect(dlc_cuda_context_create(0, &shared) == DLC_OK, "context for two graph threads");
    expect(shared && twoThreadsMatch({0, shared, 1}, inputs, reference),
           "two threads replaying graphs on one context");
    dlc_cuda_context_release(shared);
  }
  DLC_MODEL_FN(_destroy)(model);
  std::printf("%s\n", failures ? "lifecycle: FAILED" : "lifecycle: OK");
  return failures ? 1 : 0;
}
