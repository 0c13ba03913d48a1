#include "npy_io.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

namespace bench {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

// Value of |key| in the header dict, up to the next ',' at depth 0 or '}'.
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted = "'" + key + "'";
  size_t pos = header.find(quoted);
  if (pos == std::string::npos) fail(path, "header has no " + key);
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string::npos) fail(path, "malformed header");
  ++pos;
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string value = header.substr(pos, end - pos);
  const size_t first = value.find_first_not_of(" \t");
  const size_t last = value.find_last_not_of(" \t");
  return first == std::string::npos ? std::string() : value.substr(first, last - first + 1);
}

at::ScalarType dtype_of_descr(const std::string& descr, const std::string& path) {
  if (descr == "'<f4'") return at::kFloat;
  if (descr == "'<f8'") return at::kDouble;
  if (descr == "'<f2'") return at::kHalf;
  if (descr == "'<i8'") return at::kLong;
  if (descr == "'<i4'") return at::kInt;
  if (descr == "'|u1'") return at::kByte;
  if (descr == "'|b1'") return at::kBool;
  fail(path, "unsupported dtype " + descr);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') fail(path, "malformed shape " + text);
  std::vector<int64_t> dims;
  std::stringstream ss(text.substr(1, text.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    const long long v = std::stoll(item);
    if (v < 0) fail(path, "negative dimension");
    dims.push_back(v);
  }
  return dims;
}

const char* descr_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "<f4";
    case at::kDouble: return "<f8";
    case at::kLong: return "<i8";
    case at::kInt: return "<i4";
    case at::kByte: return "|u1";
    case at::kBool: return "|b1";
    default: return nullptr;
  }
}

}  // namespace

at::Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) fail(path, "truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path, "truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    fail(path, "unknown format version " + std::to_string(major));
  }
  std::string header(header_len, '\0');
  if (!in.read(&header[0], header_len)) fail(path, "truncated header");

  if (header_field(header, "fortran_order", path) != "False") fail(path, "Fortran order is not supported");
  const at::ScalarType dtype = dtype_of_descr(header_field(header, "descr", path), path);
  const std::vector<int64_t> shape = parse_shape(header_field(header, "shape", path), path);

  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dtype));
  const std::streamsize want = static_cast<std::streamsize>(t.nbytes());
  if (want > 0 && !in.read(static_cast<char*>(t.data_ptr()), want)) fail(path, "data shorter than the shape says");
  if (in.peek() != std::char_traits<char>::eof()) fail(path, "data longer than the shape says");
  return t;
}

void write_npy(const std::string& path, const at::Tensor& tensor) {
  at::Tensor t = tensor.to(at::kCPU);
  if (t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf) t = t.to(at::kFloat);
  t = t.contiguous();
  const char* descr = descr_of(t.scalar_type());
  if (!descr) fail(path, std::string("cannot write dtype ") + c10::toString(t.scalar_type()));

  std::string shape = "(";
  for (int64_t d : t.sizes()) shape += std::to_string(d) + ", ";
  if (t.dim() > 1) shape.resize(shape.size() - 2);
  if (t.dim() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to 64 bytes.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');

  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, "cannot create");
  out.write("\x93NUMPY\x01\x00", 8);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
  if (!out) fail(path, "write failed");
}

}  // namespace bench
