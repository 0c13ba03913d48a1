// aotirt_soak: proves that long runs of one package stay flat.
//
//   aotirt_soak --package P.pt2 --device cpu|cuda[:N] [--cycles 10000]
//               [--threads 16] [--runs-per-thread 10000] [--json out.json]
//
// Two phases, each measured after its own warm-up and again at its end:
//
//   cycles   load the package, run it once, unload it; --cycles times.
//   threads  one loaded model (one container runner per thread), run by
//            --threads threads at once, --runs-per-thread runs each.
//
// At both points the program reads the resident set (VmRSS), the device
// memory in use (CUDA models only: cudaMemGetInfo's total - free), the open
// file descriptors (/proc/self/fd) and the entries in the temporary
// directory aotirt extracts into; and, with no verdict, malloc's bytes in use
// and the count of memory mappings, which tell a heap leak from libraries or
// mappings left behind from memory held outside malloc. The process runs in a private temporary
// directory, like the aotirt CLI, so that other processes' files cannot move
// the count. Every run's outputs are also compared, bit for bit, with a
// reference run's, so memory that is reused too early shows up here too.
//
// Verdicts (the table states them): RSS may grow by 5% of its start plus
// --rss-slack-mb (8); device memory by --device-slack-mb (16); descriptors
// and temporary entries must be equal; no output may differ and no run may
// fail. Exit status: 0 flat, 1 not flat (or a failure on the way), 2 bad
// arguments or an unusable package.
//
// Only the public API is used, through libaotirt.so as an application links
// it. The CUDA runtime is never linked: for a CUDA model, cudaMemGetInfo is
// looked up at run time, first among the cuda* symbols libaotirt.so exports
// (its own statically linked runtime, the one the model runs on), else in
// libcudart.so.13. A CPU-only build runs CPU packages with no CUDA at all.
#include <dirent.h>
#include <malloc.h>
#include <mcheck.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "aotirt/aotirt.h"

namespace {

using aotirt::DeviceId;
using aotirt::DeviceType;
using aotirt::DType;
using aotirt::LoadOptions;
using aotirt::Model;
using aotirt::RunOptions;
using aotirt::Tensor;

constexpr int kExitFlat = 0;
constexpr int kExitNotFlat = 1;
constexpr int kExitUsage = 2;

constexpr double kMiB = 1024.0 * 1024.0;
// RSS may grow by this fraction of its start value, plus a fixed slack.
constexpr double kRssGrowthFraction = 0.05;
// A dynamic dimension without --input gets this size: 1 is often
// specialised away by torch.export, so it may be outside the exported range.
constexpr int64_t kDynamicDimSize = 2;

const char kUsage[] =
    "usage: aotirt_soak --package P.pt2 --device cpu|cuda[:N] [options]\n"
    "\n"
    "  --cycles N             load/run/unload cycles (default 10000; 0 skips the phase)\n"
    "  --threads N            threads running one loaded model (default 16; 0 skips the phase)\n"
    "  --runs-per-thread N    runs per thread (default 10000)\n"
    "  --runners N            container runners of that model (default: one per thread)\n"
    "  --warmup-cycles N      cycles before the first measurement (default 20)\n"
    "  --hold-one 1           keep one more instance loaded through the cycles, so the\n"
    "                         device is never left without a model (its caches stay):\n"
    "                         tells a leak in loading from one in a device's tear-down\n"
    "  --warmup-runs N        runs per thread before the first measurement (default 50)\n"
    "  --input DTYPE:DIMS     dtype and shape of the next input, e.g. float32:4x32 (for\n"
    "                         packages that record none, or to size dynamic dimensions);\n"
    "                         repeat once per input, in order\n"
    "  --rss-slack-mb N       RSS growth allowed beyond 5% of the start (default 8)\n"
    "  --device-slack-mb N    device memory growth allowed (default 16)\n"
    "  --json FILE            also write the figures as JSON\n"
    "\n"
    "Exit status: 0 flat, 1 not flat or a run failed, 2 bad arguments or package.\n";

// ---- arguments --------------------------------------------------------------

struct InputPlan {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
};

struct Options {
  std::string package;
  std::string device_text;
  int64_t cycles = 10000;
  int64_t threads = 16;
  int64_t runs_per_thread = 10000;
  int64_t runners = 0;
  int64_t warmup_cycles = 20;
  int64_t warmup_runs = 50;
  int64_t rss_slack_mb = 8;
  int64_t device_slack_mb = 16;
  int64_t hold_one = 0;  // keep one more instance loaded through the cycles
  std::string json_path;
  std::vector<InputPlan> input_overrides;
};

bool parse_count(const std::string& text, int64_t* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// "float32:4x32" (also "float32:4,32"; "float32:" is a 0-d tensor).
bool parse_input_plan(const std::string& text, InputPlan* plan, std::string* why) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    *why = "expected DTYPE:DIMS, e.g. float32:4x32";
    return false;
  }
  auto dtype = aotirt::dtype_from_name(text.substr(0, colon));
  if (!dtype.ok()) {
    *why = "unknown dtype '" + text.substr(0, colon) + "'";
    return false;
  }
  plan->dtype = dtype.value();
  plan->shape.clear();
  std::string dims = text.substr(colon + 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t next = dims.find_first_of("x,", pos);
    if (next == std::string::npos) next = dims.size();
    int64_t d = 0;
    if (!parse_count(dims.substr(pos, next - pos), &d)) {
      *why = "bad dimension '" + dims.substr(pos, next - pos) + "'";
      return false;
    }
    plan->shape.push_back(d);
    pos = next + 1;
  }
  return true;
}

