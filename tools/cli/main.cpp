// aotirt: the command-line tool. `run` runs a package on .npy inputs and
// writes .npy outputs, `inspect` shows what a package holds and which shims it
// needs, `bench` times it. docs/cli.md describes every option.
//
// Exit codes: 0 success, 1 runtime error, 2 usage error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "aotirt/aotirt.h"
#include "cli/npy.h"
#include "generate.h"

namespace aotirt {
namespace cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kExitRuntimeError = 1;
constexpr int kExitUsageError = 2;

constexpr char kConversionHelp[] =
    "Conversions: numpy has no bfloat16, so bfloat16 and float16 outputs are written as float32 (as are "
    "float8 outputs); a float32 .npy is accepted for a bfloat16 or float16 input and rounded to nearest even.\n";

// ---- small helpers ----

// The part of a "CODE: message [file:line]" string that says what happened,
// so a last error already contained in the reported status is not repeated.
std::string message_core(std::string text) {
  const size_t colon = text.find(": ");
  if (colon != std::string::npos) text = text.substr(colon + 2);
  if (!text.empty() && text.back() == ']') {
    const size_t open = text.rfind(" [");
    if (open != std::string::npos) text = text.substr(0, open);
  }
  return text;
}

int report_error(const Status& status) {
  const std::string text = status.to_string();
  fmt::print(stderr, "aotirt: error: {}\n", text);
  const std::string last = last_error();
  if (!last.empty() && text.find(message_core(last)) == std::string::npos)
    fmt::print(stderr, "aotirt: last error: {}\n", last);
  return kExitRuntimeError;
}

Status error(StatusCode code, std::string message) { return Status(code, std::move(message)); }

bool is_narrow_float(DType d) {
  return d == DType::kBFloat16 || d == DType::kFloat16 || d == DType::kFloat8_e5m2 || d == DType::kFloat8_e4m3fn ||
         d == DType::kFloat8_e5m2fnuz || d == DType::kFloat8_e4m3fnuz;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

std::string spec_label(size_t index, const TensorSpec* spec) {
  if (spec && !spec->name.empty()) return fmt::format("input {} ('{}')", index, spec->name);
  return fmt::format("input {}", index);
}

std::string byte_text(size_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{} bytes ({:.1f} {})", bytes, v, units[u]);
}

// Loads |package| on the device asked for, else on its own (Model::load
// reads the package once and says so when the device it names is missing).
Result<std::unique_ptr<Model>> load_model(const std::string& package, const std::string& requested_device,
                                          double* load_ms = nullptr, bool cuda_graph = false,
                                          size_t num_runners = 1) {
  LoadOptions options;
  options.num_runners = num_runners;
  if (!requested_device.empty()) {
    Result<DeviceId> device = DeviceId::parse(requested_device);
    if (!device.ok()) return device.status();
    options.device = device.value();
  }
  options.cuda_graph = cuda_graph;
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Model>> model = Model::load(package, options);
  if (load_ms)
    *load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return model;
}

// Checks one input against what the package records, converting a float32
// array for a bfloat16/float16 input.
Result<Tensor> check_input(size_t index, const TensorSpec* spec, Tensor tensor, const std::string& file) {
  const std::string label = spec_label(index, spec);
  if (spec && spec->has_dtype && tensor.dtype() != spec->dtype) {
    const bool widened = (spec->dtype == DType::kBFloat16 || spec->dtype == DType::kFloat16) &&
                         tensor.dtype() == DType::kFloat32;
    if (!widened)
      return error(StatusCode::kInvalidArgument,
                   fmt::format("{}: the model expects {}, but {} holds {}{}", label, dtype_name(spec->dtype), file,
                               dtype_name(tensor.dtype()),
                               spec->dtype == DType::kBFloat16 || spec->dtype == DType::kFloat16
                                   ? " (use float32 or " + std::string(dtype_name(spec->dtype)) + ")"
                                   : ""));
    Result<Tensor> converted = tensor.to(DeviceId{}, spec->dtype);
    if (!converted.ok()) {
      Status st = converted.status();
      return st.annotate(fmt::format("converting {} to {}", file, dtype_name(spec->dtype)));
    }
    tensor = std::move(converted).value();
  }
  if (spec && spec->has_shape) {
    const std::vector<int64_t> got = tensor.sizes();
    bool match = got.size() == spec->shape.size();
    for (size_t d = 0; match && d < got.size(); ++d) match = spec->shape[d] < 0 || spec->shape[d] == got[d];
    if (!match)
      return error(StatusCode::kInvalidArgument, fmt::format("{}: the model expects shape {}, but {} has shape {}",
                                                             label, shape_text(spec->shape), file,
                                                             shape_text(got)));
  }
  return tensor;
}

// A failed run of a model whose input dtypes aotirt could not learn: the
// .npy files went in as they were, so a dtype the library refused is the
// likely cause. Says which inputs and why their dtypes are unknown.
Status with_unknown_dtypes(const Model& model, Status status) {
  const std::vector<TensorSpec>& specs = model.inputs();
  std::string unknown;
  for (size_t i = 0; i < specs.size(); ++i)
    if (!specs[i].has_dtype) unknown += (unknown.empty() ? "" : ", ") + spec_label(i, &specs[i]);
  if (unknown.empty()) return status;
  const PackageInfo& p = model.package();
  const std::string why = p.spec_source == SpecSource::kNone && !p.spec_note.empty()
                              ? p.spec_note
                              : "its wrapper source does not say";
  return error(status.code(),
               fmt::format("{} (aotirt could not learn the dtype of {} from the package: {}; the .npy files were "
                           "passed unconverted, so save each in the dtype the model was compiled for)",
                           status.message(), unknown, why));
}

Status count_matches(const Model& model, size_t files) {
  if (files == model.num_inputs()) return Status();
  return error(StatusCode::kInvalidArgument,
               fmt::format("the model takes {} input(s) but {} --input file(s) were given", model.num_inputs(),
                           files));
}

// Checks each read file against the model's specs (none past the end).
Result<std::vector<Tensor>> check_inputs(const Model& model, std::vector<Tensor> tensors,
                                         const std::vector<std::string>& files) {
  const std::vector<TensorSpec>& specs = model.inputs();
  for (size_t i = 0; i < tensors.size(); ++i) {
    Result<Tensor> checked = check_input(i, i < specs.size() ? &specs[i] : nullptr, std::move(tensors[i]), files[i]);
    if (!checked.ok()) return checked.status();
    tensors[i] = std::move(checked).value();
  }
  return tensors;
}

Result<std::vector<Tensor>> read_inputs(const Model& model, const std::vector<std::string>& files) {
  Status st = count_matches(model, files.size());
  if (!st.ok()) return st;
  std::vector<Tensor> tensors;
  for (const std::string& f : files) {
    Result<Tensor> t = read_npy(f);
    if (!t.ok()) return t.status();
    tensors.push_back(std::move(t).value());
  }
  return check_inputs(model, std::move(tensors), files);
}

// The .npy files, read on a thread of their own while the model loads (a
// GPU load waits on the device most of the time), and checked against the
// model's specs once it has loaded: the package is read by the load alone.
struct EarlyInputs {
  std::vector<Tensor> tensors;
  Status status;

  // Runs on the reader thread: nothing may escape it (an exception leaving
  // a thread aborts the process).
  void read(const std::vector<std::string>& files) noexcept {
    try {
      for (const std::string& f : files) {
        Result<Tensor> t = read_npy(f);
        if (!t.ok()) {
          status = t.status();
          return;
        }
        tensors.push_back(std::move(t).value());
      }
    } catch (const std::bad_alloc&) {
      tensors.clear();
      status = error(StatusCode::kResourceExhausted, "out of memory while reading the --input files");
    } catch (const std::exception& e) {
      tensors.clear();
      status = error(StatusCode::kInternal, fmt::format("reading the --input files failed: {}", e.what()));
    }
  }
  // The inputs for |model|: its input count first, as read_inputs() does.
  Result<std::vector<Tensor>> take(const Model& model, const std::vector<std::string>& files) {
    Status st = count_matches(model, files.size());
    if (!st.ok()) return st;
    if (!status.ok()) return status;
    return check_inputs(model, std::move(tensors), files);
  }
};

// Creates |dir| if needed and makes sure files can be written in it, so a bad
// path fails before the model runs.
Status prepare_output_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return error(StatusCode::kIoError, fmt::format("output path '{}' exists and is not a directory", dir));
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return error(StatusCode::kIoError, fmt::format("cannot create output directory '{}': {}", dir,
                                                   ec ? ec.message() : std::string("unknown error")));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return error(StatusCode::kIoError,
                 fmt::format("output directory '{}' is not writable: {}", dir, std::strerror(errno)));
  return Status();
}

// ---- run ----

const auto g_process_start = std::chrono::steady_clock::now();

// AOTIRT_LOG_LEVEL=debug: when each step of `aotirt run` ended, from the
// start of the process (for finding where a cold start goes; the library's
// own lines time the load's phases).
void debug_mark(const char* step) {
  static const bool on = [] {
    const char* level = std::getenv("AOTIRT_LOG_LEVEL");
    return level && std::strcmp(level, "debug") == 0;
  }();
  if (!on) return;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_process_start).count();
  std::fprintf(stderr, "aotirt debug: run: %s at %.1f ms\n", step, ms);
}

