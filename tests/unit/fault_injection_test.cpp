// Faults at each step of load and run (base/fault.h): a device allocation
// that fails at the Nth call, for every N a load and run makes; a host
// allocation (operator new) that fails at the Nth call; a write that
// finds the disk full; a read error, injected or real (the package cut short
// under the loader), in the middle of the weights. Each must end in a clear
// error, leave no memory held, nothing in TMPDIR, and the process able to
// load and run a model again with the right outputs.
//
// Uses the zoo's real packages ($AOTIRT_ZOO_MANIFEST, else the newest
// .cache/zoo/*-cpu/manifest.json) and is skipped without them. With
// $AOTIRT_FAULT_TEST_CUDA_MANIFEST (scripts/gpu-check.sh sets it to the CUDA
// zoo's manifest) the same cases run on cuda:0 too.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <execinfo.h>

#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "../zoo_test_util.h"
#include "aotirt/aotirt.h"
#include "base/fault.h"
#include "cli/npy.h"
#include "device/device.h"
#include "failing_operator_new.h"
#include "package/zip_archive.h"
#include "private_tmpdir_test_util.h"

namespace aotirt {
namespace {

namespace fs = std::filesystem;
using fault::Point;

struct FaultCase {
  std::string package;
  std::vector<Tensor> inputs;
  Tensor expected;  // output 0, float32
  double rtol = 1e-4, atol = 1e-5;
  DeviceId device{DeviceType::kCpu, 0};
};

// Zoo package |name| of the manifest at |manifest| for |device|, with its
// first input set read in; false when unavailable.
bool find_case(const std::string& manifest, const std::string& name, DeviceId device, FaultCase* out) {
  if (manifest.empty()) return false;
  std::ifstream f(manifest);
  nlohmann::json m = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(f), {}), nullptr, false);
  if (!m.is_object() || !m.contains("packages")) return false;
  for (const auto& p : m["packages"]) {
    if (p.value("name", "") != name || p.contains("error")) continue;
    const fs::path dir = fs::path(manifest).parent_path() / p["dir"].get<std::string>();
    out->package = (dir / p["package"].get<std::string>()).string();
    if (!fs::exists(out->package)) return false;
    const auto& set = p["input_sets"][0];
    for (const auto& in : set["inputs"]) {
      Result<Tensor> t = cli::read_npy((dir / in["file"].get<std::string>()).string());
      if (!t.ok()) return false;
      out->inputs.push_back(*t);
    }
    Result<Tensor> want = cli::read_npy((dir / set["expected"][0]["file"].get<std::string>()).string());
    if (!want.ok() || want->dtype() != DType::kFloat32) return false;
    out->expected = *want;
    if (p.contains("tolerance")) {
      out->rtol = p["tolerance"].value("rtol", out->rtol);
      out->atol = p["tolerance"].value("atol", out->atol);
    }
    out->device = device;
    return true;
  }
  return false;
}

std::vector<FaultCase> cases_for(const std::vector<std::string>& names) {
  std::vector<FaultCase> out;
  for (const std::string& n : names) {
    FaultCase c;
    if (find_case(zoo_manifest_path(), n, DeviceId{DeviceType::kCpu, 0}, &c)) out.push_back(std::move(c));
  }
  if (const char* cuda = std::getenv("AOTIRT_FAULT_TEST_CUDA_MANIFEST")) {
    for (const std::string& n : names) {
      FaultCase c;
      if (find_case(cuda, n, DeviceId{DeviceType::kCuda, 0}, &c)) out.push_back(std::move(c));
    }
  }
  return out;
}

std::string label(const FaultCase& c) {
  // The zoo keeps each package as <name>-<hash>/model.pt2.
  return fs::path(c.package).parent_path().filename().string() +
         (c.device.type == DeviceType::kCuda ? " on cuda:0" : " on cpu");
}

