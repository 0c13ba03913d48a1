#include "generate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "aotirt/aotirt.h"
#include "tokenizer.h"

namespace aotirt {
namespace cli {
namespace {

constexpr const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the SIGINT handler needs a lock-free flag");

extern "C" void on_sigint(int) { g_interrupted.store(true); }

// The first Ctrl-C asks generation to stop after the current token; the
// handler then reverts to the default, so a second one ends the process.
void catch_interrupt() {
  struct sigaction old;
  if (sigaction(SIGINT, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) return;
  struct sigaction sa = {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app, GenerateArgs& a) {
  CLI::App* g = app.add_subcommand(
      "generate", "Generate text with a decoder LM exported by aotirt.export_llm (prefill.pt2, decode.pt2, llm.json).");
  g->add_option("dir", a.dir, "The directory aotirt.export_llm wrote")->required();
  CLI::Option* text = g->add_option("-p,--prompt", a.prompt, "Prompt text (needs the tokenizer)");
  CLI::Option* ids = g->add_option("--prompt-ids", a.prompt_ids, "Prompt as token ids, comma-separated")
                         ->delimiter(',')
                         ->excludes(text);
  text->excludes(ids);
  g->add_option("--tokenizer", a.tokenizer,
                "tokenizer.json or SentencePiece model (default: the one in the directory)");
  g->add_option("-d,--device", a.device, "cpu, cuda or cuda:N (default: the packages' device)");
  g->add_option("-n,--max-new-tokens", a.max_new_tokens, "Tokens to generate at most")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  g->add_option("--temperature", a.temperature, "0: greedy; otherwise sample at this temperature")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 1000.0f));
  g->add_option("--top-k", a.top_k, "Sample among the k most likely tokens (0: all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  g->add_option("--top-p", a.top_p, "Sample within the smallest set of this probability")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 1.0f));
  g->add_option("--seed", a.seed, "Seed of the sampler")->capture_default_str();
  g->add_option("--stop", a.stop, "Extra stop token ids, comma-separated")->delimiter(',');
  g->add_flag("--ignore-eos", a.ignore_eos, "Do not stop at the model's own stop tokens");
  g->add_flag("--print-ids", a.print_ids, "Print token ids instead of text");
  g->add_flag("--json", a.json, "Print one JSON object (tokens, text and figures) at the end");
  g->add_flag("--no-cuda-graph", a.no_cuda_graph, "CUDA: run decode steps without a CUDA graph");
  CLI::Option* warmup =
      g->add_option("--warmup", a.warmup,
                    "Generate N times unprinted first, so the figures are of a warm run (benchmarks)")
          ->check(CLI::Range(int64_t{0}, int64_t{1000}));
  g->add_flag("--chat", a.chat,
              "Converse: each line of stdin continues the text (after the prompt, if one is given) and gets a "
              "reply; the cache keeps the conversation, so a turn prefills only its new line")
      ->excludes(warmup);
  g->footer("Ctrl-C stops after the current token and prints what was generated (with --chat: ends the reply; "
            "end of input ends the conversation).");
  return g;
}

Status cmd_generate(const GenerateArgs& a, int* exit_code) {
  *exit_code = 0;
  if (!a.chat && a.prompt.empty() && a.prompt_ids.empty())
    return Status(StatusCode::kInvalidArgument, "give a prompt: --prompt TEXT or --prompt-ids IDS (or --chat)");
  GeneratorOptions load;
  load.decode_cuda_graph = !a.no_cuda_graph;
  if (!a.device.empty()) {
    Result<DeviceId> d = DeviceId::parse(a.device);
    if (!d.ok()) return d.status();
    load.load.device = d.value();
  }
  const bool tty = isatty(fileno(stderr));
  if (tty) fmt::print(stderr, "loading {} ...", a.dir);
  const auto t0 = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Generator>> loaded = Generator::load(a.dir, load);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!loaded.ok()) return loaded.status();
  Generator& gen = *loaded.value();
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The tokenizer: needed for a text prompt and for printing text.
  std::unique_ptr<Tokenizer> tok;
  const std::string tok_path = !a.tokenizer.empty() ? a.tokenizer : gen.config().tokenizer;
  if (!a.prompt.empty() || a.chat || (!a.print_ids && !tok_path.empty())) {
    if (tok_path.empty())
      return Status(StatusCode::kNotFound,
                    std::string(a.chat ? "--chat reads text and" : "a text prompt") +
                        " needs a tokenizer: the directory has none (export with tokenizer=...) and no --tokenizer "
                        "was given" + (a.chat ? "" : "; or pass --prompt-ids"));
    Result<std::unique_ptr<Tokenizer>> t = open_tokenizer(tok_path);
    if (!t.ok()) return t.status();
    tok = std::move(t).value();
  }
  std::vector<int64_t> prompt = a.prompt_ids;
  if (!a.prompt.empty()) {
    Result<std::vector<int64_t>> ids = tok->encode(a.prompt);
    if (!ids.ok()) return ids.status();
    prompt = std::move(ids).value();
    if (gen.config().bos_token_id >= 0) prompt.insert(prompt.begin(), gen.config().bos_token_id);
  }

  GenerateOptions opts;
  opts.max_new_tokens = a.max_new_tokens;
  opts.stop_token_ids = a.stop;
  opts.use_config_stop_tokens = !a.ignore_eos;
  opts.sampling.temperature = a.temperature;
  opts.sampling.top_k = a.top_k;
  opts.sampling.top_p = a.top_p;
  opts.sampling.seed = a.seed;

  // One turn: generates after |ids|, streaming the new tokens to stdout
  // (unless --json), then prints the figures; |*st| gets them.
  const auto run_turn = [&](const std::vector<int64_t>& ids, bool reuse, int64_t warmup,
                            GenerateStats* st) -> Result<std::vector<int64_t>> {
    // Streaming: text is printed as the decoded whole grows, so pieces that
    // join (SentencePiece's word-initial spaces) come out right.
    std::vector<int64_t> so_far;
    std::string printed;
    const auto print_growth = [&](const std::string& text) {
      if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
        fmt::print("{}", text.substr(printed.size()));
        printed = text;
      }
    };
    GenerateOptions turn = opts;
    turn.reuse_cache = reuse;
    turn.on_token = [&](int64_t token) {
      so_far.push_back(token);
      if (!a.json) {
        if (a.print_ids || !tok) {
          fmt::print("{}{}", so_far.size() > 1 ? " " : "", token);
        } else {
          Result<std::string> text = tok->decode(so_far);
          if (text.ok()) {
            // A character whose bytes span tokens decodes as U+FFFD until its
            // last byte comes: held back, so the stream never shows it.
            std::string& t = text.value();
            while (t.size() >= 3 && t.compare(t.size() - 3, 3, kReplacement) == 0) t.resize(t.size() - 3);
            print_growth(t);
          }
        }
        std::fflush(stdout);
      }
      return !g_interrupted.load();
    };
    g_interrupted.store(false);
    catch_interrupt();
    Result<std::vector<int64_t>> out = std::vector<int64_t>();
    {
      GenerateOptions quiet = turn;
      quiet.on_token = [](int64_t) { return !g_interrupted.load(); };
      for (int64_t i = 0; i < warmup && out.ok() && !g_interrupted.load(); ++i) out = gen.generate(ids, quiet, st);
    }
    if (out.ok() && !g_interrupted.load())
      out = gen.generate(ids, turn, st);
    else if (out.ok())
      st->stop_reason = "cancelled";  // during the warm-up runs
    signal(SIGINT, SIG_DFL);
    if (!a.json && !a.print_ids && tok && !so_far.empty()) {
      // What was held back, if the text still ends in a partial character.
      Result<std::string> text = tok->decode(so_far);
      if (text.ok()) print_growth(text.value());
    }
    if (!a.json && !so_far.empty()) fmt::print("\n");
    if (!out.ok()) return out.status();

    const double decode_rate = st->generated_tokens > 1 && st->decode_seconds > 0
                                   ? static_cast<double>(st->generated_tokens - 1) / st->decode_seconds
                                   : 0.0;
    const double prefill_rate =
        st->prefill_seconds > 0 ? static_cast<double>(st->prompt_tokens - st->reused_tokens) / st->prefill_seconds
                                : 0.0;
    if (a.json) {
      nlohmann::json j;
      j["prompt_ids"] = ids;
      j["tokens"] = out.value();
      if (tok) {
        Result<std::string> text = tok->decode(out.value());
        if (text.ok()) j["text"] = text.value();
      }
      j["stop_reason"] = st->stop_reason;
      j["prompt_tokens"] = st->prompt_tokens;
      j["reused_tokens"] = st->reused_tokens;
      j["generated_tokens"] = st->generated_tokens;
      j["load_s"] = load_seconds;
      j["time_to_first_token_s"] = st->first_token_seconds;
      j["prefill_tokens_per_s"] = prefill_rate;
      j["decode_tokens_per_s"] = decode_rate;
      j["graph_replays"] = st->graph_replays;
      j["weight_bytes"] = gen.weight_bytes();
      j["unshared_weight_bytes"] = gen.unshared_weight_bytes();
      fmt::print("{}\n", j.dump());
      std::fflush(stdout);
    }
    fmt::print(stderr, "{} prompt tokens{}, {} generated ({}); prefill {:.1f} tokens/s, decode {:.1f} tokens/s, "
                       "first token after {:.3f} s, load {:.3f} s; weights {:.1f} MiB held ({:.1f} MiB unshared)\n",
               st->prompt_tokens,
               st->reused_tokens > 0 ? fmt::format(" ({} already in the cache)", st->reused_tokens) : "",
               st->generated_tokens, st->stop_reason, prefill_rate, decode_rate, st->first_token_seconds,
               load_seconds, static_cast<double>(gen.weight_bytes()) / (1 << 20),
               static_cast<double>(gen.unshared_weight_bytes()) / (1 << 20));
    return out;
  };