// Threads that widen and write a large output: a few, so the conversion
// overlaps the copies into the page cache.
int writer_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::min(4u, std::max(1u, cores)));
}

struct RunArgs {
  std::string package;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string device;
  bool cuda_graph = false;
};

// One line on stderr when graph mode could not record the model.
void report_graph_fallback(const Model& model) {
  GraphStats g = model.graph_stats();
  if (g.failed_captures)
    fmt::print(stderr, "aotirt: warning: ran without a CUDA graph: {}\n", g.last_failure);
}

Status cmd_run(const RunArgs& args) {
  Status st = prepare_output_dir(args.output_dir);
  if (!st.ok()) return st;
  EarlyInputs early;
  std::thread reader;
  try {
    reader = std::thread([&]() noexcept {
      early.read(args.inputs);
      debug_mark("inputs read beside the load");
    });
  } catch (const std::system_error&) {
    early.read(args.inputs);  // no thread to be had (out of memory): read them here
  }
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{reader};
  Result<std::unique_ptr<Model>> model = load_model(args.package, args.device, nullptr, args.cuda_graph);
  debug_mark("model loaded");
  if (reader.joinable()) reader.join();
  if (!model.ok()) return model.status();
  Result<std::vector<Tensor>> inputs = early.take(**model, args.inputs);
  if (!inputs.ok()) return inputs.status();
  debug_mark("inputs ready");

  RunOptions options;
  options.outputs_to_host = true;
  if (args.cuda_graph) {
    // The warm-up run; the next one records the graph and replays it.
    Result<std::vector<Tensor>> warm = (*model)->run(inputs.value(), options);
    if (!warm.ok()) return with_unknown_dtypes(**model, warm.status());
  }
  Result<std::vector<Tensor>> outputs = (*model)->run(inputs.value(), options);
  if (!outputs.ok()) return with_unknown_dtypes(**model, outputs.status());
  if (args.cuda_graph) report_graph_fallback(**model);
  debug_mark("run done");

  for (size_t i = 0; i < outputs->size(); ++i) {
    Tensor out = (*outputs)[i];
    const DType original = out.dtype();
    const DType written = is_narrow_float(original) ? DType::kFloat32 : original;
    if (!out.device().is_cpu()) {
      // In its own dtype: a bfloat16 output crosses the bus at half the
      // bytes, and widens while it is written.
      Result<Tensor> host = out.to(DeviceId{});
      if (!host.ok()) {
        Status s = host.status();
        return s.annotate(fmt::format("output {}", i));
      }
      out = std::move(host).value();
    }
    const std::string path = (fs::path(args.output_dir) / fmt::format("output{}.npy", i)).string();
    Status w = written != original ? write_npy_float32(path, out, writer_threads()) : write_npy(path, out);
    if (!w.ok()) return w.annotate(fmt::format("output {}", i));
    fmt::print("output{}: {} {} -> {}{}\n", i, dtype_name(written), shape_text(out.sizes()), path,
               written != original ? fmt::format(" (converted from {})", dtype_name(original)) : "");
  }
  debug_mark("outputs written");
  return Status();
}

