"""Calls aotirt's op shims directly, from Python, for the conformance tests.

libaotirt.so is opened with ctypes (RTLD_LOCAL, so its aoti_torch_* symbols
never meet the ones torch's own libraries export in the same process).
Tensors cross as AtenTensorHandles made with aoti_torch_create_tensor_from_blob
over a torch tensor's memory, and results come back as torch tensors copied
out of the handles aotirt returns. dtype and device codes are c10's, as in
the ABI.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[2]

DTYPE_CODES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex64: 9,
    torch.complex128: 10, torch.bool: 11, torch.bfloat16: 15,
    torch.float8_e5m2: 23, torch.float8_e4m3fn: 24, torch.float8_e5m2fnuz: 25, torch.float8_e4m3fnuz: 26,
}
CODE_DTYPES = {v: k for k, v in DTYPE_CODES.items()}
DEVICE_CODES = {"cpu": 0, "cuda": 1}

Handle = ctypes.c_void_p


def library_path() -> Path:
    build = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
    return build / "lib" / "libaotirt.so"


class ShimError(RuntimeError):
    """A shim returned failure (1)."""


class Shims:
    def __init__(self, path: Path | None = None):
        self.path = Path(path or library_path())
        self.lib = ctypes.CDLL(str(self.path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
        self._keep = []  # torch tensors whose memory live handles borrow
        # For the results the suite records (conftest.py): the dtype of each
        # handle made here, and symbol -> dtypes of the calls that succeeded
        # since the last take_calls().
        self._dtype_of = {}
        self._calls = {}
        self._last_without_inputs = None

    def fn(self, name: str):
        return getattr(self.lib, name)

    def handle(self, t: torch.Tensor) -> Handle:
        """A handle viewing |t|'s memory (sizes, strides, offset kept)."""
        self._keep.append(t)
        ndim = t.dim()
        sizes = (ctypes.c_int64 * max(ndim, 1))(*t.shape)
        strides = (ctypes.c_int64 * max(ndim, 1))(*t.stride())
        out = Handle()
        base = t.untyped_storage().data_ptr()
        rc = self.fn("aoti_torch_create_tensor_from_blob")(
            ctypes.c_void_p(base), ctypes.c_int64(ndim), sizes, strides,
            ctypes.c_int64(t.storage_offset()), ctypes.c_int32(DTYPE_CODES[t.dtype]),
            ctypes.c_int32(DEVICE_CODES[t.device.type]), ctypes.c_int32(t.device.index or 0),
            ctypes.byref(out))
        if rc != 0:
            raise ShimError(f"aoti_torch_create_tensor_from_blob failed: {self.last_error()}")
        self._dtype_of[out.value] = str(t.dtype).replace("torch.", "")
        return out

    def tensor(self, h: Handle, device: str = "cpu") -> torch.Tensor:
        """A torch copy of the tensor behind |h|, with its sizes and strides;
        the handle is deleted."""
        ndim = ctypes.c_int64()
        self._check("aoti_torch_get_dim", h, ctypes.byref(ndim))
        sizes_p = ctypes.POINTER(ctypes.c_int64)()
        strides_p = ctypes.POINTER(ctypes.c_int64)()
        self._check("aoti_torch_get_sizes", h, ctypes.byref(sizes_p))
        self._check("aoti_torch_get_strides", h, ctypes.byref(strides_p))
        code = ctypes.c_int32()
        self._check("aoti_torch_get_dtype", h, ctypes.byref(code))
        data = ctypes.c_void_p()
        self._check("aoti_torch_get_data_ptr", h, ctypes.byref(data))
        sizes = [sizes_p[i] for i in range(ndim.value)]
        strides = [strides_p[i] for i in range(ndim.value)]
        dtype = CODE_DTYPES[code.value]
        if self._last_without_inputs in self._calls:
            self._calls[self._last_without_inputs].add(str(dtype).replace("torch.", ""))
        # Elements from the first to the last the view reaches.
        span = 1 + sum((s - 1) * st for s, st in zip(sizes, strides)) if all(sizes) else 0
        flat = torch.empty(span, dtype=dtype, device=device)
        if span:
            nbytes = span * flat.element_size()
            if device == "cpu":
                ctypes.memmove(flat.data_ptr(), data.value, nbytes)
            else:
                torch.cuda.synchronize()
                cudart = ctypes.CDLL("libcudart.so.13")
                cudart.cudaMemcpy(ctypes.c_void_p(flat.data_ptr()), data, ctypes.c_size_t(nbytes), 4)
        # as_strided then clone keeps the strides of a dense result (clone
        # preserves them); an empty one gets them directly.
        out = (torch.as_strided(flat, sizes, strides).clone() if span
               else torch.empty_strided(sizes, strides, dtype=dtype, device=device))
        self._dtype_of.pop(h.value, None)
        self.fn("aoti_torch_delete_tensor_object")(h)
        return out

    def last_error(self) -> str:
        """aotirt's message for the last failure on this thread."""
        f = self.lib.aotirt_last_error_message
        f.restype = ctypes.c_char_p
        return (f() or b"").decode("utf-8", "replace")

    @contextlib.contextmanager
    def run(self, device: str, index: int = 0):
        """The calls inside as one run (aotirt_run_begin / aotirt_run_end), as
        a model run brackets its library's calls: checks only device kernels
        can make are read at the end, where a failed one raises ShimError."""
        begin, end = self.fn("aotirt_run_begin"), self.fn("aotirt_run_end")
        begin.argtypes = [ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
        end.argtypes = [ctypes.c_void_p]
        r = ctypes.c_void_p()
        if begin(DEVICE_CODES[device], index, ctypes.byref(r)) != 0:
            raise ShimError(f"aotirt_run_begin failed: {self.last_error()}")
        try:
            yield
        except BaseException:
            end(r)
            raise
        if end(r) != 0:
            raise ShimError(f"aotirt_run_end failed: {self.last_error()}")

    def call(self, name: str, *args) -> None:
        """Calls shim |name|; ShimError, with aotirt's message, when it
        reports failure."""
        if self.fn(name)(*args) != 0:
            raise ShimError(f"{name} failed: {self.last_error()}")
        dtypes = self._arg_dtypes(args)
        self._calls.setdefault(name, set()).update(dtypes)
        # A factory (or a call whose inputs were not made here) is known by
        # the dtypes of the results read back after it.
        self._last_without_inputs = None if dtypes else name

    def take_calls(self) -> dict:
        """symbol -> dtypes of its input handles, for the calls that
        succeeded since the last take_calls()."""
        calls, self._calls = self._calls, {}
        self._last_without_inputs = None
        return calls

    def _arg_dtypes(self, args):
        found = set()
        for a in args:
            a = getattr(a, "_obj", a)  # ctypes.byref(x) -> x
            items = a if isinstance(a, ctypes.Array) else [a]
            for item in items:
                value = item.value if isinstance(item, ctypes.c_void_p) else item
                if isinstance(value, int) and value in self._dtype_of:
                    found.add(self._dtype_of[value])
        return found

    def _check(self, name, *args):
        if self.fn(name)(*args) != 0:
            raise ShimError(f"{name} failed: {self.last_error()}")

    def release(self):
        self._keep.clear()
        self._dtype_of.clear()


def out_handles(n: int):
    return [Handle() for _ in range(n)]


def int32_ptr(value: int | None):
    """An int32_t* argument: null for None."""
    return None if value is None else ctypes.byref(ctypes.c_int32(value))


def devices() -> list:
    """The devices the conformance tests run on: the CPU, and CUDA when torch sees a GPU."""
    found = ["cpu"]
    if torch.cuda.is_available():
        found.append("cuda")
    return found


def provided(shims: Shims, name: str) -> bool:
    """Whether the library exports shim |name| (an op a device lacks is skipped, not failed)."""
    try:
        shims.fn(name)
        return True
    except AttributeError:
        return False