// Returns -1 to continue, else the exit status.
int parse_args(int argc, char** argv, Options* opt) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "aotirt_soak: %s\n%s", msg.c_str(), kUsage);
    return kExitUsage;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return kExitFlat;
    }
    std::string value;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg.rfind("--", 0) == 0) {
      if (i + 1 >= argc) return fail("option " + arg + " needs a value");
      value = argv[++i];
    } else {
      return fail("unexpected argument '" + arg + "'");
    }
    struct CountFlag {
      const char* name;
      int64_t* target;
    };
    const CountFlag counts[] = {
        {"--cycles", &opt->cycles},           {"--threads", &opt->threads},
        {"--runs-per-thread", &opt->runs_per_thread}, {"--runners", &opt->runners},
        {"--warmup-cycles", &opt->warmup_cycles},     {"--warmup-runs", &opt->warmup_runs},
        {"--rss-slack-mb", &opt->rss_slack_mb},       {"--device-slack-mb", &opt->device_slack_mb},
        {"--hold-one", &opt->hold_one},
    };
    bool matched = false;
    for (const CountFlag& c : counts) {
      if (arg != c.name) continue;
      if (!parse_count(value, c.target)) return fail("option " + arg + " wants a non-negative integer, not '" + value + "'");
      matched = true;
    }
    if (matched) continue;
    if (arg == "--package") {
      opt->package = value;
    } else if (arg == "--device") {
      opt->device_text = value;
    } else if (arg == "--json") {
      opt->json_path = value;
    } else if (arg == "--input") {
      InputPlan plan;
      std::string why;
      if (!parse_input_plan(value, &plan, &why)) return fail("bad --input '" + value + "': " + why);
      opt->input_overrides.push_back(plan);
    } else {
      return fail("unknown option '" + arg + "'");
    }
  }
  if (opt->package.empty()) return fail("--package is required");
  if (opt->device_text.empty()) return fail("--device is required (cpu, cuda or cuda:N)");
  // Thousands of threads would measure the thread library, not aotirt.
  if (opt->threads > 1024) return fail("--threads is limited to 1024");
  if (opt->cycles == 0 && (opt->threads == 0 || opt->runs_per_thread == 0))
    return fail("nothing to do: both --cycles and --threads (or --runs-per-thread) are 0");
  return -1;
}

// ---- what is measured -------------------------------------------------------

// cudaMemGetInfo, found at run time so that the program needs no CUDA.
class DeviceMemoryProbe {
 public:
  // Looks for the runtime; |where| says which one was found, or why none.
  bool open(std::string* where) {
    // libaotirt.so exports the cuda* functions of the runtime it links
    // statically (model libraries call them): that is the runtime, and the
    // context, the model uses.
    bind(RTLD_DEFAULT);
    if (mem_get_info_) {
      *where = "the CUDA runtime inside libaotirt.so";
      return true;
    }
    for (const char* name : {"libcudart.so.13", "libcudart.so"}) {
      void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!handle) continue;
      bind(handle);
      // Left open: unloading a CUDA runtime while a context lives is unsafe.
      if (mem_get_info_) {
        *where = name;
        return true;
      }
    }
    *where = "no CUDA runtime found (libaotirt.so without CUDA and no libcudart.so.13)";
    return false;
  }

  // Device-wide bytes in use on |device|; -1 when they cannot be read.
  int64_t used_bytes(int device) const {
    if (!mem_get_info_) return -1;
    // The current device is per thread and shared with aotirt's own calls
    // on this thread: put it back afterwards.
    int previous = -1;
    const bool switch_device = get_device_ && set_device_ && get_device_(&previous) == 0 && previous != device;
    if (switch_device && set_device_(device) != 0) return -1;
    size_t free_bytes = 0, total_bytes = 0;
    const int rc = mem_get_info_(&free_bytes, &total_bytes);
    if (switch_device) set_device_(previous);
    if (rc != 0) return -1;
    return static_cast<int64_t>(total_bytes - free_bytes);
  }

 private:
  // cudaError_t is an enum: an int at the ABI level.
  using MemGetInfoFn = int (*)(size_t*, size_t*);
  using GetDeviceFn = int (*)(int*);
  using SetDeviceFn = int (*)(int);

  void bind(void* handle) {
    mem_get_info_ = reinterpret_cast<MemGetInfoFn>(dlsym(handle, "cudaMemGetInfo"));
    get_device_ = reinterpret_cast<GetDeviceFn>(dlsym(handle, "cudaGetDevice"));
    set_device_ = reinterpret_cast<SetDeviceFn>(dlsym(handle, "cudaSetDevice"));
  }

  MemGetInfoFn mem_get_info_ = nullptr;
  GetDeviceFn get_device_ = nullptr;
  SetDeviceFn set_device_ = nullptr;
};

struct Snapshot {
  int64_t rss_bytes = -1;
  int64_t device_used_bytes = -1;
  int64_t open_fds = -1;
  int64_t temp_entries = -1;
  int64_t heap_in_use_bytes = -1;  // malloc's own count: tells a heap leak from other growth
  int64_t mappings = -1;           // lines of /proc/self/maps: libraries or mmaps left behind
};