// ---- inspect ----

Json spec_json(const TensorSpec& spec) {
  Json j;
  j["name"] = spec.name;
  j["dtype"] = spec.has_dtype ? Json(dtype_name(spec.dtype)) : Json(nullptr);
  j["shape"] = spec.has_shape ? Json(spec.shape) : Json(nullptr);
  return j;
}

// Where the specs came from, in words.
std::string spec_origin(const PackageInfo& p) {
  switch (p.spec_source) {
    case SpecSource::kAotirtMetadata: return "from aotirt metadata";
    case SpecSource::kWrapperSource: return "from the package's wrapper source";
    case SpecSource::kNone: break;
  }
  return "unknown";
}

void print_specs(const char* what, const std::vector<TensorSpec>& specs, const PackageInfo& p) {
  if (p.spec_source == SpecSource::kNone) {
    fmt::print("{}: unknown ({})\n", what,
               p.spec_note.empty() ? std::string("the package records no tensor metadata") : p.spec_note);
    return;
  }
  if (specs.empty() && p.spec_source == SpecSource::kWrapperSource) {
    fmt::print("{}: unknown (the wrapper source does not name them)\n", what);
    return;
  }
  fmt::print("{} ({}, {}):\n", what, specs.size(), spec_origin(p));
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    fmt::print("  {:<3} {:<20} {:<10} {}\n", i, s.name.empty() ? "-" : s.name,
               s.has_dtype ? dtype_name(s.dtype) : "?", s.has_shape ? shape_text(s.shape) : "?");
  }
}

