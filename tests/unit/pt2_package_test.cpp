// open_pt2_package over packages assembled here: the AOTI layout, model
// selection, metadata parsing (including aotirt.inputs/outputs), the host
// checks, and every malformed package the reader must refuse by name.
#include <gtest/gtest.h>
#include <zip.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "file_test_util.h"
#include "private_tmpdir_test_util.h"
#include "zip_test_util.h"
#include "package/cpu_features.h"
#include "package/pt2_package.h"

namespace aotirt {
namespace {

namespace fs = std::filesystem;

// A real shared library to stand in for the model's .so: libzip, which this
// binary already loads and which imports zlib's inflate.
std::string sample_shared_library() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&zip_open), &info) || !info.dli_fname) return "";
  return read_file(info.dli_fname);
}

constexpr const char* kDir = "pkg/data/aotinductor/model/";

std::string metadata_json(const std::string& extra = "") {
  std::string j = "{\"AOTI_DEVICE_KEY\": \"cpu\", \"AOTI_PLATFORM\": \"linux\", \"AOTI_MACHINE\": \"" +
                  host_machine() + "\", \"AOTI_CPU_ISA\": \"\"";
  if (!extra.empty()) j += ", " + extra;
  return j + "}";
}

class Pt2PackageTest : public PrivateTmpdirTest {
 protected:
  Pt2PackageTest() : PrivateTmpdirTest("aotirt-pt2-test", true) {}
  void SetUp() override {
    PrivateTmpdirTest::SetUp();
    so_ = sample_shared_library();
    ASSERT_GT(so_.size(), 1000u) << "could not find libzip to use as a model library";
  }

  // Writes a package and returns its path.
  std::string package(const std::string& name, const std::vector<ZipItem>& items) {
    std::string p = root_ + "/" + name;
    EXPECT_TRUE(write_zip(p, items));
    return p;
  }
  // The usual layout: library, metadata, weights blob, a kernel and sources.
  std::vector<ZipItem> full_package(const std::string& meta) const {
    return {
        {"pkg/version", "1\n", true},
        {std::string(kDir) + "cabc.kernel_metadata.json", "{\"AOTI_DEVICE_KEY\": \"kernel\"}", true},
        {std::string(kDir) + "cabc.kernel.cpp", "// kernels", false},
        {std::string(kDir) + "cw.wrapper.cpp", "// wrapper", false},
        {std::string(kDir) + "cw.wrapper.so", so_, true},
        {std::string(kDir) + "cw.wrapper_metadata.json", meta, false},
        {std::string(kDir) + "cw.wrapper_weights.blob", std::string(4096, 'w'), true},
        {std::string(kDir) + "k0.cubin", "cubin", true},
        {std::string(kDir) + "k1.fatbin", "fatbin", true},
    };
  }
  static void expect_error(const Result<Pt2Package>& r, StatusCode code, const std::string& needle) {
    ASSERT_FALSE(r.ok()) << "expected an error mentioning '" << needle << "'";
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  }

  std::string so_;
};

