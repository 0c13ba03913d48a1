#include "package/pt2_package.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>

#include "base/status.h"
#include "package/cpu_features.h"
#include "package/elf_symbols.h"
#include "package/wrapper_specs.h"

namespace aotirt {
namespace {

using Json = nlohmann::json;

constexpr const char* kAotiDir = "data/aotinductor/";
constexpr const char* kInputsKey = "aotirt.inputs";
constexpr const char* kOutputsKey = "aotirt.outputs";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "<root>/data/aotinductor/<model>/<file>" -> {model, file}; false otherwise.
bool split_aoti_entry(const std::string& name, std::string* model, std::string* file) {
  size_t pos = name.find(kAotiDir);
  if (pos == std::string::npos) return false;
  std::string rest = name.substr(pos + std::string(kAotiDir).size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) return false;
  *model = rest.substr(0, slash);
  *file = rest.substr(slash + 1);
  return !file->empty() && file->find('/') == std::string::npos;
}

std::string metadata_get(const Pt2Package& p, const std::string& key) {
  for (const auto& kv : p.metadata)
    if (kv.first == key) return kv.second;
  return "";
}

// Metadata is parsed from nlohmann's SAX events straight into what the
// runtime keeps, never into a JSON tree: a tree of a large document costs
// many times its size, and nlohmann frees one with a stack as large as its
// biggest list -- an allocation that, failing, ends the process from inside
// a destructor. The handlers also refuse nesting deeper than
// kMaxMetadataDepth as soon as they see it (nlohmann's own parser is
// iterative; the cap keeps anything downstream shallow).

// A scalar event, for handlers that treat all scalars alike.
struct Scalar {
  enum Kind { kNull, kBool, kInt, kUnsigned, kFloat, kString };
  explicit Scalar(Kind k) : kind(k) {}
  Kind kind;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  std::string text;  // the string, or a float's JSON text
};

// Routes nlohmann's SAX events to on_scalar/on_open/on_close/on_key and
// enforces the depth cap. Handlers return false with status_ set to stop.
class SaxBase : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return on_scalar(Scalar{Scalar::kNull}); }
  bool boolean(bool v) override {
    Scalar s{Scalar::kBool};
    s.b = v;
    return on_scalar(s);
  }
  bool number_integer(number_integer_t v) override {
    Scalar s{Scalar::kInt};
    s.i = v;
    return on_scalar(s);
  }
  bool number_unsigned(number_unsigned_t v) override {
    Scalar s{Scalar::kUnsigned};
    s.u = v;
    return on_scalar(s);
  }
  bool number_float(number_float_t, const string_t& raw) override {
    Scalar s{Scalar::kFloat};
    s.text = raw;
    return on_scalar(s);
  }
  bool string(string_t& v) override {
    Scalar s{Scalar::kString};
    s.text = std::move(v);
    return on_scalar(s);
  }
  bool binary(binary_t&) override { return on_scalar(Scalar{Scalar::kNull}); }  // not in JSON text
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(true); }
  bool end_array() override { return close(false); }
  bool key(string_t& k) override { return on_key(k); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    parse_error_ = e.what();
    return false;
  }

  // Parses |text|; |what| names the document and |expected| its kind
  // ("object", "list") in errors.
  Status parse(const std::string& text, const std::string& what, const char* expected) {
    if (text.size() > kMaxMetadataBytes)
      return AOTIRT_STATUS(kDataLoss, "{} is {} bytes, more than the {} MiB aotirt accepts", what, text.size(),
                           kMaxMetadataBytes >> 20);
    const bool ok = Json::sax_parse(text, this);
    if (too_deep_)
      return AOTIRT_STATUS(kDataLoss, "{} nests deeper than the {} levels aotirt accepts", what, kMaxMetadataDepth);
    if (!status_.ok()) return status_;
    if (!ok) {
      const std::string detail = parse_error_.empty() ? std::string() : " (" + parse_error_ + ")";
      return AOTIRT_STATUS(kDataLoss, "{} is not a JSON {}{}", what, expected, detail);
    }
    return Status();
  }

 protected:
  virtual bool on_scalar(Scalar v) = 0;
  virtual bool on_open(bool object) = 0;  // depth() already counts it
  virtual bool on_close(bool object) = 0;  // depth() still counts it
  virtual bool on_key(std::string& k) = 0;
  size_t depth() const { return depth_; }
  bool fail(Status s) {
    status_ = std::move(s);
    return false;
  }

 private:
  bool open(bool object) {
    if (++depth_ > kMaxMetadataDepth) {
      too_deep_ = true;
      return false;
    }
    return on_open(object);
  }
  bool close(bool object) {
    const bool ok = on_close(object);
    --depth_;
    return ok;
  }

  size_t depth_ = 0;
  bool too_deep_ = false;
  Status status_;
  std::string parse_error_;
};