Status cmd_inspect(const std::string& package, bool json) {
  Result<PackageInfo> info = inspect_package(package);
  if (!info.ok()) return info.status();
  const PackageInfo& p = info.value();
  size_t missing = 0;
  for (const auto& s : p.imported_shims) missing += s.provided ? 0 : 1;
  const std::string summary =
      missing == 0 ? fmt::format("all {} imported shims are provided", p.imported_shims.size())
                   : fmt::format("{} missing symbol{}: the model will not load", missing, missing == 1 ? "" : "s");

  if (json) {
    Json j;
    j["path"] = p.path;
    j["model_name"] = p.model_name;
    j["device"] = p.device_key;
    j["cpu_isa"] = p.cpu_isa;
    j["compute_capability"] = p.compute_capability;
    j["library_entry"] = p.library_entry;
    j["library_bytes"] = p.library_bytes;
    j["weight_bytes"] = p.weight_bytes;
    j["weights_in_library"] = p.weights_in_library;
    j["kernel_entries"] = p.kernel_entries;
    j["inputs"] = Json::array();
    for (const auto& s : p.inputs) j["inputs"].push_back(spec_json(s));
    j["outputs"] = Json::array();
    for (const auto& s : p.outputs) j["outputs"].push_back(spec_json(s));
    j["spec_source"] = spec_source_name(p.spec_source);
    if (!p.spec_note.empty()) j["spec_note"] = p.spec_note;
    j["imported_shims"] = Json::array();
    for (const auto& s : p.imported_shims) j["imported_shims"].push_back({{"name", s.name}, {"provided", s.provided}});
    j["missing_shims"] = missing;
    j["warnings"] = p.warnings;
    j["summary"] = summary;
    std::cout << j.dump(2) << "\n";
    return Status();
  }

  fmt::print("package:  {}\n", p.path);
  fmt::print("model:    {}\n", p.model_name);
  std::string device = p.device_key.empty() ? "?" : p.device_key;
  if (!p.cpu_isa.empty()) device += fmt::format(" (ISA {})", p.cpu_isa);
  if (!p.compute_capability.empty()) device += fmt::format(" (sm_{})", p.compute_capability);
  fmt::print("device:   {}\n", device);
  fmt::print("library:  {}, {}\n", p.library_entry, byte_text(p.library_bytes));
  fmt::print("weights:  {}\n",
             p.weights_in_library ? "inside the library" : byte_text(p.weight_bytes) + " (external blob)");
  if (!p.kernel_entries.empty()) fmt::print("kernels:  {} .cubin file(s)\n", p.kernel_entries.size());
  print_specs("inputs", p.inputs, p);
  print_specs("outputs", p.outputs, p);
  fmt::print("imported shims ({}):\n", p.imported_shims.size());
  for (const auto& s : p.imported_shims) fmt::print("  {:<8} {}\n", s.provided ? "provided" : "MISSING", s.name);
  fmt::print("{}\n", summary);
  std::fflush(stdout);
  for (const std::string& w : p.warnings) fmt::print(stderr, "aotirt: warning: {}\n", w);
  return Status();
}

// ---- bench ----

struct BenchArgs {
  std::string package;
  std::string device;
  int iters = 100;
  int warmup = 10;
  bool json = false;
  std::vector<std::string> inputs;
  std::optional<int64_t> dynamic_dim;
  bool cuda_graph = false;
  bool profile_shims = false;
  int concurrency = 0;  // > 0: that many threads run at once (num_runners = concurrency)
};

template <class T, class Gen>
void fill(void* data, int64_t n, Gen&& gen) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(gen());
}

// Random data for one input: floats in [-1, 1), integers in [0, 10) (safe as
// indices into small tables), booleans 0/1.
Result<Tensor> random_input(size_t index, const TensorSpec* spec, std::optional<int64_t> dynamic_dim,
                            std::mt19937& rng) {
  const std::string label = spec_label(index, spec);
  if (!spec || !spec->has_dtype || !spec->has_shape)
    return error(StatusCode::kInvalidArgument,
                 fmt::format("{}: the package does not record its dtype and shape, so random inputs cannot be "
                             "made; pass --input files",
                             label));
  std::vector<int64_t> shape = spec->shape;
  for (int64_t& d : shape) {
    if (d >= 0) continue;
    if (!dynamic_dim)
      return error(StatusCode::kInvalidArgument,
                   fmt::format("{} has a dynamic dimension {}; pass --dynamic-dim N or --input files", label,
                               shape_text(spec->shape)));
    d = *dynamic_dim;
  }
  const DType dtype = spec->dtype;
  const bool direct = !is_narrow_float(dtype) && dtype != DType::kComplex32;
  Result<Tensor> t = Tensor::empty(shape, direct ? dtype : DType::kFloat32);
  if (!t.ok()) return t.status();
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 9);
  auto r = [&] { return real(rng); };
  auto k = [&] { return small(rng); };
  auto b = [&] { return small(rng) & 1; };
  void* p = t->data();
  const int64_t n = t->numel();
  switch (t->dtype()) {
    case DType::kFloat32: fill<float>(p, n, r); break;
    case DType::kFloat64: fill<double>(p, n, r); break;
    case DType::kComplex64: fill<float>(p, 2 * n, r); break;
    case DType::kComplex128: fill<double>(p, 2 * n, r); break;
    case DType::kBool: fill<uint8_t>(p, n, b); break;
    case DType::kUInt8: fill<uint8_t>(p, n, k); break;
    case DType::kInt8: fill<int8_t>(p, n, k); break;
    case DType::kInt16: fill<int16_t>(p, n, k); break;
    case DType::kUInt16: fill<uint16_t>(p, n, k); break;
    case DType::kInt32: fill<int32_t>(p, n, k); break;
    case DType::kUInt32: fill<uint32_t>(p, n, k); break;
    case DType::kInt64: fill<int64_t>(p, n, k); break;
    case DType::kUInt64: fill<uint64_t>(p, n, k); break;
    default:
      return error(StatusCode::kUnimplemented,
                   fmt::format("{}: cannot make random {} data", label, dtype_name(dtype)));
  }
  if (direct) return t;
  return t->to(DeviceId{}, dtype);
}

