#include "package/pt2_package.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "base/status.h"
#include "package/cpu_features.h"
#include "package/elf_symbols.h"

namespace aotirt {
namespace {

constexpr const char* kAotiDir = "data/aotinductor/";

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

std::string json_value_to_string(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string metadata_get(const Pt2Package& p, const std::string& key) {
  for (const auto& kv : p.metadata)
    if (kv.first == key) return kv.second;
  return "";
}

}  // namespace

Result<std::vector<TensorSpec>> parse_tensor_specs(const std::string& json_text, const std::string& key) {
  std::vector<TensorSpec> specs;
  if (json_text.empty()) return specs;
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    return AOTIRT_STATUS(kDataLoss, "package metadata '{}' is not a JSON list", key);
  for (const auto& item : j) {
    if (!item.is_object()) return AOTIRT_STATUS(kDataLoss, "package metadata '{}' holds a non-object", key);
    TensorSpec s;
    // Check each field's type first: nlohmann's getters throw on a mismatch.
    if (item.contains("name")) {
      if (!item["name"].is_string())
        return AOTIRT_STATUS(kDataLoss, "package metadata '{}': a name is not a string", key);
      s.name = item["name"].get<std::string>();
    }
    if (item.contains("dtype")) {
      if (!item["dtype"].is_string())
        return AOTIRT_STATUS(kDataLoss, "package metadata '{}': dtype of '{}' is not a string", key, s.name);
      Result<DType> dtype = dtype_from_name(item["dtype"].get<std::string>());
      if (!dtype.ok()) return dtype.take_status().annotate("package metadata '" + key + "'");
      s.dtype = dtype.value();
      s.has_dtype = true;
    }
    if (item.contains("shape")) {
      if (!item["shape"].is_array())
        return AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' is not a list of ints", key, s.name);
      for (const auto& d : item["shape"]) {
        if (!d.is_number_integer())
          return AOTIRT_STATUS(kDataLoss, "package metadata '{}': shape of '{}' is not a list of ints", key, s.name);
        s.shape.push_back(d.get<int64_t>());
      }
      s.has_shape = true;
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

Result<Pt2Package> open_pt2_package(const std::string& path, const std::string& model_name) {
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

  AOTIRT_ASSIGN_OR_RETURN(std::string meta_text, p.zip->read(*metadata));
  nlohmann::json meta = nlohmann::json::parse(meta_text, nullptr, false);
  if (meta.is_discarded() || !meta.is_object())
    return AOTIRT_STATUS(kDataLoss, "'{}': {} is not a JSON object", path, metadata->name);
  for (auto kv = meta.begin(); kv != meta.end(); ++kv)
    p.metadata.emplace_back(kv.key(), json_value_to_string(kv.value()));

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
  AOTIRT_ASSIGN_OR_RETURN(p.info.inputs, parse_tensor_specs(metadata_get(p, "aotirt.inputs"), "aotirt.inputs"));
  AOTIRT_ASSIGN_OR_RETURN(p.info.outputs, parse_tensor_specs(metadata_get(p, "aotirt.outputs"), "aotirt.outputs"));

  AOTIRT_ASSIGN_OR_RETURN(p.library_bytes, p.zip->read(*p.library));
  AOTIRT_ASSIGN_OR_RETURN(ElfImports imports, read_elf_imports(p.library_bytes));
  p.undefined_symbols = std::move(imports.undefined);
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

}  // namespace aotirt