int64_t read_rss_bytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int64_t rss = -1;
  while (std::fgets(line, sizeof(line), f)) {
    unsigned long kb = 0;
    if (std::sscanf(line, "VmRSS: %lu kB", &kb) == 1) rss = static_cast<int64_t>(kb) * 1024;
  }
  std::fclose(f);
  return rss;
}

// Entries of |dir|, optionally only those whose name starts with |prefix|.
// The directory stream's own descriptor is in /proc/self/fd while it is
// read; the caller takes that into account.
int64_t count_entries(const std::string& dir, const std::string& prefix) {
  DIR* d = opendir(dir.c_str());
  if (!d) return -1;
  int64_t n = 0;
  while (const dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) ++n;
  }
  closedir(d);
  return n;
}

// Lines of a text file (for /proc/self/maps), -1 when it cannot be read.
int64_t count_lines(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (!f) return -1;
  int64_t n = 0;
  for (int c; (c = std::fgetc(f)) != EOF;)
    if (c == '\n') ++n;
  std::fclose(f);
  return n;
}

// Where aotirt puts temporary files: TempDir::create (src/base/file_util.cpp)
// makes "aotirt-..." directories under $TMPDIR, else /tmp.
class TempArea {
 public:
  // Gives the process a private directory and points TMPDIR at it. Call
  // before any other thread exists (setenv is not thread-safe).
  void make_private() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/aotirt-soak-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) && setenv("TMPDIR", buf.data(), 1) == 0) {
      dir_ = buf.data();
      private_ = true;
      prefix_.clear();  // everything in it is ours
    } else {
      // Counting the shared directory still works, when nothing else on
      // the machine creates aotirt directories meanwhile.
      dir_ = base && *base ? base : "/tmp";
      prefix_ = "aotirt-";
    }
  }
  ~TempArea() {
    if (!private_) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  int64_t count() const { return count_entries(dir_, prefix_); }
  std::string describe() const {
    return private_ ? dir_ + " (private TMPDIR)" : dir_ + "/" + prefix_ + "* (shared: other processes may add some)";
  }

 private:
  std::string dir_;
  std::string prefix_;
  bool private_ = false;
};

struct Probes {
  const TempArea* temp = nullptr;
  const DeviceMemoryProbe* device_memory = nullptr;  // CUDA models only
  int device_index = 0;
};

Snapshot take_snapshot(const Probes& probes) {
  Snapshot s;
  s.rss_bytes = read_rss_bytes();
  if (probes.device_memory) s.device_used_bytes = probes.device_memory->used_bytes(probes.device_index);
  const int64_t fds = count_entries("/proc/self/fd", "");
  if (fds >= 0) s.open_fds = fds - 1;  // less the descriptor that reads the directory
  s.temp_entries = probes.temp->count();
  const struct mallinfo2 mi = mallinfo2();
  s.heap_in_use_bytes = static_cast<int64_t>(mi.uordblks + mi.hblkhd);
  s.mappings = count_lines("/proc/self/maps");
  return s;
}

// ---- inputs and outputs -----------------------------------------------------

// The inputs of one run, made from the plans with the same values every time:
// a deterministic generator, float values in [-1, 1), integers in [0, 4)
// (small enough for an index or a token id), bools 0/1.
bool make_inputs(const std::vector<InputPlan>& plans, std::vector<Tensor>* out, std::string* why) {
  out->clear();
  std::mt19937_64 rng(0x50a4);
  for (size_t i = 0; i < plans.size(); ++i) {
    const InputPlan& plan = plans[i];
    if (aotirt::dtype_is_complex(plan.dtype)) {
      // No conversion into complex types: zeros.
      auto t = Tensor::empty(plan.shape, plan.dtype);
      if (!t.ok()) {
        *why = "input " + std::to_string(i) + ": " + t.status().to_string();
        return false;
      }
      std::memset(t->data(), 0, t->nbytes());
      out->push_back(t.value());
      continue;
    }
    auto wide = Tensor::empty(plan.shape, DType::kFloat64);
    if (!wide.ok()) {
      *why = "input " + std::to_string(i) + ": " + wide.status().to_string();
      return false;
    }
    double* p = static_cast<double*>(wide->data());
    const bool floating = aotirt::dtype_is_floating(plan.dtype);
    const bool boolean = plan.dtype == DType::kBool;
    for (int64_t k = 0; k < wide->numel(); ++k) {
      const uint64_t r = rng();
      if (floating)
        p[k] = static_cast<double>(r >> 11) / static_cast<double>(uint64_t{1} << 53) * 2.0 - 1.0;
      else
        p[k] = static_cast<double>(r % (boolean ? 2 : 4));
    }
    auto t = wide->to(DeviceId{}, plan.dtype);
    if (!t.ok()) {
      *why = "input " + std::to_string(i) + ": " + t.status().to_string();
      return false;
    }
    out->push_back(t.value());
  }
  return true;
}

// One output as it is kept for comparison: host bytes, contiguous.
struct OutputImage {
  bool defined = false;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;
};

// A contiguous host copy when |t| is on a device or strided; |t| otherwise.
bool host_view(const Tensor& t, Tensor* host, std::string* why) {
  if (t.device().is_cpu() && t.is_contiguous()) {
    *host = t;
    return true;
  }
  auto copy = t.to(DeviceId{});
  if (!copy.ok()) {
    *why = "copying an output to the host: " + copy.status().to_string();
    return false;
  }
  *host = copy.value();
  return true;
}

