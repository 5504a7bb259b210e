#include "dlc_state.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'S', 'T', 'A', 'T', 'E'};
constexpr uint32_t kVersion = 1;

// The header and layout as bytes (little-endian hosts only, like the weights).
std::string header(const dlc_state_info *info, int64_t step, float lr) {
  std::string out(kMagic, sizeof kMagic);
  auto put = [&](const void *p, size_t n) { out.append(static_cast<const char *>(p), n); };
  auto u64 = [&](uint64_t v) { put(&v, 8); };
  put(&kVersion, 4);
  u64(static_cast<uint64_t>(step));
  put(&lr, 4);
  u64(static_cast<uint64_t>(info->num_entries));
  for (int i = 0; i < info->num_entries; ++i) {
    const dlc_state_entry &e = info->entries[i];
    u64(std::strlen(e.name));
    put(e.name, std::strlen(e.name));
    u64(static_cast<uint64_t>(e.kind));
    u64(static_cast<uint64_t>(e.dtype));
    u64(static_cast<uint64_t>(e.rank));
    for (int d = 0; d < e.rank; ++d)
      u64(static_cast<uint64_t>(e.shape[d]));
    u64(e.offset);
    u64(e.bytes);
  }
  u64(info->state_bytes);
  return out;
}

// Where the step and the learning rate sit in the header.
constexpr size_t kStepAt = sizeof kMagic + 4, kRateAt = kStepAt + 8;

} // namespace

extern "C" dlc_status dlc_state_save(const dlc_state_info *info, const unsigned char *state,
                                     int64_t step, float learning_rate, const char *path) {
  if (!info || !state || !path)
    return DLC_INVALID_ARGUMENT;
  std::string head = header(info, step, learning_rate);
  FILE *f = std::fopen(path, "wb");
  if (!f)
    return DLC_IO_ERROR;
  bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
            std::fwrite(state, 1, info->state_bytes, f) == info->state_bytes;
  ok = (std::fclose(f) == 0) && ok;
  return ok ? DLC_OK : DLC_IO_ERROR;
}

extern "C" dlc_status dlc_state_load(const dlc_state_info *info, unsigned char *state,
                                     int64_t *step, float *learning_rate, const char *path) {
  if (!info || !state || !path || !step || !learning_rate)
    return DLC_INVALID_ARGUMENT;
  FILE *f = std::fopen(path, "rb");
  if (!f)
    return DLC_IO_ERROR;
  // The expected header, with this file's step and rate: everything else must match.
  std::string expected = header(info, 0, 0.0f);
  std::vector<char> head(expected.size());
  bool ok = std::fread(head.data(), 1, head.size(), f) == head.size();
  if (ok) {
    std::memcpy(&expected[kStepAt], &head[kStepAt], 12);
    ok = std::memcmp(head.data(), expected.data(), head.size()) == 0;
  }
  std::vector<unsigned char> bytes(ok ? info->state_bytes + 1 : 0);
  // One byte more than the state must not be there: a longer file is not this layout's.
  ok = ok && std::fread(bytes.data(), 1, bytes.size(), f) == info->state_bytes;
  std::fclose(f);
  if (!ok)
    return DLC_INVALID_STATE;
  std::memcpy(state, bytes.data(), info->state_bytes);
  uint64_t savedStep;
  std::memcpy(&savedStep, &head[kStepAt], 8);
  std::memcpy(learning_rate, &head[kRateAt], 4);
  *step = static_cast<int64_t>(savedStep);
  return DLC_OK;
}