// Output 0 of a run, on the host, against the expected output.
testing::AssertionResult matches(const Result<std::vector<Tensor>>& outs, const FaultCase& c) {
  if (!outs.ok()) return testing::AssertionFailure() << outs.status().to_string();
  if (outs->empty()) return testing::AssertionFailure() << "no outputs";
  const Tensor& got = outs.value()[0];
  if (got.dtype() != DType::kFloat32 || got.numel() != c.expected.numel())
    return testing::AssertionFailure() << "output 0 has another dtype or size";
  const float* g = static_cast<const float*>(got.data());
  const float* w = static_cast<const float*>(c.expected.data());
  for (int64_t i = 0; i < got.numel(); ++i)
    if (!(std::fabs(g[i] - w[i]) <= c.atol + c.rtol * std::fabs(w[i])))
      return testing::AssertionFailure() << "output 0 differs at element " << i << ": " << g[i] << " vs " << w[i];
  return testing::AssertionSuccess();
}

RunOptions host_outputs() {
  RunOptions o;
  o.outputs_to_host = true;
  o.synchronize = true;
  return o;
}

// Bytes the device's allocator has handed out and not had back.
size_t active_bytes(DeviceId d) {
  Result<Device*> dev = get_device(d);
  return dev.ok() ? (*dev)->allocator().stats().active_bytes : 0;
}

// With AOTIRT_FAULT_TEST_TRACE set, each injected fault prints the stack
// that reached it (to find which step of a load or run a failure hit).
std::function<void()> trace_hook() {
  if (!std::getenv("AOTIRT_FAULT_TEST_TRACE")) return {};
  return [] {
    void* frames[48];
    const int n = backtrace(frames, 48);
    std::fprintf(stderr, "injected fault at:\n");
    backtrace_symbols_fd(frames, n, 2);
  };
}

class FaultInjectionTest : public PrivateTmpdirTest {
 protected:
  FaultInjectionTest() : PrivateTmpdirTest("aotirt-fault-test") {}
  void TearDown() override {
    fault::reset();
    PrivateTmpdirTest::TearDown();
  }
  static LoadOptions on(const FaultCase& c) {
    LoadOptions o;
    o.device = c.device;
    return o;
  }
  // A load and a run of |c| with nothing armed must give the right output:
  // the process is still sound after whatever failed before.
  void expect_sound(const FaultCase& c, const std::string& after) {
    Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
    ASSERT_TRUE(m.ok()) << label(c) << " after " << after << ": " << m.status().to_string();
    EXPECT_TRUE(matches((*m)->run(c.inputs, host_outputs()), c)) << label(c) << " after " << after;
  }
  bool tmpdir_empty() const { return fs::is_empty(tmp_); }
};

TEST_F(FaultInjectionTest, EveryDeviceAllocationOfLoadAndRunCanFail) {
  // Models without state: a run that fails after the model ran (copying its
  // outputs, say) must not change what the next run gives.
  std::vector<FaultCase> cases = cases_for({"mlp", "transformer", "cnn"});
  if (cases.empty()) GTEST_SKIP() << "no zoo packages (tests/models/make_packages.py)";
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(label(c));
    expect_sound(c, "nothing");  // warms the device, its caches and the library's statics
    const size_t baseline = active_bytes(c.device);
    // How many allocations one load and run make.
    fault::start_counting();
    {
      Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
      ASSERT_TRUE(m.ok()) << m.status().to_string();
      ASSERT_TRUE(matches((*m)->run(c.inputs, host_outputs()), c));
    }
    const uint64_t steps = fault::hits(Point::kDeviceAlloc);
    fault::reset();
    ASSERT_GT(steps, 0u) << "the load and run allocated nothing on the device";
    int failed_loads = 0, failed_runs = 0;
    for (uint64_t n = 1; n <= steps; ++n) {
      SCOPED_TRACE("allocation " + std::to_string(n) + " of " + std::to_string(steps));
      fault::arm(Point::kDeviceAlloc, {n, ENOMEM, trace_hook()});
      {
        Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
        if (!m.ok()) {
          ++failed_loads;
          EXPECT_NE(m.status().message().find("injected fault"), std::string::npos) << m.status().to_string();
        } else {
          Result<std::vector<Tensor>> outs = (*m)->run(c.inputs, host_outputs());
          fault::reset();
          if (!outs.ok()) {
            ++failed_runs;
            EXPECT_NE(outs.status().message().find("injected fault"), std::string::npos)
                << outs.status().to_string();
            // The same model runs again once memory is back.
            EXPECT_TRUE(matches((*m)->run(c.inputs, host_outputs()), c)) << "the model's next run, after " << outs.status().to_string();
          } else {
            // Only a cache may absorb a failed allocation; the output is right.
            EXPECT_TRUE(matches(outs, c));
          }
        }
      }
      fault::reset();
      EXPECT_EQ(active_bytes(c.device), baseline) << "device memory is still held after the model was freed";
      EXPECT_TRUE(tmpdir_empty()) << "files were left in TMPDIR";
      if (HasFailure()) break;
    }
    EXPECT_GT(failed_loads + failed_runs, 0) << "no injected allocation failure reached the caller";
    expect_sound(c, "every allocation failure");
  }
}

