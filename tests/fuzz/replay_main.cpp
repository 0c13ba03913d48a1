// A stand-in for libFuzzer's main, for builds without libFuzzer (the GCC
// ASan+UBSan build): runs the fuzz target once on every file named on the
// command line, or found in a directory named there, and reports how many
// it ran. "--optional=DIR" names a directory that may be missing. Used by the fuzz_regressions_* tests, which replay the committed
// regression corpus (tests/fuzz/regressions/<target>/) and the seeds; a
// finding aborts the process under the sanitizers, so the test fails.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    std::string arg = argv[i];
    const bool optional = arg.rfind("--optional=", 0) == 0;
    if (optional) arg = arg.substr(11);
    fs::path p(arg);
    if (optional && !fs::exists(p, ec)) {
      std::fprintf(stderr, "replay: %s is absent (optional)\n", arg.c_str());
    } else if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", arg.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu input(s) ran without a finding\n", files.size());
  return 0;
}