bool capture_outputs(const std::vector<Tensor>& outputs, std::vector<OutputImage>* images, std::string* why) {
  images->clear();
  for (const Tensor& t : outputs) {
    OutputImage img;
    if (t.defined()) {
      Tensor host;
      if (!host_view(t, &host, why)) return false;
      img.defined = true;
      img.dtype = host.dtype();
      img.sizes = host.sizes();
      const uint8_t* p = static_cast<const uint8_t*>(host.data());
      if (host.nbytes()) img.bytes.assign(p, p + host.nbytes());
    }
    images->push_back(std::move(img));
  }
  return true;
}

// How far apart two outputs of the same dtype and shape are: a rounding
// difference (a reduction summed in another order) reads differently from
// garbage (memory reused while still in use).
std::string describe_difference(const Tensor& got, const OutputImage& ref) {
  const uint8_t* p = static_cast<const uint8_t*>(got.data());
  size_t first = 0;
  while (p[first] == ref.bytes[first]) ++first;
  std::string text = "first differing byte " + std::to_string(first) + " of " + std::to_string(got.nbytes());
  if (aotirt::dtype_is_complex(got.dtype())) return text;
  // Both as float64, the reference through a borrowed view of its bytes.
  std::vector<uint8_t> ref_bytes = ref.bytes;
  Tensor ref_view = Tensor::from_blob(ref_bytes.data(), ref.sizes, ref.dtype);
  auto a = got.to(DeviceId{}, DType::kFloat64);
  auto b = ref_view.to(DeviceId{}, DType::kFloat64);
  if (!a.ok() || !b.ok()) return text;
  const double* x = static_cast<const double*>(a->data());
  const double* y = static_cast<const double*>(b->data());
  int64_t differing = 0;
  double worst = 0, worst_ref = 0;
  for (int64_t k = 0; k < a->numel(); ++k) {
    if (x[k] == y[k] || (x[k] != x[k] && y[k] != y[k])) continue;
    ++differing;
    const double d = x[k] != x[k] || y[k] != y[k] ? INFINITY : (x[k] > y[k] ? x[k] - y[k] : y[k] - x[k]);
    if (d > worst || differing == 1) {
      worst = d;
      worst_ref = y[k];
    }
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf), "; %lld of %lld elements, largest |difference| %.3g (reference value %.6g)",
                static_cast<long long>(differing), static_cast<long long>(a->numel()), worst, worst_ref);
  return text + buf;
}

// Empty when |outputs| equal |ref| bit for bit, else what differs.
std::string compare_outputs(const std::vector<Tensor>& outputs, const std::vector<OutputImage>& ref) {
  if (outputs.size() != ref.size())
    return std::to_string(outputs.size()) + " outputs instead of " + std::to_string(ref.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string which = "output " + std::to_string(i);
    const Tensor& t = outputs[i];
    if (t.defined() != ref[i].defined) return which + " is " + (t.defined() ? "defined" : "undefined") + " now";
    if (!t.defined()) continue;
    if (t.dtype() != ref[i].dtype || t.sizes() != ref[i].sizes) return which + " changed dtype or shape";
    Tensor host;
    std::string why;
    if (!host_view(t, &host, &why)) return which + ": " + why;
    if (host.nbytes() != ref[i].bytes.size()) return which + " changed size";
    if (host.nbytes() && std::memcmp(host.data(), ref[i].bytes.data(), host.nbytes()) != 0)
      return which + " differs from the reference run: " + describe_difference(host, ref[i]);
  }
  return std::string();
}

// ---- the report -------------------------------------------------------------

struct Metric {
  std::string key;    // JSON name
  std::string label;  // table name
  bool bytes = false; // shown in MiB
  bool available = true;
  int64_t start = 0;
  int64_t end = 0;
  int64_t limit = 0;  // largest end - start that is flat
  std::string rule;
  bool informational = false;  // shown to explain growth; no verdict of its own
  bool flat() const { return !available || informational || end - start <= limit; }
};

struct PhaseReport {
  std::string name;
  std::string what;
  int64_t warmup = 0;
  int64_t measured = 0;  // cycles or runs after the warm-up
  double seconds = 0;
  bool ran = false;
  std::string problem;  // first failure or difference seen
  std::vector<Metric> metrics;
  bool flat() const {
    for (const Metric& m : metrics)
      if (!m.flat()) return false;
    return ran;
  }
};

// Thread-safe tally of what went wrong during a phase.
class Trouble {
 public:
  void failure(const std::string& what) { note(&failures_, what); }
  void mismatch(const std::string& what) { note(&mismatches_, what); }
  int64_t failures() const { return failures_.load(); }
  int64_t mismatches() const { return mismatches_.load(); }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mu_);
    return first_;
  }
  // A failed run stops the phase: thousands of copies of one error say no more.
  bool stop() const { return failures_.load() > 0; }

 private:
  void note(std::atomic<int64_t>* counter, const std::string& what) {
    if (counter->fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (first_.empty()) first_ = what;
    }
  }
  std::atomic<int64_t> failures_{0};
  std::atomic<int64_t> mismatches_{0};
  mutable std::mutex mu_;
  std::string first_;
};