// This process's peak resident memory (VmHWM) in MiB, or -1 without /proc.
// Reported by the process itself: a parent's wait4() ru_maxrss also counts
// the parent's own memory at fork time, which can dwarf a small runtime.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return -1.0;
}

double percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::min(std::max<size_t>(rank, 1), sorted.size());
  return sorted[rank - 1];
}

// `bench --concurrency N`: N threads run the model at once, each |iters|
// times after its own first run and warm-up; reports the total throughput
// and the per-run latency over all threads.
Status bench_concurrent(Model& model, const std::vector<Tensor>& inputs, const BenchArgs& args, double load_ms) {
  using Clock = std::chrono::steady_clock;
  const int n = args.concurrency;
  std::vector<std::vector<double>> per_thread(static_cast<size_t>(n));
  std::vector<Status> errors(static_cast<size_t>(n));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point start, end;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      auto one = [&](double* us) -> Status {
        const auto s = Clock::now();
        RunOptions sync;
        sync.synchronize = true;
        Result<std::vector<Tensor>> out = model.run(inputs, sync);
        if (!out.ok()) return out.status();
        if (us) *us = std::chrono::duration<double, std::micro>(Clock::now() - s).count();
        return Status();
      };
      Status& st = errors[static_cast<size_t>(t)];
      for (int i = 0; i <= args.warmup && st.ok(); ++i) st = one(nullptr);
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      std::vector<double>& samples = per_thread[static_cast<size_t>(t)];
      samples.resize(static_cast<size_t>(args.iters));
      for (int i = 0; i < args.iters && st.ok(); ++i) st = one(&samples[static_cast<size_t>(i)]);
    });
  }
  while (ready.load() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  start = Clock::now();
  go.store(true);
  for (auto& th : threads) th.join();
  end = Clock::now();
  for (int t = 0; t < n; ++t) {
    if (!errors[static_cast<size_t>(t)].ok()) {
      Status s = errors[static_cast<size_t>(t)];
      return s.annotate(fmt::format("thread {}", t));
    }
  }
  std::vector<double> samples;
  for (const auto& v : per_thread) samples.insert(samples.end(), v.begin(), v.end());
  std::sort(samples.begin(), samples.end());
  const double wall_s = std::chrono::duration<double>(end - start).count();
  const double total = static_cast<double>(samples.size());
  if (args.json) {
    Json j;
    j["package"] = args.package;
    j["device"] = model.device().to_string();
    j["concurrency"] = n;
    j["iters_per_thread"] = args.iters;
    j["warmup"] = args.warmup;
    j["load_ms"] = load_ms;
    j["wall_s"] = wall_s;
    j["runs_per_s"] = total / wall_s;
    j["median_us"] = percentile(samples, 50);
    j["p90_us"] = percentile(samples, 90);
    j["p99_us"] = percentile(samples, 99);
    j["max_us"] = samples.back();
    std::cout << j.dump() << "\n";
    return Status();
  }
  fmt::print("package:     {}\n", args.package);
  fmt::print("device:      {}\n", model.device().to_string());
  fmt::print("concurrency: {} threads x {} runs (after {} warm-up runs each), num_runners {}\n", n, args.iters,
             args.warmup, n);
  fmt::print("total:       {:.3f} s, {:.1f} runs/s\n", wall_s, total / wall_s);
  fmt::print("per run (us): median {:.1f}  p90 {:.1f}  p99 {:.1f}  max {:.1f}\n", percentile(samples, 50),
             percentile(samples, 90), percentile(samples, 99), samples.back());
  return Status();
}

