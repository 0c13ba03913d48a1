"""aotirt's tokenizer.json reader (byte-level BPE) against Hugging Face's
tokenizers library: small tokenizers in the GPT-2 and Llama-3 styles are
trained here on a short text (nothing is downloaded; "qwen2" is Llama-3's
split with Qwen2's NFC normalizer), then `aotirt tokenize
--batch` encodes and decodes many strings and token lists, which must equal
the library's ids and text. Bad files are refused by name."""
from __future__ import annotations

import importlib.util
import json
import random
import subprocess

import pytest

from cli_util import CLI, requires_cli

pytestmark = [
    requires_cli,
    pytest.mark.skipif(importlib.util.find_spec("tokenizers") is None,
                       reason="not installed: tokenizers (installed with transformers by scripts/setup.sh)"),
]

# Llama-3's and Qwen2's split pattern.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>"]
CORPUS = """The quick brown fox jumps over the lazy dog. It's 2024, and we've got 1234567 reasons!
Grüße aus Köln: café, naïve, façade. Ελληνικά κείμενα. Привет, мир! 日本語のテキストと中文。
Emoji: 😀🚀👍🏽 family 👨‍👩‍👧. Tabs\tand  double  spaces   and\n\nnew lines.
def f(x):\n    return x ** 2  # code\n\tindent
I'll say they're here; you'd think I'm done. DON'T SHOUT. 3.14159 + 2.71828 = 5.85987"""

STRINGS = [
    "", " ", "  ", "\n", "\t\t", "hello", " hello", "hello ", "Hello world", "hello   world", "a\n\nb",
    "The quick brown fox", "It's we've they'll I'M YOU'RE", "12345678901", "3.14 and 2,718", "x=1+2*3",
    "café naïve Grüße", "Привет мир", "日本語のテキスト", "中文和English混合", "😀", "🚀 launch 👍🏽",
    "family 👨‍👩‍👧 emoji", "\u00a0non-breaking\u00a0space", "zero\u200bwidth", "trailing spaces   ",
    "   leading spaces", "tabs\tand\nnewlines\r\n", "<|endoftext|>", "a<|endoftext|>b",
    "<|begin_of_text|>Hello<|eot_id|>", "<|eot_id|><|eot_id|>", "text <|endoftext|> text",
    "<|endoftext", "|endoftext|>", "def f(x):\n    return x ** 2", "ÿþý", "\x00\x01\x7f",
    "mixed 123abc456 ÄÖÜ 😀😀 <|eot_id|>\n",
    # Decomposed characters, which an NFC normalizer composes.
    "cafe\u0301", "A\u030angstro\u0308m", "\u1100\u1161\u11a8", "e\u0301\u0301", "\u212b",
]


def _train(style: str):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(ignore_merges=style == "llama3"))
    if style == "qwen2":
        tok.normalizer = normalizers.NFC()
    if style in ("llama3", "qwen2"):
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=style == "gpt2-prefix")
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([CORPUS] * 4, trainer)
    return tok