Metric named_metric(const char* key, const char* label, bool bytes = false) {
  Metric m;
  m.key = key;
  m.label = label;
  m.bytes = bytes;
  return m;
}

void judge(PhaseReport* report, const Snapshot& start, const Snapshot& end, const Trouble& trouble,
           const Options& opt, bool has_device) {
  Metric rss = named_metric("rss_bytes", "RSS (MiB)", true);
  rss.start = start.rss_bytes;
  rss.end = end.rss_bytes;
  rss.limit = static_cast<int64_t>(static_cast<double>(start.rss_bytes) * kRssGrowthFraction) +
              opt.rss_slack_mb * static_cast<int64_t>(kMiB);
  rss.available = start.rss_bytes >= 0 && end.rss_bytes >= 0;
  rss.rule = "<= 5% + " + std::to_string(opt.rss_slack_mb) + " MiB";
  report->metrics.push_back(rss);

  if (has_device) {
    Metric dev = named_metric("device_used_bytes", "device used (MiB)", true);
    dev.start = start.device_used_bytes;
    dev.end = end.device_used_bytes;
    dev.limit = opt.device_slack_mb * static_cast<int64_t>(kMiB);
    dev.available = start.device_used_bytes >= 0 && end.device_used_bytes >= 0;
    dev.rule = "<= " + std::to_string(opt.device_slack_mb) + " MiB";
    report->metrics.push_back(dev);
  }

  Metric fds = named_metric("open_fds", "open fds");
  fds.start = start.open_fds;
  fds.end = end.open_fds;
  fds.available = start.open_fds >= 0 && end.open_fds >= 0;
  fds.rule = "equal";
  report->metrics.push_back(fds);

  Metric temp = named_metric("temp_entries", "temp entries");
  temp.start = start.temp_entries;
  temp.end = end.temp_entries;
  temp.available = start.temp_entries >= 0 && end.temp_entries >= 0;
  temp.rule = "equal";
  report->metrics.push_back(temp);

  // No verdict: these tell where RSS growth comes from. Heap growth is
  // memory malloc still counts as in use (a leak); growth in mappings is
  // libraries or mmaps left behind; RSS growth with neither is memory held
  // outside malloc, such as a driver's own pools.
  Metric heap = named_metric("heap_in_use_bytes", "heap in use (MiB)", true);
  heap.start = start.heap_in_use_bytes;
  heap.end = end.heap_in_use_bytes;
  heap.available = start.heap_in_use_bytes >= 0 && end.heap_in_use_bytes >= 0;
  heap.informational = true;
  heap.rule = "info";
  report->metrics.push_back(heap);

  Metric maps = named_metric("mappings", "mappings");
  maps.start = start.mappings;
  maps.end = end.mappings;
  maps.available = start.mappings >= 0 && end.mappings >= 0;
  maps.informational = true;
  maps.rule = "info";
  report->metrics.push_back(maps);

  // Counted from the first run, warm-up included.
  Metric mismatches = named_metric("output_mismatches", "outputs differing");
  mismatches.end = trouble.mismatches();
  mismatches.rule = "none";
  report->metrics.push_back(mismatches);

  Metric failures = named_metric("run_failures", "failed runs");
  failures.end = trouble.failures();
  failures.rule = "none";
  report->metrics.push_back(failures);

  report->problem = trouble.first();
}

std::string format_value(const Metric& m, int64_t v, bool signed_delta) {
  char buf[64];
  if (m.bytes)
    std::snprintf(buf, sizeof(buf), signed_delta ? "%+.1f" : "%.1f", static_cast<double>(v) / kMiB);
  else
    std::snprintf(buf, sizeof(buf), signed_delta ? "%+lld" : "%lld", static_cast<long long>(v));
  return buf;
}

