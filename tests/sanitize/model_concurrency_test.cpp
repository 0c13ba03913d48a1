// Several threads on one Model, and models loaded, run and unloaded on
// several threads at once, through the public API. Written for
// ThreadSanitizer (scripts/sanitize.sh runs it in the TSan build), and run in
// every other build too.
//
// A fake model library (tests/unit/fake_model, built quiet as
// aotirt_concurrent_fake_model: a thread-safe pool of runners) exercises
// aotirt's side alone: input handles, output ownership, the allocator,
// per-thread error state. The zoo packages add real generated code: the container's runner
// pool (LoadOptions::num_runners), the CPU ops and their caches. Zoo cases
// are skipped when no zoo manifest exists ($AOTIRT_ZOO_MANIFEST, else the
// newest .cache/zoo/*-cpu/manifest.json; scripts/test.sh makes it).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../zoo_test_util.h"
#include "aotirt/aotirt.h"
#include "cli/npy.h"
#include "fuzz_util.h"

namespace fs = std::filesystem;
using aotirt::DType;
using aotirt::Model;
using aotirt::Tensor;

namespace {

constexpr int kThreads = 4;
// Far beyond what the slowest case takes under ThreadSanitizer (seconds).
constexpr auto kDeadlock = std::chrono::minutes(3);

// Runs |body(thread_index)| on |n| threads started together. A deadlock
// aborts the process with a message instead of hanging until ctest's timeout.
template <class Fn>
void on_threads(int n, Fn body) {
  std::atomic<int> ready{0};
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      body(t);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      cv.notify_all();
    });
  {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, kDeadlock, [&] { return done == n; })) {
      std::fprintf(stderr, "%s: %d of %d threads still running after %d s: deadlock\n",
                   ::testing::UnitTest::GetInstance()->current_test_info()->name(), n - done, n,
                   static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(kDeadlock).count()));
      std::abort();
    }
  }
  for (auto& th : threads) th.join();
}

// |path| loaded with |runners| runners: every test here is run with one
// runner and with one per thread (the suites' parameter).
aotirt::Result<std::unique_ptr<Model>> load_with_runners(const std::string& path, size_t runners) {
  aotirt::LoadOptions options;
  options.num_runners = runners;
  return Model::load(path, options);
}

// ---- the fake model library (tests/unit/fake_model) ----

class FakeModelConcurrencyTest : public ::testing::TestWithParam<size_t> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(fs::temp_directory_path() / ("aotirt-concurrency-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    const std::string meta =
        "{\"AOTI_DEVICE_KEY\": \"cpu\", \"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\", \\\"dtype\\\": "
        "\\\"float32\\\", \\\"shape\\\": [-1]}]\"}";
    std::ofstream(package()) << aotirt::fuzz::stored_zip(
        {aotirt::fuzz::fake_model_entry("fake/data/aotinductor/model/f.wrapper.so"),
         {"fake/data/aotinductor/model/f.wrapper_metadata.json", meta}});
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }
  static std::string package() { return *dir_ + "/fake.pt2"; }
  static std::string* dir_;
};
std::string* FakeModelConcurrencyTest::dir_ = nullptr;

