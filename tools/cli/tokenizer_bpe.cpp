// A Hugging Face tokenizer.json with a byte-level BPE model (GPT-2, Llama-3,
// Qwen2 and most recent checkpoints), read on nlohmann-json.
//
// Written here rather than taken from a library: Hugging Face's tokenizers
// is Rust (its C bindings and tokenizers-cpp need a Rust toolchain and
// crates fetched at build time), and no C or C++ port is packaged by Debian.
// The pre-tokenizer's regular expressions go through Oniguruma, the engine
// the tokenizers library itself uses, so \p{L}, (?i:...) and (?!...) match
// the same text.
//
// Encoding: added tokens are matched first on the raw text (leftmost, then
// longest) and never split; each piece between them is pre-tokenized (the
// Split and ByteLevel steps), its bytes mapped to the printable characters of
// GPT-2's byte table, and merged by merge rank. Decoding maps the characters
// back to bytes and reads them as UTF-8, an invalid sequence becoming U+FFFD.
// No post-processor is applied: the caller adds the BOS token (llm.json).
// The NFC normalizer (Qwen2's) uses ICU, when the build has it.
// What this reader does not implement (another model type or normalizer,
// dropout, single-word added tokens...) is refused by name, never guessed.
// Oniguruma would otherwise define UChar, which ICU declares too.
#define ONIG_ESCAPE_UCHAR_COLLISION 1
#include <oniguruma.h>
#if AOTIRT_CLI_HAVE_ICU
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#endif

#include <algorithm>
#include <climits>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "tokenizer.h"

namespace aotirt {
namespace cli {
namespace {

using json = nlohmann::json;

// GPT-2's pattern, which ByteLevel applies when its use_regex is true.
constexpr const char* kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// ---- UTF-8 ------------------------------------------------------------------

// The length of the valid UTF-8 sequence at |s[i]|, or 0 when it is not one.
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return 0;
    const unsigned char x = b(i + k);
    if (k == 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xBF)) return 0;
  }
  return n;
}

// |bytes| as UTF-8 text, each maximal invalid part replaced by U+FFFD (the
// rule of Rust's from_utf8_lossy, which the tokenizers library decodes with):
// the replaced part is the longest prefix of a well-formed sequence there,
// or one byte.
std::string utf8_lossy(const std::string& bytes) {
  static const char kReplacement[] = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t n = utf8_length(bytes, i);
    if (n > 0) {
      out.append(bytes, i, n);
      i += n;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t want = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) want = 2;
    if (c >= 0xE0 && c <= 0xEF) want = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    if (c >= 0xF0 && c <= 0xF4) want = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    size_t used = 1;
    while (want > 0 && used < want && i + used < bytes.size()) {
      const unsigned char x = static_cast<unsigned char>(bytes[i + used]);
      if (used == 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xBF)) break;
      ++used;
    }
    out += kReplacement;
    i += used;
  }
  return out;
}

uint32_t decode_code_point(const std::string& s, size_t i, size_t n) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k])); };
  if (n == 1) return b(0);
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

void append_code_point(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Unicode's White_Space property (Rust's char::is_whitespace, which the
// tokenizers library strips added tokens' neighbours with).
bool is_white_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

// ---- GPT-2's byte table -----------------------------------------------------

// Each byte as one printable character: the printable Latin-1 bytes stand
// for themselves, the 68 others take the code points from U+0100 in order.
struct ByteTable {
  std::string to_char[256];                    // UTF-8 of each byte's character
  std::unordered_map<uint32_t, uint8_t> to_byte;  // and back

  ByteTable() {
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const uint32_t cp = printable ? b : next++;
      append_code_point(to_char[b], cp);
      to_byte[cp] = static_cast<uint8_t>(b);
    }
  }
};

const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

// ---- Oniguruma ----------------------------------------------------------------