// One shape dimension: 0 .. 2^63-1, or -1 for a dynamic one. nlohmann hands
// integers above INT64_MAX over as unsigned (and larger ones as floats),
// which a cast to int64 would wrap to negative numbers, i.e. "dynamic".
Result<int64_t> shape_dim(const Scalar& d, const std::string& key, const std::string& name) {
  if (d.kind == Scalar::kUnsigned) {
    if (d.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' has size {}, more than 2^63-1", key,
                           name, d.u);
    return static_cast<int64_t>(d.u);
  }
  if (d.kind == Scalar::kInt) {
    if (d.i < -1)
      return AOTIRT_STATUS(kDataLoss,
                           "package metadata '{}': shape of '{}' has size {} (sizes are >= 0, or -1 for a dynamic "
                           "dimension)",
                           key, name, d.i);
    return d.i;
  }
  return AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' is not a list of ints", key, name);
}

// Builds aotirt's tensor specs from the events of one spec list (a JSON list
// of {name, dtype, shape}), starting at the list itself. Unknown fields are
// parsed past.
class SpecListParser : public SaxBase {
 public:
  explicit SpecListParser(std::string key) : key_(std::move(key)) {}

  // For a parser fed by another handler: the list has ended.
  bool done() const { return started_ && level_ == 0; }
  std::vector<TensorSpec>& specs() { return specs_; }
  Status error() const { return error_; }

