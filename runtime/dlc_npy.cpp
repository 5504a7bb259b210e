#include "dlc_npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

namespace dlc {
namespace npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = sizeof(kMagic) - 1;
// NumPy pads headers so that the data starts on this boundary.
constexpr size_t kHeaderAlignment = 64;

struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

bool fail(std::string *error, const char *path, const std::string &message) {
  if (error)
    *error = std::string(path) + ": " + message;
  return false;
}

struct DtypeName {
  dlc_dtype dtype;
  const char *descr; // as NumPy writes it
};
constexpr DtypeName kDtypes[] = {
    {DLC_F32, "<f4"}, {DLC_F64, "<f8"}, {DLC_I32, "<i4"},  {DLC_I64, "<i8"},
    {DLC_U8, "|u1"},  {DLC_I8, "|i1"},  {DLC_BOOL, "|b1"}, {DLC_I16, "<i2"},
    {DLC_U16, "<u2"}, {DLC_U32, "<u4"}, {DLC_U64, "<u8"}, {DLC_F16, "<f2"},
    // NumPy has no bfloat16, float8 or 4- and 2-bit types: ml_dtypes writes their bits as raw
    // bytes, dlc as unsigned integers of the same width (signed for the signed small ints).
    // Loading gives the plain type (listed first); adoptStoredType reinterprets it.
    {DLC_U8, "|V1"}, {DLC_U16, "<V2"}, {DLC_BF16, "<u2"}, {DLC_F8E4M3FN, "|u1"},
    {DLC_F8E4M3FNUZ, "|u1"}, {DLC_F8E5M2, "|u1"}, {DLC_F8E5M2FNUZ, "|u1"}, {DLC_U4, "|u1"},
    {DLC_U2, "|u1"}, {DLC_I4, "|i1"}, {DLC_I2, "|i1"}, {DLC_F4E2M1, "|u1"},
    {DLC_F8E8M0, "|u1"},
};

const char *descrOf(dlc_dtype dtype) {
  for (const DtypeName &d : kDtypes)
    if (d.dtype == dtype)
      return d.descr;
  return nullptr;
}

bool dtypeOf(const std::string &descr, dlc_dtype &dtype, std::string &why) {
  if (descr.size() == 3) {
    for (const DtypeName &d : kDtypes) {
      // Byte order means nothing for one-byte types, so any marker is accepted there.
      bool oneByte = d.descr[0] == '|';
      if (descr.compare(1, 2, d.descr + 1) == 0 &&
          (descr[0] == d.descr[0] || (oneByte && std::strchr("<>=|", descr[0])))) {
        dtype = d.dtype;
        return true;
      }
    }
    if (descr[0] == '>') {
      why = "big-endian dtype '" + descr + "' is not supported";
      return false;
    }
  }
  why = "unsupported dtype '" + descr +
        "' (supported: f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8, b1, V1, V2)";
  return false;
}

// Parses the Python dict literal NumPy writes as the header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  // On failure `why` says what is wrong.
  bool parse(std::string &descr, bool &fortranOrder, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    if (!consume('{'))
      return reject("header is not a dict");
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return reject("header dict key is not a string");
      if (!consume(':'))
        return reject("expected ':' after '" + key + "' in header");
      if (key == "descr") {
        if (!parseString(descr))
          return reject("header 'descr' is not a simple dtype string");
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (!parseBool(fortranOrder))
          return reject("header 'fortran_order' is not True or False");
        haveOrder = true;
      } else if (key == "shape") {
        if (!parseShape(shape))
          return false;
        haveShape = true;
      } else {
        return reject("unexpected header key '" + key + "'");
      }
      if (!consume(',') && !peek('}'))
        return reject("expected ',' or '}' in header");
    }
    skipSpace();
    if (pos != text.size())
      return reject("unexpected text after header dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return reject("header lacks 'descr', 'fortran_order' or 'shape'");
    return true;
  }

  std::string why;

private:
  bool reject(std::string message) {
    why = std::move(message);
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && std::strchr(" \t\r\n", text[pos]))
      ++pos;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool consume(char c) {
    if (!peek(c))
      return false;
    ++pos;
    return true;
  }
  bool consumeWord(const char *word) {
    skipSpace();
    size_t n = std::strlen(word);
    if (text.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    size_t end = text.find(text[pos], pos + 1);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    return true;
  }
  bool parseBool(bool &out) {
    if (consumeWord("True"))
      out = true;
    else if (consumeWord("False"))
      out = false;
    else
      return false;
    return true;
  }
  bool parseShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!consume('('))
      return reject("header 'shape' is not a tuple");
    while (!consume(')')) {
      skipSpace();
      if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
        return reject("header 'shape' holds something other than non-negative integers");
      int64_t dim = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        int digit = text[pos++] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return reject("header 'shape' dimension overflows");
        dim = dim * 10 + digit;
      }
      // Python 2 wrote long integers with an L suffix.
      if (pos < text.size() && text[pos] == 'L')
        ++pos;
      shape.push_back(dim);
      if (!consume(',') && !peek(')'))
        return reject("expected ',' or ')' in header 'shape'");
    }
    return true;
  }

  const std::string &text;
  size_t pos = 0;
};

uint32_t readLittleEndian(const unsigned char *bytes, int count) {
  uint32_t v = 0;
  for (int i = count - 1; i >= 0; --i)
    v = (v << 8) | bytes[i];
  return v;
}

} // namespace

