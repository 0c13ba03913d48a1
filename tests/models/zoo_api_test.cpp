// Runs every zoo package through the public C++ API and compares the outputs
// with eager PyTorch's (saved next to each package by make_packages.py). The
// process must never map a torch or c10 library.
//
// The manifest comes from $AOTIRT_ZOO_MANIFEST, else the newest
// .cache/zoo/*-cpu/manifest.json in the source tree (scripts/test.sh builds it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../zoo_test_util.h"
#include "aotirt/aotirt.h"
#include "cli/npy.h"

namespace fs = std::filesystem;
using aotirt::DType;
using aotirt::Tensor;

namespace {

nlohmann::json& manifest() {
  static nlohmann::json m = [] {
    std::string path = aotirt::zoo_manifest_path();
    std::ifstream f(path);
    if (path.empty() || !f) return nlohmann::json();
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (!j.is_discarded()) j["__path"] = path;
    return j;
  }();
  return m;
}

std::vector<std::string> package_names() {
  std::vector<std::string> names;
  const nlohmann::json& m = manifest();
  if (m.is_object() && m.contains("packages"))
    for (const auto& p : m["packages"]) names.push_back(p["name"].get<std::string>());
  if (names.empty()) names.push_back("no_manifest");
  return names;
}

const nlohmann::json* find_package(const std::string& name) {
  const nlohmann::json& m = manifest();
  if (!m.is_object() || !m.contains("packages")) return nullptr;
  for (const auto& p : m["packages"])
    if (p["name"] == name) return &p;
  return nullptr;
}

std::string package_dir(const nlohmann::json& pkg) {
  return (fs::path(manifest()["__path"].get<std::string>()).parent_path() / pkg["dir"].get<std::string>())
      .string();
}

// Reads an input, converting the float32 file to bf16/f16 where the model wants it.
Tensor load_input(const std::string& file, const std::string& dtype_name) {
  auto t = aotirt::cli::read_npy(file);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) return Tensor();
  auto want = aotirt::dtype_from_name(dtype_name);
  EXPECT_TRUE(want.ok());
  if (want.ok() && want.value() != t->dtype()) {
    auto conv = t->to(aotirt::DeviceId{}, want.value());
    EXPECT_TRUE(conv.ok()) << conv.status().to_string();
    return conv.ok() ? conv.value() : Tensor();
  }
  return t.value();
}

void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  auto g = got.to(aotirt::DeviceId{}, DType::kFloat64);
  auto w = want.to(aotirt::DeviceId{}, DType::kFloat64);
  ASSERT_TRUE(g.ok() && w.ok()) << what;
  const double* gp = static_cast<const double*>(g->data());
  const double* wp = static_cast<const double*>(w->data());
  const bool exact = !aotirt::dtype_is_floating(want.dtype());
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < g->numel(); ++i) {
    double d = std::fabs(gp[i] - wp[i]);
    worst = std::max(worst, d);
    bool ok = exact ? gp[i] == wp[i] : (d <= atol + rtol * std::fabs(wp[i]) && !std::isnan(gp[i]));
    if (!ok) ++bad;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << g->numel() << " elements differ; worst |diff| " << worst;
}

class ZooApiTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooApiTest, MatchesEager) {
  const nlohmann::json* pkg = find_package(GetParam());
  ASSERT_NE(pkg, nullptr) << "no zoo manifest found (run tests/models/make_packages.py or scripts/test.sh; "
                             "or set AOTIRT_ZOO_MANIFEST)";
  ASSERT_FALSE(pkg->contains("error")) << "export failed: " << (*pkg)["error"];
  const std::string dir = package_dir(*pkg);
  const double rtol = (*pkg)["tolerance"]["rtol"], atol = (*pkg)["tolerance"]["atol"];
  for (const auto& set : (*pkg)["input_sets"]) {
    // A fresh model per input set: models that mutate buffers keep state.
    auto model = aotirt::Model::load(dir + "/" + (*pkg)["package"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    std::vector<Tensor> inputs;
    for (const auto& in : set["inputs"])
      inputs.push_back(load_input(dir + "/" + in["file"].get<std::string>(), in["dtype"]));
    auto outputs = (*model)->run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().to_string();
    ASSERT_EQ(outputs->size(), set["expected"].size());
    for (size_t i = 0; i < outputs->size(); ++i) {
      const auto& exp = set["expected"][i];
      auto want = aotirt::cli::read_npy(dir + "/" + exp["file"].get<std::string>());
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      EXPECT_EQ(aotirt::dtype_name((*outputs)[i].dtype()), exp["dtype"].get<std::string>()) << "output " << i;
      expect_close((*outputs)[i], want.value(), rtol, atol,
                   GetParam() + " " + set["name"].get<std::string>() + " output " + std::to_string(i));
    }
  }
}

// The same inputs run again and again on one model: on CUDA the library calls
// (cuBLASLt, cuDNN) are recorded on the second run and replayed from the third
// (cuda_op_replay.h), and every run must still match eager PyTorch.
TEST_P(ZooApiTest, RepeatedRunsMatchEager) {
  const nlohmann::json* pkg = find_package(GetParam());
  ASSERT_NE(pkg, nullptr) << "no zoo manifest found";
  ASSERT_FALSE(pkg->contains("error")) << "export failed: " << (*pkg)["error"];
  const auto& set = (*pkg)["input_sets"][0];
  if (set.contains("expected_repeat")) GTEST_SKIP() << GetParam() << " keeps state across runs";
  const std::string dir = package_dir(*pkg);
  const double rtol = (*pkg)["tolerance"]["rtol"], atol = (*pkg)["tolerance"]["atol"];
  auto model = aotirt::Model::load(dir + "/" + (*pkg)["package"].get<std::string>());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  std::vector<Tensor> inputs;
  for (const auto& in : set["inputs"]) inputs.push_back(load_input(dir + "/" + in["file"].get<std::string>(), in["dtype"]));
  for (int run = 0; run < 4; ++run) {
    auto outputs = (*model)->run(inputs);
    ASSERT_TRUE(outputs.ok()) << "run " << run << ": " << outputs.status().to_string();
    ASSERT_EQ(outputs->size(), set["expected"].size());
    for (size_t i = 0; i < outputs->size(); ++i) {
      auto want = aotirt::cli::read_npy(dir + "/" + set["expected"][i]["file"].get<std::string>());
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      expect_close((*outputs)[i], want.value(), rtol, atol,
                   GetParam() + " run " + std::to_string(run) + " output " + std::to_string(i));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooApiTest, ::testing::ValuesIn(package_names()),
                         [](const auto& info) { return info.param; });

bool maps_contain_torch() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libtorch") != std::string::npos || line.find("libc10") != std::string::npos) return true;
  return false;
}

// Several models at once, unloaded in an order unlike their load order: each
// container is deleted, and none of that may disturb the others.
TEST(ZooLifetimeTest, ManyModelsLoadedTogetherAndNoTorchMapped) {
  const nlohmann::json& m = manifest();
  ASSERT_TRUE(m.is_object() && m.contains("packages")) << "no zoo manifest found";
  std::vector<std::unique_ptr<aotirt::Model>> models;
  for (const auto& pkg : m["packages"]) {
    if (pkg.contains("error")) continue;
    auto model = aotirt::Model::load(package_dir(pkg) + "/" + pkg["package"].get<std::string>());
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    models.push_back(std::move(model).value());
  }
  ASSERT_GE(models.size(), 3u);
  EXPECT_FALSE(maps_contain_torch()) << "a torch/c10 library is mapped into the process";
  for (size_t i = 0; i < models.size(); i += 2) models[i].reset();
  // The survivors still run.
  for (auto& model : models) {
    if (!model) continue;
    std::vector<Tensor> inputs;
    bool known = true;
    for (const auto& spec : model->inputs()) {
      known = known && spec.has_shape && spec.has_dtype;
      if (!known) break;
      std::vector<int64_t> shape = spec.shape;
      for (auto& d : shape) d = d < 0 ? 2 : d;
      auto t = Tensor::empty(shape, spec.dtype);
      ASSERT_TRUE(t.ok());
      std::memset(t->data(), 0, t->nbytes());  // zeros are valid indices and masks too
      inputs.push_back(t.value());
    }
    if (!known) continue;
    auto out = model->run(inputs);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
  }
  models.clear();
  EXPECT_FALSE(maps_contain_torch());
}

}  // namespace

namespace {

// Loads package |name| of the manifest with its first input set, or fails.
struct LoadedZooModel {
  std::unique_ptr<aotirt::Model> model;
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  double rtol = 0, atol = 0;
};

LoadedZooModel load_zoo_model(const std::string& name) {
  LoadedZooModel out;
  const nlohmann::json* pkg = find_package(name);
  EXPECT_NE(pkg, nullptr) << "zoo package " << name << " missing from the manifest";
  if (!pkg || pkg->contains("error")) return out;
  const std::string dir = package_dir(*pkg);
  auto model = aotirt::Model::load(dir + "/" + (*pkg)["package"].get<std::string>());
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return out;
  out.model = std::move(model).value();
  const auto& set = (*pkg)["input_sets"][0];
  for (const auto& in : set["inputs"])
    out.inputs.push_back(load_input(dir + "/" + in["file"].get<std::string>(), in["dtype"]));
  for (const auto& e : set["expected"]) {
    auto t = aotirt::cli::read_npy(dir + "/" + e["file"].get<std::string>());
    EXPECT_TRUE(t.ok());
    if (t.ok()) out.expected.push_back(t.value());
  }
  out.rtol = (*pkg)["tolerance"]["rtol"];
  out.atol = (*pkg)["tolerance"]["atol"];
  return out;
}

void expect_good_run(LoadedZooModel& m, const std::string& what) {
  auto out = m.model->run(m.inputs);
  ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
  ASSERT_EQ(out->size(), m.expected.size());
  for (size_t i = 0; i < out->size(); ++i) expect_close((*out)[i], m.expected[i], m.rtol, m.atol, what);
}

// A run that fails inside the model library (its own input checks reject a
// batch past the dynamic dimension's bound of 64, which aotirt's specs do not
// record) reports an error, and the model still gives the right answer
// afterwards.
TEST(ZooFaultTest, FailedRunInsideTheLibraryLeavesModelUsable) {
  LoadedZooModel m = load_zoo_model("dynamic_batch");
  ASSERT_TRUE(m.model && !m.inputs.empty());
  std::vector<int64_t> shape = m.inputs[0].sizes();
  shape.front() = 65;
  auto bad = Tensor::empty(shape, m.inputs[0].dtype());
  ASSERT_TRUE(bad.ok());
  std::memset(bad->data(), 0, bad->nbytes());
  auto out = m.model->run({bad.value()});
  EXPECT_FALSE(out.ok());
  EXPECT_FALSE(aotirt::last_error().empty());
  expect_good_run(m, "after a failed run");
}

// Bad calls rejected before the library runs leave the model usable too.
TEST(ZooFaultTest, RejectedInputsLeaveModelUsable) {
  LoadedZooModel m = load_zoo_model("mlp");
  ASSERT_TRUE(m.model && !m.inputs.empty());
  auto too_many = m.model->run({m.inputs[0], m.inputs[0]});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("input"), std::string::npos);
  auto wrong_dtype = m.inputs[0].to(aotirt::DeviceId{}, DType::kFloat64);
  ASSERT_TRUE(wrong_dtype.ok());
  auto r = m.model->run({wrong_dtype.value()});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("float64"), std::string::npos) << r.status().to_string();
  expect_good_run(m, "after rejected inputs");
}

// An allocation past the memory limit fails the run with RESOURCE_EXHAUSTED;
// once the limit is lifted the same model runs correctly.
TEST(ZooFaultTest, MemoryLimitFailsRunThenModelWorks) {
  LoadedZooModel m = load_zoo_model("cnn");
  ASSERT_TRUE(m.model && !m.inputs.empty());
  m.model->set_memory_limit(1);
  auto out = m.model->run(m.inputs);
  m.model->set_memory_limit(0);
  ASSERT_FALSE(out.ok()) << "a 1-byte limit did not stop the run";
  EXPECT_EQ(out.status().code(), aotirt::StatusCode::kResourceExhausted) << out.status().to_string();
  expect_good_run(m, "after the limit was lifted");
}

}  // namespace

