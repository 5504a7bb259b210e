#include "dlc_kernels.h"

#include <cstdlib>
#include <cstring>
#if defined(__linux__)
#include <sys/mman.h>
#endif

extern "C" size_t dlc_dtype_size(dlc_dtype dtype) {
  switch (dtype) {
  case DLC_F32:
  case DLC_I32:
  case DLC_U32:
    return 4;
  case DLC_F64:
  case DLC_I64:
  case DLC_U64:
    return 8;
  case DLC_I16:
  case DLC_U16:
  case DLC_F16:
  case DLC_BF16:
    return 2;
  case DLC_U8:
  case DLC_I8:
  case DLC_BOOL:
  case DLC_F8E4M3FN:
  case DLC_F8E4M3FNUZ:
  case DLC_F8E5M2:
  case DLC_F8E5M2FNUZ:
  case DLC_U4:
  case DLC_I4:
  case DLC_F4E2M1:
  case DLC_F8E8M0:
  case DLC_U2:
  case DLC_I2:
    return 1;
  }
  // Values outside the enum can arrive from C callers; 0 lets them detect it.
  return 0;
}

extern "C" const char *dlc_status_message(dlc_status status) {
  switch (status) {
  case DLC_OK:
    return "ok";
  case DLC_INVALID_ARGUMENT:
    return "invalid argument";
  case DLC_OUT_OF_MEMORY:
    return "out of memory";
  case DLC_INVALID_INPUT_DATA:
    return "invalid input data";
  case DLC_IO_ERROR:
    return "file input/output error";
  case DLC_INVALID_STATE:
    return "state file truncated, damaged or of another model";
  case DLC_DEVICE_ERROR:
    return "a CUDA call failed";
  }
  return "unknown status";
}

namespace dlc {
namespace rt {

namespace {
constexpr size_t kAlignment = 64;
// Blocks from this size on (an arena) start at a huge page, and their whole huge pages are
// asked to be backed by huge pages where the system gives them on request (Linux's
// transparent huge pages in "madvise" mode, Debian's default): a network's ops walk tens of
// MB of arena, and with 4 KiB pages the TLB misses cost YOLOv8n and Whisper's encoder 3-6% of
// their time on one thread (ResNet-18 2-4%). The last partial huge page keeps small pages;
// resident memory still grows where bytes no run touches share a huge page with bytes it
// does (workspace slots for more threads than run: Whisper's encoder 0.8 MB, most models
// under 0.2 MB).
constexpr size_t kHugePage = size_t(2) << 20, kHugePageMinBytes = 2 * kHugePage;
} // namespace

void *alignedAlloc(size_t bytes) {
  // std::aligned_alloc wants a non-zero multiple of the alignment; a zero-byte request still
  // gets a unique pointer so that nullptr keeps meaning failure.
  if (bytes > SIZE_MAX - kHugePage)
    return nullptr;
  if (bytes >= kHugePageMinBytes) {
    // (aligned_alloc wants a multiple of the alignment; the pages past `bytes` are never
    // touched, so they take no memory.)
    void *block = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (block)
      madvise(block, bytes / kHugePage * kHugePage, MADV_HUGEPAGE); // advice: may be refused
#endif
    return block;
  }
  size_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return std::aligned_alloc(kAlignment, rounded);
}

void alignedFree(void *ptr) { std::free(ptr); }

void poison(void *ptr, size_t bytes) { std::memset(ptr, 0xFF, bytes); }

} // namespace rt
} // namespace dlc
