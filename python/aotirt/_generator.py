# aotirt.Generator: token generation in Python from a model directory that
# aotirt.export_llm wrote (prefill.pt2, decode.pt2, llm.json), on the C++
# Generator (include/aotirt/generate.h) through the native module. Token ids
# in, token ids out, as in C++: text goes through the tokenizer the export
# saved (config["tokenizer"]) with the user's tokenizer library. Imports
# numpy at most, never torch (docs/python.md, "Generating tokens").

from __future__ import annotations

import atexit
import numbers
import os
import queue
import threading
from typing import Any, Callable, Iterator, List, Optional, Sequence

from . import _nvidia
from ._errors import InvalidArgumentError
from ._runtime_api import _native

_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"INVALID_ARGUMENT: {message}", message, "INVALID_ARGUMENT")


def _is_int(x: Any) -> bool:
    # bool is an Integral, but True as a token id is a mistake, not a 1.
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _token_ids(what: str, ids: Any) -> List[int]:
    if isinstance(ids, (str, bytes)):
        raise _invalid(f"{what} is text; a Generator takes token ids: encode it with the tokenizer that "
                       f"export_llm saved (Generator.config['tokenizer'])")
    try:
        items = list(ids)
    except TypeError:
        raise _invalid(f"{what} must be a sequence of token ids, not {type(ids).__name__}") from None
    out = []
    for i, t in enumerate(items):
        if not _is_int(t):
            raise _invalid(f"{what}[{i}] is {t!r} ({type(t).__name__}), not an integer token id")
        t = int(t)
        if not -_INT64_MAX - 1 <= t <= _INT64_MAX:
            raise _invalid(f"{what}[{i}] is {t}, which does not fit in 64 bits")
        out.append(t)
    return out


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _invalid(f"{name} must be a number, not {value!r}")
    return float(value)


def _count(name: str, value: Any, limit: int) -> int:
    if not _is_int(value):
        raise _invalid(f"{name} must be an int, not {value!r}")
    value = int(value)
    if value < 0:
        raise _invalid(f"{name} must not be negative, not {value}")
    if value > limit:
        raise _invalid(f"{name} must be at most {limit}, not {value}")
    return value


_DONE = object()

# Streams whose generation still runs on its own thread. At interpreter exit
# each is told to stop and waited for, so that no generation calls back into
# a Python that is shutting down (an iterator left unfinished and unclosed).
_LIVE_STREAMS: "set[tuple[threading.Event, threading.Thread]]" = set()
_LIVE_LOCK = threading.Lock()


def _stop_live_streams() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE_STREAMS)
    for stop, worker in live:
        stop.set()
    for stop, worker in live:
        worker.join(timeout=60)


