// parse_wrapper_specs over wrapper sources written here in the form
// AOTInductor generates (dtype, static and dynamic sizes, names), then over
// hostile text: every truncation, random bytes and mutations, an oversized
// source, and patterns repeated many times, which must all end quickly with
// the specs unknown or partly known and never crash. Also the package
// reader's use of it (where specs come from, which source it picks) and the
// loader's (specs used to check runs; a source that miscounts is dropped).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <zip.h>

#include <random>
#include <string>
#include <vector>

#include "aotirt/model.h"
#include "file_test_util.h"
#include "private_tmpdir_test_util.h"
#include "zip_test_util.h"
#include "package/cpu_features.h"
#include "package/pt2_package.h"
#include "package/wrapper_specs.h"

namespace aotirt {
namespace {

// One input's check function, in the generated layout. |sizes| holds the
// size check lines (already formatted), |strides| the stride ones.
std::string check_function(int index, const std::string& var, const std::string& dtype,
                           const std::vector<std::string>& sizes, const std::vector<std::string>& strides) {
  std::string s = "AOTI_NOINLINE static void check_input_" + std::to_string(index) +
                  "(\n    AtenTensorHandle* input_handles\n) {\n";
  s += "    ConstantHandle " + var + " = ConstantHandle(input_handles[" + std::to_string(index) + "]);\n";
  s += "    int32_t " + var + "_dtype;\n";
  s += "    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(" + var + ", &" + var + "_dtype));\n\n";
  s += "    int32_t " + var + "_expected_dtype = aoti_torch_dtype_" + dtype + "();\n";
  s += "    if (" + var + "_expected_dtype != " + var + "_dtype) {\n";
  s += "        std::stringstream ss;\n        ss << \"input_handles[" + std::to_string(index) +
       "]: unmatched dtype, \" << \"but got: \" << " + var + "_dtype << \"\\n\";\n";
  s += "        throw std::runtime_error(ss.str());\n    }\n";
  s += "    auto " + var + "_size = " + var + ".sizes();\n";
  for (const std::string& line : sizes)
    s += "    if (" + line + ") {\n        std::stringstream ss;\n        ss << \"a size {is} wrong\\n\";\n"
         "        throw std::runtime_error(ss.str());\n    }\n";
  s += "    auto " + var + "_stride = " + var + ".strides();\n";
  for (const std::string& line : strides)
    s += "    if (" + line + ") {\n        throw std::runtime_error(\"a stride is wrong '}'\");\n    }\n";
  s += "    int32_t " + var + "_expected_device_type = 0;\n";
  s += "    if (" + var + "_expected_device_type != 0) { /* device } */ }\n";
  s += "}\n\n";
  return s;
}

// A wrapper with three inputs -- bfloat16 [?, 8], float16 [?, 5], int64 [?]
// -- a 0-d float32 input, and names for all of them and one output.
std::string sample_wrapper() {
  std::string s = "// generated\n#include <stdexcept>\nnamespace torch::aot_inductor {\n";
  s += "AOTInductorModel::AOTInductorModel() {\n";
  s += "    inputs_info_[0].name = \"arg2_1\";\n    inputs_info_[1].name = \"arg3_1\";\n";
  s += "    inputs_info_[2].name = \"arg4_1\";\n    inputs_info_[3].name = \"arg5_1\";\n";
  s += "    constants_info_[0].dtype = cached_torch_dtype_float32;\n";
  s += "    outputs_info_[0].name = \"output0\";\n}\n\n";
  s += check_function(0, "arg2_1", "bfloat16",
                      {"arg2_1_size[0] < 2", "arg2_1_size[0] > 64", "8 != arg2_1_size[1]"},
                      {"8 != arg2_1_stride[0]", "1 != arg2_1_stride[1]"});
  s += check_function(1, "arg3_1", "float16", {"arg3_1_size[0] < 2", "5 != arg3_1_size[1]"},
                      {"5 != arg3_1_stride[0]", "1 != arg3_1_stride[1]"});
  s += check_function(2, "arg4_1", "int64", {"arg4_1_size[0] < 2", "arg4_1_size[0] > 64"}, {"1 != arg4_1_stride[0]"});
  s += check_function(3, "arg5_1", "float32", {}, {});
  s += "static bool _check_aoti_runtime_check_inputs_env() { return true; }\n";
  s += "AOTI_NOINLINE static void __check_inputs_outputs(AtenTensorHandle* input_handles) {\n";
  s += "    check_input_0(input_handles);\n    check_input_1(input_handles);\n}\n";
  s += "void AOTInductorModel::run_impl() {\n    if (x > 3) { y(); }\n}\n}  // namespace\n";
  return s;
}

TEST(WrapperSpecs, ReadsTheGeneratedChecks) {
  WrapperSpecs w = parse_wrapper_specs(sample_wrapper());
  ASSERT_TRUE(w.found) << w.problem;
  ASSERT_EQ(w.inputs.size(), 4u);
  const TensorSpec& a = w.inputs[0];
  EXPECT_EQ(a.name, "arg2_1");
  ASSERT_TRUE(a.has_dtype);
  EXPECT_EQ(a.dtype, DType::kBFloat16);
  ASSERT_TRUE(a.has_shape);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(w.inputs[1].dtype, DType::kFloat16);
  EXPECT_EQ(w.inputs[1].shape, (std::vector<int64_t>{-1, 5}));
  EXPECT_EQ(w.inputs[2].dtype, DType::kInt64);
  EXPECT_EQ(w.inputs[2].shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(w.inputs[3].name, "arg5_1");
  EXPECT_EQ(w.inputs[3].dtype, DType::kFloat32);
  ASSERT_TRUE(w.inputs[3].has_shape);
  EXPECT_TRUE(w.inputs[3].shape.empty());
  ASSERT_EQ(w.outputs.size(), 1u);
  EXPECT_EQ(w.outputs[0].name, "output0");
  EXPECT_FALSE(w.outputs[0].has_dtype);
}

TEST(WrapperSpecs, NoChecksOrNamesIsUnknown) {
  for (const char* text : {"", "// wrapper", "int main() { return 0; }", "check_input_", "inputs_info_["}) {
    WrapperSpecs w = parse_wrapper_specs(text);
    EXPECT_FALSE(w.found) << text;
    EXPECT_FALSE(w.problem.empty());
    EXPECT_TRUE(w.inputs.empty());
  }
}

TEST(WrapperSpecs, NamesWithoutChecksGiveNamesOnly) {
  WrapperSpecs w = parse_wrapper_specs("inputs_info_[0].name = \"x\";\ninputs_info_[1].name = \"y\";\n");
  ASSERT_TRUE(w.found) << w.problem;
  ASSERT_EQ(w.inputs.size(), 2u);
  EXPECT_EQ(w.inputs[1].name, "y");
  EXPECT_FALSE(w.inputs[0].has_dtype);
  EXPECT_FALSE(w.inputs[0].has_shape);
}

TEST(WrapperSpecs, InconsistentSourcesAreUnknown) {
  const std::string one = check_function(0, "a", "float32", {"3 != a_size[0]"}, {"1 != a_stride[0]"});
  // The same input checked twice.
  EXPECT_FALSE(parse_wrapper_specs(one + one).found);
  // A gap in the inputs checked.
  EXPECT_FALSE(parse_wrapper_specs(one + check_function(2, "c", "float32", {}, {})).found);
  // Names that contradict each other, or count differently from the checks.
  EXPECT_FALSE(parse_wrapper_specs(one + "inputs_info_[0].name = \"a\";inputs_info_[0].name = \"b\";").found);
  EXPECT_FALSE(parse_wrapper_specs(one + "inputs_info_[1].name = \"b\";").found);
  // An index past the cap.
  EXPECT_FALSE(parse_wrapper_specs(check_function(1 << 20, "a", "float32", {}, {})).found);
  // The same name given twice is fine.
  EXPECT_TRUE(parse_wrapper_specs(one + "inputs_info_[0].name = \"a\";inputs_info_[0].name = \"a\";").found);
}

TEST(WrapperSpecs, ShapeRulesAreConservative) {
  auto spec_of = [](const std::string& text) {
    WrapperSpecs w = parse_wrapper_specs(text);
    EXPECT_TRUE(w.found) << w.problem;
    return w.inputs.empty() ? TensorSpec() : w.inputs[0];
  };
  // A dimension named only by a stride check: its size is unchecked, so the
  // rank is not believed.
  TensorSpec s = spec_of(check_function(0, "a", "float32", {"4 != a_size[0]"}, {"1 != a_stride[1]"}));
  EXPECT_TRUE(s.has_dtype);
  EXPECT_FALSE(s.has_shape);
  // Two different static sizes for one dimension, or static and bounded.
  EXPECT_FALSE(spec_of(check_function(0, "a", "float32", {"4 != a_size[0]", "5 != a_size[0]"}, {})).has_shape);
  EXPECT_FALSE(spec_of(check_function(0, "a", "float32", {"4 != a_size[0]", "a_size[0] < 2"}, {})).has_shape);
  // A dimension past the cap.
  EXPECT_FALSE(spec_of(check_function(0, "a", "float32", {"4 != a_size[100000]"}, {})).has_shape);
  // Sizes whose product overflows int64.
  EXPECT_FALSE(spec_of(check_function(0, "a", "float32",
                                      {"4294967296 != a_size[0]", "4294967296 != a_size[1]"}, {}))
                   .has_shape);
  // A size too large for int64 is not a size check.
  s = spec_of(check_function(0, "a", "float32", {"99999999999999999999999 != a_size[0]"}, {"1 != a_stride[0]"}));
  EXPECT_FALSE(s.has_shape);
  // A dtype aotirt does not know, and two different dtypes.
  EXPECT_FALSE(spec_of(check_function(0, "a", "qint8", {}, {})).has_dtype);
  std::string two = check_function(0, "a", "float32", {}, {});
  two.insert(two.find("auto a_size"), "int32_t a_expected_dtype = aoti_torch_dtype_int8();\n");
  EXPECT_FALSE(spec_of(two).has_dtype);
  // Checks of another variable are not this input's.
  s = spec_of(check_function(0, "a", "float32", {"3 != ab_size[0]", "3 != a_size[0]"}, {"1 != a_stride[0]"}));
  EXPECT_EQ(s.shape, (std::vector<int64_t>{3}));
  // A handle naming another input: nothing is known of this one.
  std::string other = check_function(0, "a", "float32", {}, {});
  other.replace(other.find("input_handles[0]"), 16, "input_handles[7]");
  s = spec_of(other);
  EXPECT_FALSE(s.has_dtype);
  EXPECT_FALSE(s.has_shape);
}

TEST(WrapperSpecs, EveryTruncationIsSafe) {
  const std::string text = sample_wrapper();
  for (size_t n = 0; n <= text.size(); ++n) {
    WrapperSpecs w = parse_wrapper_specs(std::string_view(text).substr(0, n));
    if (!w.found) continue;
    // Whatever is learned from a prefix agrees with the whole.
    WrapperSpecs full = parse_wrapper_specs(text);
    ASSERT_LE(w.inputs.size(), full.inputs.size());
    for (size_t i = 0; i < w.inputs.size(); ++i) {
      if (w.inputs[i].has_dtype) {
        EXPECT_EQ(w.inputs[i].dtype, full.inputs[i].dtype);
      }
    }
  }
}

TEST(WrapperSpecs, RandomBytesAndMutationsAreSafe) {
  std::mt19937 rng(1234);
  const std::string text = sample_wrapper();
  const std::string alphabet = "{}()[]<>!=;\"'/*\\ \n0123456789_aistz";
  for (int round = 0; round < 300; ++round) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(rng() % 20);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0: mutated[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: mutated.erase(at, 1 + rng() % 8); break;
        default: mutated.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
      if (mutated.empty()) mutated = "x";
    }
    WrapperSpecs w = parse_wrapper_specs(mutated);
    for (const TensorSpec& s : w.inputs)
      if (s.has_shape) EXPECT_LE(s.shape.size(), kMaxWrapperDims);
  }
  for (int round = 0; round < 50; ++round) {
    std::string garbage(1 + rng() % 20000, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    EXPECT_FALSE(parse_wrapper_specs(garbage).found);
  }
}

TEST(WrapperSpecs, OversizedSourceIsNotRead) {
  std::string huge = sample_wrapper();
  huge.resize(kMaxWrapperSourceBytes + 1, ' ');
  WrapperSpecs w = parse_wrapper_specs(huge);
  EXPECT_FALSE(w.found);
  EXPECT_NE(w.problem.find("larger"), std::string::npos) << w.problem;
}

// Patterns repeated until the text is megabytes long: each must finish
// (linear work), and none may recurse.
TEST(WrapperSpecs, DeeplyRepeatedPatternsAreSafe) {
  auto repeat = [](const std::string& unit, size_t bytes) {
    std::string s;
    s.reserve(bytes + unit.size());
    while (s.size() < bytes) s += unit;
    return s;
  };
  constexpr size_t kBytes = size_t{4} << 20;
  // Nesting far deeper than any stack could recurse, never closed.
  EXPECT_FALSE(parse_wrapper_specs("static void check_input_0(AtenTensorHandle* h) " + repeat("{", kBytes)).found);
  // Nesting that does close: one input, nothing recognised in it.
  WrapperSpecs nested =
      parse_wrapper_specs("static void check_input_0(AtenTensorHandle* h) " + repeat("{", kBytes / 2) +
                          repeat("}", kBytes / 2));
  EXPECT_TRUE(nested.found);
  // Function headers without bodies.
  EXPECT_FALSE(parse_wrapper_specs(repeat("static void check_input_0(", kBytes)).found);
  EXPECT_FALSE(parse_wrapper_specs(repeat("static void check_input_", kBytes)).found);
  // A body of nothing but conditions.
  std::string body = "static void check_input_0(AtenTensorHandle* h) {\nConstantHandle a = "
                     "ConstantHandle(input_handles[0]);\nauto a_size = a.sizes(); auto a_stride = a.strides();\n" +
                     repeat("if (3 != a_size[0]) {} if (a_size[1] < 2) {} if ( if (", kBytes) + "\n}\n";
  WrapperSpecs w = parse_wrapper_specs(body);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.inputs[0].shape, (std::vector<int64_t>{3, -1}));
  // Many names, consistent and not.
  EXPECT_TRUE(parse_wrapper_specs(repeat("inputs_info_[0].name = \"x\";", kBytes)).found);
  EXPECT_FALSE(parse_wrapper_specs(repeat("inputs_info_[0].name = \"x\";inputs_info_[0].name = \"y\";", kBytes)).found);
  // Unterminated strings and comments in a body.
  EXPECT_FALSE(parse_wrapper_specs("static void check_input_0(AtenTensorHandle* h) {" + repeat("\"", 1) +
                                   repeat("x", kBytes))
                   .found);
  EXPECT_FALSE(parse_wrapper_specs("static void check_input_0(AtenTensorHandle* h) {/*" + repeat("*", kBytes)).found);
  // Long runs of digits and spaces where sizes belong.
  EXPECT_FALSE(parse_wrapper_specs("static void check_input_" + repeat("9", kBytes) + "() {}").found);
  WrapperSpecs spaces = parse_wrapper_specs(
      check_function(0, "a", "float32", {"3 !=" + repeat(" ", kBytes) + "a_size[0]"}, {"1 != a_stride[0]"}));
  ASSERT_TRUE(spaces.found);
  EXPECT_EQ(spaces.inputs[0].shape, (std::vector<int64_t>{3}));
}

// ---- the package reader ----

std::string sample_shared_library() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&zip_open), &info) || !info.dli_fname) return "";
  return read_file(info.dli_fname);
}

