#include "aotirt/generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "aotirt/model_group.h"
#include "base/status.h"
#include "core/tensor.h"
#include "device/device.h"
#include "llm/sampler.h"

namespace aotirt {

class GeneratorState {
 public:
  LlmConfig config;
  // Both packages, each weight held once; prefill and decode point into it.
  std::unique_ptr<ModelGroup> group;
  Model* prefill = nullptr;
  Model* decode = nullptr;
  DeviceId device;
  // The KV cache, a key and a value tensor per layer, made at the first
  // generate call and kept: a decode graph records these very tensors.
  std::vector<Tensor> caches;
  // The tokens whose keys and values the cache holds at positions 0, 1, ...
  // (GenerateOptions::reuse_cache).
  std::vector<int64_t> cached;
  // Greedy decoding on a device runs a step ahead (generate): the decode
  // step's token id and position reach it by copies on the device into
  // these buffers, whose fixed addresses its graph reads in place, from the
  // step before's greedy token and from |positions| (0, 1, ... of the cache).
  Tensor step_ids, step_position, positions;
};

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kFormatVersion = 1;
// The package metadata key aotirt.export_llm stamps with its export's id.
constexpr const char* kExportIdKey = "aotirt.llm_export_id";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Result<int64_t> int_field(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  AOTIRT_ENSURE(it != j.end(), kInvalidArgument, "{}: no \"{}\"", where, key);
  AOTIRT_ENSURE(it->is_number_integer(), kInvalidArgument, "{}: \"{}\" must be an integer", where, key);
  return it->get<int64_t>();
}

Result<std::string> string_field(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  AOTIRT_ENSURE(it != j.end(), kInvalidArgument, "{}: no \"{}\"", where, key);
  AOTIRT_ENSURE(it->is_string(), kInvalidArgument, "{}: \"{}\" must be a string", where, key);
  return it->get<std::string>();
}

Result<std::vector<int64_t>> int_list(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  AOTIRT_ENSURE(it != j.end(), kInvalidArgument, "{}: no \"{}\"", where, key);
  AOTIRT_ENSURE(it->is_array(), kInvalidArgument, "{}: \"{}\" must be a list of integers", where, key);
  std::vector<int64_t> out;
  for (const json& v : *it) {
    AOTIRT_ENSURE(v.is_number_integer(), kInvalidArgument, "{}: \"{}\" must be a list of integers", where, key);
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// A file name from llm.json, kept inside |dir|.
Result<std::string> member_path(const std::string& dir, const std::string& name, const std::string& where) {
  AOTIRT_ENSURE(!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..",
                kInvalidArgument, "{}: \"{}\" is not a file name in the model directory", where, name);
  return dir + "/" + name;
}

Result<LlmConfig> read_config(const std::string& dir) {
  const std::string where = dir + "/llm.json";
  std::ifstream in(where, std::ios::binary);
  AOTIRT_ENSURE(in.good(), kNotFound,
                "{}: cannot open: not a directory made by aotirt.export_llm (it holds llm.json, prefill.pt2 and "
                "decode.pt2)",
                where);
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  AOTIRT_ENSURE(!j.is_discarded() && j.is_object(), kInvalidArgument, "{}: not a JSON object", where);

  LlmConfig c;
  int64_t version = 0;
  AOTIRT_ASSIGN_OR_RETURN(version, int_field(j, "format_version", where));
  AOTIRT_ENSURE(version == kFormatVersion, kIncompatible,
                "{}: format_version {} is not the {} this aotirt reads; export the model again", where, version,
                kFormatVersion);
  std::string name;
  AOTIRT_ASSIGN_OR_RETURN(name, string_field(j, "prefill", where));
  AOTIRT_ASSIGN_OR_RETURN(c.prefill_package, member_path(dir, name, where));
  AOTIRT_ASSIGN_OR_RETURN(name, string_field(j, "decode", where));
  AOTIRT_ASSIGN_OR_RETURN(c.decode_package, member_path(dir, name, where));
  AOTIRT_ASSIGN_OR_RETURN(c.vocab_size, int_field(j, "vocab_size", where));
  AOTIRT_ASSIGN_OR_RETURN(c.max_cache_len, int_field(j, "max_cache_len", where));
  AOTIRT_ASSIGN_OR_RETURN(c.num_layers, int_field(j, "num_layers", where));
  AOTIRT_ASSIGN_OR_RETURN(c.cache_shape, int_list(j, "cache_shape", where));
  AOTIRT_ASSIGN_OR_RETURN(c.stop_token_ids, int_list(j, "stop_token_ids", where));
  std::string dtype;
  AOTIRT_ASSIGN_OR_RETURN(dtype, string_field(j, "cache_dtype", where));
  Result<DType> parsed = dtype_from_name(dtype);
  AOTIRT_ENSURE(parsed.ok() && dtype_is_floating(parsed.value()), kInvalidArgument,
                "{}: cache_dtype \"{}\" is not a floating-point dtype", where, dtype);
  c.cache_dtype = parsed.value();
  auto id = j.find("export_id");
  if (id != j.end()) {
    AOTIRT_ENSURE(id->is_string(), kInvalidArgument, "{}: \"export_id\" must be a string", where);
    c.export_id = id->get<std::string>();
  }
  auto bos = j.find("bos_token_id");
  if (bos != j.end() && bos->is_number_integer()) c.bos_token_id = bos->get<int64_t>();
  auto tok = j.find("tokenizer");
  if (tok != j.end()) {
    AOTIRT_ENSURE(tok->is_string(), kInvalidArgument, "{}: \"tokenizer\" must be a string", where);
    AOTIRT_ASSIGN_OR_RETURN(c.tokenizer, member_path(dir, tok->get<std::string>(), where));
  }

  AOTIRT_ENSURE(c.vocab_size > 0, kInvalidArgument, "{}: vocab_size must be positive, not {}", where, c.vocab_size);
  AOTIRT_ENSURE(c.num_layers > 0 && c.num_layers <= 4096, kInvalidArgument, "{}: num_layers {} is out of range",
                where, c.num_layers);
  AOTIRT_ENSURE(c.cache_shape.size() == 4 && c.cache_shape[0] == 1, kInvalidArgument,
                "{}: cache_shape must be [1, kv_heads, max_cache_len, head_dim]", where);
  for (int64_t d : c.cache_shape)
    AOTIRT_ENSURE(d > 0 && d <= (int64_t{1} << 24), kInvalidArgument, "{}: cache_shape has a size {} out of range",
                  where, d);
  AOTIRT_ENSURE(c.cache_shape[2] == c.max_cache_len && c.max_cache_len >= 2, kInvalidArgument,
                "{}: max_cache_len {} does not match cache_shape's third size {}", where, c.max_cache_len,
                c.cache_shape[2]);
  for (int64_t t : c.stop_token_ids)
    AOTIRT_ENSURE(t >= 0 && t < c.vocab_size, kInvalidArgument, "{}: stop token {} is outside the vocabulary of {}",
                  where, t, c.vocab_size);
  return c;
}

// Both packages must take the token ids, their positions and exactly the
// caches llm.json describes; a pair exported from different models (or
// configurations) fails here instead of computing nonsense.
Status check_package(const Model& model, const LlmConfig& c, const char* role) {
  if (!c.export_id.empty()) {
    std::string stamped;
    for (const auto& kv : model.package().metadata)
      if (kv.first == kExportIdKey) stamped = kv.second;
    AOTIRT_ENSURE(stamped == c.export_id, kIncompatible,
                  "the {} package was not made by the export that wrote llm.json (export id \"{}\", llm.json says "
                  "\"{}\"): the packages and llm.json are not from one export",
                  role, stamped.empty() ? "none" : stamped, c.export_id);
  }
  const size_t want = 2 + 2 * static_cast<size_t>(c.num_layers);
  AOTIRT_ENSURE(model.num_inputs() == want, kIncompatible,
                "the {} package takes {} inputs, but llm.json's {} layers need {} (token ids, positions and a key "
                "and a value cache per layer): the packages and llm.json are not from one export",
                role, model.num_inputs(), c.num_layers, want);
  // The logits, and (exports since the greedy token was added) their argmax.
  AOTIRT_ENSURE(model.num_outputs() == 1 || model.num_outputs() == 2, kIncompatible,
                "the {} package returns {} outputs, not the logits (and greedy token) of aotirt.export_llm", role,
                model.num_outputs());
  if (model.num_outputs() == 2 && model.outputs().size() == 2) {
    const TensorSpec& t = model.outputs()[1];
    AOTIRT_ENSURE(!t.has_dtype || t.dtype == DType::kInt64, kIncompatible,
                  "the {} package's second output is {}, not the int64 greedy token of aotirt.export_llm", role,
                  dtype_name(t.dtype));
  }
  const std::vector<TensorSpec>& specs = model.inputs();
  for (size_t i = 2; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    if (s.has_dtype)
      AOTIRT_ENSURE(s.dtype == c.cache_dtype, kIncompatible,
                    "the {} package's cache input {} is {}, but llm.json says {}: the packages and llm.json are not "
                    "from one export",
                    role, i, dtype_name(s.dtype), dtype_name(c.cache_dtype));
    if (s.has_shape)
      AOTIRT_ENSURE(s.shape == c.cache_shape, kIncompatible,
                    "the {} package's cache input {} has another shape than llm.json's cache_shape: the packages "
                    "and llm.json are not from one export",
                    role, i);
  }
  return Status();
}

// A view of |t|'s storage: |sizes| (contiguous) from element |offset| on.
Tensor view_of(const Tensor& t, DimVector sizes, int64_t offset) {
  const TensorImpl& impl = *t.impl();
  DimVector strides = contiguous_strides(sizes);
  return Tensor(std::make_shared<TensorImpl>(impl.storage(), impl.dtype(), std::move(sizes), std::move(strides),
                                             impl.storage_offset() + offset));
}

Result<Tensor> host_ids(const std::vector<int64_t>& ids, std::vector<int64_t> sizes) {
  AOTIRT_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(std::move(sizes), DType::kInt64));
  std::copy(ids.begin(), ids.end(), static_cast<int64_t*>(t.data()));
  return t;
}

}  // namespace

Generator::Generator(std::unique_ptr<GeneratorState> state) : state_(std::move(state)) {}
Generator::~Generator() = default;

const LlmConfig& Generator::config() const { return state_->config; }
DeviceId Generator::device() const { return state_->device; }
size_t Generator::weight_bytes() const { return state_->group->weight_bytes(); }
size_t Generator::unshared_weight_bytes() const { return state_->group->unshared_weight_bytes(); }

Result<std::unique_ptr<Generator>> Generator::load(const std::string& dir, const LoadOptions& options) {
  GeneratorOptions g;
  g.load = options;
  return load(dir, g);
}

Result<std::unique_ptr<Generator>> Generator::load(const std::string& dir, const GeneratorOptions& options) {
  try {
    auto state = std::make_unique<GeneratorState>();
    AOTIRT_ASSIGN_OR_RETURN(state->config, read_config(dir));
    const LlmConfig& c = state->config;
    // Graphs for decode only, and only where the package's device has them.
    LoadOptions prefill_options = options.load, decode_options = options.load;
    prefill_options.cuda_graph = false;
    decode_options.cuda_graph = false;
    if (options.decode_cuda_graph || options.load.cuda_graph) {
      Result<PackageInfo> info = inspect_package(c.decode_package);
      if (info.ok() && info.value().device_key == "cuda") {
        decode_options.cuda_graph = true;
        decode_options.graph_inputs_in_place = true;
      }
    }
    // One group: the decode package borrows the prefill package's weights.
    size_t failed = 0;
    Result<std::unique_ptr<ModelGroup>> group =
        ModelGroup::load({c.prefill_package, c.decode_package}, {prefill_options, decode_options}, &failed);
    if (!group.ok())
      return Status(group.status().code(),
                    std::string(failed == 0 ? "the prefill package: " : "the decode package: ") +
                        group.status().message());
    state->group = std::move(group).value();
    state->prefill = &state->group->model(0);
    state->decode = &state->group->model(1);
    AOTIRT_RETURN_IF_ERROR(check_package(*state->prefill, c, "prefill"));
    AOTIRT_RETURN_IF_ERROR(check_package(*state->decode, c, "decode"));
    AOTIRT_ENSURE(state->prefill->device() == state->decode->device(), kIncompatible,
                  "the prefill package runs on {} and the decode package on {}",
                  state->prefill->device().to_string(), state->decode->device().to_string());
    const PackageInfo& a = state->prefill->package();
    const PackageInfo& b = state->decode->package();
    // The decode package borrows the prefill's weights; it may carry fewer
    // bytes (a fused op that takes a group size as a number, where the
    // prefill's op takes it as a tensor), never more.
    AOTIRT_ENSURE(b.weight_bytes <= a.weight_bytes, kIncompatible,
                  "the decode package carries {} bytes of weights, more than the prefill package's {}: it needs "
                  "weights the prefill lacks, so they are not one model's pair",
                  b.weight_bytes, a.weight_bytes);
    state->device = state->prefill->device();
    return std::unique_ptr<Generator>(new Generator(std::move(state)));
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "out of memory loading {}", dir);
  } catch (const std::exception& e) {
    return AOTIRT_STATUS(kInternal, "loading {}: {}", dir, e.what());
  }
}