TEST_F(Pt2PackageTest, OpensAFullPackage) {
  std::string meta = metadata_json(
      "\"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\", \\\"dtype\\\": \\\"float32\\\", \\\"shape\\\": [2, 3]}]\", "
      "\"aotirt.outputs\": [{\"name\": \"y\", \"dtype\": \"bfloat16\"}], \"AOTI_COMPUTE_CAPABILITY\": \"90\", "
      "\"number\": 7");
  std::string path = package("model.pt2", full_package(meta));
  Result<Pt2Package> r = open_pt2_package(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Pt2Package& p = *r;
  EXPECT_EQ(p.info.path, path);
  EXPECT_EQ(p.info.model_name, "model");
  EXPECT_EQ(p.info.device_key, "cpu");
  EXPECT_EQ(p.info.cpu_isa, "");
  EXPECT_EQ(p.info.compute_capability, "90");
  EXPECT_EQ(p.info.library_entry, std::string(kDir) + "cw.wrapper.so");
  EXPECT_EQ(p.info.library_bytes, so_.size());
  EXPECT_EQ(p.library_bytes, so_);
  ASSERT_NE(p.weights, nullptr);
  EXPECT_EQ(p.weights->name, std::string(kDir) + "cw.wrapper_weights.blob");
  EXPECT_EQ(p.info.weight_bytes, 4096u);
  EXPECT_FALSE(p.info.weights_in_library);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.info.kernel_entries,
            (std::vector<std::string>{std::string(kDir) + "k0.cubin", std::string(kDir) + "k1.fatbin"}));
  // The wrapper's metadata is chosen, not the kernel's.
  bool saw_number = false;
  for (const auto& kv : p.metadata) {
    EXPECT_NE(kv.second, "kernel");
    if (kv.first == "number") {
      saw_number = true;
      EXPECT_EQ(kv.second, "7");
    }
  }
  EXPECT_TRUE(saw_number);
  ASSERT_EQ(p.info.inputs.size(), 1u);
  EXPECT_EQ(p.info.inputs[0].name, "x");
  EXPECT_TRUE(p.info.inputs[0].has_dtype);
  EXPECT_EQ(p.info.inputs[0].dtype, DType::kFloat32);
  EXPECT_TRUE(p.info.inputs[0].has_shape);
  EXPECT_EQ(p.info.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(p.info.outputs.size(), 1u);
  EXPECT_EQ(p.info.outputs[0].dtype, DType::kBFloat16);
  EXPECT_FALSE(p.info.outputs[0].has_shape);
  // libzip's imports come from its dynamic symbol table.
  EXPECT_NE(std::find(p.undefined_symbols.begin(), p.undefined_symbols.end(), "inflate"), p.undefined_symbols.end());
  EXPECT_TRUE(check_package_host(p).ok()) << check_package_host(p).to_string();
}

TEST_F(Pt2PackageTest, WeightsInsideTheLibrary) {
  std::string path = package("m.pt2", {{std::string(kDir) + "w.wrapper.so", so_, false},
                                       {std::string(kDir) + "w.wrapper_metadata.json", metadata_json(), true}});
  Result<Pt2Package> r = open_pt2_package(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->weights, nullptr);
  EXPECT_TRUE(r->info.weights_in_library);
  EXPECT_EQ(r->info.weight_bytes, 0u);
  EXPECT_TRUE(r->kernels.empty());
  EXPECT_TRUE(r->info.inputs.empty());
  EXPECT_EQ(r->library_bytes, so_);  // deflated library reads back whole
}

TEST_F(Pt2PackageTest, ChoosesAmongSeveralModels) {
  std::vector<ZipItem> items;
  for (const char* m : {"other", "model"}) {
    std::string dir = std::string("pkg/data/aotinductor/") + m + "/";
    items.push_back({dir + "a.wrapper.so", so_, true});
    items.push_back({dir + "a.wrapper_metadata.json", metadata_json(), true});
  }
  std::string path = package("two.pt2", items);
  Result<Pt2Package> def = open_pt2_package(path);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->info.model_name, "model");
  Result<Pt2Package> other = open_pt2_package(path, "other");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->info.model_name, "other");
  EXPECT_EQ(other->info.library_entry, "pkg/data/aotinductor/other/a.wrapper.so");
  Result<Pt2Package> none = open_pt2_package(path, "third");
  expect_error(none, StatusCode::kNotFound, "has no model named 'third' (it has: model, other)");
}

TEST_F(Pt2PackageTest, MissingFileIsNotFound) {
  expect_error(open_pt2_package(root_ + "/absent.pt2"), StatusCode::kNotFound, "absent.pt2");
}

TEST_F(Pt2PackageTest, DirectoryIsRefused) {
  fs::create_directory(root_ + "/dir.pt2");
  Result<Pt2Package> r = open_pt2_package(root_ + "/dir.pt2");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("directory"), std::string::npos) << r.status().message();
}