namespace {

// Float inputs times 0.5 (others as they are): a second input set with the
// same shapes, to show a replay reads the new values.
std::vector<Tensor> halved(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (const Tensor& t : inputs) {
    if (!aotirt::dtype_is_floating(t.dtype())) {
      out.push_back(t);
      continue;
    }
    auto d = t.to(aotirt::DeviceId{}, DType::kFloat64);
    EXPECT_TRUE(d.ok());
    double* p = static_cast<double*>(d->data());
    for (int64_t i = 0; i < d->numel(); ++i) p[i] *= 0.5;
    auto back = d->to(aotirt::DeviceId{}, t.dtype());
    EXPECT_TRUE(back.ok());
    out.push_back(back.value());
  }
  return out;
}

// CUDA graphs: every CUDA zoo package, loaded with LoadOptions::cuda_graph,
// gives what the same package gives without graphs, run for run (warm-up,
// recording + replay, replay, replay on new values, and a second shape where
// the package takes one). Every package must be recordable.
TEST(ZooGraphTest, CudaGraphRunsMatchRunsWithoutGraphs) {
  const nlohmann::json& m = manifest();
  ASSERT_TRUE(m.is_object() && m.contains("packages")) << "no zoo manifest found";
  size_t checked = 0;
  for (const auto& pkg : m["packages"]) {
    if (pkg.contains("error")) continue;
    const std::string path = package_dir(pkg) + "/" + pkg["package"].get<std::string>();
    aotirt::LoadOptions graph_opts;
    graph_opts.cuda_graph = true;
    auto info = aotirt::inspect_package(path);
    ASSERT_TRUE(info.ok()) << info.status().to_string();
    if (info->device_key != "cuda") {
      auto refused = aotirt::Model::load(path, graph_opts);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.status().code(), aotirt::StatusCode::kInvalidArgument);
      EXPECT_NE(refused.status().message().find("CUDA graphs"), std::string::npos) << refused.status().to_string();
      continue;
    }
    auto plain = aotirt::Model::load(path);
    auto graphed = aotirt::Model::load(path, graph_opts);
    ASSERT_TRUE(plain.ok() && graphed.ok()) << pkg["name"];
    const double rtol = pkg["tolerance"]["rtol"], atol = pkg["tolerance"]["atol"];
    std::vector<std::vector<Tensor>> sequence;
    for (const auto& set : pkg["input_sets"]) {
      std::vector<Tensor> inputs;
      for (const auto& in : set["inputs"])
        inputs.push_back(load_input(package_dir(pkg) + "/" + in["file"].get<std::string>(), in["dtype"]));
      sequence.push_back(inputs);
      sequence.push_back(inputs);
      sequence.push_back(inputs);
      sequence.push_back(halved(inputs));
    }
    aotirt::RunOptions host;
    host.outputs_to_host = true;
    for (size_t r = 0; r < sequence.size(); ++r) {
      auto want = (*plain)->run(sequence[r], host);
      auto got = (*graphed)->run(sequence[r], host);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      ASSERT_TRUE(got.ok()) << pkg["name"] << " run " << r << ": " << got.status().to_string();
      ASSERT_EQ(got->size(), want->size());
      for (size_t i = 0; i < got->size(); ++i)
        expect_close((*got)[i], (*want)[i], rtol, atol,
                     pkg["name"].get<std::string>() + " run " + std::to_string(r) + " output " + std::to_string(i));
    }
    const aotirt::GraphStats s = (*graphed)->graph_stats();
    EXPECT_EQ(s.failed_captures, 0u) << pkg["name"] << ": " << s.last_failure;
    EXPECT_GE(s.graphs, 1u) << pkg["name"];
    EXPECT_GE(s.replays, 3 * pkg["input_sets"].size()) << pkg["name"];

    // Device inputs: the graph records their copies and retargets them when
    // the caller passes other buffers (or host data, staged on the device).
    auto graphed_dev = aotirt::Model::load(path, graph_opts);
    auto plain_dev = aotirt::Model::load(path);
    ASSERT_TRUE(graphed_dev.ok() && plain_dev.ok());
    auto on_device = [&](const std::vector<Tensor>& host_inputs) {
      std::vector<Tensor> out;
      for (const Tensor& t : host_inputs) {
        auto d = t.to((*graphed_dev)->device());
        EXPECT_TRUE(d.ok()) << d.status().to_string();
        out.push_back(d.ok() ? d.value() : Tensor());
      }
      return out;
    };
    const std::vector<Tensor>& first = sequence.front();
    const std::vector<Tensor> dev_a = on_device(first), dev_b = on_device(halved(first));
    const std::vector<std::vector<Tensor>> dev_sequence = {dev_a, dev_a, dev_a, dev_b, first, dev_a, dev_b};
    for (size_t r = 0; r < dev_sequence.size(); ++r) {
      auto want = (*plain_dev)->run(dev_sequence[r], host);
      auto got = (*graphed_dev)->run(dev_sequence[r], host);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      ASSERT_TRUE(got.ok()) << pkg["name"] << " device run " << r << ": " << got.status().to_string();
      for (size_t i = 0; i < got->size(); ++i)
        expect_close((*got)[i], (*want)[i], rtol, atol,
                     pkg["name"].get<std::string>() + " device run " + std::to_string(r) + " output " +
                         std::to_string(i));
    }
    const aotirt::GraphStats sd = (*graphed_dev)->graph_stats();
    EXPECT_EQ(sd.failed_captures, 0u) << pkg["name"] << ": " << sd.last_failure;
    EXPECT_EQ(sd.replays, dev_sequence.size() - 1) << pkg["name"];
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "CUDA graphs: the zoo holds no CUDA package (CPU zoo); checked that CPU "
                                    "packages refuse LoadOptions::cuda_graph";
}

}  // namespace