  // The events, at |level| = depth within this list (1 = the list itself).
  bool scalar(const Scalar& v) {
    if (level_ == 0) return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}' is not a JSON list", key_));
    if (level_ == 1) return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}' holds a non-object", key_));
    if (level_ == 2) return field_value(v);
    if (level_ == 3 && in_shape_) {
      Result<int64_t> d = shape_dim(v, key_, spec_.name);
      if (!d.ok()) return bad(d.take_status());
      // The element count of the static dimensions must fit int64, as every
      // size computed from the shape does.
      const int64_t n = d.value();
      if (n > 0 && numel_ > std::numeric_limits<int64_t>::max() / n)
        return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' has more than 2^63-1 elements",
                                 key_, spec_.name));
      if (n >= 0) numel_ *= n;
      spec_.shape.push_back(n);
    }
    return true;  // inside a field aotirt does not read
  }
  bool open(bool object) {
    started_ = true;
    ++level_;
    if (level_ == 1) {
      if (object) return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}' is not a JSON list", key_));
      return true;
    }
    if (level_ == 2) {
      if (!object) return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}' holds a non-object", key_));
      spec_ = TensorSpec();
      field_ = kOther;
      return true;
    }
    if (level_ == 3) {
      if (field_ == kShape && !object) {
        in_shape_ = true;
        spec_.shape.clear();
        spec_.has_shape = true;
        numel_ = 1;
        return true;
      }
      if (field_ != kOther) return field_value(Scalar{Scalar::kNull});  // a list or object where a value belongs
      return true;
    }
    if (in_shape_)
      return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' is not a list of ints", key_,
                               spec_.name));
    return true;
  }
  bool close(bool) {
    if (level_ == 3) in_shape_ = false;
    if (level_ == 2) specs_.push_back(std::move(spec_));
    --level_;
    return true;
  }
  bool set_key(const std::string& k) {
    if (level_ == 2) field_ = k == "name" ? kName : k == "dtype" ? kDtype : k == "shape" ? kShape : kOther;
    return true;
  }

 protected:
  bool on_scalar(Scalar v) override { return scalar(v) || fail(error_); }
  bool on_open(bool object) override { return open(object) || fail(error_); }
  bool on_close(bool object) override { return close(object); }
  bool on_key(std::string& k) override { return set_key(k); }

 private:
  enum Field { kName, kDtype, kShape, kOther };

  bool bad(Status s) {
    error_ = std::move(s);
    return false;
  }
  bool field_value(const Scalar& v) {
    switch (field_) {
      case kName:
        if (v.kind != Scalar::kString)
          return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}': a name is not a string", key_));
        spec_.name = v.text;
        return true;
      case kDtype: {
        if (v.kind != Scalar::kString)
          return bad(
              AOTIRT_STATUS(kDataLoss, "package metadata '{}': dtype of '{}' is not a string", key_, spec_.name));
        Result<DType> dtype = dtype_from_name(v.text);
        if (!dtype.ok()) return bad(dtype.take_status().annotate("package metadata '" + key_ + "'"));
        spec_.dtype = dtype.value();
        spec_.has_dtype = true;
        return true;
      }
      case kShape:
        return bad(AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' is not a list of ints", key_,
                                 spec_.name));
      case kOther:
        return true;
    }
    return true;
  }

  const std::string key_;
  size_t level_ = 0;
  bool started_ = false;
  bool in_shape_ = false;
  Field field_ = kOther;
  TensorSpec spec_;
  int64_t numel_ = 1;
  std::vector<TensorSpec> specs_;
  Status error_;
};

// The only lists the runtime reads from the top-level metadata.
bool is_spec_key(const std::string& key) { return key == kInputsKey || key == kOutputsKey; }

// The top-level metadata object: its scalars as strings (strings as they
// are, numbers and literals as their JSON text), spec lists parsed as they
// stream past, every other list or object parsed past without being kept.
class MetadataParser : public SaxBase {
 public:
  struct SpecSource {
    bool present = false;
    bool is_text = false;  // a string holding JSON (the exporter's form)
    std::string text;
    std::vector<TensorSpec> specs;
  };

  std::vector<std::pair<std::string, std::string>>& values() { return values_; }
  SpecSource& source(const std::string& key) { return key == kInputsKey ? inputs_ : outputs_; }

 protected:
  bool on_scalar(Scalar v) override {
    if (sub_) return sub_->scalar(v) || fail(sub_->error());
    if (depth() == 0) return fail(Status(StatusCode::kDataLoss, "not an object"));
    if (depth() != 1 || skipping_) return true;
    std::string text;
    switch (v.kind) {
      case Scalar::kNull: text = "null"; break;
      case Scalar::kBool: text = v.b ? "true" : "false"; break;
      case Scalar::kInt: text = std::to_string(v.i); break;
      case Scalar::kUnsigned: text = std::to_string(v.u); break;
      case Scalar::kFloat:
      case Scalar::kString: text = std::move(v.text); break;
    }
    if (is_spec_key(key_)) {
      SpecSource& src = source(key_);
      src = SpecSource();
      if (v.kind != Scalar::kNull) {
        src.present = true;
        src.is_text = v.kind == Scalar::kString;
        src.text = text;
      }
    }
    set(key_, std::move(text));
    return true;
  }
  bool on_open(bool object) override {
    if (depth() == 1) {
      if (!object) return fail(Status(StatusCode::kDataLoss, "not an object"));
      return true;
    }
    if (sub_) return sub_->open(object) || fail(sub_->error());
    if (skipping_) return true;
    if (depth() == 2 && is_spec_key(key_)) {
      sub_ = std::make_unique<SpecListParser>(key_);
      return sub_->open(object) || fail(sub_->error());
    }
    skipping_ = true;  // a list or object the runtime never reads
    skip_from_ = depth();
    return true;
  }
  bool on_close(bool object) override {
    if (sub_) {
      sub_->close(object);
      if (sub_->done()) {
        SpecSource& src = source(key_);
        src = SpecSource();
        src.present = true;
        src.specs = std::move(sub_->specs());
        sub_.reset();
      }
      return true;
    }
    if (skipping_ && depth() == skip_from_) skipping_ = false;
    return true;
  }
  bool on_key(std::string& k) override {
    if (sub_) return sub_->set_key(k);
    if (depth() == 1) key_ = std::move(k);
    return true;
  }

