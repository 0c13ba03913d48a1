// .npy reader and writer. The header is a Python dict literal; its parser is
// written here by hand because it is small and no library packaged in Debian
// reads .npy headers. Only the subset numpy writes is accepted: string keys,
// and string, True/False and integer-tuple values.
#include "cli/npy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace aotirt {
namespace cli {
namespace {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader assumes a little-endian host"
#endif

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy aligns the data to 64 bytes and leaves room in the header so the
// first axis can grow to 21 digits in place; we match both so our files are
// byte-identical to np.save's.
constexpr size_t kAlign = 64;
constexpr size_t kGrowthDigits = 21;

struct DescrEntry {
  const char* code;  // kind and item size, without the byte-order character
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f2", DType::kFloat16}, {"f4", DType::kFloat32}, {"f8", DType::kFloat64},
    {"i1", DType::kInt8},    {"i2", DType::kInt16},   {"i4", DType::kInt32},
    {"i8", DType::kInt64},   {"u1", DType::kUInt8},   {"u2", DType::kUInt16},
    {"u4", DType::kUInt32},  {"u8", DType::kUInt64},  {"b1", DType::kBool},
    {"c8", DType::kComplex64}, {"c16", DType::kComplex128},
};

std::string supported_list() {
  std::string s;
  for (const auto& e : kDescrs) {
    if (!s.empty()) s += ' ';
    s += dtype_size(e.dtype) == 1 ? '|' : '<';
    s += e.code;
  }
  return s;
}

template <class... Args>
Status file_error(StatusCode code, const std::string& path, fmt::format_string<Args...> f,
                  Args&&... args) {
  return Status(code, path + ": " + fmt::format(f, std::forward<Args>(args)...));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// One value of the header dict.
struct PyValue {
  enum class Kind { kString, kBool, kTuple, kList } kind = Kind::kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

// Recursive-descent parser over the header text. Errors are plain messages;
// the caller adds the path and picks the code.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : s_(text) {}

  // Parses the whole dict into (key, value) pairs, in file order.
  Status parse(std::vector<std::pair<std::string, PyValue>>* out) {
    skip_ws();
    if (!consume('{')) return syntax("expected '{' at the start of the header");
    skip_ws();
    while (!consume('}')) {
      std::string key;
      if (!parse_string(&key)) return syntax("expected a quoted key");
      skip_ws();
      if (!consume(':')) return syntax("expected ':' after key '" + key + "'");
      skip_ws();
      PyValue value;
      Status st = parse_value(&value);
      if (!st.ok()) return st;
      out->emplace_back(std::move(key), std::move(value));
      skip_ws();
      if (consume(',')) {
        skip_ws();
        continue;
      }
      skip_ws();
      if (!consume('}')) return syntax("expected ',' or '}'");
      break;
    }
    skip_ws();
    if (pos_ != s_.size()) return syntax("unexpected text after the closing '}'");
    return Status();
  }

 private:
  Status syntax(const std::string& what) const {
    return Status(StatusCode::kDataLoss,
                  fmt::format("malformed header: {} at offset {}", what, pos_));
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool consume_word(const char* w) {
    size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool parse_string(std::string* out) {
    char quote = peek();
    if (quote != '\'' && quote != '"') return false;
    size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string::npos) return false;
    *out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return true;
  }
  Status parse_int(int64_t* out) {
    bool negative = consume('-');
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return syntax("expected an integer");
    uint64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      uint64_t digit = static_cast<uint64_t>(s_[pos_++] - '0');
      if (v > (static_cast<uint64_t>(INT64_MAX) - digit) / 10)
        return Status(StatusCode::kDataLoss, "bad shape: a dimension does not fit in 64 bits");
      v = v * 10 + digit;
    }
    // Python 2 wrote long integers as "3L".
    if (peek() == 'L' || peek() == 'l') ++pos_;
    *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return Status();
  }
  Status skip_list() {
    int depth = 0;
    std::string ignored;
    while (!at_end()) {
      char c = peek();
      if (c == '\'' || c == '"') {
        if (!parse_string(&ignored)) return syntax("unterminated string");
        continue;
      }
      ++pos_;
      if (c == '[' || c == '(') ++depth;
      if ((c == ']' || c == ')') && --depth == 0) return Status();
    }
    return syntax("unterminated list");
  }
  Status parse_value(PyValue* out) {
    char c = peek();
    if (c == '\'' || c == '"') {
      out->kind = PyValue::Kind::kString;
      if (!parse_string(&out->text)) return syntax("unterminated string");
      return Status();
    }
    if (consume_word("True")) {
      out->kind = PyValue::Kind::kBool;
      out->flag = true;
      return Status();
    }
    if (consume_word("False")) {
      out->kind = PyValue::Kind::kBool;
      out->flag = false;
      return Status();
    }
    if (c == '[') {
      // Only a structured dtype's 'descr' is a list; it is skipped here and
      // refused by the caller.
      out->kind = PyValue::Kind::kList;
      return skip_list();
    }
    if (consume('(')) {
      out->kind = PyValue::Kind::kTuple;
      skip_ws();
      while (!consume(')')) {
        int64_t v = 0;
        Status st = parse_int(&v);
        if (!st.ok()) return st;
        out->ints.push_back(v);
        skip_ws();
        if (consume(',')) {
          skip_ws();
          continue;
        }
        if (!consume(')')) return syntax("expected ',' or ')' in the shape");
        break;
      }
      return Status();
    }
    return syntax("expected a string, True, False or a tuple");
  }

  const std::string& s_;
  size_t pos_ = 0;
};

struct NpyHeader {
  DType dtype = DType::kFloat32;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

Result<NpyHeader> parse_header(const std::string& text) {
  std::vector<std::pair<std::string, PyValue>> items;
  HeaderParser parser(text);
  Status st = parser.parse(&items);
  if (!st.ok()) return st;

  NpyHeader header;
  bool have_descr = false, have_order = false, have_shape = false;
  for (const auto& [key, value] : items) {
    if (key == "descr") {
      if (value.kind == PyValue::Kind::kList)
        return Status(StatusCode::kUnimplemented,
                      "unsupported dtype: structured (record) arrays are not supported");
      if (value.kind != PyValue::Kind::kString)
        return Status(StatusCode::kDataLoss, "malformed header: 'descr' is not a string");
      Result<DType> dtype = dtype_from_npy_descr(value.text);
      if (!dtype.ok()) return dtype.status();
      header.dtype = dtype.value();
      have_descr = true;
    } else if (key == "fortran_order") {
      if (value.kind != PyValue::Kind::kBool)
        return Status(StatusCode::kDataLoss, "malformed header: 'fortran_order' is not True or False");
      header.fortran_order = value.flag;
      have_order = true;
    } else if (key == "shape") {
      if (value.kind != PyValue::Kind::kTuple)
        return Status(StatusCode::kDataLoss, "bad shape: 'shape' is not a tuple of integers");
      header.shape = value.ints;
      have_shape = true;
    } else {
      return Status(StatusCode::kDataLoss, fmt::format("malformed header: unexpected key '{}'", key));
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return Status(StatusCode::kDataLoss,
                  fmt::format("malformed header: missing key '{}'",
                              !have_descr ? "descr" : !have_order ? "fortran_order" : "shape"));
  for (int64_t d : header.shape)
    if (d < 0) return Status(StatusCode::kDataLoss, fmt::format("bad shape: negative dimension {}", d));
  return header;
}

// Copies elements of |elem_size| bytes from a strided layout (strides in
// elements) into dense row-major order at |dst|.
void gather_to_row_major(const char* src, const std::vector<int64_t>& sizes,
                         const std::vector<int64_t>& strides, size_t elem_size, char* dst) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return;
  const size_t ndim = sizes.size();
  if (ndim == 0) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  std::vector<int64_t> index(ndim, 0);
  const int64_t inner = sizes[ndim - 1];
  const int64_t inner_stride = strides[ndim - 1] * static_cast<int64_t>(elem_size);
  for (int64_t done = 0; done < numel; done += inner) {
    int64_t offset = 0;
    for (size_t d = 0; d + 1 < ndim; ++d) offset += index[d] * strides[d];
    const char* p = src + offset * static_cast<int64_t>(elem_size);
    for (int64_t i = 0; i < inner; ++i, p += inner_stride, dst += elem_size) std::memcpy(dst, p, elem_size);
    // Advance the outer index like an odometer.
    for (size_t d = ndim - 1; d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

// The header text (dict, growth padding, alignment padding and '\n') for a
// C-order array, as numpy formats it.
std::string format_header(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) shape_text += ", ";
    shape_text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) shape_text += ',';
  shape_text += ')';
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_text);
  if (!shape.empty()) dict.append(kGrowthDigits - std::to_string(shape[0]).size(), ' ');
  return dict;
}

}  // namespace

Result<std::string> npy_descr(DType dtype) {
  for (const auto& e : kDescrs)
    if (e.dtype == dtype) return std::string(dtype_size(dtype) == 1 ? "|" : "<") + e.code;
  return Status(StatusCode::kUnimplemented,
                fmt::format("{} has no .npy dtype (numpy lacks it)", dtype_name(dtype)));
}

Result<DType> dtype_from_npy_descr(const std::string& descr) {
  if (descr.size() >= 2) {
    const char order = descr[0];
    const std::string code = descr.substr(1);
    for (const auto& e : kDescrs) {
      if (code != e.code) continue;
      // Byte order does not apply to one-byte types, whatever character is used.
      if (dtype_size(e.dtype) == 1 && (order == '|' || order == '<' || order == '=' || order == '>'))
        return e.dtype;
      if (order == '<' || order == '=') return e.dtype;
      if (order == '>')
        return Status(StatusCode::kUnimplemented,
                      fmt::format("big-endian dtype '{}' is not supported; save the array as '<{}' "
                                  "(a.astype('<{}'))",
                                  descr, code, code));
    }
  }
  return Status(StatusCode::kUnimplemented,
                fmt::format("unsupported dtype '{}' (supported: {})", descr, supported_list()));
}

Result<Tensor> read_npy(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return file_error(StatusCode::kIoError, path, "is a directory");
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    int err = errno;
    return file_error(err == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError, path, "cannot open: {}",
                      std::strerror(err));
  }
  std::FILE* f = file.get();
  if (std::fseek(f, 0, SEEK_END) != 0) return file_error(StatusCode::kIoError, path, "cannot seek");
  const long end = std::ftell(f);
  if (end < 0) return file_error(StatusCode::kIoError, path, "cannot tell its size");
  std::rewind(f);
  const uint64_t file_size = static_cast<uint64_t>(end);

  // Preamble: magic, major, minor, then a 2-byte (1.0) or 4-byte (2.0, 3.0)
  // little-endian header length.
  unsigned char pre[12] = {};
  const size_t got = std::fread(pre, 1, file_size < 12 ? file_size : 12, f);
  if (file_size == 0) return file_error(StatusCode::kInvalidArgument, path, "is empty, not a .npy file");
  if (got < kMagicLen || std::memcmp(pre, kMagic, kMagicLen) != 0) {
    if (got < kMagicLen && std::memcmp(pre, kMagic, got) == 0)
      return file_error(StatusCode::kDataLoss, path, "truncated header: the file is only {} bytes", file_size);
    return file_error(StatusCode::kInvalidArgument, path, "not a .npy file (bad magic: it should start with \\x93NUMPY)");
  }
  if (got < 8) return file_error(StatusCode::kDataLoss, path, "truncated header: the file is only {} bytes", file_size);
  const int major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return file_error(StatusCode::kUnimplemented, path,
                      "unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor);
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prelude = 8 + len_bytes;
  if (got < prelude)
    return file_error(StatusCode::kDataLoss, path, "truncated header: the file is only {} bytes", file_size);
  uint64_t header_len = static_cast<uint64_t>(pre[8]) | static_cast<uint64_t>(pre[9]) << 8;
  if (len_bytes == 4) header_len |= static_cast<uint64_t>(pre[10]) << 16 | static_cast<uint64_t>(pre[11]) << 24;
  if (prelude + header_len > file_size)
    return file_error(StatusCode::kDataLoss, path,
                      "truncated header: it declares {} bytes but only {} follow the preamble", header_len,
                      file_size - prelude);

  std::string text(header_len, '\0');
  if (std::fseek(f, static_cast<long>(prelude), SEEK_SET) != 0 ||
      std::fread(text.data(), 1, header_len, f) != header_len)
    return file_error(StatusCode::kIoError, path, "read error in the header");
  Result<NpyHeader> parsed = parse_header(text);
  if (!parsed.ok()) return file_error(parsed.status().code(), path, "{}", parsed.status().message());
  const NpyHeader& header = parsed.value();

  // The byte count must not overflow, and must match what the file holds.
  const size_t elem = dtype_size(header.dtype);
  uint64_t nbytes = elem;
  for (int64_t d : header.shape) {
    if (d != 0 && nbytes > UINT64_MAX / static_cast<uint64_t>(d))
      return file_error(StatusCode::kDataLoss, path, "bad shape: the array size overflows");
    nbytes *= static_cast<uint64_t>(d);
  }
  const uint64_t available = file_size - prelude - header_len;
  if (available < nbytes)
    return file_error(StatusCode::kDataLoss, path,
                      "truncated data: the shape needs {} bytes but only {} follow the header", nbytes, available);
  if (available > nbytes)
    return file_error(StatusCode::kDataLoss, path,
                      "{} unexpected bytes after the data (the shape needs {} bytes)", available - nbytes, nbytes);

  Result<Tensor> tensor = Tensor::empty(header.shape, header.dtype);
  if (!tensor.ok()) return file_error(tensor.status().code(), path, "{}", tensor.status().message());
  if (nbytes == 0) return tensor;
  char* dst = static_cast<char*>(tensor->data());
  if (!header.fortran_order || header.shape.size() < 2) {
    if (std::fread(dst, 1, nbytes, f) != nbytes) return file_error(StatusCode::kIoError, path, "read error in the data");
    return tensor;
  }
  // Fortran order: the first index varies fastest.
  std::vector<char> buffer(nbytes);
  if (std::fread(buffer.data(), 1, nbytes, f) != nbytes)
    return file_error(StatusCode::kIoError, path, "read error in the data");
  std::vector<int64_t> strides(header.shape.size());
  int64_t stride = 1;
  for (size_t d = 0; d < header.shape.size(); ++d) {
    strides[d] = stride;
    stride *= header.shape[d];
  }
  gather_to_row_major(buffer.data(), header.shape, strides, elem, dst);
  return tensor;
}

namespace {

// Elements converted and written at a time by write_npy_float32 (1 MiB of
// float32): small enough that the copies stay in cache.
constexpr int64_t kWidenChunk = int64_t(1) << 18;

// The magic string, version, header length and header dict of a C-order
// array of |descr| and |shape|, padded so the data starts on kAlign bytes.
std::string npy_prelude(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string header = format_header(descr, shape);
  // Version 1.0 stores the header length in 2 bytes; numpy switches to 2.0
  // only when the header does not fit.
  int version = 1;
  size_t prelude = 10;
  size_t pad = kAlign - (prelude + header.size() + 1) % kAlign;
  if (header.size() + 1 + pad > 0xffff) {
    version = 2;
    prelude = 12;
    pad = kAlign - (prelude + header.size() + 1) % kAlign;
  }
  header.append(pad, ' ');
  header += '\n';

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(version);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < prelude - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  return out;
}

}  // namespace

Status write_npy(const std::string& path, const Tensor& tensor) {
  if (!tensor.defined()) return file_error(StatusCode::kInvalidArgument, path, "cannot write an undefined tensor");
  if (!tensor.device().is_cpu())
    return file_error(StatusCode::kInvalidArgument, path, "the tensor is on {}; copy it to the CPU first",
                      tensor.device().to_string());
  Result<std::string> descr = npy_descr(tensor.dtype());
  if (!descr.ok()) return file_error(descr.status().code(), path, "{}", descr.status().message());

  const std::vector<int64_t> shape = tensor.sizes();
  const std::string out = npy_prelude(descr.value(), shape);

  // Non-contiguous views are gathered into C order first.
  const size_t nbytes = tensor.nbytes();
  std::vector<char> dense;
  const char* data = static_cast<const char*>(tensor.data());
  if (nbytes > 0 && !tensor.is_contiguous()) {
    dense.resize(nbytes);
    gather_to_row_major(data, shape, tensor.strides(), dtype_size(tensor.dtype()), dense.data());
    data = dense.data();
  }

  errno = 0;
  FilePtr file(std::fopen(path.c_str(), "wb"));
  if (!file) return file_error(StatusCode::kIoError, path, "cannot create: {}", std::strerror(errno));
  bool ok = std::fwrite(out.data(), 1, out.size(), file.get()) == out.size();
  if (ok && nbytes > 0) ok = std::fwrite(data, 1, nbytes, file.get()) == nbytes;
  const int write_errno = errno;
  ok = (std::fclose(file.release()) == 0) && ok;
  if (!ok) {
    const int err = write_errno ? write_errno : errno;
    std::remove(path.c_str());
    return file_error(StatusCode::kIoError, path, "write failed: {}", std::strerror(err));
  }
  return Status();
}

Status write_npy_float32(const std::string& path, const Tensor& tensor, int threads) {
  if (!tensor.defined()) return file_error(StatusCode::kInvalidArgument, path, "cannot write an undefined tensor");
  if (!tensor.device().is_cpu())
    return file_error(StatusCode::kInvalidArgument, path, "the tensor is on {}; copy it to the CPU first",
                      tensor.device().to_string());
  if (tensor.dtype() == DType::kFloat32 || !tensor.is_contiguous() || tensor.numel() < kWidenChunk) {
    // Small or strided: one conversion, one write.
    Result<Tensor> wide = tensor.to(DeviceId{}, DType::kFloat32);
    if (!wide.ok()) return file_error(wide.status().code(), path, "{}", wide.status().message());
    return write_npy(path, wide.value());
  }
  const std::string prelude = npy_prelude("<f4", tensor.sizes());
  errno = 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return file_error(StatusCode::kIoError, path, "cannot create: {}", std::strerror(errno));

  // Chunks of the source converted on |threads| threads into chunk-sized
  // tensors and written at their offsets: no float32 copy of the whole
  // output is made (a 512x50257 logits file is 103 MB), and the conversion
  // overlaps the writes.
  const int64_t numel = tensor.numel();
  const int64_t chunks = (numel + kWidenChunk - 1) / kWidenChunk;
  const size_t elem = dtype_size(tensor.dtype());
  const char* src = static_cast<const char*>(tensor.data());
  std::atomic<int64_t> next{0};
  std::mutex error_mutex;
  Status error;
  auto fail = [&](Status s) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (error.ok()) error = std::move(s);
    next.store(chunks);
  };
  auto write_all = [&](const void* data, size_t n, off_t offset) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::pwrite(fd, p, n, offset);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        fail(file_error(StatusCode::kIoError, path, "write failed: {}", std::strerror(w < 0 ? errno : EIO)));
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
      offset += w;
    }
    return true;
  };
  auto work = [&] {
    for (int64_t c = next++; c < chunks; c = next++) {
      const int64_t first = c * kWidenChunk;
      const int64_t n = std::min<int64_t>(kWidenChunk, numel - first);
      Tensor part = Tensor::from_blob(const_cast<char*>(src) + first * elem, {n}, tensor.dtype());
      Result<Tensor> wide = part.to(DeviceId{}, DType::kFloat32);
      if (!wide.ok()) return fail(file_error(wide.status().code(), path, "{}", wide.status().message()));
      if (!write_all(wide->data(), static_cast<size_t>(n) * 4,
                     static_cast<off_t>(prelude.size() + static_cast<size_t>(first) * 4)))
        return;
    }
  };
  if (write_all(prelude.data(), prelude.size(), 0)) {
    const int extra = static_cast<int>(std::min<int64_t>(std::max(threads, 1), chunks)) - 1;
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(extra));
    for (int i = 0; i < extra; ++i) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }
  if (::close(fd) != 0 && error.ok())
    error = file_error(StatusCode::kIoError, path, "write failed: {}", std::strerror(errno));
  if (!error.ok()) std::remove(path.c_str());
  return error;
}

}  // namespace cli
}  // namespace aotirt
