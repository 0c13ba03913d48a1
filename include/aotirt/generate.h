// Token generation from a decoder language model exported with
// aotirt.export_llm: a prefill package (a whole prompt), a decode package
// (one token) and llm.json, in one directory. The KV cache is a set of
// inputs that both packages update in place; the Generator owns it on the
// model's device and passes the same tensors to each run, without copies.
// The two packages load as one ModelGroup, so their weights are held once.
//
//   auto gen = aotirt::Generator::load("llm/");
//   aotirt::GenerateOptions opts;
//   opts.max_new_tokens = 64;
//   auto tokens = (*gen)->generate({1, 415, 2936}, opts);
//
// Token ids in, token ids out: tokenizing text is the caller's (the CLI's
// `aotirt generate` uses SentencePiece).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "aotirt/model.h"
#include "aotirt/status.h"

namespace aotirt {

// What llm.json says about the exported model.
struct LlmConfig {
  std::string prefill_package, decode_package;  // paths
  int64_t vocab_size = 0;
  int64_t max_cache_len = 0;  // tokens the cache holds: prompt plus generated
  int64_t num_layers = 0;
  std::vector<int64_t> cache_shape;  // [1, kv_heads, max_cache_len, head_dim]
  DType cache_dtype = DType::kFloat32;
  std::vector<int64_t> stop_token_ids;
  int64_t bos_token_id = -1;       // -1: none
  std::string tokenizer;           // path, empty when the export carried none
  // The id aotirt.export_llm stamped on llm.json and both packages; each
  // package must carry it. Empty: not checked.
  std::string export_id;
};

// How the next token is chosen. temperature 0 is greedy (argmax, the
// lowest id on ties); otherwise the logits are divided by the temperature,
// cut to the top_k most likely (0: no cut) and then to the smallest set
// whose probability reaches top_p (1: no cut), and one token is drawn. The
// draws follow transformers' distributions, not its random bit stream.
struct SamplingOptions {
  float temperature = 0.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
};

struct GenerateOptions {
  int64_t max_new_tokens = 128;
  // Generation stops after a token in this list (it is returned). Empty:
  // llm.json's stop tokens.
  std::vector<int64_t> stop_token_ids;
  bool use_config_stop_tokens = true;  // false: only |stop_token_ids| stop
  SamplingOptions sampling;
  // Called with each new token as it is chosen; returning false stops
  // generation after it (Ctrl-C handling, a UI's cancel button).
  std::function<bool(int64_t token)> on_token;
  // Keep what the cache holds from the previous call (its prompt and all
  // but its last generated token) and run only the part of |prompt| past
  // their longest common prefix: a chat's next turn, given the whole
  // conversation, prefills only its new tokens. The prompt's last token
  // always runs (its logits choose the first new token). false: the cache
  // is zeroed and the whole prompt runs. A prefix prefilled apart from the
  // rest may round differently in the last bits from one prefill of it all.
  bool reuse_cache = false;
};

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prefill_seconds = 0;  // the prompt's run, to its logits
  double decode_seconds = 0;   // every later run
  double first_token_seconds = 0;  // from the call to the first token
  // "max_new_tokens", "stop_token", "cache_full" or "cancelled".
  std::string stop_reason;
  // Decode steps served by a CUDA graph replay (GeneratorOptions).
  int64_t graph_replays = 0;
  // Prompt tokens the cache already held (GenerateOptions::reuse_cache),
  // not run again.
  int64_t reused_tokens = 0;
};

struct GeneratorOptions {
  LoadOptions load;  // both packages: device, memory limit, runners
  // On a CUDA device, decode steps replay a CUDA graph: the first decode
  // step runs normally, the second records the step, and every later one,
  // in this call and the next, is one replay. The cache is recorded in place
  // (LoadOptions::graph_inputs_in_place), so it is never copied. The prefill
  // package never records graphs (each prompt length would need its own).
  // Ignored on devices without graphs.
  bool decode_cuda_graph = true;
};

class GeneratorState;

class AOTIRT_API Generator {
 public:
  // Loads llm.json and both packages of |dir|.
  static Result<std::unique_ptr<Generator>> load(const std::string& dir, const GeneratorOptions& options);
  // The same with |options| for both packages and the other GeneratorOptions
  // at their defaults.
  static Result<std::unique_ptr<Generator>> load(const std::string& dir, const LoadOptions& options = {});
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  const LlmConfig& config() const;
  DeviceId device() const;
  // Bytes of weights held for both packages (each shared weight once), and
  // what the two would hold loaded apart (ModelGroup).
  size_t weight_bytes() const;
  size_t unshared_weight_bytes() const;

  // Generates after |prompt| (token ids; not returned) until a stop token,
  // |options.max_new_tokens| or a full cache. Each call starts from an empty
  // cache (the Generator keeps one cache on the device for all its calls,
  // zeroed at each), unless |options.reuse_cache|. Not to be called from
  // two threads at once on one Generator.
  Result<std::vector<int64_t>> generate(const std::vector<int64_t>& prompt, const GenerateOptions& options = {},
                                        GenerateStats* stats = nullptr);

 private:
  explicit Generator(std::unique_ptr<GeneratorState> state);
  std::unique_ptr<GeneratorState> state_;
};

}  // namespace aotirt