TEST_F(Pt2PackageTest, NonZipIsDataLoss) {
  std::ofstream(root_ + "/x.pt2") << "not a zip";
  expect_error(open_pt2_package(root_ + "/x.pt2"), StatusCode::kDataLoss, "not a zip archive");
}

TEST_F(Pt2PackageTest, TruncatedPackageIsDataLoss) {
  std::string path = package("full.pt2", full_package(metadata_json()));
  std::string raw = read_file(path);
  std::ofstream(root_ + "/cut.pt2", std::ios::binary) << raw.substr(0, raw.size() * 2 / 3);
  expect_error(open_pt2_package(root_ + "/cut.pt2"), StatusCode::kDataLoss, "truncated");
}

TEST_F(Pt2PackageTest, ZipWithoutAotiEntriesIsNotFound) {
  std::string path = package("plain.zip", {{"readme.txt", "hello", false}, {"data/other/model.so", so_, true}});
  expect_error(open_pt2_package(path), StatusCode::kNotFound, "AOTInductor");
  // An empty archive too.
  expect_error(open_pt2_package(package("empty.zip", {})), StatusCode::kNotFound, "AOTInductor");
}

TEST_F(Pt2PackageTest, MetadataButNoLibrary) {
  std::string path = package("nolib.pt2", {{std::string(kDir) + "w.wrapper_metadata.json", metadata_json(), true}});
  expect_error(open_pt2_package(path), StatusCode::kNotFound, "no compiled library (.so)");
}

TEST_F(Pt2PackageTest, SourcesOnlyPackageIsUnimplemented) {
  std::string path = package("src.pt2", {{std::string(kDir) + "w.wrapper.cpp", "// c++", false},
                                         {std::string(kDir) + "CMakeLists.txt", "project(x)", false},
                                         {std::string(kDir) + "w.wrapper_metadata.json", metadata_json(), true}});
  expect_error(open_pt2_package(path), StatusCode::kUnimplemented, "no compiled library");
}

