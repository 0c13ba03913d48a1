# aotirt's Python side.
#
# The runtime (load, Model, Generator, inspect, Error and its subclasses) runs
# .pt2 packages without torch: it needs numpy and, for bfloat16 and float8
# arrays, ml_dtypes (docs/python.md). The exporter (export, export_llm, ...) turns
# PyTorch models into packages and imports torch when first used; install it
# with `pip install aotirt[export]`. Package reading (read_metadata,
# imported_shims, ...) needs neither.

from __future__ import annotations

import importlib

from ._errors import (
    DataLossError,
    Error,
    IncompatibleError,
    InternalError,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
)
from ._package import (
    foreign_imports_by_model,
    imported_shims,
    imported_shims_by_model,
    model_names,
    read_metadata,
)
from ._generator import Generator
from ._runtime_api import Model, TensorSpec, cmake_dir, inspect, load, runtime_version

__version__ = "0.1.0"

# The exporter's names, each loaded from its module on first use, so that
# `import aotirt` never imports torch.
_LAZY = {
    "DYNAMIC_DIM": "_export",
    "FORMAT_KEY": "_export",
    "INPUTS_KEY": "_export",
    "LEAN_OPTIONS": "_export",
    "RECIPES": "_export",
    "OUTPUTS_KEY": "_export",
    "ExportError": "_export",
    "check_package_shims": "_export",
    "describe_signature": "_export",
    "dtype_name": "_export",
    "export": "_export",
    "provided_shims": "_export",
    "LLM_CONFIG": "_llm",
    "export_llm": "_llm",
    "quantize_llm": "_llm",
    "prepare_vec_isa": "_vec_isa",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'aotirt' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DataLossError",
    "Error",
    "Generator",
    "IncompatibleError",
    "InternalError",
    "InvalidArgumentError",
    "IoError",
    "Model",
    "NotFoundError",
    "OutOfRangeError",
    "ResourceExhaustedError",
    "TensorSpec",
    "UnavailableError",
    "UnimplementedError",
    "cmake_dir",
    "foreign_imports_by_model",
    "imported_shims",
    "imported_shims_by_model",
    "inspect",
    "load",
    "model_names",
    "read_metadata",
    "runtime_version",
    *_LAZY,
]