 private:
  // A key given twice keeps its last value, as a JSON object would.
  void set(const std::string& key, std::string value) {
    for (auto& kv : values_)
      if (kv.first == key) {
        kv.second = std::move(value);
        return;
      }
    values_.emplace_back(key, std::move(value));
  }

  std::vector<std::pair<std::string, std::string>> values_;
  std::string key_;
  bool skipping_ = false;
  size_t skip_from_ = 0;
  std::unique_ptr<SpecListParser> sub_;  // the spec list being read
  SpecSource inputs_, outputs_;
};

Result<std::vector<TensorSpec>> specs_from_source(MetadataParser::SpecSource& src, const std::string& key) {
  if (!src.present) return std::vector<TensorSpec>();
  if (src.is_text) return parse_tensor_specs(src.text, key);
  return std::move(src.specs);
}

// The wrapper source of |library| ("<hash>.wrapper.so" is built from
// "<hash>.wrapper.cpp"), else the only one there is; null when there is
// none or several others.
const ZipEntry* pick_wrapper_source(const std::vector<const ZipEntry*>& sources, const ZipEntry& library) {
  const std::string& so = library.name;
  if (ends_with(so, ".so")) {
    const std::string cpp = so.substr(0, so.size() - 3) + ".cpp";
    for (const ZipEntry* e : sources)
      if (e->name == cpp) return e;
  }
  return sources.size() == 1 ? sources.front() : nullptr;
}

// Specs for a package without aotirt's metadata, from the input checks in
// its wrapper source. Only a hint, so nothing here fails the load: an entry
// that is missing, too large or unreadable leaves the specs unknown, with
// a note saying why.
void learn_specs_from_wrapper(Pt2Package& p) {
  p.info.inputs.clear();
  p.info.outputs.clear();
  const ZipEntry* entry = p.wrapper_source;
  if (!entry) {
    p.info.spec_note = "the package records no aotirt metadata and carries no wrapper source";
    return;
  }
  if (entry->size > kMaxWrapperSourceBytes) {
    p.info.spec_note = fmt::format("its wrapper source is {} bytes, more than the {} MiB aotirt reads", entry->size,
                                   kMaxWrapperSourceBytes >> 20);
    return;
  }
  Result<std::string> text = p.zip->read(*entry);
  if (!text.ok()) {
    p.info.spec_note = "its wrapper source could not be read: " + text.status().message();
    return;
  }
  WrapperSpecs specs = parse_wrapper_specs(text.value());
  if (!specs.found) {
    p.info.spec_note = specs.problem;
    return;
  }
  p.info.inputs = std::move(specs.inputs);
  p.info.outputs = std::move(specs.outputs);
  p.info.spec_source = SpecSource::kWrapperSource;
}

}  // namespace

