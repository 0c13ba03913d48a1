// Reads the input checks AOTInductor generates into a model's wrapper source.
// For each input the generated code holds one function of this form:
//
//   AOTI_NOINLINE static void check_input_0(AtenTensorHandle* input_handles) {
//     ConstantHandle arg0_1 = ConstantHandle(input_handles[0]);
//     ...
//     int32_t arg0_1_expected_dtype = aoti_torch_dtype_bfloat16();
//     ...
//     auto arg0_1_size = arg0_1.sizes();
//     if (arg0_1_size[0] < 2) { ... }          a dynamic size (lower bound)
//     if (arg0_1_size[0] > 64) { ... }         a dynamic size (upper bound)
//     if (8 != arg0_1_size[1]) { ... }         a static size
//     auto arg0_1_stride = arg0_1.strides();
//     if (1 != arg0_1_stride[1]) { ... }       a static stride
//     ...
//   }
//
// and the model's constructor names them: inputs_info_[0].name = "arg0_1";.
// The generated code does not check an input's rank, so the rank is read
// from the highest dimension any check names, and believed only when every
// dimension up to it has a size check (with Inductor's default options,
// every dimension has one: a static size, or a dynamic one's lower bound).
#include "package/wrapper_specs.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "aotirt/types.h"

namespace aotirt {
namespace {

constexpr std::string_view kCheckFunction = "static void check_input_";
constexpr std::string_view kInputInfo = "inputs_info_[";
constexpr std::string_view kOutputInfo = "outputs_info_[";
// Between "check_input_<n>(" and the body's "{" the generated code has one
// parameter; more text than this means it is not a check function.
constexpr size_t kMaxParameterText = 256;
constexpr size_t kMaxDtypeNameBytes = 64;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// A position in [begin, end) of the text. Each match either succeeds and
// moves past what it matched, or fails and leaves the position unchanged.
class Cursor {
 public:
  Cursor(std::string_view text, size_t pos, size_t end) : text_(text), pos_(pos), end_(end) {
    if (end_ > text_.size()) end_ = text_.size();
    if (pos_ > end_) pos_ = end_;
  }
  size_t pos() const { return pos_; }

  void skip_space() {
    while (pos_ < end_ && is_space(text_[pos_])) ++pos_;
  }
  bool literal(std::string_view s) {
    if (end_ - pos_ < s.size() || text_.compare(pos_, s.size(), s) != 0) return false;
    pos_ += s.size();
    return true;
  }
  // Spaces, then |s|.
  bool token(std::string_view s) {
    const size_t saved = pos_;
    skip_space();
    if (literal(s)) return true;
    pos_ = saved;
    return false;
  }
  // A decimal integer from 0 to 2^63-1, not followed by an identifier
  // character (so "12abc" is not 12).
  bool integer(int64_t* out) {
    size_t p = pos_;
    uint64_t v = 0;
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    while (p < end_ && text_[p] >= '0' && text_[p] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(text_[p] - '0');
      if (v > (kMax - digit) / 10) return false;
      v = v * 10 + digit;
      ++p;
    }
    if (p == pos_ || (p < end_ && is_ident_char(text_[p]))) return false;
    *out = static_cast<int64_t>(v);
    pos_ = p;
    return true;
  }
  bool identifier(std::string_view* out, size_t max_bytes) {
    if (pos_ >= end_ || !is_ident_start(text_[pos_])) return false;
    size_t p = pos_ + 1;
    while (p < end_ && is_ident_char(text_[p])) {
      if (p - pos_ >= max_bytes) return false;
      ++p;
    }
    *out = text_.substr(pos_, p - pos_);
    pos_ = p;
    return true;
  }
  // A string literal without escapes or line breaks, at most |max_bytes|
  // long (names in generated code are plain identifiers).
  bool plain_string(std::string* out, size_t max_bytes) {
    if (pos_ >= end_ || text_[pos_] != '"') return false;
    size_t p = pos_ + 1;
    while (p < end_ && text_[p] != '"') {
      const char c = text_[p];
      if (c == '\\' || c == '\n' || c == '\r' || p - pos_ > max_bytes) return false;
      ++p;
    }
    if (p >= end_) return false;
    out->assign(text_.data() + pos_ + 1, p - pos_ - 1);
    pos_ = p + 1;
    return true;
  }

 private:
  std::string_view text_;
  size_t pos_;
  size_t end_;
};

// The "}" that closes the "{" at |open|, skipping string and character
// literals and comments; npos when the text ends first. A counter, not
// recursion, so nesting depth costs nothing.
size_t matching_brace(std::string_view text, size_t open) {
  size_t depth = 0;
  size_t i = open;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      ++i;
      while (i < text.size() && text[i] != c) {
        if (text[i] == '\\') ++i;  // the escaped character, whatever it is
        ++i;
      }
      if (i >= text.size()) return std::string_view::npos;
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const size_t eol = text.find('\n', i);
      if (eol == std::string_view::npos) return std::string_view::npos;
      i = eol + 1;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t close = text.find("*/", i + 2);
      if (close == std::string_view::npos) return std::string_view::npos;
      i = close + 2;
      continue;
    }
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (depth == 0) return std::string_view::npos;  // cannot happen from |open|, which is a '{'
      if (--depth == 0) return i;
    }
    ++i;
  }
  return std::string_view::npos;
}