// Each thread runs its own values through one shared model and must get its
// own results back (the fake doubles its input into two aliased outputs).
// With 1 runner the fake's container queues the runs, with 4 they overlap.
TEST_P(FakeModelConcurrencyTest, ManyThreadsRunOneModel) {
  auto model = load_with_runners(package(), GetParam());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Model& m = **model;
  std::atomic<int> bad{0};
  on_threads(kThreads, [&](int t) {
    for (int round = 0; round < 100; ++round) {
      const int64_t n = 1 + (t + round) % 7;
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(t * 1000 + round * 10 + i);
      auto out = m.run({Tensor::from_blob(x.data(), {n}, DType::kFloat32)});
      if (!out.ok() || out->size() != 2 || (*out)[0].data() != (*out)[1].data() || (*out)[0].numel() != n) {
        bad.fetch_add(1);
        continue;
      }
      const float* y = static_cast<const float*>((*out)[0].data());
      for (int64_t i = 0; i < n; ++i)
        if (y[i] != 2 * x[i]) bad.fetch_add(1);
      // Readers of the model's description race with the runs.
      if (m.inputs().size() != 1 || m.package().device_key != "cpu") bad.fetch_add(1);
    }
    // A rejected call sets this thread's last error, and only this thread's.
    std::vector<float> x(4);
    auto wrong = m.run({Tensor::from_blob(x.data(), {2, 2}, DType::kFloat32)});
    if (wrong.ok() || aotirt::last_error().empty()) bad.fetch_add(1);
  });
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(FakeModelConcurrencyTest, ThreadsLoadRunAndUnloadTheirOwnModels) {
  std::atomic<int> bad{0};
  on_threads(kThreads, [&](int t) {
    for (int round = 0; round < 8; ++round) {
      auto model = load_with_runners(package(), GetParam());
      if (!model.ok()) {
        bad.fetch_add(1);
        continue;
      }
      float x[3] = {static_cast<float>(t), 1, 2};
      auto out = (*model)->run({Tensor::from_blob(x, {3}, DType::kFloat32)});
      if (!out.ok() || static_cast<const float*>((*out)[1].data())[0] != 2.0f * t) bad.fetch_add(1);
      // Outputs outlive their model.
      model->reset();
      if (out.ok() && static_cast<const float*>((*out)[0].data())[2] != 4.0f) bad.fetch_add(1);
    }
  });
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(FakeModelConcurrencyTest, ThreadsInspectPackages) {
  std::atomic<int> bad{0};
  on_threads(kThreads, [&](int) {
    for (int round = 0; round < 10; ++round) {
      auto info = aotirt::inspect_package(package());
      if (!info.ok() || info->inputs.size() != 1 || info->imported_shims.empty()) bad.fetch_add(1);
      auto missing = aotirt::inspect_package(package() + ".missing");
      if (missing.ok() || aotirt::last_error().find("NOT_FOUND") == std::string::npos) bad.fetch_add(1);
    }
  });
  EXPECT_EQ(bad.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Runners, FakeModelConcurrencyTest, ::testing::Values(size_t{1}, size_t{kThreads}),
                         [](const auto& info) { return "runners" + std::to_string(info.param); });

// ---- zoo packages ----

const nlohmann::json& manifest() {
  static const nlohmann::json m = [] {
    const std::string path = aotirt::zoo_manifest_path();
    std::ifstream f(path);
    if (path.empty() || !f) return nlohmann::json();
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded()) return nlohmann::json();
    j["__dir"] = fs::path(path).parent_path().string();
    return j;
  }();
  return m;
}

struct ZooCase {
  std::string name;
  std::string path;
  std::vector<Tensor> inputs, expected;
  double rtol = 0, atol = 0;
};

// The first input set of zoo package |name|; false when it is not there.
bool load_case(const std::string& name, ZooCase* c) {
  const nlohmann::json& m = manifest();
  if (!m.is_object() || !m.contains("packages")) return false;
  for (const auto& pkg : m["packages"]) {
    if (pkg["name"] != name || pkg.contains("error")) continue;
    const std::string dir = m["__dir"].get<std::string>() + "/" + pkg["dir"].get<std::string>();
    const auto& set = pkg["input_sets"][0];
    if (set.contains("expected_repeat")) return false;  // keeps state across runs
    c->name = name;
    c->path = dir + "/" + pkg["package"].get<std::string>();
    for (const auto& in : set["inputs"]) {
      auto t = aotirt::cli::read_npy(dir + "/" + in["file"].get<std::string>());
      if (!t.ok()) return false;
      auto want = aotirt::dtype_from_name(in["dtype"].get<std::string>());
      if (!want.ok()) return false;
      auto conv = t->to(aotirt::DeviceId{}, *want);
      if (!conv.ok()) return false;
      c->inputs.push_back(*conv);
    }
    for (const auto& e : set["expected"]) {
      auto t = aotirt::cli::read_npy(dir + "/" + e["file"].get<std::string>());
      if (!t.ok()) return false;
      c->expected.push_back(*t);
    }
    c->rtol = pkg["tolerance"]["rtol"];
    c->atol = pkg["tolerance"]["atol"];
    return true;
  }
  return false;
}

// Whether |got| matches |want| within the tolerances (exactly for integers).
bool close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.sizes() != want.sizes()) return false;
  auto g = got.to(aotirt::DeviceId{}, DType::kFloat64);
  auto w = want.to(aotirt::DeviceId{}, DType::kFloat64);
  if (!g.ok() || !w.ok()) return false;
  const double* gp = static_cast<const double*>(g->data());
  const double* wp = static_cast<const double*>(w->data());
  const bool exact = !aotirt::dtype_is_floating(want.dtype());
  for (int64_t i = 0; i < g->numel(); ++i) {
    const double d = std::fabs(gp[i] - wp[i]);
    if (exact ? gp[i] != wp[i] : (d > atol + rtol * std::fabs(wp[i]) || std::isnan(gp[i]))) return false;
  }
  return true;
}