Status cmd_bench(const BenchArgs& args) {
  double load_ms = 0;
  Result<std::unique_ptr<Model>> loaded =
      load_model(args.package, args.device, &load_ms, args.cuda_graph,
                 static_cast<size_t>(std::max(args.concurrency, 1)));
  if (!loaded.ok()) return loaded.status();
  Model& model = **loaded;

  std::vector<Tensor> inputs;
  if (!args.inputs.empty()) {
    Result<std::vector<Tensor>> read = read_inputs(model, args.inputs);
    if (!read.ok()) return read.status();
    inputs = std::move(read).value();
  } else {
    std::mt19937 rng(0);
    for (size_t i = 0; i < model.num_inputs(); ++i) {
      const TensorSpec* spec = i < model.inputs().size() ? &model.inputs()[i] : nullptr;
      Result<Tensor> t = random_input(i, spec, args.dynamic_dim, rng);
      if (!t.ok()) return t.status();
      inputs.push_back(std::move(t).value());
    }
  }
  // Inputs go to the device once, so the timed runs measure the model only.
  if (!model.device().is_cpu()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Result<Tensor> moved = inputs[i].to(model.device());
      if (!moved.ok()) {
        Status s = moved.status();
        return s.annotate(fmt::format("copying input {} to {}", i, model.device().to_string()));
      }
      inputs[i] = std::move(moved).value();
    }
  }
  if (args.concurrency > 0) return bench_concurrent(model, inputs, args, load_ms);

  using Clock = std::chrono::steady_clock;
  auto timed_run = [&](double* us) -> Status {
    const auto start = Clock::now();
    RunOptions sync;
    sync.synchronize = true;  // device runs are asynchronous: time the work, not the launch
    Result<std::vector<Tensor>> out = model.run(inputs, sync);
    const auto end = Clock::now();
    if (!out.ok()) return out.status();
    *us = std::chrono::duration<double, std::micro>(end - start).count();
    return Status();
  };

  double first_us = 0;
  Status st = timed_run(&first_us);
  if (!st.ok()) return st.annotate("first run");
  // With graphs, the run after the first one records: keep it out of the timed runs.
  const int warmup = args.cuda_graph ? std::max(args.warmup, 1) : args.warmup;
  for (int i = 0; i < warmup; ++i) {
    double ignored = 0;
    st = timed_run(&ignored);
    if (!st.ok()) return st.annotate(fmt::format("warm-up run {}", i + 1));
  }
  std::vector<double> samples(static_cast<size_t>(args.iters));
  if (args.profile_shims) {
    shim_profile(true);
    set_shim_profiling(true);
  }
  for (int i = 0; i < args.iters; ++i) {
    st = timed_run(&samples[static_cast<size_t>(i)]);
    if (!st.ok()) return st.annotate(fmt::format("timed run {}", i + 1));
  }
  std::vector<ShimProfileEntry> profile;
  if (args.profile_shims) {
    set_shim_profiling(false);
    profile = shim_profile(true);
    // Largest share first.
    std::sort(profile.begin(), profile.end(),
              [](const ShimProfileEntry& a, const ShimProfileEntry& b) { return a.total_us > b.total_us; });
  }
  const double runs = static_cast<double>(args.iters);
  std::sort(samples.begin(), samples.end());
  const GraphStats graphs = model.graph_stats();
  if (args.cuda_graph) report_graph_fallback(model);
  double sum = 0;
  for (double s : samples) sum += s;
  const double mean = sum / static_cast<double>(samples.size());

  if (args.json) {
    Json j;
    j["package"] = args.package;
    j["device"] = model.device().to_string();
    j["iters"] = args.iters;
    j["warmup"] = warmup;
    j["load_ms"] = load_ms;
    j["first_run_us"] = first_us;
    j["median_us"] = percentile(samples, 50);
    j["p90_us"] = percentile(samples, 90);
    j["p99_us"] = percentile(samples, 99);
    j["min_us"] = samples.front();
    j["max_us"] = samples.back();
    j["mean_us"] = mean;
    j["synchronized"] = true;
    const double rss = peak_rss_mib();
    if (rss >= 0) j["peak_rss_mb"] = rss;
    j["cuda_graph"] = args.cuda_graph;
    if (args.cuda_graph) {
      j["graph_replays"] = graphs.replays;
      j["graph_eager_runs"] = graphs.eager_runs;
      j["graph_failed"] = graphs.failed_captures > 0;
      if (graphs.failed_captures) j["graph_failure"] = graphs.last_failure;
    }
    if (args.profile_shims) {
      Json entries = Json::array();
      double total = 0;
      for (const auto& e : profile) {
        entries.push_back({{"name", e.name}, {"calls_per_run", static_cast<double>(e.calls) / runs},
                           {"us_per_run", e.total_us / runs}});
        total += e.total_us / runs;
      }
      j["shim_profile"] = entries;
      j["shim_us_per_run"] = total;
    }
    std::cout << j.dump() << "\n";
    return Status();
  }
  fmt::print("package:    {}\n", args.package);
  fmt::print("device:     {}\n", model.device().to_string());
  fmt::print("load:       {:.3f} ms\n", load_ms);
  fmt::print("first run:  {:.1f} us\n", first_us);
  if (args.cuda_graph)
    fmt::print("CUDA graph: {} replays, {} runs without a graph{}\n", graphs.replays, graphs.eager_runs,
               graphs.failed_captures ? " (recording failed)" : "");
  fmt::print("{} runs after {} warm-up runs (us):\n", args.iters, warmup);
  fmt::print("  median {:.1f}  p90 {:.1f}  p99 {:.1f}  min {:.1f}  max {:.1f}  mean {:.1f}\n",
             percentile(samples, 50), percentile(samples, 90), percentile(samples, 99), samples.front(),
             samples.back(), mean);
  if (args.profile_shims) {
    double total = 0;
    for (const auto& e : profile) total += e.total_us / runs;
    fmt::print("host time in shim calls per run: {:.1f} us of a {:.1f} us mean run\n", total, mean);
    fmt::print("  {:>10} {:>10}  {}\n", "calls/run", "us/run", "function");
    for (const auto& e : profile)
      fmt::print("  {:>10.1f} {:>10.1f}  {}\n", static_cast<double>(e.calls) / runs, e.total_us / runs, e.name);
  }
  return Status();
}