constexpr const char* kDir = "pkg/data/aotinductor/model/";

class WrapperPackageTest : public PrivateTmpdirTest {
 protected:
  WrapperPackageTest() : PrivateTmpdirTest("aotirt-wrapper-test", true) {}
  void SetUp() override {
    PrivateTmpdirTest::SetUp();
    so_ = sample_shared_library();
    ASSERT_GT(so_.size(), 1000u);
  }
  std::string metadata(const std::string& extra = "") const {
    std::string j = "{\"AOTI_DEVICE_KEY\": \"cpu\", \"AOTI_PLATFORM\": \"linux\", \"AOTI_MACHINE\": \"" +
                    host_machine() + "\"";
    return j + (extra.empty() ? "" : ", " + extra) + "}";
  }
  Result<Pt2Package> open(const std::vector<ZipItem>& extra, const std::string& meta) {
    std::vector<ZipItem> items = {
        {std::string(kDir) + "cw.wrapper.so", so_, true},
        {std::string(kDir) + "cw.wrapper_metadata.json", meta, false},
    };
    items.insert(items.end(), extra.begin(), extra.end());
    const std::string path = root_ + "/p" + std::to_string(count_++) + ".pt2";
    EXPECT_TRUE(write_zip(path, items));
    return open_pt2_layout(path);
  }
  std::string so_;
  int count_ = 0;
};