// What one check function says about its dimension |k|.
struct DimChecks {
  bool static_size = false;
  int64_t size = 0;
  bool bound = false;     // a lower or upper bound: the size is dynamic
  bool conflict = false;  // two different static sizes, or a size both static and bounded
};

// Reads one check function's body [begin, end) into |spec|. |index| is the
// function's input index, which its handle must name.
void read_check_body(std::string_view text, size_t begin, size_t end, int64_t index, TensorSpec* spec) {
  const std::string_view body = text.substr(begin, end - begin);

  // The handle: "ConstantHandle <var> = ConstantHandle(input_handles[<index>]);".
  std::string_view var;
  for (size_t p = body.find("ConstantHandle"); p != std::string_view::npos && var.empty();
       p = body.find("ConstantHandle", p + 1)) {
    Cursor c(body, p + std::string_view("ConstantHandle").size(), body.size());
    std::string_view name;
    int64_t handle_index = -1;
    c.skip_space();
    if (c.identifier(&name, kMaxWrapperNameBytes) && c.token("=") && c.token("ConstantHandle") && c.token("(") &&
        c.token("input_handles") && c.token("[") && (c.skip_space(), c.integer(&handle_index)) && c.token("]") &&
        c.token(")") && handle_index == index)
      var = name;
  }
  if (var.empty()) return;  // not the generated form: nothing is known about this input

  // The dtype: "<var>_expected_dtype = aoti_torch_dtype_<name>()". Two
  // different ones leave it unknown.
  const std::string dtype_var = std::string(var) + "_expected_dtype";
  bool dtype_conflict = false;
  for (size_t p = body.find(dtype_var); p != std::string_view::npos; p = body.find(dtype_var, p + 1)) {
    if (p > 0 && is_ident_char(body[p - 1])) continue;
    Cursor c(body, p + dtype_var.size(), body.size());
    std::string_view name;
    if (!(c.token("=") && c.token("aoti_torch_dtype_") && c.identifier(&name, kMaxDtypeNameBytes) && c.token("(") &&
          c.token(")")))
      continue;
    Result<DType> dtype = dtype_from_name(std::string(name));
    if (!dtype.ok() || (spec->has_dtype && spec->dtype != dtype.value())) {
      dtype_conflict = true;
      continue;
    }
    spec->dtype = dtype.value();
    spec->has_dtype = true;
  }
  if (dtype_conflict) spec->has_dtype = false;

  // The size and stride checks, from each "if (" of the body.
  const std::string size_of = std::string(var) + "_size";
  const std::string stride_of = std::string(var) + "_stride";
  std::vector<DimChecks> dims;
  bool shape_known = body.find(size_of) != std::string_view::npos && body.find(stride_of) != std::string_view::npos;
  auto dim = [&](int64_t k) -> DimChecks* {
    if (k < 0 || static_cast<uint64_t>(k) >= kMaxWrapperDims) {
      shape_known = false;
      return nullptr;
    }
    if (dims.size() <= static_cast<size_t>(k)) dims.resize(static_cast<size_t>(k) + 1);
    return &dims[static_cast<size_t>(k)];
  };
  for (size_t p = body.find("if"); p != std::string_view::npos && shape_known; p = body.find("if", p + 2)) {
    if ((p > 0 && is_ident_char(body[p - 1])) || (p + 2 < body.size() && is_ident_char(body[p + 2]))) continue;
    Cursor c(body, p + 2, body.size());
    if (!c.token("(")) continue;
    c.skip_space();
    int64_t value = 0, k = 0;
    if (c.integer(&value)) {
      // "<value> != <var>_size[<k>]" or "<value> != <var>_stride[<k>]".
      if (!c.token("!=")) continue;
      c.skip_space();
      if (!c.literal(var)) continue;
      const bool is_size = c.literal("_size");
      if (!is_size && !c.literal("_stride")) continue;
      if (!(c.token("[") && (c.skip_space(), c.integer(&k)) && c.token("]") && c.token(")"))) continue;
      DimChecks* d = dim(k);
      if (!d || !is_size) continue;  // a stride names a dimension but says nothing of its size
      if ((d->static_size && d->size != value) || d->bound) d->conflict = true;
      d->static_size = true;
      d->size = value;
    } else if (c.literal(var) && c.literal("_size")) {
      // "<var>_size[<k>] < <lower>" or "<var>_size[<k>] > <upper>".
      if (!(c.token("[") && (c.skip_space(), c.integer(&k)) && c.token("]"))) continue;
      if (!c.token("<") && !c.token(">")) continue;
      c.skip_space();
      if (!(c.integer(&value) && c.token(")"))) continue;
      DimChecks* d = dim(k);
      if (!d) continue;
      if (d->static_size) d->conflict = true;
      d->bound = true;
    }
  }
  // A stride check names its dimension too: every dimension below the
  // highest one named needs a size check, or the rank is not believed.
  for (size_t p = body.find(stride_of); p != std::string_view::npos && shape_known;
       p = body.find(stride_of, p + 1)) {
    if (p > 0 && is_ident_char(body[p - 1])) continue;
    Cursor c(body, p + stride_of.size(), body.size());
    int64_t k = 0;
    if (c.literal("[") && c.integer(&k) && c.literal("]")) dim(k);
  }
  if (!shape_known) return;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  for (const DimChecks& d : dims) {
    if (d.conflict || (!d.static_size && !d.bound)) return;
    if (d.static_size) {
      if (d.size > 0 && numel > std::numeric_limits<int64_t>::max() / d.size) return;
      numel *= d.size;
      shape.push_back(d.size);
    } else {
      shape.push_back(-1);
    }
  }
  spec->shape = std::move(shape);
  spec->has_shape = true;
}