// ---- temporary files and signals ----

// Removes |dir| and everything in it. Other threads may still be writing
// there when a signal comes, so a listing that changes under the removal is
// retried a few times.
void remove_tree(const std::string& dir) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!fs::exists(dir, ec)) return;
  }
}

// `run` and `bench` give the process a private temporary directory: TMPDIR
// points into it from then on, so every temporary file the runtime makes (a
// CUDA model's extracted kernels) lands inside it. On a normal exit, an
// error included, it is removed with its owner; for SIGINT, SIGTERM and
// SIGHUP, which would otherwise end the process before any destructor runs,
// those signals are blocked in every thread and taken by a watcher thread
// with sigwait. The watcher removes the directory, then raises the signal
// again with its default action, so the process still ends killed by it
// (exit status 130 or 143 in a shell). It is an ordinary thread, not a
// signal handler, so removing a tree there is safe.
class ScratchDir {
 public:
  ScratchDir() = default;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    if (!dir_.empty()) remove_tree(dir_);
  }

  // Call before any other thread exists: threads inherit the signal mask.
  void start() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      // A signal the caller set to be ignored (nohup) stays ignored.
      struct sigaction old;
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaddset(&set, sig);
    }
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/aotirt-run-XXXXXX";
    // Without a private directory (TMPDIR not writable) the runtime reports
    // its own error if it needs one; the signals still end the process.
    if (!mkdtemp(tmpl.data())) return;
    dir_ = tmpl;
    setenv("TMPDIR", dir_.c_str(), 1);  // no other thread runs yet
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    try {
      std::thread([set, dir = dir_]() noexcept {
        int sig = 0;
        if (sigwait(&set, &sig) != 0) return;
        remove_tree(dir);
        // Die of the same signal: its default action, unblocked in this
        // thread, ends the whole process.
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
        raise(sig);
        _exit(128 + sig);
      }).detach();
    } catch (const std::exception&) {
      // No watcher (no memory for a thread): the signals keep their default
      // action rather than being blocked for good.
      pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    }
  }

 private:
  std::string dir_;
};

// ---- command line ----

CLI::Validator device_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Result<DeviceId> d = DeviceId::parse(text);
        return d.ok() ? std::string() : d.status().message();
      },
      "cpu|cuda[:N]", "device");
}

