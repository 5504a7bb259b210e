// Tests for the CPU runtime's basics: dtype sizes, status messages and aligned allocation.
#include "dlc_kernels.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>

using namespace dlc::rt;

//===----------------------------------------------------------------------------------------===//
// Status and allocation
//===----------------------------------------------------------------------------------------===//

TEST_CASE("dtype sizes and status messages", "[runtime]") {
  CHECK(dlc_dtype_size(DLC_F32) == 4);
  CHECK(dlc_dtype_size(DLC_F64) == 8);
  CHECK(dlc_dtype_size(DLC_U64) == 8);
  CHECK(dlc_dtype_size(DLC_U32) == 4);
  CHECK(dlc_dtype_size(DLC_I16) == 2);
  CHECK(dlc_dtype_size(DLC_U16) == 2);
  CHECK(dlc_dtype_size(DLC_I32) == 4);
  CHECK(dlc_dtype_size(DLC_I64) == 8);
  CHECK(dlc_dtype_size(DLC_U8) == 1);
  CHECK(dlc_dtype_size(DLC_I8) == 1);
  CHECK(dlc_dtype_size(DLC_BOOL) == 1);
  CHECK(dlc_dtype_size(static_cast<dlc_dtype>(42)) == 0);
  CHECK(std::string(dlc_status_message(DLC_OK)) == "ok");
  CHECK(std::string(dlc_status_message(DLC_INVALID_ARGUMENT)) == "invalid argument");
  CHECK(std::string(dlc_status_message(DLC_OUT_OF_MEMORY)) == "out of memory");
  CHECK(std::string(dlc_status_message(DLC_INVALID_INPUT_DATA)) == "invalid input data");
  CHECK(std::string(dlc_status_message(static_cast<dlc_status>(99))) == "unknown status");
}

TEST_CASE("alignedAlloc returns 64-byte aligned, usable memory", "[runtime]") {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{100000}}) {
    void *p = alignedAlloc(bytes);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    std::memset(p, 0xab, bytes);
    alignedFree(p);
  }
  // An arena-sized block starts at a 2 MiB huge page (whose whole pages may be backed by huge
  // pages), its last partial page usable too.
  const size_t arenaBytes = (size_t(5) << 20) + 12345;
  void *arena = alignedAlloc(arenaBytes);
  REQUIRE(arena != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(arena) % (size_t(2) << 20) == 0);
  std::memset(arena, 0xab, arenaBytes);
  alignedFree(arena);
  CHECK(alignedAlloc(SIZE_MAX - 8) == nullptr);
  alignedFree(nullptr);
}