class Regex {
 public:
  static Result<std::unique_ptr<Regex>> compile(const std::string& pattern) {
    static std::once_flag once;
    std::call_once(once, [] {
      OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
      onig_initialize(encodings, 1);
    });
    const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
    regex_t* reg = nullptr;
    OnigErrorInfo info;
    const int r = onig_new(&reg, p, p + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT,
                           &info);
    if (r != ONIG_NORMAL) {
      OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(msg, r, &info);
      return Status(StatusCode::kInvalidArgument,
                    "the pattern " + pattern + " is not a valid regular expression: " +
                        reinterpret_cast<const char*>(msg));
    }
    return std::unique_ptr<Regex>(new Regex(reg));
  }
  ~Regex() { onig_free(reg_); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Every non-overlapping match in |s|, left to right, as [begin, end).
  // An empty match advances by one character.
  Status find_all(const std::string& s, std::vector<std::pair<size_t, size_t>>* out) const {
    OnigRegion* region = onig_region_new();
    if (region == nullptr) return Status(StatusCode::kResourceExhausted, "out of memory in the tokenizer");
    const auto* str = reinterpret_cast<const OnigUChar*>(s.data());
    const OnigUChar* end = str + s.size();
    size_t pos = 0;
    Status st;
    while (pos <= s.size()) {
      const int r = onig_search(reg_, str, end, str + pos, end, region, ONIG_OPTION_NONE);
      if (r == ONIG_MISMATCH) break;
      if (r < 0) {
        OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
        onig_error_code_to_str(msg, r);
        st = Status(StatusCode::kInternal, std::string("the tokenizer's pattern failed: ") +
                                               reinterpret_cast<const char*>(msg));
        break;
      }
      const size_t b = static_cast<size_t>(region->beg[0]), e = static_cast<size_t>(region->end[0]);
      if (e > b) {
        out->emplace_back(b, e);
        pos = e;
      } else {
        if (b >= s.size()) break;
        const size_t n = utf8_length(s, b);
        pos = b + (n > 0 ? n : 1);
      }
    }
    onig_region_free(region, 1);
    return st;
  }

 private:
  explicit Regex(regex_t* reg) : reg_(reg) {}
  regex_t* reg_;
};

// ---- NFC ------------------------------------------------------------------------

#if AOTIRT_CLI_HAVE_ICU
// |text| (valid UTF-8) in Unicode normalization form C.
Status to_nfc(std::string* text) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfc = unorm2_getNFCInstance(&err);
  if (U_FAILURE(err)) return Status(StatusCode::kInternal, std::string("ICU's NFC: ") + u_errorName(err));
  const auto fail = [&](const char* step) {
    return Status(StatusCode::kInternal, std::string("ICU's NFC (") + step + "): " + u_errorName(err));
  };
  if (text->size() > static_cast<size_t>(INT32_MAX / 2))
    return Status(StatusCode::kInvalidArgument, "the text to tokenize is too long to normalize");
  const int32_t n = static_cast<int32_t>(text->size());
  std::vector<UChar> wide(static_cast<size_t>(n) + 1);
  int32_t wide_len = 0;
  u_strFromUTF8(wide.data(), static_cast<int32_t>(wide.size()), &wide_len, text->data(), n, &err);
  if (U_FAILURE(err)) return fail("from UTF-8");
  if (unorm2_isNormalized(nfc, wide.data(), wide_len, &err) && U_SUCCESS(err)) return Status();
  err = U_ZERO_ERROR;
  // NFC lengthens UTF-16 text by at most a factor of three (UAX #15); a
  // buffer ICU still finds short is grown to the length it reports.
  std::vector<UChar> norm(static_cast<size_t>(wide_len) * 3 + 1);
  int32_t norm_len =
      unorm2_normalize(nfc, wide.data(), wide_len, norm.data(), static_cast<int32_t>(norm.size()), &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) {
    err = U_ZERO_ERROR;
    norm.resize(static_cast<size_t>(norm_len) + 1);
    norm_len = unorm2_normalize(nfc, wide.data(), wide_len, norm.data(), static_cast<int32_t>(norm.size()), &err);
  }
  if (U_FAILURE(err)) return fail("normalize");
  int32_t out_len = 0;
  u_strToUTF8(nullptr, 0, &out_len, norm.data(), norm_len, &err);
  if (err != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(err)) return fail("to UTF-8");
  err = U_ZERO_ERROR;
  std::string out(static_cast<size_t>(out_len), '\0');
  u_strToUTF8(out.data(), out_len, &out_len, norm.data(), norm_len, &err);
  if (U_FAILURE(err) && err != U_STRING_NOT_TERMINATED_WARNING) return fail("to UTF-8");
  *text = std::move(out);
  return Status();
}
#endif

// ---- the tokenizer ----------------------------------------------------------

struct AddedToken {
  std::string content;
  int64_t id;
  bool special;
  bool lstrip, rstrip;
};