void print_phase(const PhaseReport& r) {
  std::printf("\n%s: %s\n", r.name.c_str(), r.what.c_str());
  if (!r.ran) {
    std::printf("  did not run: %s\n", r.problem.c_str());
    return;
  }
  std::printf("  %lld measured after %lld warm-up, %.1f s\n", static_cast<long long>(r.measured),
              static_cast<long long>(r.warmup), r.seconds);
  std::printf("  %-20s %12s %12s %10s  %s\n", "metric", "start", "end", "delta", "verdict");
  for (const Metric& m : r.metrics) {
    if (!m.available) {
      std::printf("  %-20s %12s %12s %10s  n/a (not measurable)\n", m.label.c_str(), "-", "-", "-");
      continue;
    }
    const std::string verdict =
        m.informational ? std::string("(info)")
                        : std::string(m.flat() ? "flat" : "NOT FLAT") + " (" + m.rule +
                              (m.bytes ? ", limit " + format_value(m, m.limit, true) + ")" : ")");
    std::printf("  %-20s %12s %12s %10s  %s\n", m.label.c_str(), format_value(m, m.start, false).c_str(),
                format_value(m, m.end, false).c_str(), format_value(m, m.end - m.start, true).c_str(),
                verdict.c_str());
  }
  if (!r.problem.empty()) std::printf("  first problem: %s\n", r.problem.c_str());
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

bool write_json(const std::string& path, const Options& opt, const std::string& device,
                const std::vector<PhaseReport>& phases, bool flat) {
  std::ofstream f(path);
  if (!f) return false;
  f << "{\n  \"package\": " << json_string(opt.package) << ",\n  \"device\": " << json_string(device)
    << ",\n  \"aotirt_version\": " << json_string(aotirt::version()) << ",\n  \"flat\": " << (flat ? "true" : "false")
    << ",\n  \"phases\": [";
  for (size_t p = 0; p < phases.size(); ++p) {
    const PhaseReport& r = phases[p];
    f << (p ? "," : "") << "\n    {\"name\": " << json_string(r.name) << ", \"what\": " << json_string(r.what)
      << ", \"ran\": " << (r.ran ? "true" : "false") << ", \"warmup\": " << r.warmup
      << ", \"measured\": " << r.measured << ", \"seconds\": " << r.seconds
      << ", \"flat\": " << (r.flat() ? "true" : "false") << ", \"problem\": " << json_string(r.problem)
      << ",\n     \"metrics\": [";
    for (size_t i = 0; i < r.metrics.size(); ++i) {
      const Metric& m = r.metrics[i];
      f << (i ? "," : "") << "\n       {\"name\": " << json_string(m.key)
        << ", \"available\": " << (m.available ? "true" : "false") << ", \"start\": " << m.start
        << ", \"end\": " << m.end << ", \"delta\": " << (m.end - m.start) << ", \"limit\": " << m.limit
        << ", \"rule\": " << json_string(m.rule) << ", \"flat\": " << (m.flat() ? "true" : "false") << "}";
    }
    f << "]}";
  }
  f << "\n  ]\n}\n";
  return static_cast<bool>(f);
}

// ---- the phases -------------------------------------------------------------

struct Soak {
  Options opt;
  DeviceId device;
  std::vector<InputPlan> plans;
  std::vector<OutputImage> reference;
  Probes probes;
  RunOptions run_options;
};

// Prints "label: k of n" at every tenth of |total|; |done| counts from 1.
void progress(const char* label, int64_t done, int64_t total) {
  const int64_t step = std::max<int64_t>(1, total / 10);
  if (done % step == 0 || done == total)
    std::fprintf(stderr, "  %s: %lld of %lld\n", label, static_cast<long long>(done), static_cast<long long>(total));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string describe_status(const aotirt::Status& s) {
  std::string text = s.to_string();
  const std::string detail = aotirt::last_error();
  if (!detail.empty() && text.find(detail) == std::string::npos) text += " (" + detail + ")";
  return text;
}

// One load, run, compare and unload.
void one_cycle(const Soak& soak, const std::vector<Tensor>& inputs, int64_t index, Trouble* trouble) {
  LoadOptions lo;
  lo.device = soak.device;
  auto model = Model::load(soak.opt.package, lo);
  if (!model.ok()) {
    trouble->failure("cycle " + std::to_string(index) + ": load: " + model.status().to_string());
    return;
  }
  auto out = (*model)->run(inputs, soak.run_options);
  if (!out.ok()) {
    trouble->failure("cycle " + std::to_string(index) + ": run: " + describe_status(out.status()));
    return;
  }
  const std::string diff = compare_outputs(out.value(), soak.reference);
  if (!diff.empty()) trouble->mismatch("cycle " + std::to_string(index) + ": " + diff);
}

PhaseReport run_cycles(const Soak& soak) {
  PhaseReport report;
  report.name = "cycles";
  report.what = "load, run once, unload";
  report.warmup = soak.opt.warmup_cycles;
  std::vector<Tensor> inputs;
  std::string why;
  if (!make_inputs(soak.plans, &inputs, &why)) {
    report.problem = why;
    return report;
  }
  Trouble trouble;
  std::unique_ptr<Model> held;
  if (soak.opt.hold_one) {
    LoadOptions lo;
    lo.device = soak.device;
    auto m = Model::load(soak.opt.package, lo);
    if (!m.ok()) {
      report.problem = "--hold-one: " + m.status().to_string();
      return report;
    }
    held = std::move(m.value());
  }
  for (int64_t i = 0; i < soak.opt.warmup_cycles && !trouble.stop(); ++i) one_cycle(soak, inputs, i, &trouble);
  const Snapshot start = take_snapshot(soak.probes);
  const auto t0 = std::chrono::steady_clock::now();
  // With MALLOC_TRACE=FILE (and, from glibc 2.34 on, LD_PRELOAD=
  // libc_malloc_debug.so.0), glibc logs every allocation and free of the
  // measured cycles there; glibc's mtrace script then lists what was never
  // freed, with its callers: the way to find where heap growth comes from.
  const bool tracing = std::getenv("MALLOC_TRACE") != nullptr;
  if (tracing) mtrace();
  int64_t done = 0;
  for (; done < soak.opt.cycles && !trouble.stop(); ++done) {
    one_cycle(soak, inputs, soak.opt.warmup_cycles + done, &trouble);
    progress("cycles", done + 1, soak.opt.cycles);
  }
  if (tracing) muntrace();
  report.seconds = seconds_since(t0);
  const Snapshot end = take_snapshot(soak.probes);
  report.measured = done;
  report.ran = true;
  judge(&report, start, end, trouble, soak.opt, soak.probes.device_memory != nullptr);
  return report;
}

// A point every worker reaches before the main thread measures, and that
// holds them there until it has.
class Checkpoint {
 public:
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++arrived_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  void wait_for(int64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return arrived_ >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t arrived_ = 0;
  bool open_ = false;
};

PhaseReport run_threads(const Soak& soak) {
  const Options& opt = soak.opt;
  PhaseReport report;
  report.name = "threads";
  report.what = std::to_string(opt.threads) + " threads on one model, " + std::to_string(opt.runs_per_thread) +
                " runs each";
  report.warmup = opt.warmup_runs * opt.threads;
  LoadOptions lo;
  lo.device = soak.device;
  lo.num_runners = static_cast<size_t>(opt.runners > 0 ? opt.runners : opt.threads);
  auto loaded = Model::load(opt.package, lo);
  if (!loaded.ok()) {
    report.problem = "load: " + loaded.status().to_string();
    return report;
  }
  Model* model = loaded->get();
  Trouble trouble;
  std::atomic<int64_t> runs_done{0};
  const int64_t total = opt.threads * opt.runs_per_thread;
  Checkpoint warmed, finished;

  auto worker = [&](int64_t t) {
    try {
      std::vector<Tensor> inputs;
      std::string why;
      if (!make_inputs(soak.plans, &inputs, &why)) trouble.failure("thread " + std::to_string(t) + ": " + why);
      auto run_once = [&](int64_t i) {
        auto out = model->run(inputs, soak.run_options);
        if (!out.ok()) {
          trouble.failure("thread " + std::to_string(t) + " run " + std::to_string(i) + ": " +
                          describe_status(out.status()));
          return;
        }
        const std::string diff = compare_outputs(out.value(), soak.reference);
        if (!diff.empty())
          trouble.mismatch("thread " + std::to_string(t) + " run " + std::to_string(i) + ": " + diff);
      };
      for (int64_t i = 0; i < opt.warmup_runs && !trouble.stop(); ++i) run_once(i);
      warmed.arrive_and_wait();
      for (int64_t i = 0; i < opt.runs_per_thread && !trouble.stop(); ++i) {
        run_once(opt.warmup_runs + i);
        progress("runs", runs_done.fetch_add(1) + 1, total);
      }
      finished.arrive_and_wait();
    } catch (const std::exception& e) {
      trouble.failure("thread " + std::to_string(t) + ": " + e.what());
    }
  };

  std::vector<std::thread> threads;
  // Whatever happens here, the workers are let go and joined before the
  // model they use is destroyed.
  struct Joiner {
    Checkpoint& a;
    Checkpoint& b;
    std::vector<std::thread>& threads;
    ~Joiner() {
      a.open();
      b.open();
      for (std::thread& th : threads)
        if (th.joinable()) th.join();
    }
  } joiner{warmed, finished, threads};
  try {
    for (int64_t t = 0; t < opt.threads; ++t) threads.emplace_back(worker, t);
  } catch (const std::exception& e) {
    trouble.failure(std::string("starting a thread: ") + e.what());
  }
  const int64_t started = static_cast<int64_t>(threads.size());
  warmed.wait_for(started);
  const Snapshot start = take_snapshot(soak.probes);
  const auto t0 = std::chrono::steady_clock::now();
  warmed.open();
  finished.wait_for(started);
  report.seconds = seconds_since(t0);
  const Snapshot end = take_snapshot(soak.probes);
  finished.open();
  for (std::thread& th : threads) th.join();
  report.measured = runs_done.load();
  report.ran = true;
  judge(&report, start, end, trouble, opt, soak.probes.device_memory != nullptr);
  return report;
}

// ---- main -------------------------------------------------------------------

// Resolves the input plans from the model's specs and --input; returns an
// empty string or why it cannot.
std::string plan_inputs(const Model& model, const Options& opt, std::vector<InputPlan>* plans) {
  const auto& specs = model.inputs();
  if (!opt.input_overrides.empty() && opt.input_overrides.size() != specs.size())
    return "the model takes " + std::to_string(specs.size()) + " inputs but --input was given " +
           std::to_string(opt.input_overrides.size()) + " times";
  plans->clear();
  for (size_t i = 0; i < specs.size(); ++i) {
    const aotirt::TensorSpec& spec = specs[i];
    const std::string label = "input " + std::to_string(i) + (spec.name.empty() ? "" : " ('" + spec.name + "')");
    if (!opt.input_overrides.empty()) {
      plans->push_back(opt.input_overrides[i]);
      continue;
    }
    if (!spec.has_dtype || !spec.has_shape)
      return label + " has no recorded dtype and shape (a package not made by aotirt.export): give them with "
                     "--input DTYPE:DIMS, e.g. --input float32:4x32";
    InputPlan plan{spec.dtype, spec.shape};
    for (size_t d = 0; d < plan.shape.size(); ++d) {
      if (plan.shape[d] >= 0) continue;
      plan.shape[d] = kDynamicDimSize;
      std::fprintf(stderr, "aotirt_soak: %s: dynamic dimension %zu set to %lld (--input sets another size)\n",
                   label.c_str(), d, static_cast<long long>(kDynamicDimSize));
    }
    plans->push_back(plan);
  }
  return std::string();
}

int soak_main(int argc, char** argv) {
  Soak soak;
  Options& opt = soak.opt;
  const int parsed = parse_args(argc, argv, &opt);
  if (parsed >= 0) return parsed;

  auto device = DeviceId::parse(opt.device_text);
  if (!device.ok() || (device->type != DeviceType::kCpu && device->type != DeviceType::kCuda)) {
    std::fprintf(stderr, "aotirt_soak: bad --device '%s': expected cpu, cuda or cuda:N\n", opt.device_text.c_str());
    return kExitUsage;
  }
  soak.device = device.value();

  // Read without running anything: a missing file or a package for another
  // device is a usage error, told before any load.
  auto info = aotirt::inspect_package(opt.package);
  if (!info.ok()) {
    std::fprintf(stderr, "aotirt_soak: cannot use package '%s': %s\n", opt.package.c_str(),
                 info.status().to_string().c_str());
    return kExitUsage;
  }
  if (info->device_key != aotirt::device_type_name(soak.device.type)) {
    std::fprintf(stderr, "aotirt_soak: '%s' is a %s package; --device %s cannot run it\n", opt.package.c_str(),
                 info->device_key.c_str(), opt.device_text.c_str());
    return kExitUsage;
  }

  TempArea temp;
  temp.make_private();  // before the first load, and before any thread
  soak.probes.temp = &temp;
  soak.probes.device_index = soak.device.index;
  // Device outputs are brought back by the run itself, as a caller reading
  // them would; the comparison then reads host memory.
  soak.run_options.outputs_to_host = !soak.device.is_cpu();
  soak.run_options.synchronize = !soak.device.is_cpu();

  // The reference: the first load's outputs, on this device.
  {
    LoadOptions lo;
    lo.device = soak.device;
    auto model = Model::load(opt.package, lo);
    if (!model.ok()) {
      std::fprintf(stderr, "aotirt_soak: cannot load '%s' on %s: %s\n", opt.package.c_str(),
                   soak.device.to_string().c_str(), model.status().to_string().c_str());
      return kExitNotFlat;
    }
    const std::string why = plan_inputs(**model, opt, &soak.plans);
    if (!why.empty()) {
      std::fprintf(stderr, "aotirt_soak: %s\n", why.c_str());
      return kExitUsage;
    }
    std::vector<Tensor> inputs;
    std::string input_why;
    if (!make_inputs(soak.plans, &inputs, &input_why)) {
      std::fprintf(stderr, "aotirt_soak: cannot make the inputs: %s\n", input_why.c_str());
      return kExitUsage;
    }
    auto out = (*model)->run(inputs, soak.run_options);
    if (!out.ok()) {
      // With --input the likely cause is a dtype or shape the library was
      // not compiled for: the caller's mistake.
      std::fprintf(stderr, "aotirt_soak: the reference run failed: %s%s\n", describe_status(out.status()).c_str(),
                   opt.input_overrides.empty() ? "" : " (check the --input dtypes and shapes)");
      return opt.input_overrides.empty() ? kExitNotFlat : kExitUsage;
    }
    if (!capture_outputs(out.value(), &soak.reference, &input_why)) {
      std::fprintf(stderr, "aotirt_soak: %s\n", input_why.c_str());
      return kExitNotFlat;
    }
  }

  DeviceMemoryProbe device_memory;
  std::string device_memory_source = "-";
  if (!soak.device.is_cpu()) {
    // After the first load, so that the runtime inside libaotirt.so has
    // its context on the device.
    if (device_memory.open(&device_memory_source)) soak.probes.device_memory = &device_memory;
    else std::fprintf(stderr, "aotirt_soak: device memory is not measured: %s\n", device_memory_source.c_str());
  }

  std::printf("aotirt_soak %s: %s on %s\n", aotirt::version(), opt.package.c_str(), soak.device.to_string().c_str());
  std::printf("  inputs:");
  for (const InputPlan& p : soak.plans) {
    std::printf(" %s[", aotirt::dtype_name(p.dtype));
    for (size_t d = 0; d < p.shape.size(); ++d) std::printf("%s%lld", d ? "," : "", static_cast<long long>(p.shape[d]));
    std::printf("]");
  }
  std::printf("\n  temp files counted in %s\n", temp.describe().c_str());
  if (!soak.device.is_cpu()) std::printf("  device memory from %s\n", device_memory_source.c_str());
  std::fflush(stdout);

  std::vector<PhaseReport> phases;
  if (opt.cycles > 0) {
    std::fprintf(stderr, "aotirt_soak: %lld load/run/unload cycles (after %lld warm-up)\n",
                 static_cast<long long>(opt.cycles), static_cast<long long>(opt.warmup_cycles));
    phases.push_back(run_cycles(soak));
  }
  if (opt.threads > 0 && opt.runs_per_thread > 0) {
    std::fprintf(stderr, "aotirt_soak: %lld threads x %lld runs on one model (after %lld warm-up runs each)\n",
                 static_cast<long long>(opt.threads), static_cast<long long>(opt.runs_per_thread),
                 static_cast<long long>(opt.warmup_runs));
    phases.push_back(run_threads(soak));
  }

  bool flat = true;
  for (const PhaseReport& r : phases) {
    print_phase(r);
    flat = flat && r.flat();
  }
  std::printf("\nsoak: %s\n", flat ? "FLAT" : "NOT FLAT");
  std::fflush(stdout);
  if (!opt.json_path.empty() && !write_json(opt.json_path, opt, soak.device.to_string(), phases, flat)) {
    std::fprintf(stderr, "aotirt_soak: cannot write '%s'\n", opt.json_path.c_str());
    return kExitNotFlat;
  }
  return flat ? kExitFlat : kExitNotFlat;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return soak_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aotirt_soak: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "aotirt_soak: unknown exception\n");
  }
  return kExitNotFlat;
}
