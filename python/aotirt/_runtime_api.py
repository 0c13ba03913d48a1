# aotirt's runtime API in Python: load an AOTInductor .pt2 package and run it
# without torch (docs/python.md). A thin layer over the native module
# aotirt._runtime (python/bindings/runtime.cpp): it adds the dtypes numpy
# cannot name (bfloat16 and float8, through ml_dtypes), the spec objects and
# the docstrings. Imports numpy and ml_dtypes, never torch.

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _nvidia
from ._errors import Error, InvalidArgumentError

try:
    from . import _runtime
    _IMPORT_ERROR: Optional[BaseException] = None
except ImportError as e:  # a source tree without the built module
    _runtime = None
    _IMPORT_ERROR = e

# aotirt's dtype codes (c10's) of the types numpy lacks, by ml_dtypes name.
_NARROW_CODES = {"bfloat16": 15, "float8_e5m2": 23, "float8_e4m3fn": 24, "float8_e5m2fnuz": 25,
                 "float8_e4m3fnuz": 26}
_NARROW_NAMES = {v: k for k, v in _NARROW_CODES.items()}


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"INVALID_ARGUMENT: {message}", message, "INVALID_ARGUMENT")


def _native():
    if _runtime is None:
        raise ImportError("aotirt's native runtime module is not installed: install the wheel "
                          "(pip install aotirt) or build it with -DAOTIRT_BUILD_PYTHON=ON") from _IMPORT_ERROR
    return _runtime


@dataclass(frozen=True)
class TensorSpec:
    """What a package says about one input or output.

    ``dtype`` is torch's name ("float32", "bfloat16", ...) and ``shape`` a
    tuple with ``None`` for a dynamic dimension; either is ``None`` when the
    package does not record it.
    """

    name: str
    dtype: Optional[str]
    shape: Optional[Tuple[Optional[int], ...]]


def _specs(raw) -> List[TensorSpec]:
    return [TensorSpec(s["name"], s["dtype"], None if s["shape"] is None else tuple(s["shape"])) for s in raw]


def _narrow_dtype(name: str):
    import ml_dtypes  # a dependency of the wheel; only needed for these dtypes

    return np.dtype(getattr(ml_dtypes, name))


_OUTPUT_MODES = frozenset(("auto", "numpy", "dlpack"))
_NO_CODES: dict = {}


def _no_codes(n: int) -> list:
    codes = _NO_CODES.get(n)
    if codes is None:
        codes = _NO_CODES[n] = [-1] * n
    return codes


def _prepare(i: int, x: Any) -> Tuple[Any, int]:
    """An input as the native module takes it, and its dtype code override."""
    if isinstance(x, np.ndarray):
        name = x.dtype.name
        if name in _NARROW_CODES:
            view = np.dtype(np.uint16) if x.dtype.itemsize == 2 else np.dtype(np.uint8)
            return np.ascontiguousarray(x).view(view), _NARROW_CODES[name]
        if x.dtype.hasobject or x.dtype.fields is not None:
            raise _invalid(f"input {i} has numpy dtype {x.dtype}, which aotirt "
                           "does not take")
        return x, -1
    if np.isscalar(x) or isinstance(x, (list, tuple)):
        raise _invalid(f"input {i} is a {type(x).__name__}; pass a numpy array "
                       "or a DLPack tensor (torch, cupy, jax)")
    return x, -1