TEST_F(WrapperPackageTest, PlainPackageLearnsFromItsWrapperSource) {
  Result<Pt2Package> r = open({{std::string(kDir) + "cw.wrapper.cpp", sample_wrapper(), false}}, metadata());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->info.spec_source, SpecSource::kWrapperSource);
  ASSERT_EQ(r->info.inputs.size(), 4u);
  EXPECT_EQ(r->info.inputs[0].dtype, DType::kBFloat16);
  EXPECT_EQ(r->info.outputs.size(), 1u);
}

TEST_F(WrapperPackageTest, AotirtMetadataWins) {
  const std::string meta =
      metadata("\"aotirt.inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2]}], "
               "\"aotirt.outputs\": []");
  Result<Pt2Package> r = open({{std::string(kDir) + "cw.wrapper.cpp", sample_wrapper(), false}}, meta);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->info.spec_source, SpecSource::kAotirtMetadata);
  ASSERT_EQ(r->info.inputs.size(), 1u);
  EXPECT_EQ(r->info.inputs[0].name, "x");
}

TEST_F(WrapperPackageTest, NoOrUnreadableWrapperLeavesSpecsUnknown) {
  Result<Pt2Package> none = open({}, metadata());
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_EQ(none->info.spec_source, SpecSource::kNone);
  EXPECT_NE(none->info.spec_note.find("no wrapper source"), std::string::npos) << none->info.spec_note;
  Result<Pt2Package> garbage = open({{std::string(kDir) + "cw.wrapper.cpp", "}}}{{{ garbage", true}}, metadata());
  ASSERT_TRUE(garbage.ok()) << garbage.status().to_string();
  EXPECT_EQ(garbage->info.spec_source, SpecSource::kNone);
  EXPECT_TRUE(garbage->info.inputs.empty());
  EXPECT_FALSE(garbage->info.spec_note.empty());
}