TEST_F(Pt2PackageTest, LibraryButNoMetadata) {
  std::string path = package("nometa.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true}});
  expect_error(open_pt2_package(path), StatusCode::kNotFound, "_metadata.json");
}

TEST_F(Pt2PackageTest, TwoLibrariesInOneModel) {
  std::string path = package("two.pt2", {{std::string(kDir) + "a.wrapper.so", so_, true},
                                         {std::string(kDir) + "b.wrapper.so", so_, true},
                                         {std::string(kDir) + "a.wrapper_metadata.json", metadata_json(), true}});
  expect_error(open_pt2_package(path), StatusCode::kInvalidArgument, "more than one .so");
}

TEST_F(Pt2PackageTest, MetadataThatIsNotJson) {
  for (const char* bad : {"{not json", "[1, 2, 3]", "\"just a string\"", ""}) {
    std::string path = package("badmeta.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                               {std::string(kDir) + "w.wrapper_metadata.json", bad, true}});
    expect_error(open_pt2_package(path), StatusCode::kDataLoss, "is not a JSON object");
  }
}

TEST_F(Pt2PackageTest, MetadataWithoutDeviceKey) {
  std::string path = package("nokey.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                           {std::string(kDir) + "w.wrapper_metadata.json", "{\"a\": 1}", true}});
  expect_error(open_pt2_package(path), StatusCode::kDataLoss, "AOTI_DEVICE_KEY");
}

TEST_F(Pt2PackageTest, BadInputSpecsInMetadata) {
  const char* kBad[] = {
      "\"aotirt.inputs\": \"not json\"",
      "\"aotirt.inputs\": {\"name\": \"x\"}",
      "\"aotirt.inputs\": [1]",
      "\"aotirt.inputs\": [{\"name\": \"x\", \"dtype\": \"float33\"}]",
      "\"aotirt.inputs\": [{\"name\": \"x\", \"shape\": [1, \"a\"]}]",
      "\"aotirt.inputs\": [{\"name\": 5}]",
      "\"aotirt.outputs\": [{\"name\": \"y\", \"dtype\": 6}]",
  };
  for (const char* extra : kBad) {
    SCOPED_TRACE(extra);
    std::string path = package("specs.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                             {std::string(kDir) + "w.wrapper_metadata.json", metadata_json(extra), true}});
    Result<Pt2Package> r = open_pt2_package(path);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().message().find("aotirt.inputs") != std::string::npos ||
                r.status().message().find("aotirt.outputs") != std::string::npos)
        << r.status().message();
  }
}

TEST_F(Pt2PackageTest, LibraryThatIsNotElf) {
  std::string path = package("notelf.pt2", {{std::string(kDir) + "w.wrapper.so", "#!/bin/sh\necho hi\n", true},
                                            {std::string(kDir) + "w.wrapper_metadata.json", metadata_json(), true}});
  expect_error(open_pt2_package(path), StatusCode::kDataLoss, "not an ELF file");
}

TEST_F(Pt2PackageTest, CorruptLibraryFailsItsCrc) {
  std::string path = package("crc.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                         {std::string(kDir) + "w.wrapper_metadata.json", metadata_json(), true}});
  std::string raw = read_file(path);
  size_t at = raw.find(so_.substr(0, 64));
  ASSERT_NE(at, std::string::npos);
  raw[at + so_.size() / 2] ^= 0x40;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << raw;
  expect_error(open_pt2_package(path), StatusCode::kDataLoss, "CRC");
}

TEST_F(Pt2PackageTest, HostChecks) {
  const std::string other_machine = host_machine() == "aarch64" ? "x86_64" : "aarch64";
  const struct { std::string extra; std::string needle; } kCases[] = {
      {"\"AOTI_PLATFORM\": \"darwin\"", "built for darwin, not linux"},
      {"\"AOTI_MACHINE\": \"" + other_machine + "\"", "built for " + other_machine + " CPUs"},
      {"\"AOTI_CPU_ISA\": \"NEON\"", "NEON"},
      {"\"AOTI_CPU_ISA\": \"VSX\"", "VSX"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.extra);
    std::string meta = "{\"AOTI_DEVICE_KEY\": \"cpu\", " + c.extra + "}";
    std::string path = package("host.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                            {std::string(kDir) + "w.wrapper_metadata.json", meta, true}});
    Result<Pt2Package> r = open_pt2_package(path);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    Status s = check_package_host(*r);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kIncompatible);
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  }
}

// A document nested |levels| deep: [[[...]]].
std::string nested_list(size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }
// {"a": {"a": ... left open.
std::string nested_objects(size_t levels) {
  std::string s;
  for (size_t i = 0; i < levels; ++i) s += "{\"a\": ";
  return s;
}

TEST_F(Pt2PackageTest, DeeplyNestedMetadataIsRefusedWithoutRecursion) {
  // 100,000 levels overflowed the stack when the value was serialised back
  // to text; now the parser stops at the cap, whichever key holds it.
  const std::string deep = nested_list(100000);
  const std::string cases[] = {
      metadata_json("\"unused\": " + deep),
      // Inside a field of a spec that aotirt does not read, so only the
      // depth can refuse it: as a list, and as the exporter writes specs
      // (JSON inside a string).
      metadata_json("\"aotirt.inputs\": [{\"name\": \"x\", \"extra\": " + deep + "}]"),
      metadata_json("\"aotirt.inputs\": \"[{\\\"extra\\\": " + deep + "}]\""),
      "{\"AOTI_DEVICE_KEY\": \"cpu\", \"x\": " + nested_objects(100000),  // unterminated, and deep
  };
  for (const std::string& meta : cases) {
    SCOPED_TRACE(meta.substr(0, 80));
    std::string path = package("deep.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                            {std::string(kDir) + "w.wrapper_metadata.json", meta, false}});
    expect_error(open_pt2_package(path), StatusCode::kDataLoss, "nests deeper than the 32 levels");
  }
}

TEST_F(Pt2PackageTest, NestingUpToTheCapIsAcceptedAndUnusedValuesAreNotKept) {
  const std::string meta = metadata_json("\"unused\": " + nested_list(kMaxMetadataDepth - 1) +
                                         ", \"obj\": {\"a\": [1, 2]}, \"flag\": true, \"none\": null, "
                                         "\"big\": 18446744073709551615, \"real\": 1.5e3");
  std::string path = package("ok.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                        {std::string(kDir) + "w.wrapper_metadata.json", meta, true}});
  Result<Pt2Package> r = open_pt2_package(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::map<std::string, std::string> kept(r->metadata.begin(), r->metadata.end());
  EXPECT_EQ(kept.count("unused"), 0u);  // lists and objects the runtime never reads are skipped
  EXPECT_EQ(kept.count("obj"), 0u);
  EXPECT_EQ(kept["flag"], "true");
  EXPECT_EQ(kept["none"], "null");
  EXPECT_EQ(kept["big"], "18446744073709551615");
  EXPECT_EQ(kept["real"], "1.5e3");  // a number keeps its JSON text
  EXPECT_EQ(kept["AOTI_DEVICE_KEY"], "cpu");
  // One level more is refused.
  path = package("deep.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                              {std::string(kDir) + "w.wrapper_metadata.json",
                               metadata_json("\"unused\": " + nested_list(kMaxMetadataDepth)), true}});
  expect_error(open_pt2_package(path), StatusCode::kDataLoss, "nests deeper");
}

TEST_F(Pt2PackageTest, OversizedMetadataIsRefusedBeforeItIsRead) {
  // Deflated, 5 MiB of padding is a few KB in the archive: the declared size
  // is what counts, as for a zip bomb.
  const std::string meta = metadata_json("\"pad\": \"" + std::string(5 << 20, ' ') + "\"");
  std::string path = package("bomb.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                          {std::string(kDir) + "w.wrapper_metadata.json", meta, false}});
  expect_error(open_pt2_package(path), StatusCode::kDataLoss, "more than the 4 MiB aotirt accepts");
  expect_error(open_pt2_layout(path), StatusCode::kDataLoss, "w.wrapper_metadata.json");
}

TEST_F(Pt2PackageTest, LayoutFirstThenTheLibrary) {
  std::string path = package("model.pt2", full_package(metadata_json()));
  Result<Pt2Package> r = open_pt2_layout(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->info.device_key, "cpu");
  EXPECT_TRUE(r->library_bytes.empty());
  EXPECT_TRUE(r->undefined_symbols.empty());
  ASSERT_TRUE(read_pt2_library(*r).ok());
  EXPECT_EQ(r->library_bytes, so_);
  EXPECT_FALSE(r->undefined_symbols.empty());
}

TEST_F(Pt2PackageTest, KernelFilesAreForCudaOnly) {
  std::vector<ZipItem> items = full_package(metadata_json());
  items.push_back({std::string(kDir) + "k2.hsaco", "hsaco", true});
  Result<Pt2Package> r = open_pt2_package(package("model.pt2", items));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->info.kernel_entries.size(), 3u);  // inspect lists them all
  EXPECT_TRUE(kernels_for_device(*r, DeviceType::kCpu).empty());
  EXPECT_TRUE(kernels_for_device(*r, DeviceType::kMps).empty());
  std::vector<const ZipEntry*> cuda = kernels_for_device(*r, DeviceType::kCuda);
  ASSERT_EQ(cuda.size(), 2u);
  EXPECT_EQ(cuda[0]->name, std::string(kDir) + "k0.cubin");
  EXPECT_EQ(cuda[1]->name, std::string(kDir) + "k1.fatbin");
}

TEST(ParseTensorSpecsTest, ShapesOutOfRangeAreRefused) {
  // 2^63 used to wrap to -2^63 (and 2^64-1 to -1, "dynamic").
  const char* kBad[] = {
      R"([{"shape": [9223372036854775808]}])",   // 2^63
      R"([{"shape": [18446744073709551615]}])",  // 2^64-1
      R"([{"shape": [18446744073709551616]}])",  // 2^64: a float to nlohmann
      R"([{"shape": [4, -2]}])",
      R"([{"shape": [-9223372036854775808]}])",
      R"([{"shape": [1e30]}])",
      R"([{"shape": [4294967296, 4294967296]}])",  // 2^64 elements
  };
  for (const char* text : kBad) {
    Result<std::vector<TensorSpec>> r = parse_tensor_specs(text, "aotirt.inputs");
    ASSERT_FALSE(r.ok()) << "accepted " << text;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find("aotirt.inputs"), std::string::npos) << r.status().message();
  }
  Result<std::vector<TensorSpec>> big = parse_tensor_specs(R"([{"shape": [9223372036854775807]}])", "aotirt.inputs");
  ASSERT_TRUE(big.ok()) << big.status().to_string();
  EXPECT_EQ((*big)[0].shape[0], INT64_MAX);
  Result<std::vector<TensorSpec>> dyn = parse_tensor_specs(R"([{"shape": [-1, 0, 3, -1]}])", "aotirt.inputs");
  ASSERT_TRUE(dyn.ok()) << dyn.status().to_string();
  EXPECT_EQ((*dyn)[0].shape, (std::vector<int64_t>{-1, 0, 3, -1}));
  Result<std::vector<TensorSpec>> msg = parse_tensor_specs(R"([{"name": "x", "shape": [9223372036854775808]}])",
                                                           "aotirt.inputs");
  ASSERT_FALSE(msg.ok());
  EXPECT_NE(msg.status().message().find("9223372036854775808, more than 2^63-1"), std::string::npos)
      << msg.status().message();
}

TEST_F(Pt2PackageTest, ShapeOf2To63InThePackageIsRefused) {
  std::string meta = metadata_json(
      "\"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\", \\\"shape\\\": [9223372036854775808, 4]}]\"");
  std::string path = package("huge.pt2", {{std::string(kDir) + "w.wrapper.so", so_, true},
                                          {std::string(kDir) + "w.wrapper_metadata.json", meta, true}});
  expect_error(open_pt2_package(path), StatusCode::kDataLoss, "more than 2^63-1");
}

TEST(ParseTensorSpecsTest, GoodSpecs) {
  Result<std::vector<TensorSpec>> none = parse_tensor_specs("", "aotirt.inputs");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Result<std::vector<TensorSpec>> r = parse_tensor_specs(
      R"([{"name": "a", "dtype": "torch.int64", "shape": [4]}, {"name": "b"}, {"dtype": "half", "shape": []}])",
      "aotirt.inputs");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].dtype, DType::kInt64);
  EXPECT_EQ((*r)[0].shape, (std::vector<int64_t>{4}));
  EXPECT_FALSE((*r)[1].has_dtype);
  EXPECT_FALSE((*r)[1].has_shape);
  EXPECT_EQ((*r)[2].name, "");
  EXPECT_EQ((*r)[2].dtype, DType::kFloat16);
  EXPECT_TRUE((*r)[2].has_shape);
  EXPECT_TRUE((*r)[2].shape.empty());
}

TEST(ParseTensorSpecsTest, BadSpecsAreErrorsNamingTheKey) {
  const char* kBad[] = {
      "{", "{}", "3", "[1]", "[[]]", R"([{"dtype": "float33"}])", R"([{"shape": [1.5]}])",
      R"([{"shape": ["x"]}])", R"([{"name": 5}])", R"([{"name": null}])", R"([{"dtype": 6}])",
      R"([{"shape": 3}])", R"([{"shape": {"a": 1}}])",
  };
  for (const char* text : kBad) {
    Result<std::vector<TensorSpec>> r = parse_tensor_specs(text, "aotirt.outputs");
    ASSERT_FALSE(r.ok()) << "accepted " << text;
    EXPECT_NE(r.status().message().find("aotirt.outputs"), std::string::npos) << text << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace aotirt