  if (!a.chat) {
    GenerateStats st;
    Result<std::vector<int64_t>> out = run_turn(prompt, false, a.warmup, &st);
    if (!out.ok()) return out.status();
    if (st.stop_reason == "cancelled") *exit_code = 130;
    return Status();
  }

  // --chat: the conversation grows by each line and each reply, and every
  // turn reuses what the cache holds of it, so only the new line runs
  // through the prefill. Ctrl-C ends the current reply; end of input ends
  // the conversation.
  std::vector<int64_t> conversation;
  int64_t turns = 0;
  const auto take_turn = [&](const std::vector<int64_t>& added) -> Status {
    conversation.insert(conversation.end(), added.begin(), added.end());
    ++turns;
    GenerateStats st;
    Result<std::vector<int64_t>> reply = run_turn(conversation, true, 0, &st);
    if (!reply.ok()) {
      Status s = reply.status();
      return s.annotate(fmt::format("turn {} ({} tokens of conversation)", turns, conversation.size()));
    }
    conversation.insert(conversation.end(), reply.value().begin(), reply.value().end());
    return Status();
  };
  if (!prompt.empty()) {
    Status s = take_turn(prompt);
    if (!s.ok()) return s;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    Result<std::vector<int64_t>> ids = tok->encode(line);
    if (!ids.ok()) return ids.status();
    std::vector<int64_t> added = std::move(ids).value();
    if (conversation.empty() && gen.config().bos_token_id >= 0)
      added.insert(added.begin(), gen.config().bos_token_id);
    if (added.empty()) continue;
    Status s = take_turn(added);
    if (!s.ok()) return s;
  }
  return Status();
}

CLI::App* add_tokenize_command(CLI::App& app, TokenizeArgs& a) {
  CLI::App* t = app.add_subcommand("tokenize", "Encode a text, or decode token ids, with a tokenizer file "
                                               "(tokenizer.json or a SentencePiece model).");
  t->add_option("tokenizer", a.tokenizer, "The tokenizer file")->required();
  CLI::Option* text = t->add_option("text", a.text, "The text to encode");
  CLI::Option* ids = t->add_option("--ids", a.ids, "Token ids to decode, comma-separated")->delimiter(',');
  CLI::Option* batch =
      t->add_flag("--batch", a.batch,
                  "Read a JSON list from stdin: each string is encoded (and its ids decoded again), each list of "
                  "ids decoded; print a JSON list of {\"ids\", \"text\"}");
  text->excludes(ids)->excludes(batch);
  ids->excludes(batch);
  t->add_flag("--json", a.json, "Print one JSON object {\"ids\", \"text\"}");
  return t;
}

Status cmd_tokenize(const TokenizeArgs& a) {
  Result<std::unique_ptr<Tokenizer>> opened = open_tokenizer(a.tokenizer);
  if (!opened.ok()) return opened.status();
  const Tokenizer& tok = *opened.value();
  // Invalid UTF-8 cannot come out of decode, but a caller's text may hold it.
  const auto dump = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  const auto one = [&](const nlohmann::json& item, nlohmann::json* out) -> Status {
    std::vector<int64_t> ids;
    if (item.is_string()) {
      Result<std::vector<int64_t>> enc = tok.encode(item.get<std::string>());
      if (!enc.ok()) return enc.status();
      ids = std::move(enc).value();
    } else if (item.is_array()) {
      for (const auto& v : item) {
        if (!v.is_number_integer())
          return Status(StatusCode::kInvalidArgument, "--batch: a list of token ids holds " + dump(v));
        ids.push_back(v.get<int64_t>());
      }
    } else {
      return Status(StatusCode::kInvalidArgument,
                    "--batch: each item is a string or a list of token ids, not " + dump(item));
    }
    Result<std::string> text = tok.decode(ids);
    if (!text.ok()) return text.status();
    *out = nlohmann::json{{"ids", ids}, {"text", text.value()}};
    return Status();
  };
  if (a.batch) {
    nlohmann::json in = nlohmann::json::parse(std::cin, nullptr, /*allow_exceptions=*/false);
    if (in.is_discarded() || !in.is_array())
      return Status(StatusCode::kInvalidArgument, "--batch: stdin is not a JSON list");
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : in) {
      nlohmann::json r;
      Status st = one(item, &r);
      if (!st.ok()) return st;
      out.push_back(std::move(r));
    }
    fmt::print("{}\n", dump(out));
    return Status();
  }
  nlohmann::json r;
  Status st = one(a.ids.empty() ? nlohmann::json(a.text) : nlohmann::json(a.ids), &r);
  if (!st.ok()) return st;
  if (a.json) {
    fmt::print("{}\n", dump(r));
  } else if (a.ids.empty()) {
    fmt::print("{}\n", fmt::join(r["ids"].get<std::vector<int64_t>>(), " "));
  } else {
    fmt::print("{}\n", r["text"].get<std::string>());
  }
  return Status();
}

}  // namespace cli
}  // namespace aotirt