TEST_F(WrapperPackageTest, PicksTheLibrarysOwnSource) {
  const std::string other = check_function(0, "z", "int8", {}, {});
  Result<Pt2Package> r = open({{std::string(kDir) + "aa.wrapper.cpp", other, true},
                               {std::string(kDir) + "cw.wrapper.cpp", sample_wrapper(), true}},
                              metadata());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->info.inputs.size(), 4u);
  // Two sources, neither the library's: none is trusted.
  Result<Pt2Package> two = open({{std::string(kDir) + "aa.wrapper.cpp", other, true},
                                 {std::string(kDir) + "bb.wrapper.cpp", sample_wrapper(), true}},
                                metadata());
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  EXPECT_EQ(two->info.spec_source, SpecSource::kNone);
}

// Loading: the fake model library (one float32 input of any length) with a
// wrapper source that says so, and one that miscounts its inputs.
TEST_F(WrapperPackageTest, LoadedModelUsesTheSpecsAndDropsMiscountedOnes) {
  const std::string so = read_file(AOTIRT_FAKE_MODEL_PATH);
  ASSERT_GT(so.size(), 1000u) << AOTIRT_FAKE_MODEL_PATH;
  auto load = [&](const std::string& source) {
    const std::string path = root_ + "/fake" + std::to_string(count_++) + ".pt2";
    EXPECT_TRUE(write_zip(path, {{std::string(kDir) + "f.wrapper.so", so, true},
                                 {std::string(kDir) + "f.wrapper_metadata.json", metadata(), true},
                                 {std::string(kDir) + "f.wrapper.cpp", source, true}}));
    return Model::load(path);
  };
  const std::string one = "inputs_info_[0].name = \"x\";\n" +
                          check_function(0, "x", "float32", {"x_size[0] < 1"}, {"1 != x_stride[0]"});
  auto model = load(one);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->package().spec_source, SpecSource::kWrapperSource);
  ASSERT_EQ((*model)->inputs().size(), 1u);
  EXPECT_TRUE((*model)->inputs()[0].has_dtype);
  EXPECT_EQ((*model)->inputs()[0].shape, (std::vector<int64_t>{-1}));
  // A dtype the specs rule out is refused before the library runs.
  Result<Tensor> f64 = Tensor::empty({4}, DType::kFloat64);
  ASSERT_TRUE(f64.ok());
  auto refused = (*model)->run({*f64});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("expects float32"), std::string::npos) << refused.status().message();
  Result<Tensor> f32 = Tensor::empty({4}, DType::kFloat32);
  ASSERT_TRUE(f32.ok());
  EXPECT_TRUE((*model)->run({*f32}).ok());
  model->reset();

  // Two inputs checked, one taken: the hint is dropped, the load goes on.
  auto miscounted = load(one + "inputs_info_[1].name = \"y\";\n" +
                         check_function(1, "y", "int64", {"3 != y_size[0]"}, {"1 != y_stride[0]"}));
  ASSERT_TRUE(miscounted.ok()) << miscounted.status().to_string();
  EXPECT_EQ((*miscounted)->package().spec_source, SpecSource::kNone);
  EXPECT_NE((*miscounted)->package().spec_note.find("does not match"), std::string::npos);
  ASSERT_EQ((*miscounted)->inputs().size(), 1u);
  EXPECT_FALSE((*miscounted)->inputs()[0].has_dtype);
  EXPECT_EQ((*miscounted)->inputs()[0].name, "x");  // from the library
}

}  // namespace
}  // namespace aotirt