// One step of the pre-tokenizer: a split on a pattern (its matches become
// pieces of their own, or are dropped), or ByteLevel's leading space.
struct PreStep {
  enum Kind { kSplit, kPrefixSpace } kind;
  std::unique_ptr<Regex> regex;  // a Regex pattern
  std::string literal;           // or a String pattern
  bool remove = false;           // behavior "Removed" rather than "Isolated"
};

class Reader;

class BpeTokenizer : public Tokenizer {
 public:
  Result<std::vector<int64_t>> encode(const std::string& text) const override {
    for (size_t i = 0; i < text.size();) {
      const size_t n = utf8_length(text, i);
      if (n == 0)
        return Status(StatusCode::kInvalidArgument,
                      "the text to tokenize is not valid UTF-8 (byte " + std::to_string(i) + ")");
      i += n;
    }
    std::vector<int64_t> ids;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t b = text.size(), e = text.size();
      int64_t id = -1;
      find_added(text, pos, &b, &e, &id);
      if (b > pos) {
        Status st = encode_plain(text.substr(pos, b - pos), &ids);
        if (!st.ok()) return st;
      }
      if (id >= 0) ids.push_back(id);
      pos = e;
    }
    return ids;
  }

  Result<std::string> decode(const std::vector<int64_t>& tokens) const override {
    const ByteTable& table = byte_table();
    std::string bytes;
    for (int64_t t : tokens) {
      // Ids outside the tokenizer (a model vocabulary larger than it) and
      // special tokens decode to nothing.
      if (t < 0 || t >= static_cast<int64_t>(id_to_token_.size()) || !known_[t] || special_[t]) continue;
      const std::string& tok = id_to_token_[t];
      // A token whose every character is in the byte table stands for those
      // bytes; another (an added token with a space, say) for its own text.
      std::string mapped;
      bool all = true;
      for (size_t i = 0; i < tok.size();) {
        const size_t n = utf8_length(tok, i);
        if (n == 0) {
          all = false;
          break;
        }
        auto it = table.to_byte.find(decode_code_point(tok, i, n));
        if (it == table.to_byte.end()) {
          all = false;
          break;
        }
        mapped += static_cast<char>(it->second);
        i += n;
      }
      bytes += all ? mapped : tok;
    }
    return utf8_lossy(bytes);
  }

  int64_t vocab_size() const override { return static_cast<int64_t>(id_to_token_.size()); }

  static Result<std::unique_ptr<Tokenizer>> load(const std::string& path, const json& j);
  static uint64_t pair_key(int64_t a, int64_t b) {
    return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(static_cast<uint32_t>(b));
  }

 private:
  // The first added token at or after |pos| (leftmost, then longest), with
  // the whitespace its lstrip/rstrip take; none leaves *b = *e = the end.
  void find_added(const std::string& text, size_t pos, size_t* b, size_t* e, int64_t* id) const {
    for (size_t p = pos; p < text.size(); ++p) {
      const AddedToken* best = nullptr;
      for (const AddedToken& a : added_) {
        if (a.content.size() > (best ? best->content.size() : 0) &&
            text.compare(p, a.content.size(), a.content) == 0)
          best = &a;
      }
      if (best == nullptr) continue;
      size_t start = p, end = p + best->content.size();
      if (best->lstrip) {
        while (start > pos) {
          size_t q = start - 1;
          while (q > pos && (static_cast<unsigned char>(text[q]) & 0xC0) == 0x80) --q;
          if (!is_white_space(decode_code_point(text, q, start - q))) break;
          start = q;
        }
      }
      if (best->rstrip) {
        while (end < text.size()) {
          const size_t n = utf8_length(text, end);
          if (!is_white_space(decode_code_point(text, end, n))) break;
          end += n;
        }
      }
      *b = start, *e = end, *id = best->id;
      return;
    }
  }

  Status encode_plain(const std::string& text, std::vector<int64_t>* ids) const {
    std::vector<std::string> pieces{text};
#if AOTIRT_CLI_HAVE_ICU
    if (nfc_) {
      Status st = to_nfc(&pieces[0]);
      if (!st.ok()) return st;
    }
#endif
    std::vector<std::pair<size_t, size_t>> matches;
    for (const PreStep& step : pre_) {
      std::vector<std::string> next;
      for (std::string& piece : pieces) {
        if (step.kind == PreStep::kPrefixSpace) {
          next.push_back(piece.empty() || piece[0] == ' ' ? std::move(piece) : " " + piece);
          continue;
        }
        matches.clear();
        if (step.regex) {
          Status st = step.regex->find_all(piece, &matches);
          if (!st.ok()) return st;
        } else if (!step.literal.empty()) {
          for (size_t at = piece.find(step.literal); at != std::string::npos;
               at = piece.find(step.literal, at + step.literal.size()))
            matches.emplace_back(at, at + step.literal.size());
        }
        size_t last = 0;
        for (const auto& m : matches) {
          if (m.first > last) next.push_back(piece.substr(last, m.first - last));
          if (!step.remove) next.push_back(piece.substr(m.first, m.second - m.first));
          last = m.second;
        }
        if (last < piece.size()) next.push_back(piece.substr(last));
      }
      pieces = std::move(next);
    }
    const ByteTable& table = byte_table();
    for (const std::string& piece : pieces) {
      if (piece.empty()) continue;
      std::string word;
      for (unsigned char c : piece) word += table.to_char[c];
      bpe(word, ids);
    }
    return Status();
  }

  // Merges |word|'s characters by rank: each round merges the adjacent pair
  // of the lowest rank, the leftmost of equals, until no pair has a merge.
  void bpe(const std::string& word, std::vector<int64_t>* ids) const {
    if (ignore_merges_) {
      auto it = vocab_.find(word);
      if (it != vocab_.end()) {
        ids->push_back(it->second);
        return;
      }
    }
    std::vector<int64_t> sym;
    for (size_t i = 0; i < word.size();) {
      const size_t n = utf8_length(word, i);
      auto it = vocab_.find(word.substr(i, n));
      if (it != vocab_.end()) {
        sym.push_back(it->second);
      } else if (unk_id_ >= 0) {
        // Like the tokenizers library, unknown characters next to each
        // other become one unknown token when fuse_unk says so.
        if (!(fuse_unk_ && !sym.empty() && sym.back() == unk_id_)) sym.push_back(unk_id_);
      }
      i += n;
    }
    while (sym.size() > 1) {
      size_t best = 0;
      int64_t best_rank = INT64_MAX, best_id = -1;
      for (size_t i = 0; i + 1 < sym.size(); ++i) {
        auto it = merges_.find(pair_key(sym[i], sym[i + 1]));
        if (it != merges_.end() && it->second.first < best_rank) {
          best = i, best_rank = it->second.first, best_id = it->second.second;
        }
      }
      if (best_id < 0) break;
      sym[best] = best_id;
      sym.erase(sym.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
    ids->insert(ids->end(), sym.begin(), sym.end());
  }

  friend class Reader;

  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> merges_;  // (a, b) -> (rank, merged id)
  std::vector<std::string> id_to_token_;
  std::vector<char> known_, special_;
  std::vector<AddedToken> added_;
  std::vector<PreStep> pre_;
  int64_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  bool nfc_ = false;  // the NFC normalizer
};

// Reading the file. Every refusal names the file and the entry.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  Status bad(const std::string& what) const {
    return Status(StatusCode::kInvalidArgument, "the tokenizer file " + path_ + " is malformed: " + what);
  }
  Status unsupported(const std::string& what) const {
    return Status(StatusCode::kUnimplemented,
                  "the tokenizer file " + path_ + " has " + what + ", which aotirt's byte-level BPE reader does not "
                  "implement");
  }

  static std::string type_of(const json& j) {
    auto t = j.find("type");
    return t != j.end() && t->is_string() ? t->get<std::string>() : std::string();
  }

  static bool flag(const json& j, const char* key, bool dflt) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : dflt;
  }

  // Adds |j|'s pre-tokenizer steps to |steps|; *byte_level is set by the
  // ByteLevel step, which must come last (the byte mapping follows it).
  Status pre_tokenizer(const json& j, std::vector<PreStep>* steps, bool* byte_level) const {
    if (!j.is_object()) return bad("pre_tokenizer is not an object");
    if (*byte_level) return unsupported("a pre-tokenizer step after ByteLevel");
    const std::string type = type_of(j);
    if (type == "Sequence") {
      auto list = j.find("pretokenizers");
      if (list == j.end() || !list->is_array()) return bad("pre_tokenizer Sequence has no \"pretokenizers\" list");
      for (const json& step : *list) {
        Status st = pre_tokenizer(step, steps, byte_level);
        if (!st.ok()) return st;
      }
      return Status();
    }
    if (type == "ByteLevel") {
      if (flag(j, "add_prefix_space", true)) steps->push_back(PreStep{PreStep::kPrefixSpace, nullptr, "", false});
      if (flag(j, "use_regex", true)) {
        Result<std::unique_ptr<Regex>> re = Regex::compile(kGpt2Pattern);
        if (!re.ok()) return re.status();
        steps->push_back(PreStep{PreStep::kSplit, std::move(re).value(), "", false});
      }
      *byte_level = true;
      return Status();
    }
    if (type == "Split") {
      PreStep step{PreStep::kSplit, nullptr, "", false};
      auto pat = j.find("pattern");
      if (pat == j.end() || !pat->is_object()) return bad("a Split pre-tokenizer has no \"pattern\" object");
      if (pat->contains("Regex") && (*pat)["Regex"].is_string()) {
        Result<std::unique_ptr<Regex>> re = Regex::compile((*pat)["Regex"].get<std::string>());
        if (!re.ok()) return bad(re.status().message());
        step.regex = std::move(re).value();
      } else if (pat->contains("String") && (*pat)["String"].is_string()) {
        step.literal = (*pat)["String"].get<std::string>();
      } else {
        return bad("a Split pre-tokenizer's pattern is neither {\"Regex\": ...} nor {\"String\": ...}");
      }
      if (flag(j, "invert", false)) return unsupported("a Split pre-tokenizer with invert true");
      auto behavior = j.find("behavior");
      const std::string b = behavior != j.end() && behavior->is_string() ? behavior->get<std::string>() : "";
      if (b == "Removed") {
        step.remove = true;
      } else if (b != "Isolated") {
        return unsupported("a Split pre-tokenizer with behavior \"" + b + "\" (Isolated and Removed are)");
      }
      steps->push_back(std::move(step));
      return Status();
    }
    return unsupported("the pre-tokenizer \"" + type + "\"");
  }

  Status read(const json& j, BpeTokenizer* t, std::unordered_map<std::string, int64_t>* vocab,
              std::vector<std::pair<std::string, std::string>>* merges) const {
    if (!j.is_object()) return bad("it is not a JSON object");
    auto model = j.find("model");
    if (model == j.end() || !model->is_object()) return bad("it has no \"model\" object");
    const std::string type = type_of(*model);
    // Older files leave out the model's type; their vocab and merges say BPE.
    if (!type.empty() && type != "BPE") return unsupported("the model type \"" + type + "\"");
    auto v = model->find("vocab");
    if (v == model->end() || !v->is_object()) return bad("model.vocab is not an object of token ids");
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
          it.value().get<int64_t>() > INT32_MAX)
        return bad("model.vocab[\"" + it.key() + "\"] is not a token id");
      (*vocab)[it.key()] = it.value().get<int64_t>();
    }
    auto m = model->find("merges");
    if (m == model->end() || !m->is_array()) return bad("model.merges is not a list");
    for (size_t i = 0; i < m->size(); ++i) {
      const json& e = (*m)[i];
      // "a b" in older files, ["a", "b"] in newer ones.
      if (e.is_string()) {
        const std::string s = e.get<std::string>();
        const size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          return bad("model.merges[" + std::to_string(i) + "] \"" + s + "\" is not two tokens");
        merges->emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        merges->emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
      } else {
        return bad("model.merges[" + std::to_string(i) + "] is not a pair of tokens");
      }
    }
    auto dropout = model->find("dropout");
    if (dropout != model->end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0.0))
      return unsupported("BPE dropout");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      auto it = model->find(key);
      if (it != model->end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty()))
        return unsupported(std::string("a model.") + key);
    }
    if (flag(*model, "byte_fallback", false)) return unsupported("byte_fallback (a SentencePiece-style BPE)");
    t->fuse_unk_ = flag(*model, "fuse_unk", false);
    t->ignore_merges_ = flag(*model, "ignore_merges", false);
    auto unk = model->find("unk_token");
    if (unk != model->end() && unk->is_string()) {
      auto it = vocab->find(unk->get<std::string>());
      if (it == vocab->end()) return bad("model.unk_token \"" + unk->get<std::string>() + "\" is not in the vocab");
      t->unk_id_ = it->second;
    }

    auto norm = j.find("normalizer");
    if (norm != j.end() && !norm->is_null()) {
      const bool empty_sequence = type_of(*norm) == "Sequence" && norm->contains("normalizers") &&
                                  (*norm)["normalizers"].is_array() && (*norm)["normalizers"].empty();
      if (type_of(*norm) == "NFC") {
#if AOTIRT_CLI_HAVE_ICU
        t->nfc_ = true;
#else
        return unsupported("the normalizer \"NFC\" in a build without ICU (libicu-dev)");
#endif
      } else if (!empty_sequence) {
        return unsupported("the normalizer \"" + type_of(*norm) + "\"");
      }
    }
    auto pre = j.find("pre_tokenizer");
    bool byte_level = false;
    if (pre != j.end() && !pre->is_null()) {
      Status st = pre_tokenizer(*pre, &t->pre_, &byte_level);
      if (!st.ok()) return st;
    }
    if (!byte_level) return unsupported("no ByteLevel pre-tokenizer (not a byte-level BPE)");
    auto dec = j.find("decoder");
    if (dec == j.end() || !dec->is_object() || type_of(*dec) != "ByteLevel")
      return unsupported(dec == j.end() || dec->is_null() ? std::string("no decoder")
                                                         : "the decoder \"" + type_of(*dec) + "\"");

    auto added = j.find("added_tokens");
    if (added != j.end() && !added->is_null()) {
      if (!added->is_array()) return bad("added_tokens is not a list");
      for (size_t i = 0; i < added->size(); ++i) {
        const json& a = (*added)[i];
        const std::string where = "added_tokens[" + std::to_string(i) + "]";
        if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || a["id"].get<int64_t>() < 0 ||
            a["id"].get<int64_t>() > INT32_MAX || !a.contains("content") || !a["content"].is_string())
          return bad(where + " has no id and content");
        AddedToken tok{a["content"].get<std::string>(), a["id"].get<int64_t>(), flag(a, "special", false),
                       flag(a, "lstrip", false), flag(a, "rstrip", false)};
        if (tok.content.empty()) return bad(where + " is empty");
        if (flag(a, "single_word", false)) return unsupported(where + " \"" + tok.content + "\" with single_word");
        t->added_.push_back(std::move(tok));
      }
    }
    return Status();
  }

 private:
  std::string path_;
};