bool load(const char *path, Array &out, std::string *error) {
  File file(std::fopen(path, "rb"));
  if (!file)
    return fail(error, path, std::string("cannot open: ") + std::strerror(errno));
  std::FILE *f = file.get();

  unsigned char prefix[kMagicSize + 2];
  if (std::fread(prefix, 1, sizeof(prefix), f) != sizeof(prefix) ||
      std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return fail(error, path, "not a .npy file (missing \\x93NUMPY magic)");
  int major = prefix[kMagicSize], minor = prefix[kMagicSize + 1];
  if ((major != 1 && major != 2) || minor != 0)
    return fail(error, path,
                "unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(minor) + " (supported: 1.0, 2.0)");
  const int lengthBytes = major == 1 ? 2 : 4;
  unsigned char lengthField[4];
  if (std::fread(lengthField, 1, lengthBytes, f) != static_cast<size_t>(lengthBytes))
    return fail(error, path, "truncated .npy header");
  std::string header(readLittleEndian(lengthField, lengthBytes), '\0');
  if (std::fread(&header[0], 1, header.size(), f) != header.size())
    return fail(error, path, "truncated .npy header");

  std::string descr, why;
  bool fortranOrder = false;
  Array result;
  HeaderParser parser(header);
  if (!parser.parse(descr, fortranOrder, result.shape))
    return fail(error, path, "malformed .npy header: " + parser.why);
  if (!dtypeOf(descr, result.dtype, why))
    return fail(error, path, why);
  size_t count = 1, nonUnitDims = 0;
  for (int64_t dim : result.shape) {
    if (dim > 1)
      ++nonUnitDims;
    if (dim != 0 && count > std::numeric_limits<size_t>::max() / 8 / static_cast<size_t>(dim))
      return fail(error, path, "array is too large");
    count *= static_cast<size_t>(dim);
  }
  // With at most one dim above 1 both orders lay the data out identically.
  if (fortranOrder && nonUnitDims > 1)
    return fail(error, path, "Fortran-order arrays are not supported");

  size_t bytes = count * dlc_dtype_size(result.dtype);
  result.data.resize(bytes);
  size_t got = bytes == 0 ? 0 : std::fread(result.data.data(), 1, bytes, f);
  if (got != bytes)
    return fail(error, path,
                "truncated data: expected " + std::to_string(bytes) + " bytes, found " +
                    std::to_string(got));
  if (std::fgetc(f) != EOF)
    return fail(error, path, "unexpected bytes after the array data");
  if (std::ferror(f))
    return fail(error, path, std::string("read error: ") + std::strerror(errno));
  out = std::move(result);
  return true;
}

bool save(const char *path, dlc_dtype dtype, const int64_t *shape, int rank, const void *data,
          std::string *error) {
  const char *descr = descrOf(dtype);
  if (!descr)
    return fail(error, path, "unsupported dtype " + std::to_string(static_cast<int>(dtype)));
  if (rank < 0)
    return fail(error, path, "negative rank");

  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  size_t count = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      return fail(error, path, "negative dimension in shape");
    header += std::to_string(shape[d]);
    // A one-element tuple needs its trailing comma.
    header += rank == 1 ? "," : d + 1 < rank ? ", " : "";
    count *= static_cast<size_t>(shape[d]);
  }
  header += "), }";

  // Version 1.0 stores the header length in 2 bytes; only huge shapes need 2.0's 4 bytes.
  auto paddedHeaderSize = [&](size_t lengthBytes) {
    size_t prefixSize = kMagicSize + 2 + lengthBytes;
    size_t total = (prefixSize + header.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment *
                   kHeaderAlignment;
    return total - prefixSize;
  };
  size_t lengthBytes = paddedHeaderSize(2) <= 0xffff ? 2 : 4;
  // NumPy ends the header with a newline after the alignment padding.
  header.append(paddedHeaderSize(lengthBytes) - header.size() - 1, ' ');
  header += '\n';

  std::string prefix(kMagic, kMagicSize);
  prefix += static_cast<char>(lengthBytes == 2 ? 1 : 2);
  prefix += '\0';
  for (size_t i = 0, n = header.size(); i < lengthBytes; ++i, n >>= 8)
    prefix += static_cast<char>(n & 0xff);

  std::FILE *f = std::fopen(path, "wb");
  if (!f)
    return fail(error, path, std::string("cannot create: ") + std::strerror(errno));
  size_t bytes = count * dlc_dtype_size(dtype);
  bool ok = std::fwrite(prefix.data(), 1, prefix.size(), f) == prefix.size() &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes);
  // fclose flushes, so it can be the call that reports a full disk.
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    return fail(error, path, std::string("write failed: ") + std::strerror(errno));
  return true;
}

bool adoptStoredType(Array &array, dlc_dtype wanted) {
  bool bitsType = wanted == DLC_BF16 || (wanted >= DLC_F8E4M3FN && wanted <= DLC_I2);
  bool plainBits = array.dtype == DLC_U8 || array.dtype == DLC_I8 || array.dtype == DLC_U16 ||
                   array.dtype == DLC_I16;
  if (!bitsType || !plainBits || dlc_dtype_size(array.dtype) != dlc_dtype_size(wanted))
    return false;
  array.dtype = wanted;
  // ml_dtypes keeps only the low bits of a 4- or 2-bit integer; dlc sign-extends signed ones.
  int bits = wanted == DLC_I4 || wanted == DLC_U4   ? 4
             : wanted == DLC_I2 || wanted == DLC_U2 ? 2
                                                    : 0;
  if (bits)
    for (unsigned char &byte : array.data) {
      int low = byte & ((1 << bits) - 1);
      bool negative = (wanted == DLC_I4 || wanted == DLC_I2) && low >= (1 << (bits - 1));
      byte = static_cast<unsigned char>(negative ? low - (1 << bits) : low);
    }
  return true;
}

} // namespace npy
} // namespace dlc