Result<std::vector<TensorSpec>> parse_tensor_specs(const std::string& json_text, const std::string& key) {
  if (json_text.empty()) return std::vector<TensorSpec>();
  SpecListParser parser(key);
  AOTIRT_RETURN_IF_ERROR(parser.parse(json_text, "package metadata '" + key + "'", "list"));
  if (!parser.done()) return AOTIRT_STATUS(kDataLoss, "package metadata '{}' is not a JSON list", key);
  return std::move(parser.specs());
}

Result<Pt2Package> open_pt2_layout(const std::string& path, const std::string& model_name) {
  Pt2Package p;
  AOTIRT_ASSIGN_OR_RETURN(p.zip, ZipArchive::open(path));
  p.info.path = path;

  // Group the AOTI entries by model name.
  std::map<std::string, std::vector<std::pair<std::string, const ZipEntry*>>> models;
  for (const ZipEntry& e : p.zip->entries()) {
    std::string model, file;
    if (split_aoti_entry(e.name, &model, &file)) models[model].emplace_back(file, &e);
  }
  if (models.empty())
    return AOTIRT_STATUS(kNotFound,
                         "'{}' is a zip archive but holds no AOTInductor model (no data/aotinductor/<name>/ "
                         "entries); make it with torch._inductor.aoti_compile_and_package or aotirt.export",
                         path);
  std::string chosen = model_name;
  if (chosen.empty()) chosen = models.count("model") ? "model" : models.begin()->first;
  auto it = models.find(chosen);
  if (it == models.end()) {
    std::string names;
    for (const auto& kv : models) names += (names.empty() ? "" : ", ") + kv.first;
    return AOTIRT_STATUS(kNotFound, "'{}' has no model named '{}' (it has: {})", path, chosen, names);
  }
  p.info.model_name = chosen;

  const ZipEntry* metadata = nullptr;
  bool has_sources = false;
  std::vector<const ZipEntry*> wrapper_sources;
  for (const auto& fe : it->second) {
    const std::string& f = fe.first;
    if (ends_with(f, ".so")) {
      if (p.library)
        return AOTIRT_STATUS(kInvalidArgument, "'{}': model '{}' has more than one .so", path, chosen);
      p.library = fe.second;
    } else if (ends_with(f, "wrapper_metadata.json") ||
               (ends_with(f, "_metadata.json") && f.find("kernel") == std::string::npos && !metadata)) {
      metadata = fe.second;
    } else if (ends_with(f, "_weights.blob")) {
      p.weights = fe.second;
    } else if (ends_with(f, ".cubin") || ends_with(f, ".fatbin") || ends_with(f, ".hsaco")) {
      p.kernels.push_back(fe.second);
    } else if (ends_with(f, ".wrapper.cpp") || ends_with(f, "CMakeLists.txt")) {
      has_sources = true;
      if (ends_with(f, ".wrapper.cpp")) wrapper_sources.push_back(fe.second);
    }
  }
  if (!p.library) {
    if (has_sources)
      return AOTIRT_STATUS(kUnimplemented,
                           "'{}' holds C++ sources but no compiled library (package_cpp_only / "
                           "compile_standalone); aotirt runs compiled packages only",
                           path);
    return AOTIRT_STATUS(kNotFound, "'{}': model '{}' has no compiled library (.so)", path, chosen);
  }
  if (!metadata) return AOTIRT_STATUS(kNotFound, "'{}': model '{}' has no *_metadata.json", path, chosen);

  // The size the archive declares is checked before anything is inflated.
  if (metadata->size > kMaxMetadataBytes)
    return AOTIRT_STATUS(kDataLoss, "'{}': {} is {} bytes, more than the {} MiB aotirt accepts", path,
                         metadata->name, metadata->size, kMaxMetadataBytes >> 20);
  AOTIRT_ASSIGN_OR_RETURN(std::string meta_text, p.zip->read(*metadata));
  MetadataParser meta;
  Status parsed = meta.parse(meta_text, metadata->name, "object");
  std::string().swap(meta_text);
  if (!parsed.ok()) {
    if (parsed.message() == "not an object")
      return AOTIRT_STATUS(kDataLoss, "'{}': {} is not a JSON object", path, metadata->name);
    return parsed.annotate("'" + path + "'");
  }
  p.metadata = std::move(meta.values());
  p.info.metadata = p.metadata;

  p.info.device_key = metadata_get(p, "AOTI_DEVICE_KEY");
  if (p.info.device_key.empty())
    return AOTIRT_STATUS(kDataLoss, "'{}': metadata has no AOTI_DEVICE_KEY", path);
  p.info.cpu_isa = metadata_get(p, "AOTI_CPU_ISA");
  std::string scalar = scalar_package_warning(p.info.device_key, p.info.cpu_isa);
  if (!scalar.empty()) p.info.warnings.push_back(std::move(scalar));
  p.info.compute_capability = metadata_get(p, "AOTI_COMPUTE_CAPABILITY");
  p.info.library_entry = p.library->name;
  p.info.library_bytes = p.library->size;
  p.info.weight_bytes = p.weights ? p.weights->size : 0;
  p.info.weights_in_library = p.weights == nullptr;
  for (const ZipEntry* k : p.kernels) p.info.kernel_entries.push_back(k->name);
  const bool recorded = meta.source(kInputsKey).present;
  AOTIRT_ASSIGN_OR_RETURN(p.info.inputs, specs_from_source(meta.source(kInputsKey), kInputsKey));
  AOTIRT_ASSIGN_OR_RETURN(p.info.outputs, specs_from_source(meta.source(kOutputsKey), kOutputsKey));
  if (recorded) {
    p.info.spec_source = SpecSource::kAotirtMetadata;
  } else {
    p.wrapper_source = pick_wrapper_source(wrapper_sources, *p.library);
    learn_specs_from_wrapper(p);
  }
  return p;
}

