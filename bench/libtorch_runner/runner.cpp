// The libtorch reference runner of the benchmark: loads an AOTInductor .pt2
// package with torch::inductor::AOTIModelPackageLoader and times it the way
// `aotirt bench` times aotirt, so the two are compared on the same package
// and the same inputs.
//
//   aoti_libtorch_runner PKG --device cpu|cuda [--iters N] [--warmup N]
//       [--input FILE.npy[:DTYPE] ...] [--output-dir DIR] [--json]
//
// Each timed run is Run followed by a device synchronisation, timed with a
// steady clock. After the first run it copies the outputs to the host, writes
// output 0 (with --output-dir) and prints the line "first_output", flushed,
// so a caller can time exec-to-first-output from outside. With --json it ends with one JSON
// line holding load_ms, first_run_us, median/p90/p99/min/max/mean in µs, the
// peak resident set (VmHWM) and the shared libraries the process mapped.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/cuda.h>

#include "npy_io.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string package;
  std::string device = "cpu";
  int iters = 100;
  int warmup = 10;
  std::vector<std::string> inputs;
  std::string output_dir;
  bool json = false;
};

void usage_error(const std::string& what) {
  std::cerr << "aoti_libtorch_runner: " << what << "\n"
            << "usage: aoti_libtorch_runner PKG --device cpu|cuda [--iters N] [--warmup N] "
               "[--input FILE.npy[:DTYPE] ...] [--output-dir DIR] [--json]\n";
  std::exit(2);
}

int parse_int(const std::string& flag, const std::string& text, int min) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= min) return v;
  } catch (const std::exception&) {
  }
  usage_error(flag + " needs an integer >= " + std::to_string(min) + ", got '" + text + "'");
  return 0;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--device") a.device = value();
    else if (arg == "--iters") a.iters = parse_int(arg, value(), 1);
    else if (arg == "--warmup") a.warmup = parse_int(arg, value(), 0);
    else if (arg == "--input" || arg == "-i") a.inputs.push_back(value());
    else if (arg == "--output-dir") a.output_dir = value();
    else if (arg == "--json") a.json = true;
    else if (!arg.empty() && arg[0] == '-') usage_error("unknown option " + arg);
    else if (a.package.empty()) a.package = arg;
    else usage_error("more than one package given");
  }
  if (a.package.empty()) usage_error("no package given");
  if (a.device != "cpu" && a.device != "cuda") usage_error("--device must be cpu or cuda");
  return a;
}

at::ScalarType dtype_by_name(const std::string& name) {
  static const std::map<std::string, at::ScalarType> kNames = {
      {"float32", at::kFloat}, {"float64", at::kDouble}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16},
      {"int64", at::kLong},    {"int32", at::kInt},      {"uint8", at::kByte},   {"bool", at::kBool}};
  auto it = kNames.find(name);
  if (it == kNames.end()) throw std::runtime_error("unknown dtype '" + name + "'");
  return it->second;
}

// "file.npy" or "file.npy:bfloat16": the file, converted to the dtype when one
// is named (the harness stores bfloat16 inputs as float32 files).
at::Tensor load_input(const std::string& spec, const c10::Device& device) {
  std::string path = spec;
  std::string dtype;
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && spec.find('/', colon) == std::string::npos) {
    path = spec.substr(0, colon);
    dtype = spec.substr(colon + 1);
  }
  at::Tensor t = bench::read_npy(path);
  if (!dtype.empty()) t = t.to(dtype_by_name(dtype));
  return t.to(device).contiguous();
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double nearest_rank(const std::vector<double>& sorted, double pct) {
  size_t rank = static_cast<size_t>(pct / 100.0 * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::min(std::max<size_t>(rank, 1), sorted.size());
  return sorted[rank - 1];
}

double vm_hwm_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream ss(line.substr(6));
      double kb = 0;
      ss >> kb;
      return kb / 1024.0;
    }
  }
  return -1;
}