bool good_run(Model& m, const ZooCase& c) {
  auto out = m.run(c.inputs);
  if (!out.ok() || out->size() != c.expected.size()) return false;
  for (size_t i = 0; i < out->size(); ++i)
    if (!close((*out)[i], c.expected[i], c.rtol, c.atol)) return false;
  return true;
}

const char* const kZooModels[] = {"mlp", "cnn", "transformer", "multi_io", "bf16", "conv1d"};

// The cases of kZooModels that the manifest has (read once: their inputs and
// outputs are loaded from .npy files).
const std::vector<ZooCase>& zoo_cases() {
  static const std::vector<ZooCase> cases = [] {
    std::vector<ZooCase> found;
    for (const char* name : kZooModels) {
      ZooCase c;
      if (load_case(name, &c)) found.push_back(std::move(c));
    }
    return found;
  }();
  return cases;
}

class ZooConcurrencyTest : public ::testing::TestWithParam<size_t> {};

// Every thread runs the same zoo model on the same inputs; each result must
// match eager PyTorch. With one runner the container queues the calls; with
// several they run at once, each on a model instance of its own.
//
// The model runs once before the threads start: a first run racing others on
// a model with fewer runners than callers deadlocks inside the container
// (ManyThreadsStartAFreshModel, below).
TEST_P(ZooConcurrencyTest, ManyThreadsRunOneModel) {
  if (manifest().is_null()) GTEST_SKIP() << "no zoo manifest (scripts/test.sh or tests/models/make_packages.py)";
  ASSERT_GE(zoo_cases().size(), 3u) << "too few zoo packages found in " << aotirt::zoo_manifest_path();
  for (const ZooCase& c : zoo_cases()) {
    auto model = load_with_runners(c.path, GetParam());
    ASSERT_TRUE(model.ok()) << c.name << ": " << model.status().to_string();
    ASSERT_TRUE(good_run(**model, c)) << c.name << ": the warm-up run";
    std::atomic<int> bad{0};
    on_threads(kThreads, [&](int) {
      for (int round = 0; round < 3; ++round)
        if (!good_run(**model, c)) bad.fetch_add(1);
    });
    EXPECT_EQ(bad.load(), 0) << c.name;
  }
}

// The same, with no run before the threads start. It deadlocked (about one
// round in five) when runners < threads: the generated container (torch's
// aoti_runtime/model_container.h, run()) holds its model_exec_mutex_ shared
// while it waits in get_available_model() for a runner to come back, and the
// first run to get a runner waits for that mutex exclusive to fold its
// constants. aotirt lets runs go one at a time until one has succeeded.
TEST_P(ZooConcurrencyTest, ManyThreadsStartAFreshModel) {
  if (manifest().is_null()) GTEST_SKIP() << "no zoo manifest (scripts/test.sh or tests/models/make_packages.py)";
  for (int round = 0; round < 10; ++round) {
    for (const ZooCase& c : zoo_cases()) {
      auto model = load_with_runners(c.path, GetParam());
      ASSERT_TRUE(model.ok()) << c.name << ": " << model.status().to_string();
      std::atomic<int> bad{0};
      on_threads(kThreads, [&](int) {
        if (!good_run(**model, c)) bad.fetch_add(1);
      });
      EXPECT_EQ(bad.load(), 0) << c.name;
    }
  }
}

// Different models on different threads at once, each loaded and unloaded on
// its own thread (the device, its allocator and the ops' caches are shared).
TEST_P(ZooConcurrencyTest, ThreadsLoadAndRunDifferentModels) {
  if (manifest().is_null()) GTEST_SKIP() << "no zoo manifest (scripts/test.sh or tests/models/make_packages.py)";
  const std::vector<ZooCase>& cases = zoo_cases();
  ASSERT_GE(cases.size(), 3u);
  std::atomic<int> bad{0};
  on_threads(kThreads, [&](int t) {
    for (int round = 0; round < 2; ++round) {
      const ZooCase& c = cases[static_cast<size_t>(t + round) % cases.size()];
      auto model = load_with_runners(c.path, GetParam());
      if (!model.ok() || !good_run(**model, c) || !good_run(**model, c)) bad.fetch_add(1);
    }
  });
  EXPECT_EQ(bad.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Runners, ZooConcurrencyTest, ::testing::Values(size_t{1}, size_t{kThreads}),
                         [](const auto& info) { return "runners" + std::to_string(info.param); });

}  // namespace