Result<std::vector<int64_t>> Generator::generate(const std::vector<int64_t>& prompt, const GenerateOptions& options,
                                                 GenerateStats* stats) {
  try {
    const Clock::time_point start = Clock::now();
    const LlmConfig& c = state_->config;
    const int64_t n = static_cast<int64_t>(prompt.size());
    AOTIRT_ENSURE(n > 0, kInvalidArgument, "the prompt is empty: give at least one token");
    AOTIRT_ENSURE(n < c.max_cache_len, kInvalidArgument,
                  "the prompt has {} tokens, but the cache holds {} (prompt and generated): export with a larger "
                  "max_cache_len or shorten the prompt",
                  n, c.max_cache_len);
    for (int64_t i = 0; i < n; ++i)
      AOTIRT_ENSURE(prompt[i] >= 0 && prompt[i] < c.vocab_size, kInvalidArgument,
                    "prompt token {} is {}, outside the vocabulary of {} tokens", i, prompt[i], c.vocab_size);
    AOTIRT_ENSURE(options.max_new_tokens >= 0, kInvalidArgument, "max_new_tokens must not be negative, not {}",
                  options.max_new_tokens);
    const SamplingOptions& s = options.sampling;
    AOTIRT_ENSURE(s.temperature >= 0 && std::isfinite(s.temperature), kInvalidArgument,
                  "temperature must be 0 (greedy) or positive, not {}", s.temperature);
    AOTIRT_ENSURE(s.top_k >= 0, kInvalidArgument, "top_k must not be negative, not {}", s.top_k);
    AOTIRT_ENSURE(s.top_p > 0 && s.top_p <= 1, kInvalidArgument, "top_p must be in (0, 1], not {}", s.top_p);
    std::vector<int64_t> stops = options.stop_token_ids;
    if (options.use_config_stop_tokens) stops.insert(stops.end(), c.stop_token_ids.begin(), c.stop_token_ids.end());

    // The cache, made once on the model's device (whole or not at all).
    std::vector<Tensor>& caches = state_->caches;
    const bool fresh = caches.empty();
    if (fresh) {
      std::vector<Tensor> made;
      for (int64_t i = 0; i < 2 * c.num_layers; ++i) {
        AOTIRT_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(c.cache_shape, c.cache_dtype, state_->device));
        made.push_back(std::move(t));
      }
      caches = std::move(made);
    }
    // With reuse_cache, the longest common prefix of the prompt and what the
    // cache holds is kept, but not the prompt's last token. Entries past it
    // need no zeroing, only to be finite (a masked score times a NaN value
    // would still be NaN): every query's mask hides the positions after its
    // own. Otherwise, and for a cache just made, the cache is zeroed.
    std::vector<int64_t>& cached = state_->cached;
    int64_t reused = 0;
    if (options.reuse_cache && !fresh) {
      const int64_t limit = std::min<int64_t>(n - 1, static_cast<int64_t>(cached.size()));
      while (reused < limit && cached[reused] == prompt[reused]) ++reused;
    } else {
      cached.clear();
      AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(state_->device));
      for (const Tensor& t : caches) {
        Status zeroed = dev->zero(*t.impl());
        if (!zeroed.ok()) {
          caches.clear();
          return zeroed;
        }
      }
    }
    cached.resize(reused);
    const size_t replays_before = state_->decode->graph_stats().replays;

    // Outputs stay where the model leaves them: greedy generation with a
    // greedy-token output reads back that one id, and otherwise the logits
    // come to a host buffer kept for the call.
    RunOptions run_options;
    const bool device_model = !state_->device.is_cpu();
    Tensor host_logits;
    llm::Sampler sampler(s);
    GenerateStats st;
    st.prompt_tokens = n;
    st.reused_tokens = reused;
    std::vector<int64_t> generated;

    // Greedy decoding on a device with the greedy-token output: each decode
    // step is queued before the token of the one ahead is read back, so
    // that the device does not wait for the host between decode steps.
    const bool ahead = device_model && s.temperature <= 0.0f && state_->prefill->num_outputs() == 2 &&
                       state_->decode->num_outputs() == 2;
    Tensor greedy;  // the last step's greedy token, on the device (|ahead|)

    // Runs |ids| at positions [pos, pos + ids.size()) and chooses the next token.
    auto step = [&](const std::vector<int64_t>& ids, int64_t pos, Model& model) -> Result<int64_t> {
      const int64_t len = static_cast<int64_t>(ids.size());
      std::vector<int64_t> positions(ids.size());
      for (int64_t i = 0; i < len; ++i) positions[i] = pos + i;
      std::vector<Tensor> inputs;
      inputs.reserve(2 + caches.size());
      AOTIRT_ASSIGN_OR_RETURN(Tensor id_tensor, host_ids(ids, {1, len}));
      AOTIRT_ASSIGN_OR_RETURN(Tensor pos_tensor, host_ids(positions, {len}));
      inputs.push_back(std::move(id_tensor));
      inputs.push_back(std::move(pos_tensor));
      inputs.insert(inputs.end(), caches.begin(), caches.end());
      // The run writes positions [pos, pos + len) alone: if it fails, what
      // the cache holds before |pos| still stands.
      cached.resize(static_cast<size_t>(pos));
      AOTIRT_ASSIGN_OR_RETURN(std::vector<Tensor> outs, model.run(inputs, run_options));
      cached.insert(cached.end(), ids.begin(), ids.end());
      AOTIRT_ENSURE(!outs.empty() && outs[0].dtype() == DType::kFloat32 && outs[0].numel() == c.vocab_size,
                    kIncompatible, "the model returned no float32 logits row of {} values: not an aotirt.export_llm "
                    "package pair", c.vocab_size);
      if (s.temperature <= 0.0f && outs.size() == 2) {
        AOTIRT_ENSURE(outs[1].dtype() == DType::kInt64 && outs[1].numel() == 1, kIncompatible,
                      "the model's greedy token is not one int64: not an aotirt.export_llm package pair");
        greedy = outs[1];
        AOTIRT_ASSIGN_OR_RETURN(Tensor id, outs[1].to(DeviceId{}));
        const int64_t token = *static_cast<const int64_t*>(id.data());
        AOTIRT_ENSURE(token >= 0 && token < c.vocab_size, kInternal,
                      "the model's greedy token {} is outside the vocabulary of {}", token, c.vocab_size);
        return token;
      }
      const Tensor* logits = &outs[0];
      if (device_model) {
        if (!host_logits.defined()) {
          AOTIRT_ASSIGN_OR_RETURN(host_logits, Tensor::empty(outs[0].sizes(), DType::kFloat32));
        }
        AOTIRT_RETURN_IF_ERROR(copy_tensor(*host_logits.impl(), *outs[0].impl(), false));
        logits = &host_logits;
      }
      return sampler.next(static_cast<const float*>(logits->data()), c.vocab_size);
    };

    // The decode loop a step ahead (|ahead|): the step that reads a token is
    // queued before that token is read back, from the device copy of it in
    // |greedy|. Its checks are the plain loop's below, in the same order;
    // a step goes ahead only where its token cannot end generation by count
    // or by the cache's length, so only a stop token or the callback leaves
    // one step queued for nothing (its keys and values land past what
    // |cached| holds).
    auto decode_ahead = [&](int64_t first) -> Status {
      GeneratorState& g = *state_;
      AOTIRT_ENSURE(greedy.defined(), kIncompatible,
                    "the first step returned no greedy token: not an aotirt.export_llm package pair");
      AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(g.device));
      if (!g.positions.defined()) {
        std::vector<int64_t> all(static_cast<size_t>(c.max_cache_len));
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
        AOTIRT_ASSIGN_OR_RETURN(Tensor host, host_ids(all, {c.max_cache_len}));
        AOTIRT_ASSIGN_OR_RETURN(Tensor positions, host.to(g.device));
        AOTIRT_ASSIGN_OR_RETURN(Tensor ids, Tensor::empty({1, 1}, DType::kInt64, g.device));
        AOTIRT_ASSIGN_OR_RETURN(Tensor position, Tensor::empty({1}, DType::kInt64, g.device));
        g.positions = std::move(positions);
        g.step_ids = std::move(ids);
        g.step_position = std::move(position);
      }
      // Queues the decode step that reads the token in |greedy| at position
      // |at|, and the read of the token it makes.
      auto queue = [&](int64_t at) -> Result<std::unique_ptr<DeviceReadback>> {
        AOTIRT_RETURN_IF_ERROR(copy_tensor(*g.step_ids.impl(), *view_of(greedy, {1, 1}, 0).impl(), true));
        AOTIRT_RETURN_IF_ERROR(copy_tensor(*g.step_position.impl(), *view_of(g.positions, {1}, at).impl(), true));
        std::vector<Tensor> inputs;
        inputs.reserve(2 + caches.size());
        inputs.push_back(g.step_ids);
        inputs.push_back(g.step_position);
        inputs.insert(inputs.end(), caches.begin(), caches.end());
        AOTIRT_ASSIGN_OR_RETURN(std::vector<Tensor> outs, g.decode->run(inputs, run_options));
        AOTIRT_ENSURE(outs.size() == 2 && outs[0].dtype() == DType::kFloat32 && outs[0].numel() == c.vocab_size &&
                          outs[1].dtype() == DType::kInt64 && outs[1].numel() == 1,
                      kIncompatible,
                      "the decode package returned no float32 logits row of {} values and int64 greedy token: not "
                      "an aotirt.export_llm package pair",
                      c.vocab_size);
        greedy = outs[1];
        return dev->read_back(*outs[1].impl());
      };
      int64_t token = first;
      int64_t at = n;  // where the step that reads |token| writes
      std::unique_ptr<DeviceReadback> pending;  // that step, once queued
      while (true) {
        generated.push_back(token);
        if (generated.size() == 1) st.first_token_seconds = seconds_since(start);
        if (options.on_token && !options.on_token(token)) {
          st.stop_reason = "cancelled";
          break;
        }
        if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
          st.stop_reason = "stop_token";
          break;
        }
        if (static_cast<int64_t>(generated.size()) >= options.max_new_tokens) {
          st.stop_reason = "max_new_tokens";
          break;
        }
        if (at >= c.max_cache_len) {
          st.stop_reason = "cache_full";
          break;
        }
        if (!pending) {
          AOTIRT_ASSIGN_OR_RETURN(pending, queue(at));
        }
        cached.resize(static_cast<size_t>(at));
        cached.push_back(token);
        ++at;
        // The step after, for the token |pending| makes, goes ahead of its read.
        std::unique_ptr<DeviceReadback> after;
        if (static_cast<int64_t>(generated.size()) + 1 < options.max_new_tokens && at < c.max_cache_len) {
          AOTIRT_ASSIGN_OR_RETURN(after, queue(at));
        }
        int64_t next = -1;
        AOTIRT_RETURN_IF_ERROR(pending->wait(&next));
        AOTIRT_ENSURE(next >= 0 && next < c.vocab_size, kInternal,
                      "the model's greedy token {} is outside the vocabulary of {}", next, c.vocab_size);
        token = next;
        pending = std::move(after);
      }
      return Status();
    };

    int64_t token = 0;
    if (options.max_new_tokens == 0) {
      st.stop_reason = "max_new_tokens";
      if (stats) *stats = st;
      return generated;
    }
    // The prefill package's length is dynamic from 2 (torch.export
    // specialises 1): a one-token prompt, or one token past what the cache
    // holds, goes through decode.
    {
      const Clock::time_point t0 = Clock::now();
      const std::vector<int64_t> rest(prompt.begin() + reused, prompt.end());
      AOTIRT_ASSIGN_OR_RETURN(token,
                              step(rest, reused, rest.size() >= 2 ? *state_->prefill : *state_->decode));
      st.prefill_seconds = seconds_since(t0);
    }
    const Clock::time_point decode_start = Clock::now();
    int64_t pos = n;
    if (ahead) {
      Status done = decode_ahead(token);
      if (!done.ok()) {
        // What the cache holds past the prompt is not known for certain.
        cached.clear();
        return done;
      }
      st.decode_seconds = generated.size() > 1 ? seconds_since(decode_start) : 0;
      st.generated_tokens = static_cast<int64_t>(generated.size());
      st.graph_replays = static_cast<int64_t>(state_->decode->graph_stats().replays - replays_before);
      if (stats) *stats = st;
      return generated;
    }
    while (true) {
      generated.push_back(token);
      if (generated.size() == 1) st.first_token_seconds = seconds_since(start);
      bool stop = false;
      if (options.on_token && !options.on_token(token)) {
        st.stop_reason = "cancelled";
        stop = true;
      } else if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
        st.stop_reason = "stop_token";
        stop = true;
      } else if (static_cast<int64_t>(generated.size()) >= options.max_new_tokens) {
        st.stop_reason = "max_new_tokens";
        stop = true;
      } else if (pos >= c.max_cache_len) {
        st.stop_reason = "cache_full";
        stop = true;
      }
      if (stop) break;
      AOTIRT_ASSIGN_OR_RETURN(token, step({token}, pos, *state_->decode));
      ++pos;
    }
    st.decode_seconds = generated.size() > 1 ? seconds_since(decode_start) : 0;
    st.generated_tokens = static_cast<int64_t>(generated.size());
    st.graph_replays = static_cast<int64_t>(state_->decode->graph_stats().replays - replays_before);
    if (stats) *stats = st;
    return generated;
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "out of memory while generating");
  } catch (const std::exception& e) {
    return AOTIRT_STATUS(kInternal, "generating: {}", e.what());
  }
}

}  // namespace aotirt