// "inputs_info_[<i>].name = "<name>";" (or outputs_info_) throughout the
// text. Returns false when the names contradict each other.
bool read_names(std::string_view text, std::string_view marker, std::vector<std::optional<std::string>>* names) {
  for (size_t p = text.find(marker); p != std::string_view::npos; p = text.find(marker, p + marker.size())) {
    if (p > 0 && is_ident_char(text[p - 1])) continue;
    Cursor c(text, p + marker.size(), text.size());
    int64_t index = 0;
    std::string name;
    c.skip_space();
    if (!(c.integer(&index) && c.token("]") && c.token(".") && c.token("name") && c.token("=") &&
          (c.skip_space(), c.plain_string(&name, kMaxWrapperNameBytes)) && c.token(";")))
      continue;
    if (static_cast<uint64_t>(index) >= kMaxWrapperInputs) return false;
    if (names->size() <= static_cast<size_t>(index)) names->resize(static_cast<size_t>(index) + 1);
    std::optional<std::string>& slot = (*names)[static_cast<size_t>(index)];
    if (slot && *slot != name) return false;
    slot = std::move(name);
  }
  return true;
}

WrapperSpecs unknown(std::string problem) {
  WrapperSpecs out;
  out.problem = std::move(problem);
  return out;
}

}  // namespace

WrapperSpecs parse_wrapper_specs(std::string_view text) {
  if (text.size() > kMaxWrapperSourceBytes) return unknown("the wrapper source is larger than aotirt reads");

  std::vector<std::optional<std::string>> input_names, output_names;
  if (!read_names(text, kInputInfo, &input_names)) return unknown("the wrapper source names its inputs inconsistently");
  if (!read_names(text, kOutputInfo, &output_names)) output_names.clear();  // labels only: dropped

  // The check functions, in the order they appear; each index once.
  std::vector<std::optional<TensorSpec>> checked;
  size_t pos = 0;
  while ((pos = text.find(kCheckFunction, pos)) != std::string_view::npos) {
    Cursor c(text, pos + kCheckFunction.size(), text.size());
    int64_t index = 0;
    if (!c.integer(&index) || !c.token("(")) {
      pos += kCheckFunction.size();
      continue;
    }
    // Only a short window is searched, so text repeating the name without
    // a body costs no more than its own length.
    const size_t window = text.substr(c.pos(), kMaxParameterText).find_first_of("{;");
    if (window == std::string_view::npos || text[c.pos() + window] == ';') {  // not a definition
      pos = c.pos();
      continue;
    }
    const size_t open = c.pos() + window;
    const size_t close = matching_brace(text, open);
    if (close == std::string_view::npos) return unknown("the wrapper source ends inside an input check");
    if (static_cast<uint64_t>(index) >= kMaxWrapperInputs)
      return unknown("the wrapper source checks more inputs than aotirt reads");
    const size_t i = static_cast<size_t>(index);
    if (checked.size() <= i) checked.resize(i + 1);
    if (checked[i]) return unknown("the wrapper source checks an input twice");
    checked[i].emplace();
    read_check_body(text, open + 1, close, index, &*checked[i]);
    pos = close + 1;
  }

  WrapperSpecs out;
  if (checked.empty() && input_names.empty()) return unknown("the wrapper source holds no input checks");
  for (const auto& c : checked)
    if (!c) return unknown("the wrapper source skips the check of an input");
  if (!checked.empty() && !input_names.empty() && input_names.size() != checked.size())
    return unknown("the wrapper source names a different number of inputs than it checks");
  const size_t n = checked.empty() ? input_names.size() : checked.size();
  out.inputs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < checked.size()) out.inputs[i] = std::move(*checked[i]);
    if (i < input_names.size() && input_names[i]) out.inputs[i].name = *input_names[i];
  }
  bool outputs_complete = true;
  for (const auto& name : output_names) outputs_complete = outputs_complete && name.has_value();
  if (outputs_complete) {
    out.outputs.resize(output_names.size());
    for (size_t i = 0; i < output_names.size(); ++i) out.outputs[i].name = *output_names[i];
  }
  out.found = true;
  return out;
}

}  // namespace aotirt