Result<std::unique_ptr<Tokenizer>> BpeTokenizer::load(const std::string& path, const json& j) {
  std::unique_ptr<BpeTokenizer> t(new BpeTokenizer());
  std::vector<std::pair<std::string, std::string>> merges;
  Reader reader(path);
  Status st = reader.read(j, t.get(), &t->vocab_, &merges);
  if (!st.ok()) return st;

  int64_t size = 0;
  for (const auto& [tok, id] : t->vocab_) size = std::max(size, id + 1);
  for (const AddedToken& a : t->added_) size = std::max(size, a.id + 1);
  t->id_to_token_.assign(static_cast<size_t>(size), std::string());
  t->known_.assign(static_cast<size_t>(size), 0);
  t->special_.assign(static_cast<size_t>(size), 0);
  for (const auto& [tok, id] : t->vocab_) t->id_to_token_[id] = tok, t->known_[id] = 1;
  // An added token's text wins over the vocab's for its id, as it does in
  // the tokenizers library.
  for (const AddedToken& a : t->added_) {
    t->id_to_token_[a.id] = a.content;
    t->known_[a.id] = 1;
    t->special_[a.id] = a.special;
  }
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto& [a, b] = merges[i];
    auto ia = t->vocab_.find(a), ib = t->vocab_.find(b), im = t->vocab_.find(a + b);
    if (ia == t->vocab_.end() || ib == t->vocab_.end() || im == t->vocab_.end())
      return reader.bad("model.merges[" + std::to_string(i) + "] (\"" + a + "\", \"" + b +
                        "\") names a token that is not in the vocab");
    // The last of two equal merges counts, as in the tokenizers library
    // (which collects them into a map).
    t->merges_.insert_or_assign(BpeTokenizer::pair_key(ia->second, ib->second),
                       std::make_pair(static_cast<int64_t>(i), im->second));
  }
  return std::unique_ptr<Tokenizer>(std::move(t));
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> open_bpe_tokenizer(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) return Status(StatusCode::kNotFound, "the tokenizer file " + path + " cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status(StatusCode::kInvalidArgument, "the tokenizer file " + path + " is not valid JSON");
  try {
    return BpeTokenizer::load(path, j);
  } catch (const json::exception& e) {
    // A value of an unexpected JSON type that a check above missed.
    return Status(StatusCode::kInvalidArgument, "the tokenizer file " + path + " is malformed: " + e.what());
  }
}

}  // namespace cli
}  // namespace aotirt