TEST_F(FaultInjectionTest, HostAllocationsOfLoadAndRunCanFail) {
  // operator new throws at the Nth call (failing_operator_new.h), on any
  // thread: inside aotirt, the generated library and the C++ library alike.
  // std::bad_alloc must never escape the API nor end the process.
  std::vector<FaultCase> cases = cases_for({"mlp", "transformer"});
  if (cases.empty()) GTEST_SKIP() << "no zoo packages (tests/models/make_packages.py)";
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(label(c));
    expect_sound(c, "nothing");
    const size_t baseline = active_bytes(c.device);
    test::count_allocations();
    {
      Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
      if (m.ok()) (void)(*m)->run(c.inputs, host_outputs());
    }
    const uint64_t steps = test::allocations_counted();
    test::stop_failing_allocations();
    ASSERT_GT(steps, 0u);
    // Every call while there are few; evenly spread calls past that, so the
    // test stays quick on packages that allocate much.
    constexpr uint64_t kMaxTries = 1200;
    const uint64_t stride = steps <= kMaxTries ? 1 : (steps + kMaxTries - 1) / kMaxTries;
    int failed = 0;
    for (uint64_t n = 1; n <= steps; n += stride) {
      SCOPED_TRACE("allocation " + std::to_string(n) + " of " + std::to_string(steps));
      bool threw = false;
      Status status;
      try {
        test::fail_allocation_at(n);
        Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
        if (!m.ok()) {
          status = m.status();
        } else {
          Result<std::vector<Tensor>> outs = (*m)->run(c.inputs, host_outputs());
          if (!outs.ok()) status = outs.status();
        }
        test::stop_failing_allocations();
      } catch (...) {
        test::stop_failing_allocations();
        threw = true;
      }
      EXPECT_FALSE(threw) << "an exception escaped the API";
      if (!status.ok()) {
        ++failed;
        EXPECT_FALSE(status.message().empty());
      }
      EXPECT_EQ(active_bytes(c.device), baseline) << "device memory is still held after the model was freed";
      EXPECT_TRUE(tmpdir_empty()) << "files were left in TMPDIR";
      if (HasFailure()) break;
    }
    EXPECT_GT(failed, 0) << "no failed host allocation reached the caller";
    expect_sound(c, "host allocation failures");
  }
}

