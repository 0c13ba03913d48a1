# aotirt's Python side: exporting PyTorch models into AOTInductor packages that
# the aotirt C++ runtime can load without libtorch, and inspecting packages.

from ._export import (
    DYNAMIC_DIM,
    FORMAT_KEY,
    INPUTS_KEY,
    LEAN_OPTIONS,
    RECIPES,
    OUTPUTS_KEY,
    ExportError,
    check_package_shims,
    describe_signature,
    dtype_name,
    export,
    provided_shims,
)
from ._llm import LLM_CONFIG, export_llm, quantize_llm
from ._package import (
    foreign_imports_by_model,
    imported_shims,
    imported_shims_by_model,
    model_names,
    read_metadata,
)
from ._vec_isa import prepare_vec_isa

__all__ = [
    "DYNAMIC_DIM",
    "FORMAT_KEY",
    "INPUTS_KEY",
    "LEAN_OPTIONS",
    "RECIPES",
    "OUTPUTS_KEY",
    "ExportError",
    "check_package_shims",
    "describe_signature",
    "dtype_name",
    "export",
    "export_llm",
    "quantize_llm",
    "LLM_CONFIG",
    "foreign_imports_by_model",
    "imported_shims",
    "imported_shims_by_model",
    "model_names",
    "prepare_vec_isa",
    "provided_shims",
    "read_metadata",
]