int run_main(int argc, char** argv) {
  CLI::App app{"aotirt: run AOTInductor .pt2 packages without libtorch.", "aotirt"};
  // Usage errors read like runtime ones; set before the subcommands, which copy it.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("aotirt: error: {}\nRun with --help for more information.\n", e.what());
  });
  app.set_version_flag("--version", fmt::format("aotirt {}", version()));
  app.require_subcommand(1);
  app.footer("Exit codes: 0 success, 1 runtime error, 2 usage error.");

  RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Run a package on .npy inputs and write its outputs as .npy files.");
  run->add_option("package", run_args.package, "The .pt2 package")->required();
  run->add_option("-i,--input", run_args.inputs, "Input .npy file, once per model input, in order")
      ->allow_extra_args(false)
      ->take_all();
  run->add_option("-o,--output-dir", run_args.output_dir,
                  "Directory for output0.npy, output1.npy, ... (created if missing)")
      ->required();
  run->add_option("-d,--device", run_args.device, "cpu, cuda or cuda:N (default: the package's device)")
      ->check(device_validator());
  run->add_flag("--cuda-graph", run_args.cuda_graph,
                "Run once to warm up, then record a CUDA graph and replay it for the outputs (CUDA models)");
  run->footer(kConversionHelp);

  std::string inspect_package_path;
  bool inspect_json = false;
  CLI::App* inspect =
      app.add_subcommand("inspect", "Show a package's device, tensors, sizes and the shims it imports.");
  inspect->add_option("package", inspect_package_path, "The .pt2 package")->required();
  inspect->add_flag("--json", inspect_json, "Print one JSON object");

  BenchArgs bench_args;
  int64_t dynamic_dim = 0;
  CLI::App* bench = app.add_subcommand("bench", "Time load, first run and steady-state runs of a package.");
  bench->add_option("package", bench_args.package, "The .pt2 package")->required();
  bench->add_option("-d,--device", bench_args.device, "cpu, cuda or cuda:N (default: the package's device)")
      ->check(device_validator());
  bench->add_option("--iters", bench_args.iters, "Timed runs")->capture_default_str()->check(CLI::Range(1, 1 << 30));
  bench->add_option("--warmup", bench_args.warmup, "Untimed runs after the first run")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  bench->add_flag("--json", bench_args.json, "Print one JSON object");
  bench->add_flag("--profile-shims", bench_args.profile_shims,
                  "Also report the host time spent in each aoti_torch_* call during the timed runs");
  bench->add_option("--concurrency", bench_args.concurrency,
                    "Run from N threads at once (num_runners N); --iters runs per thread")
      ->check(CLI::Range(1, 1024));
  bench->add_flag("--cuda-graph", bench_args.cuda_graph,
                  "Record the model into a CUDA graph after the first run and time replays (CUDA models)");
  bench->add_option("-i,--input", bench_args.inputs, "Input .npy files (default: random data from the specs)")
      ->allow_extra_args(false)
      ->take_all();
  CLI::Option* dyn = bench->add_option("--dynamic-dim", dynamic_dim,
                                       "Size used for dynamic dimensions of random inputs")
                         ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  bench->footer("A float32 .npy is accepted for a bfloat16 or float16 input (rounded to nearest even).\n");

  GenerateArgs generate_args;
  CLI::App* generate = add_generate_command(app, generate_args);
  TokenizeArgs tokenize_args;
  CLI::App* tokenize = add_tokenize_command(app, tokenize_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsageError;
  }

  ScratchDir scratch;
  if (*run || *bench) scratch.start();
  Status st;
  if (*run) {
    st = cmd_run(run_args);
  } else if (*inspect) {
    st = cmd_inspect(inspect_package_path, inspect_json);
  } else if (*bench) {
    if (*dyn) bench_args.dynamic_dim = dynamic_dim;
    st = cmd_bench(bench_args);
  } else if (*generate) {
    int code = 0;
    st = cmd_generate(generate_args, &code);
    if (st.ok()) return code;
  } else if (*tokenize) {
    st = cmd_tokenize(tokenize_args);
  }
  return st.ok() ? 0 : report_error(st);
}

}  // namespace
}  // namespace cli
}  // namespace aotirt

int main(int argc, char** argv) {
  // Line-buffered even into a pipe, so a caller that watches for "output0"
  // (cold-start timing, scripts) sees each line when it is printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // The CLI runs one stream at a time, so one hardware work queue serves it;
  // each of the driver's default eight holds host memory (the seven others
  // cost about 70 MiB of peak RSS on an H200 machine, bench/notes.md row 12).
  // Read when the CUDA context is created, so it is set before anything
  // touches CUDA; the user's own value wins.
  const bool connections_set = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") != nullptr;
  if (!connections_set) setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1);
  const char* level = std::getenv("AOTIRT_LOG_LEVEL");
  if (level && std::strcmp(level, "debug") == 0)
    std::fprintf(stderr, "aotirt debug: CUDA_DEVICE_MAX_CONNECTIONS=%s (%s)\n",
                 std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), connections_set ? "set by the caller" : "the CLI's default");
  // aotirt's API does not throw, but the CLI's own containers can run out of
  // memory (std::bad_alloc from a huge input): that must end in an error
  // message, not an abort.
  try {
    return aotirt::cli::run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("aotirt: error: RESOURCE_EXHAUSTED: out of memory\n", stderr);
    return 1;
  } catch (const std::system_error& e) {
    // A thread that could not be started (EAGAIN) is a resource too.
    std::fprintf(stderr, "aotirt: error: RESOURCE_EXHAUSTED: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotirt: error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fputs("aotirt: error: INTERNAL: unexpected exception\n", stderr);
    return 1;
  }
}
