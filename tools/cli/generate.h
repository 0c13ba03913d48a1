// `aotirt generate`: text or token ids in, generated tokens streamed out,
// from a directory made by aotirt.export_llm; and `aotirt tokenize`.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {
namespace cli {

struct GenerateArgs {
  std::string dir;
  std::string prompt;
  std::vector<int64_t> prompt_ids;
  std::string tokenizer;  // default: the one llm.json names
  std::string device;
  int64_t max_new_tokens = 128;
  float temperature = 0.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
  std::vector<int64_t> stop;
  bool ignore_eos = false;
  bool print_ids = false;
  bool json = false;
  bool no_cuda_graph = false;
  int64_t warmup = 0;
  bool chat = false;  // lines of stdin as turns of a conversation
};

CLI::App* add_generate_command(CLI::App& app, GenerateArgs& args);

// `aotirt tokenize`: a tokenizer file's encoding of a text, or decoding of
// token ids, to see how a prompt tokenizes (and to test the tokenizers).
struct TokenizeArgs {
  std::string tokenizer;
  std::string text;
  std::vector<int64_t> ids;
  bool batch = false;
  bool json = false;
};

CLI::App* add_tokenize_command(CLI::App& app, TokenizeArgs& args);
Status cmd_tokenize(const TokenizeArgs& args);

// Runs the command. A Ctrl-C stops generation after the current token: the
// tokens so far and the figures are printed, and |*exit_code| becomes 130
// (with --chat, the reply ends and the conversation goes on).
Status cmd_generate(const GenerateArgs& args, int* exit_code);

}  // namespace cli
}  // namespace aotirt