atexit.register(_stop_live_streams)


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class Generator:
    """Generates tokens from a directory that :func:`aotirt.export_llm`
    wrote: its prefill and decode packages are loaded as one group (each
    weight held once), and the KV cache stays on the model's device.

    ``device``: "cpu", "cuda" or "cuda:N"; by default the packages' own
    device. ``cuda_graph``: on CUDA, decode steps replay a CUDA graph after
    the first two (docs/generate.md).

    Loading runs the native code inside the packages: load only directories
    you trust.
    """

    def __init__(self, path: "str | os.PathLike[str]", device: Optional[str] = None, *,
                 cuda_graph: bool = True) -> None:
        if device is not None and not isinstance(device, str):
            raise _invalid(f"device must be a str such as 'cpu' or 'cuda:0', not {device!r}")
        native = _native()
        if device is None or not device.startswith("cpu"):
            _nvidia.point_at_wheels()
        self._native = native.load_generator(os.fspath(path), device, bool(cuda_graph))
        self._config = self._native.config

    @property
    def config(self) -> dict:
        """What llm.json says: vocab_size, max_cache_len, num_layers,
        cache_shape, cache_dtype, stop_token_ids, bos_token_id (None if the
        model has none), tokenizer (its path, or None), the packages' paths
        and export_id."""
        return dict(self._config)

    @property
    def device(self) -> str:
        """Where the model runs: "cpu" or "cuda:N"."""
        return self._native.device

    @property
    def weight_bytes(self) -> int:
        """Bytes of weights held for both packages, each shared weight once."""
        return self._native.weight_bytes

    @property
    def unshared_weight_bytes(self) -> int:
        """What the two packages would hold loaded apart."""
        return self._native.unshared_weight_bytes

    @property
    def last_stats(self) -> Optional[dict]:
        """What the last call that generated reported: prompt_tokens,
        generated_tokens, prefill_seconds, decode_seconds,
        first_token_seconds, stop_reason ("max_new_tokens", "stop_token",
        "cache_full" or "cancelled"), graph_replays, reused_tokens (prompt
        tokens the cache already held: reuse_cache), and the rates
        prefill_tokens_per_s and decode_tokens_per_s (0 where not measured).
        None before the first call."""
        st = self._native.last_stats
        if st is None:
            return None
        st = dict(st)
        st["prefill_tokens_per_s"] = (st["prompt_tokens"] / st["prefill_seconds"]
                                      if st["prefill_seconds"] > 0 else 0.0)
        st["decode_tokens_per_s"] = ((st["generated_tokens"] - 1) / st["decode_seconds"]
                                     if st["generated_tokens"] > 1 and st["decode_seconds"] > 0 else 0.0)
        return st

    def generate(self, prompt: Sequence[int], max_new_tokens: int = 128, *, temperature: float = 0.0,
                 top_k: int = 0, top_p: float = 1.0, seed: int = 0,
                 stop_token_ids: Optional[Sequence[int]] = None, ignore_eos: bool = False,
                 reuse_cache: bool = False, on_token: Optional[Callable[[int], Any]] = None) -> List[int]:
        """Generates after ``prompt`` (token ids, not returned) and returns
        the new tokens.

        Generation ends after ``max_new_tokens``, after a stop token (it is
        returned), or when the cache is full. The stop tokens are
        ``stop_token_ids`` and, unless ``ignore_eos``, those of llm.json.
        ``temperature`` 0 is greedy (the lowest id on ties); otherwise the
        logits are divided by it, cut to the ``top_k`` most likely (0: no
        cut) and to the smallest set whose probability reaches ``top_p``, and
        a token is drawn from a generator seeded with ``seed``.

        ``on_token(token)`` is called with each token as it is chosen;
        returning False stops generation after that token, and an exception
        it raises stops it and propagates. Ctrl-C (KeyboardInterrupt) stops
        it after the current token.

        Each call starts from an empty cache, unless ``reuse_cache``: then
        the cache keeps what the previous call left (its prompt and all but
        its last generated token) as far as ``prompt`` begins with it, and
        only the rest of ``prompt`` runs, so a chat's next turn, given the
        whole conversation, prefills only its new tokens
        (``last_stats["reused_tokens"]`` counts what was skipped).

        One call at a time per Generator: another thread's call meanwhile
        raises InvalidArgumentError.
        """
        ids = _token_ids("prompt", prompt)
        stops = [] if stop_token_ids is None else _token_ids("stop_token_ids", stop_token_ids)
        if on_token is not None and not callable(on_token):
            raise _invalid(f"on_token must be callable or None, not {on_token!r}")
        return self._native.generate(ids, _count("max_new_tokens", max_new_tokens, _INT64_MAX),
                                     _number("temperature", temperature), _count("top_k", top_k, _INT64_MAX),
                                     _number("top_p", top_p), _count("seed", seed, _UINT64_MAX), stops,
                                     not ignore_eos, bool(reuse_cache), on_token)

    def stream(self, prompt: Sequence[int], max_new_tokens: int = 128, **options: Any) -> Iterator[int]:
        """Yields the tokens :meth:`generate` returns, each as soon as it is
        chosen (generation runs on a thread of its own). Leaving the loop
        early, or closing the iterator, stops generation after the current
        token. Takes generate's options except ``on_token``. The prompt's
        form is checked here; what generate checks against the model comes
        out of the first item."""
        if "on_token" in options:
            raise _invalid("stream() hands out the tokens itself: it takes no on_token")
        return self._stream(_token_ids("prompt", prompt), max_new_tokens, options)

    def _stream(self, prompt: List[int], max_new_tokens: int, options: dict) -> Iterator[int]:
        tokens: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        stop = threading.Event()

        def on_token(token: int) -> bool:
            tokens.put(token)
            return not stop.is_set()

        def work() -> None:
            try:
                self.generate(prompt, max_new_tokens, on_token=on_token, **options)
                tokens.put(_DONE)
            except BaseException as e:  # handed to the consumer's thread
                tokens.put(_Failure(e))

        worker = threading.Thread(target=work, name="aotirt-generate", daemon=True)
        live = (stop, worker)
        with _LIVE_LOCK:
            _LIVE_STREAMS.add(live)
        worker.start()
        try:
            while True:
                item = tokens.get()
                if item is _DONE:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                yield item
        finally:
            stop.set()
            worker.join()
            with _LIVE_LOCK:
                _LIVE_STREAMS.discard(live)

    def __repr__(self) -> str:
        c = self._config
        return (f"aotirt.Generator(device={self.device!r}, layers={c['num_layers']}, "
                f"vocab_size={c['vocab_size']}, max_cache_len={c['max_cache_len']})")


__all__ = ["Generator"]