Status read_pt2_library(Pt2Package& p) {
  AOTIRT_ASSIGN_OR_RETURN(p.library_bytes, p.zip->read(*p.library));
  AOTIRT_ASSIGN_OR_RETURN(ElfImports imports, read_elf_imports(p.library_bytes));
  p.undefined_symbols = std::move(imports.undefined);
  return Status();
}

Result<Pt2Package> open_pt2_package(const std::string& path, const std::string& model_name) {
  AOTIRT_ASSIGN_OR_RETURN(Pt2Package p, open_pt2_layout(path, model_name));
  AOTIRT_RETURN_IF_ERROR(read_pt2_library(p));
  return p;
}

Status check_package_host(const Pt2Package& p) {
  std::string platform = metadata_get(p, "AOTI_PLATFORM");
  if (!platform.empty() && platform != "linux")
    return AOTIRT_STATUS(kIncompatible, "'{}' was built for {}, not linux", p.info.path, platform);
  std::string machine = metadata_get(p, "AOTI_MACHINE");
  if (!machine.empty() && machine != host_machine())
    return AOTIRT_STATUS(kIncompatible, "'{}' was built for {} CPUs, this machine is {}", p.info.path, machine,
                         host_machine());
  Status isa = check_cpu_isa(p.info.cpu_isa);
  if (!isa.ok()) isa.annotate("'" + p.info.path + "'");
  return isa;
}

std::vector<const ZipEntry*> kernels_for_device(const Pt2Package& p, DeviceType device) {
  std::vector<const ZipEntry*> out;
  // Only CUDA models load kernel files (cuModuleLoad from the cubin dir); an
  // .hsaco is for ROCm, which aotirt does not run, and CPU and MPS kernels
  // live inside the library.
  if (device != DeviceType::kCuda) return out;
  for (const ZipEntry* k : p.kernels)
    if (ends_with(k->name, ".cubin") || ends_with(k->name, ".fatbin")) out.push_back(k);
  return out;
}

}  // namespace aotirt