def _fuzz_strings(n: int, seed: int) -> list:
    rng = random.Random(seed)
    parts = ["the", " fox", "'s", "'LL", " ", "  ", "\n", "\t", "1", "42", "9999", "é", "ü", "Ж", "日本", "😀",
             "👍🏽", "!", "?!", "...", "<|eot_id|>", "<|endoftext|>", "ab", "Zz", "\u3000", "\r\n", "#", "é" * 3,
             "e\u0301", "\u0308"]
    return ["".join(rng.choice(parts) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def _tokenize(path, items) -> list:
    proc = subprocess.run([str(CLI), "tokenize", str(path), "--batch"], input=json.dumps(items),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module", params=["gpt2", "gpt2-prefix", "llama3", "qwen2"])
def trained(request, tmp_path_factory):
    tok = _train(request.param)
    path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    tok.save(str(path))
    return tok, path


def test_encode_and_decode_equal_the_tokenizers_library(trained):
    tok, path = trained
    strings = STRINGS + _fuzz_strings(300, 1)
    got = _tokenize(path, strings)
    for s, g in zip(strings, got):
        want = tok.encode(s, add_special_tokens=False).ids
        assert g["ids"] == want, repr(s)
        assert g["text"] == tok.decode(want), repr(s)


def test_decoding_any_ids_equals_the_tokenizers_library(trained):
    """Lists that cut characters apart (U+FFFD), special tokens (left out)
    and ids past the vocabulary (left out)."""
    tok, path = trained
    size = tok.get_vocab_size()
    rng = random.Random(2)
    lists = [[], [0], [1, 2], list(range(size)), [size - 1]]
    lists += [[rng.randrange(size) for _ in range(rng.randint(1, 20))] for _ in range(200)]
    # The single bytes of a multi-byte character, alone and in order.
    smile = tok.encode("😀 é", add_special_tokens=False).ids
    lists += [smile[:1], smile[:-1], smile]
    got = _tokenize(path, lists)
    for ids, g in zip(lists, got):
        assert g["text"] == tok.decode(ids), ids
    assert _tokenize(path, [[size + 5, 1]])[0]["text"] == tok.decode([1])


def test_tokenize_command_prints_ids_and_text(trained):
    tok, path = trained
    proc = subprocess.run([str(CLI), "tokenize", str(path), "Hello world"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    ids = tok.encode("Hello world", add_special_tokens=False).ids
    assert proc.stdout.split() == [str(i) for i in ids]
    proc = subprocess.run([str(CLI), "tokenize", str(path), "--ids", ",".join(map(str, ids))], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stdout == tok.decode(ids) + "\n", proc.stderr


def test_added_tokens_with_lstrip_and_rstrip(tmp_path):
    from tokenizers import AddedToken

    tok = _train("gpt2")
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=True)])
    tok.add_tokens([AddedToken("[x]", rstrip=True, normalized=False)])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    strings = ["a <mask> b", "a<mask>b", "a   <mask>   b", "[x] y", "[x]   y", " [x]", "<mask>", "q\n<mask>\n"]
    for s, g in zip(strings, _tokenize(path, strings)):
        assert g["ids"] == tok.encode(s, add_special_tokens=False).ids, repr(s)


# ---- bad input ------------------------------------------------------------------


def _fails(path, *needles, code=1):
    proc = subprocess.run([str(CLI), "tokenize", str(path), "hi"], capture_output=True, text=True)
    assert proc.returncode == code, proc.stdout + proc.stderr
    for n in needles:
        assert n in proc.stderr, proc.stderr


def test_bad_tokenizer_files_are_named(tmp_path):
    tok = _train("gpt2")
    good = json.loads(tok.to_str())
    _fails(tmp_path / "missing.json", "NOT_FOUND", "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    _fails(bad, "INVALID_ARGUMENT", "bad.json", "is not valid JSON")
    cases = [
        (lambda j: j.pop("model"), "INVALID_ARGUMENT", 'no "model"'),
        (lambda j: j["model"].update(type="WordPiece"), "UNIMPLEMENTED", '"WordPiece"'),
        (lambda j: j["model"].update(vocab=[1, 2]), "INVALID_ARGUMENT", "model.vocab"),
        (lambda j: j["model"]["merges"].append(["no-such", "token"]), "INVALID_ARGUMENT", "model.merges["),
        (lambda j: j["model"]["merges"].append(3), "INVALID_ARGUMENT", "not a pair of tokens"),
        (lambda j: j.update(normalizer={"type": "Lowercase"}), "UNIMPLEMENTED", '"Lowercase"'),
        (lambda j: j.update(pre_tokenizer={"type": "Whitespace"}), "UNIMPLEMENTED", '"Whitespace"'),
        (lambda j: j.update(pre_tokenizer=None), "UNIMPLEMENTED", "no ByteLevel"),
        (lambda j: j.update(decoder={"type": "WordPiece"}), "UNIMPLEMENTED", "decoder"),
        (lambda j: j.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": "(["}, "behavior": "Isolated"}),
         "INVALID_ARGUMENT", "not a valid regular expression"),
        (lambda j: j["added_tokens"][0].update(single_word=True), "UNIMPLEMENTED", "single_word"),
        (lambda j: j["added_tokens"][0].pop("id"), "INVALID_ARGUMENT", "added_tokens[0]"),
        (lambda j: j["model"].update(dropout=0.1), "UNIMPLEMENTED", "dropout"),
    ]
    for i, (edit, code, needle) in enumerate(cases):
        j = json.loads(json.dumps(good))
        edit(j)
        path = tmp_path / f"case{i}.json"
        path.write_text(json.dumps(j))
        _fails(path, code, f"case{i}.json", needle)


def test_invalid_utf8_text_is_refused(tmp_path):
    path = tmp_path / "tokenizer.json"
    _train("gpt2").save(str(path))
    proc = subprocess.run([str(CLI), "tokenize", str(path), b"ab\xffcd"], capture_output=True)
    assert proc.returncode == 1 and b"not valid UTF-8 (byte 2)" in proc.stderr, proc.stderr


def test_export_llm_warns_about_a_tokenizer_json_aotirt_cannot_read(tmp_path):
    """A SentencePiece-style BPE (Metaspace, byte_fallback) saved as
    tokenizer.json is said at export rather than at generate."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from aotirt._llm import _warn_unless_byte_level

    sp_style = Tokenizer(models.BPE(byte_fallback=True))
    sp_style.pre_tokenizer = pre_tokenizers.Metaspace()
    sp_style.save(str(tmp_path / "sp.json"))
    with pytest.warns(UserWarning, match="not a byte-level BPE"):
        _warn_unless_byte_level(tmp_path / "sp.json")
    _train("llama3").save(str(tmp_path / "bl.json"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_unless_byte_level(tmp_path / "bl.json")
