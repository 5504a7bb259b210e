// Tests for the .npy reader and writer used by the CPU runtime.
#include "dlc_npy.h"
#include "dlc_runtime.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace dlc::rt;

//===----------------------------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------------------------===//

namespace {

std::string tempPath(const std::string &name) {
  // The process id keeps cases of concurrent runs (ctest -j) apart.
  return (std::filesystem::temp_directory_path() /
          ("dlc_test_runtime_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A version 1.0 file as NumPy lays it out: header padded with spaces to a 64-byte boundary.
std::string npyFile(const std::string &dict, const std::string &data, char major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY", 6) + major + '\0';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  if (major != 1)
    file += std::string(2, '\0');
  return file + header + data;
}

std::string loadError(const std::string &name, const std::string &bytes) {
  std::string path = tempPath(name);
  writeFile(path, bytes);
  dlc::npy::Array array;
  std::string error;
  bool ok = dlc::npy::load(path.c_str(), array, &error);
  std::filesystem::remove(path);
  CHECK_FALSE(ok);
  CHECK(error.find(path) == 0);
  return error;
}

} // namespace

TEST_CASE("npy round trip for every dtype and rank", "[npy]") {
  std::mt19937 rng(20);
  const dlc_dtype dtypes[] = {DLC_F32, DLC_F64, DLC_I32, DLC_I64, DLC_U8,  DLC_I8,
                              DLC_BOOL, DLC_I16, DLC_U16, DLC_U32, DLC_U64};
  const Shape shapes[] = {{}, {1}, {7}, {2, 3}, {2, 0, 4}, {3, 1, 4, 2}};
  std::string path = tempPath("roundtrip.npy");
  for (dlc_dtype dtype : dtypes) {
    for (const Shape &shape : shapes) {
      INFO("dtype " << dtype << " shape " << describe(shape));
      std::vector<unsigned char> data =
          randomBytes(rng, numElements(shape) * static_cast<int64_t>(dlc_dtype_size(dtype)));
      if (dtype == DLC_BOOL)
        for (unsigned char &b : data)
          b &= 1;
      std::string error;
      REQUIRE(dlc::npy::save(path.c_str(), dtype, shape.data(), static_cast<int>(shape.size()),
                             data.data(), &error));
      std::string bytes = readFile(path);
      size_t headerLength = static_cast<unsigned char>(bytes[8]) |
                            static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
      CHECK((10 + headerLength) % 64 == 0);
      CHECK(bytes.size() == 10 + headerLength + data.size());

      dlc::npy::Array array;
      REQUIRE(dlc::npy::load(path.c_str(), array, &error));
      CHECK(array.dtype == dtype);
      CHECK(array.shape == shape);
      CHECK(array.data == data);
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("npy writer matches NumPy's layout byte for byte", "[npy]") {
  std::string path = tempPath("layout.npy");
  const float data[6] = {0, 1, 2, 3, 4, 5};
  const int64_t shape[2] = {2, 3};
  REQUIRE(dlc::npy::save(path.c_str(), DLC_F32, shape, 2, data, nullptr));
  std::string expected = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                 std::string(reinterpret_cast<const char *>(data), sizeof(data)));
  CHECK(readFile(path) == expected);

  const int64_t vec[1] = {4};
  const unsigned char bytes[4] = {1, 0, 1, 1};
  REQUIRE(dlc::npy::save(path.c_str(), DLC_BOOL, vec, 1, bytes, nullptr));
  CHECK(readFile(path) == npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
                                  std::string("\1\0\1\1", 4)));

  const double scalar = 2.5;
  REQUIRE(dlc::npy::save(path.c_str(), DLC_F64, nullptr, 0, &scalar, nullptr));
  CHECK(readFile(path) == npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                  std::string(reinterpret_cast<const char *>(&scalar), 8)));
  std::filesystem::remove(path);
}

TEST_CASE("npy reader accepts NumPy header variants", "[npy]") {
  std::string path = tempPath("variants.npy");
  const std::string two = std::string("\x02\0\0\0\x03\0\0\0", 8);
  dlc::npy::Array array;
  std::string error;

  SECTION("version 2.0, double quotes, keys in another order, no trailing comma") {
    writeFile(path,
              npyFile("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}", two, 2));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.dtype == DLC_I32);
    CHECK(array.shape == Shape{2});
  }
  SECTION("Python 2 long suffixes") {
    writeFile(path, npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (1L, 2L), }", two));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.shape == Shape{1, 2});
  }
  SECTION("Fortran order where it lays data out as C order") {
    writeFile(path, npyFile("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 1), }", two));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.shape == Shape{2, 1});
  }
  SECTION("one-byte types with any byte-order mark") {
    writeFile(path, npyFile("{'descr': '<u1', 'fortran_order': False, 'shape': (8,), }", two));
    REQUIRE(dlc::npy::load(path.c_str(), array, &error));
    CHECK(array.dtype == DLC_U8);
    CHECK(array.data.size() == 8);
  }
  std::filesystem::remove(path);
}

TEST_CASE("npy reader rejects bad files with clear errors", "[npy]") {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight(8, '\0');
  auto contains = [](const std::string &error, const char *what) {
    INFO(error);
    CHECK(error.find(what) != std::string::npos);
  };

  dlc::npy::Array array;
  std::string error;
  CHECK_FALSE(dlc::npy::load(tempPath("does_not_exist.npy").c_str(), array, &error));
  contains(error, "cannot open");
  CHECK_FALSE(dlc::npy::load(tempPath("does_not_exist.npy").c_str(), array, nullptr));

  contains(loadError("empty.npy", ""), "not a .npy file");
  contains(loadError("text.npy", "hello, world\n"), "not a .npy file");
  contains(loadError("version.npy", std::string("\x93NUMPY\x03\0", 8) + "\x10\0\0\0"),
           "version 3.0");
  contains(loadError("short_header.npy", npyFile(dict, eight).substr(0, 40)), "truncated");
  contains(loadError("short_length.npy", std::string("\x93NUMPY\x01\0\x10", 9)), "truncated");
  contains(loadError("short_data.npy", npyFile(dict, eight).substr(0, 128 + 5)),
           "truncated data: expected 8 bytes, found 5");
  contains(loadError("long_data.npy", npyFile(dict, eight + "x")), "after the array data");
  contains(
      loadError("fortran.npy", npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                                       eight + eight)),
      "Fortran-order");
  contains(loadError("complex.npy",
                     npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", eight)),
           "unsupported dtype '<c8'");
  contains(loadError("bigendian.npy",
                     npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", eight)),
           "big-endian");
  contains(loadError("structured.npy",
                     npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                             eight)),
           "'descr'");
  contains(loadError("missing_key.npy", npyFile("{'descr': '<f4', 'shape': (2,), }", eight)),
           "lacks");
  contains(
      loadError("extra_key.npy",
                npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", eight)),
      "unexpected header key 'x'");
  contains(loadError("negative_dim.npy",
                     npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", eight)),
           "non-negative");
  contains(loadError("not_dict.npy", npyFile("['descr']", eight)), "not a dict");
}

TEST_CASE("npy writer reports failures", "[npy]") {
  std::string error;
  const float v = 1.0f;
  const int64_t shape[1] = {1};
  std::string dir = tempPath("no_such_dir");
  std::string path = dir + "/x.npy";
  CHECK_FALSE(dlc::npy::save(path.c_str(), DLC_F32, shape, 1, &v, &error));
  CHECK(error.find("cannot create") != std::string::npos);
  CHECK_FALSE(
      dlc::npy::save(tempPath("bad.npy").c_str(), static_cast<dlc_dtype>(14), shape, 1, &v, &error));
  CHECK(error.find("unsupported dtype") != std::string::npos);
  const int64_t negative[1] = {-1};
  CHECK_FALSE(dlc::npy::save(tempPath("bad.npy").c_str(), DLC_F32, negative, 1, &v, &error));
  CHECK(error.find("negative") != std::string::npos);
}