class Model:
    """A loaded package. Make one with :func:`aotirt.load`.

    Calls may come from several threads at once (the GIL is released while
    the model runs); ``num_runners`` at load sets how many run in parallel.
    """

    def __init__(self, native) -> None:
        self._native = native
        self._inputs = _specs(native.inputs)
        self._outputs = _specs(native.outputs)

    @property
    def inputs(self) -> List[TensorSpec]:
        """The input specs, in call order."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorSpec]:
        """The output specs, in return order."""
        return list(self._outputs)

    @property
    def device(self) -> str:
        """Where the model runs: "cpu" or "cuda:N"."""
        return self._native.device

    @property
    def package(self) -> dict:
        """What :func:`aotirt.inspect` says about the package."""
        return self._native.package

    def run(self, inputs: Sequence[Any], outputs: str = "auto") -> list:
        """Runs the model on ``inputs`` and returns its outputs as a list.

        Inputs are numpy arrays or DLPack tensors (torch, cupy, jax), used in
        place when they are dense and on the model's device or the host
        (host inputs of a CUDA model are copied to it); strided ones are
        copied densely first.

        ``outputs``: "numpy" gives numpy arrays (device outputs are copied
        to the host); "dlpack" gives arrays that speak DLPack and stay on the
        model's device (``torch.from_dlpack(out)`` takes them without a
        copy); "auto" gives numpy arrays for outputs on the host and DLPack
        arrays otherwise. Outputs own their memory.
        """
        if outputs not in _OUTPUT_MODES:
            raise _invalid(f"outputs must be 'auto', 'numpy' or 'dlpack', "
                           f"not {outputs!r}")
        if type(inputs) is not list and type(inputs) is not tuple:
            if isinstance(inputs, (np.ndarray, str, bytes)) or not isinstance(inputs, Sequence):
                raise _invalid("run() takes a list of inputs; call the model "
                               "directly to pass them one by one")
        return self._run(inputs, outputs)

    def _run(self, inputs, outputs: str) -> list:
        # The common case first: numpy arrays of the types numpy names
        # (bool, ints, floats, complex), passed as they are.
        plain = True
        for x in inputs:
            if type(x) is not np.ndarray or x.dtype.kind not in "biufc":
                plain = False
                break
        if plain:
            arrays, codes = inputs, _no_codes(len(inputs))
        else:
            arrays, codes = [], []
            for i, x in enumerate(inputs):
                a, c = _prepare(i, x)
                arrays.append(a)
                codes.append(c)
        try:
            result, views = self._native.run(arrays, codes, outputs, False)
        except TypeError as e:  # nanobind could not read an input as an array
            raise _invalid(f"an input is neither a numpy array nor a DLPack "
                           f"tensor aotirt can read ({e})") from None
        if views is not None:
            for k, code in enumerate(views):
                if code >= 0:
                    result[k] = result[k].view(_narrow_dtype(_NARROW_NAMES[code]))
        return result

    def __call__(self, *inputs: Any) -> list:
        """``model(x, y)`` is ``model.run([x, y])``."""
        return self._run(inputs, "auto")

    def __repr__(self) -> str:
        return (f"aotirt.Model({self.package['path']!r}, device={self.device!r}, "
                f"inputs={len(self._inputs)}, outputs={len(self._outputs)})")


def load(path: "str | os.PathLike[str]", device: Optional[str] = None, *, num_runners: int = 1,
         cuda_graph: bool = False) -> Model:
    """Loads a .pt2 package and returns a :class:`Model`.

    ``device``: "cpu", "cuda" or "cuda:N"; by default the package's own
    device (index 0). ``num_runners``: runs that may go on at once.
    ``cuda_graph``: replay CUDA graphs after a warm-up run (CUDA only).

    Loading runs the native code inside the package: load only packages you
    trust (:func:`inspect` reads one without running anything).
    """
    if not isinstance(num_runners, int) or num_runners < 1:
        raise _invalid(f"num_runners must be a positive int, not {num_runners!r}")
    native = _native()
    if device is None or not str(device).startswith("cpu"):
        _nvidia.point_at_wheels()
    return Model(native.load(os.fspath(path), device, num_runners, bool(cuda_graph)))


def inspect(path: "str | os.PathLike[str]") -> dict:
    """Reads a package without running it: safe on files of unknown origin.

    Returns a dict: device, model_name, inputs and outputs (as dicts),
    weight_bytes, missing_shims (the aoti_torch_* imports aotirt lacks),
    warnings, metadata and more.
    """
    return _native().inspect(os.fspath(path))


def runtime_version() -> str:
    """The version of the native runtime."""
    return _native().version()


def cmake_dir() -> str:
    """The folder with aotirtConfig.cmake, for CMake's ``-Daotirt_DIR=``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "cmake", "aotirt")


__all__ = ["Error", "Model", "TensorSpec", "cmake_dir", "inspect", "load", "runtime_version"]