// A ModelGroup of one package loaded twice: the second copy borrows every
// weight of the first (the same FQNs), runs right, and a host allocation
// failing anywhere in the group's load and run ends in a clear error with
// nothing left held.
TEST_F(FaultInjectionTest, AModelGroupSharesItsWeightsAndHostAllocationsOfItsLoadCanFail) {
  std::vector<FaultCase> cases = cases_for({"mlp"});
  if (cases.empty()) GTEST_SKIP() << "no zoo packages (tests/models/make_packages.py)";
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(label(c));
    const size_t baseline = active_bytes(c.device);
    {
      Result<std::unique_ptr<ModelGroup>> g = ModelGroup::load({c.package, c.package}, on(c));
      ASSERT_TRUE(g.ok()) << g.status().to_string();
      const WeightStats first = (*g)->model(0).weight_stats();
      const WeightStats second = (*g)->model(1).weight_stats();
      ASSERT_GT(first.constants, 0u);
      EXPECT_GT(first.held_bytes, 0u);
      EXPECT_EQ(first.shared_constants, 0u);
      EXPECT_EQ(second.constants, first.constants);
      EXPECT_EQ(second.shared_constants, first.constants);
      EXPECT_EQ(second.shared_bytes, first.held_bytes);
      EXPECT_EQ(second.held_bytes, 0u);
      EXPECT_EQ((*g)->weight_bytes(), first.held_bytes);
      EXPECT_EQ((*g)->unshared_weight_bytes(), 2 * first.held_bytes);
      EXPECT_TRUE(matches((*g)->model(1).run(c.inputs, host_outputs()), c));
      EXPECT_TRUE(matches((*g)->model(0).run(c.inputs, host_outputs()), c));
    }
    EXPECT_EQ(active_bytes(c.device), baseline) << "the group's memory is still held after it was freed";

    // Made before any allocation is armed to fail: the test's own.
    const std::vector<std::string> paths{c.package, c.package};
    const LoadOptions options = on(c);
    test::count_allocations();
    {
      Result<std::unique_ptr<ModelGroup>> g = ModelGroup::load(paths, options);
      if (g.ok()) (void)(*g)->model(1).run(c.inputs, host_outputs());
    }
    const uint64_t steps = test::allocations_counted();
    test::stop_failing_allocations();
    ASSERT_GT(steps, 0u);
    // Every call for a small package: the few that take the library's
    // handles on the shared weights must not be skipped.
    constexpr uint64_t kMaxTries = 4000;
    const uint64_t stride = steps <= kMaxTries ? 1 : (steps + kMaxTries - 1) / kMaxTries;
    int failed = 0;
    for (uint64_t n = 1; n <= steps; n += stride) {
      SCOPED_TRACE("allocation " + std::to_string(n) + " of " + std::to_string(steps));
      bool threw = false;
      Status status;
      try {
        test::fail_allocation_at(n);
        Result<std::unique_ptr<ModelGroup>> g = ModelGroup::load(paths, options);
        if (!g.ok()) {
          status = g.status();
        } else {
          Result<std::vector<Tensor>> outs = (*g)->model(1).run(c.inputs, host_outputs());
          if (!outs.ok()) status = outs.status();
        }
        test::stop_failing_allocations();
      } catch (...) {
        test::stop_failing_allocations();
        threw = true;
      }
      EXPECT_FALSE(threw) << "an exception escaped the API";
      if (!status.ok()) {
        ++failed;
        EXPECT_FALSE(status.message().empty());
      }
      EXPECT_EQ(active_bytes(c.device), baseline) << "device memory is still held after the group was freed";
      EXPECT_TRUE(tmpdir_empty()) << "files were left in TMPDIR";
      if (HasFailure()) break;
    }
    EXPECT_GT(failed, 0) << "no failed host allocation reached the caller";
    expect_sound(c, "host allocation failures in a group");
  }
}

TEST_F(FaultInjectionTest, AFullDiskFailsTheLoadCleanly) {
  std::vector<FaultCase> cases = cases_for({"mlp"});
  if (cases.empty()) GTEST_SKIP() << "no zoo packages (tests/models/make_packages.py)";
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(label(c));
    fault::start_counting();
    { ASSERT_TRUE(Model::load(c.package, on(c)).ok()); }
    const uint64_t writes = fault::hits(Point::kFileWrite);
    fault::reset();
    // The model library's memfd, then (CUDA) each kernel file in TMPDIR.
    ASSERT_GT(writes, 0u);
    int failed = 0;
    for (uint64_t n = 1; n <= writes; ++n) {
      SCOPED_TRACE("write " + std::to_string(n) + " of " + std::to_string(writes));
      fault::arm(Point::kFileWrite, {n, ENOSPC, {}});
      Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
      fault::reset();
      if (m.ok()) {
        // A GPU model's library is opened while its device starts, and
        // again after a failure there: a one-off write error is survived.
        EXPECT_TRUE(matches((*m)->run(c.inputs, host_outputs()), c)) << "a load that survived a full disk";
      } else {
        ++failed;
        EXPECT_EQ(m.status().code(), StatusCode::kIoError) << m.status().to_string();
        EXPECT_NE(m.status().message().find(std::strerror(ENOSPC)), std::string::npos) << m.status().to_string();
      }
      m = Status(StatusCode::kUnavailable, "freed");
      EXPECT_TRUE(tmpdir_empty()) << "files were left in TMPDIR";
    }
    EXPECT_GT(failed, 0) << "no full disk failed a load";
    expect_sound(c, "a full disk");
  }
}