// Shared libraries this process has mapped, with their sizes on disk: what a
// deployment of this runner has to ship (and what it pulls in from the system).
std::vector<std::pair<std::string, long long>> mapped_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> paths;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (path.find(".so") != std::string::npos) paths.insert(path);
  }
  std::vector<std::pair<std::string, long long>> out;
  for (const auto& p : paths) {
    struct stat st {};
    out.emplace_back(p, stat(p.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1LL);
  }
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out.push_back(c);
  }
  return out + "\"";
}

int run(const Args& args) {
  const c10::Device device(args.device == "cuda" ? c10::DeviceType::CUDA : c10::DeviceType::CPU, 0);
  c10::InferenceMode inference_guard;

  const auto load_start = Clock::now();
  torch::inductor::AOTIModelPackageLoader loader(args.package);
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();

  std::vector<at::Tensor> inputs;
  for (const auto& spec : args.inputs) inputs.push_back(load_input(spec, device));
  synchronize(device);

  auto timed_run = [&]() -> std::pair<double, std::vector<at::Tensor>> {
    const auto start = Clock::now();
    std::vector<at::Tensor> out = loader.run(inputs);
    synchronize(device);
    return {std::chrono::duration<double, std::micro>(Clock::now() - start).count(), std::move(out)};
  };

  auto first = timed_run();
  if (first.second.empty()) throw std::runtime_error("the model returned no outputs");
  // The same steps as `aotirt run` before its first line: every output to
  // the host, then output 0 written, so the two cold starts compare.
  std::vector<at::Tensor> host;
  for (const auto& t : first.second) host.push_back(t.to(at::kCPU));
  auto output_path = [&](size_t i) { return args.output_dir + "/output" + std::to_string(i) + ".npy"; };
  if (!args.output_dir.empty()) bench::write_npy(output_path(0), host[0]);
  std::cout << "first_output" << std::endl;
  if (!args.output_dir.empty()) {
    for (size_t i = 1; i < host.size(); ++i) bench::write_npy(output_path(i), host[i]);
  }
  host.clear();
  first.second.clear();

  for (int i = 0; i < args.warmup; ++i) timed_run();
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(args.iters));
  for (int i = 0; i < args.iters; ++i) samples.push_back(timed_run().first);
  std::sort(samples.begin(), samples.end());
  double sum = 0;
  for (double s : samples) sum += s;

  if (args.json) {
    std::ostringstream j;
    j.precision(6);
    j << std::fixed;
    j << "{\"package\":" << json_string(args.package) << ",\"device\":" << json_string(args.device)
      << ",\"iters\":" << args.iters << ",\"warmup\":" << args.warmup << ",\"synchronized\":true"
      << ",\"load_ms\":" << load_ms << ",\"first_run_us\":" << first.first
      << ",\"median_us\":" << nearest_rank(samples, 50) << ",\"p90_us\":" << nearest_rank(samples, 90)
      << ",\"p99_us\":" << nearest_rank(samples, 99) << ",\"min_us\":" << samples.front()
      << ",\"max_us\":" << samples.back() << ",\"mean_us\":" << sum / static_cast<double>(samples.size())
      << ",\"peak_rss_mb\":" << vm_hwm_mb() << ",\"mapped_libs\":[";
    bool comma = false;
    for (const auto& lib : mapped_libraries()) {
      j << (comma ? "," : "") << "[" << json_string(lib.first) << "," << lib.second << "]";
      comma = true;
    }
    j << "]}";
    std::cout << j.str() << std::endl;
  } else {
    std::printf("load %.3f ms, first run %.1f us, median %.1f us, p99 %.1f us over %d runs\n", load_ms,
                first.first, nearest_rank(samples, 50), nearest_rank(samples, 99), args.iters);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << "aoti_libtorch_runner: error: " << e.what() << "\n";
    return 1;
  }
}