TEST_F(FaultInjectionTest, AReadErrorInTheWeightsFailsTheLoadCleanly) {
  std::vector<FaultCase> cases = cases_for({"transformer"});
  if (cases.empty()) GTEST_SKIP() << "no zoo packages (tests/models/make_packages.py)";
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(label(c));
    fault::start_counting();
    { ASSERT_TRUE(Model::load(c.package, on(c)).ok()); }
    const uint64_t reads = fault::hits(Point::kWeightsRead);
    fault::reset();
    ASSERT_GT(reads, 2u) << "the weights were read in fewer pieces than the test needs";
    for (uint64_t n : {uint64_t{1}, reads / 2, reads}) {
      SCOPED_TRACE("read " + std::to_string(n) + " of " + std::to_string(reads));
      fault::arm(Point::kWeightsRead, {n, EIO, {}});
      Result<std::unique_ptr<Model>> m = Model::load(c.package, on(c));
      fault::reset();
      ASSERT_FALSE(m.ok()) << "a load that hit a read error succeeded";
      EXPECT_EQ(m.status().code(), StatusCode::kIoError) << m.status().to_string();
      EXPECT_NE(m.status().message().find(std::strerror(EIO)), std::string::npos) << m.status().to_string();
      EXPECT_TRUE(tmpdir_empty()) << "files were left in TMPDIR";
    }
    expect_sound(c, "read errors");
  }
}

TEST_F(FaultInjectionTest, APackageCutShortWhileItsWeightsLoadIsAnErrorNotACrash) {
  // The real failure, not an injected one: halfway through the weights the
  // file shrinks under the mapping, so touching the rest would be SIGBUS.
  std::vector<FaultCase> cases = cases_for({"transformer"});
  if (cases.empty()) GTEST_SKIP() << "no zoo packages (tests/models/make_packages.py)";
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(label(c));
    const std::string copy = root_ + "/cut.pt2";
    fs::copy_file(c.package, copy, fs::copy_options::overwrite_existing);
    fault::start_counting();
    { ASSERT_TRUE(Model::load(copy, on(c)).ok()); }
    const uint64_t reads = fault::hits(Point::kWeightsRead);
    fault::reset();
    ASSERT_GT(reads, 2u);
    // Where the weights blob's middle lies in the file.
    uint64_t cut = 0;
    {
      Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(copy);
      ASSERT_TRUE(zip.ok()) << zip.status().to_string();
      for (const ZipEntry& e : (*zip)->entries()) {
        if (e.name.size() < 5 || e.name.compare(e.name.size() - 5, 5, ".blob") != 0) continue;
        Result<uint64_t> at = (*zip)->data_offset(e);
        ASSERT_TRUE(at.ok()) << at.status().to_string();
        cut = *at + e.size / 2;
      }
    }
    ASSERT_GT(cut, 0u) << "the package has no weights blob";
    fault::arm(Point::kWeightsRead, {reads / 2, 0, [&] { fs::resize_file(copy, cut); }});
    Result<std::unique_ptr<Model>> m = Model::load(copy, on(c));
    fault::reset();
    ASSERT_FALSE(m.ok()) << "a load whose package was cut short succeeded";
    EXPECT_NE(m.status().to_string().find("truncated"), std::string::npos) << m.status().to_string();
    EXPECT_TRUE(tmpdir_empty()) << "files were left in TMPDIR";
    expect_sound(c, "a package cut short");
  }
}

}  // namespace
}  // namespace aotirt
