# aotirt.export: torch.export + AOTInductor packaging with the options aotirt
# needs (no libtorch link, weights as one raw blob next to the library), plus
# a description of the model's inputs and outputs stored in the package
# metadata, plus a refusal when the library needs shims aotirt lacks.

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from importlib import resources
from typing import Any, Iterable

import torch
from torch.utils import _pytree as pytree

from ._package import imported_shims_by_model, read_all_metadata
from ._vec_isa import prepare_vec_isa

# The three inductor options that make a package loadable without libtorch.
LEAN_OPTIONS = {
    "aot_inductor.link_libtorch": False,
    "aot_inductor.package_constants_in_so": False,
    "aot_inductor.package_constants_on_disk_format": "binary_blob",
}

INPUTS_KEY = "aotirt.inputs"
OUTPUTS_KEY = "aotirt.outputs"
FORMAT_KEY = "aotirt.metadata_version"
FORMAT_VERSION = "1"

# Inductor options per code-generation recipe (see export's docstring).
RECIPES = {
    "default": {},
    "triton": {
        "max_autotune": True,
        "max_autotune_gemm_backends": "TRITON",
        "max_autotune_conv_backends": "TRITON",
    },
}


def _attention_backends(recipe: str):
    """The triton recipe decomposes attention into math (no SDPA fallback)."""
    import contextlib

    if recipe != "triton":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.MATH])


def _compile_context(recipe: str, configs: dict):
    """Where the package is compiled: the recipe's attention backends, and
    autograd off when freezing is asked for (Inductor freezes only then; with
    autograd on it would silently make an ordinary package)."""
    import contextlib

    stack = contextlib.ExitStack()
    stack.enter_context(_attention_backends(recipe))
    if configs.get("freezing"):
        stack.enter_context(torch.no_grad())
    return stack


# Dynamic dimensions are written as this value in the shape lists.
DYNAMIC_DIM = -1


class ExportError(RuntimeError):
    """The model cannot be packaged for aotirt; the message says why."""

    def __init__(self, message: str, missing_shims: Iterable[str] = ()):
        super().__init__(message)
        self.missing_shims = sorted(missing_shims)


SHIM_LIST = "provided_shims.txt"
CUDA_SHIM_LIST = "provided_shims_cuda.txt"


def _read_shim_list(name: str) -> frozenset | None:
    entry = resources.files(__package__).joinpath(name)
    if not entry.is_file():
        return None
    names = set()
    for line in entry.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(line)
    return frozenset(names)


def provided_shims(device: str | torch.device | None = None) -> frozenset:
    """The aoti_torch_* symbols libaotirt.so exports.

    provided_shims.txt lists what every build exports (the CPU build); for a
    CUDA device the extra symbols of a CUDA-enabled build, listed in
    provided_shims_cuda.txt, are added.
    """
    names = _read_shim_list(SHIM_LIST) or frozenset()
    if device is not None and torch.device(device).type == "cuda":
        names |= _read_shim_list(CUDA_SHIM_LIST) or frozenset()
    return names


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _shape_of(t) -> list:
    dims = []
    for d in t.shape:
        # Export keeps dynamic dims as SymInts; anything concrete is an int.
        dims.append(int(d) if isinstance(d, int) else DYNAMIC_DIM)
    return dims


def _unique_names(names: list) -> list:
    seen: dict = {}
    out = []
    for n in names:
        if n in seen:
            seen[n] += 1
            n = f"{n}_{seen[n]}"
            while n in seen:
                n = n + "_"
        seen.setdefault(n, 0)
        out.append(n)
    return out


def describe_signature(ep: torch.export.ExportedProgram) -> tuple:
    """(inputs, outputs): lists of {"name", "dtype", "shape"} in call order.

    Only user inputs and user outputs appear: parameters and buffers are the
    package's constants, and buffer mutations are applied inside the model.
    """
    from torch.export.graph_signature import (
        InputKind,
        OutputKind,
        TensorArgument,
    )

    placeholders = {
        n.name: n for n in ep.graph_module.graph.nodes if n.op == "placeholder"
    }
    output_node = next(n for n in ep.graph_module.graph.nodes if n.op == "output")
    graph_outputs = list(pytree.tree_leaves(output_node.args[0]))

    inputs = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.USER_INPUT:
            continue
        if not isinstance(spec.arg, TensorArgument):
            raise ExportError(
                f"input {spec.arg} is not a tensor; aotirt packages take tensor inputs only"
            )
        val = placeholders[spec.arg.name].meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise ExportError(f"input {spec.arg.name} has no tensor metadata")
        inputs.append(
            {"name": spec.arg.name, "dtype": dtype_name(val.dtype), "shape": _shape_of(val)}
        )

    outputs = []
    for i, spec in enumerate(ep.graph_signature.output_specs):
        if spec.kind != OutputKind.USER_OUTPUT:
            continue
        if not isinstance(spec.arg, TensorArgument):
            raise ExportError(
                f"output {i} ({spec.arg}) is not a tensor; aotirt packages return tensors only"
            )
        node = graph_outputs[i] if i < len(graph_outputs) else None
        val = getattr(node, "meta", {}).get("val") if node is not None else None
        if not isinstance(val, torch.Tensor):
            raise ExportError(f"output {spec.arg.name} has no tensor metadata")
        outputs.append(
            {"name": spec.arg.name, "dtype": dtype_name(val.dtype), "shape": _shape_of(val)}
        )

    for group in (inputs, outputs):
        for entry, name in zip(group, _unique_names([e["name"] for e in group])):
            entry["name"] = name
    return inputs, outputs


def _to_device(tree, device: torch.device):
    return pytree.tree_map(
        lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, tree
    )


def mutates_state(ep: torch.export.ExportedProgram) -> bool:
    """Whether the program writes to its own buffers or parameters."""
    from torch.export.graph_signature import OutputKind

    kinds = (OutputKind.BUFFER_MUTATION, OutputKind.PARAMETER_MUTATION)
    # torch.export keeps in-place ops in its graph; mutations only show up in
    # the signature once the program is functionalized.
    functional = ep.run_decompositions({})
    return any(s.kind in kinds for s in functional.graph_signature.output_specs)


def _compile_options(
    inductor_configs: dict | None,
    options: dict,
    inputs: list,
    outputs: list,
    stateful: bool = False,
) -> dict:
    merged = dict(LEAN_OPTIONS)
    # aotirt runs the library's generated input checks on every call. Their
    # lower bound on a dynamic dimension is torch.export's 2 (it specialises
    # sizes 0 and 1), which would refuse a batch of one that the kernels
    # handle; the checks of dtypes, ranks, static sizes and strides stay.
    merged["aot_inductor.check_lowerbound"] = False
    if stateful:
        # Inductor's joint-graph constant folding replaces a buffer whose
        # elements are all equal (a zero-initialised counter, say) by its
        # initial value even when the model updates it, so the state would
        # never advance between calls (seen on torch 2.11).
        merged["joint_graph_constant_folding"] = False
    for source in (inductor_configs or {}, options):
        for key, value in source.items():
            if key == "aot_inductor.link_libtorch" and value:
                raise ExportError(
                    "aot_inductor.link_libtorch=True makes the library depend on "
                    "libtorch; aotirt packages must not"
                )
            merged[key] = value

    metadata = dict(merged.get("aot_inductor.metadata") or {})
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ExportError(
                f"aot_inductor.metadata entries must be str -> str, got {key!r}: {value!r}"
            )
    metadata[INPUTS_KEY] = json.dumps(inputs, separators=(",", ":"))
    metadata[OUTPUTS_KEY] = json.dumps(outputs, separators=(",", ":"))
    metadata[FORMAT_KEY] = FORMAT_VERSION
    merged["aot_inductor.metadata"] = metadata
    return merged


def check_package_shims(
    pt2_path, provided: frozenset | None = None, device: str | torch.device | None = None
) -> dict:
    """{model: [missing aoti_torch_* names]} for models needing unprovided shims."""
    provided = provided_shims(device) if provided is None else provided
    missing = {}
    for model, names in imported_shims_by_model(pt2_path).items():
        lacking = [n for n in names if n not in provided]
        if lacking:
            missing[model] = lacking
    return missing


def _verify_metadata(pt2_path: str, expected: dict) -> None:
    found = read_all_metadata(pt2_path)
    wrappers = {k: v for k, v in found.items() if k.endswith(".wrapper_metadata.json")}
    if not wrappers:
        raise ExportError(f"{pt2_path}: no wrapper metadata json in the package")
    for entry, meta in wrappers.items():
        for key, value in expected.items():
            if meta.get(key) != value:
                raise ExportError(f"{entry}: metadata key {key} missing or altered")


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def export(
    module: torch.nn.Module,
    example_inputs: tuple,
    path,
    device: str | torch.device = "cpu",
    dynamic_shapes=None,
    *,
    example_kwargs: dict | None = None,
    strict: bool = False,
    inductor_configs: dict | None = None,
    check_shims: bool = True,
    recipe: str = "default",
    **options: Any,
) -> str:
    """Export `module` and write an aotirt-loadable AOTInductor package to `path`.

    `module` and the example inputs are moved to `device` (the module in
    place). Extra keyword `options` and `inductor_configs` are inductor config
    overrides, e.g. ``**{"max_autotune": True}``. Returns the package path.

    `recipe` picks the code generation: "default" is AOTInductor's own (GEMM,
    convolution and attention may become fallback calls into the runtime);
    "triton" (CUDA only) is ExecuTorch's recipe: GEMM and convolution are
    autotuned Triton kernels and attention is decomposed into plain math, so
    the library needs no fallback operator at all.

    For a CPU device, Inductor's vector-ISA probe is prepared first
    (`prepare_vec_isa`), so the kernels use this host's best vector ISA even
    on a machine whose probe cache a lean export spoilt.

    A model that updates its own buffers is compiled with Inductor's
    joint-graph constant folding off (unless the caller sets it), because that
    pass can freeze such a buffer at its initial value.

    Raises ExportError when the model cannot be described (non-tensor inputs or
    outputs) or when its library imports aoti_torch_* shims that aotirt does
    not provide; in that case nothing is left at `path`.
    """
    path = os.fspath(path)
    if not path.endswith(".pt2"):
        raise ExportError(f"package path must end in .pt2: {path}")
    if not isinstance(example_inputs, tuple):
        example_inputs = tuple(example_inputs)
    device = torch.device(device)
    if recipe not in RECIPES:
        raise ExportError(f"unknown recipe {recipe!r}; choose one of {sorted(RECIPES)}")
    if recipe == "triton" and device.type != "cuda":
        raise ExportError("the triton recipe is for CUDA devices")
    options = {**RECIPES[recipe], **options}

    module = module.to(device)
    args = _to_device(example_inputs, device)
    kwargs = _to_device(example_kwargs, device) if example_kwargs else None

    with _attention_backends(recipe):
        ep = torch.export.export(
            module, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes, strict=strict
        )
    inputs, outputs = describe_signature(ep)
    configs = _compile_options(
        inductor_configs, options, inputs, outputs, stateful=mutates_state(ep)
    )

    if device.type == "cpu":
        prepare_vec_isa()

    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    # Build into a private folder under the same file name (the zip's top
    # folder is named after it), then rename into place, so a failed or
    # refused export never leaves a partial package at `path`.
    staging = tempfile.mkdtemp(prefix=".aotirt-export-", dir=parent)
    staged = os.path.join(staging, os.path.basename(path))
    try:
        try:
            with _compile_context(recipe, configs):
                torch._inductor.aoti_compile_and_package(
                    ep, package_path=staged, inductor_configs=configs
                )
        except Exception as exc:  # Inductor wraps the reason in its own error types
            # Triton has convolution templates for 2-d, non-transposed convs
            # only; the others fall back to aotirt's cuDNN convolution.
            if recipe != "triton" or "max_autotune_conv_backends" not in str(exc):
                raise
            warnings.warn("triton recipe: Triton has no template for some convolution; "
                          "those use aotirt's cuDNN convolution instead")
            configs = {**configs, "max_autotune_conv_backends": "TRITON,ATEN"}
            with _compile_context(recipe, configs):
                torch._inductor.aoti_compile_and_package(
                    ep, package_path=staged, inductor_configs=configs
                )
        _verify_metadata(
            staged,
            {k: configs["aot_inductor.metadata"][k] for k in (INPUTS_KEY, OUTPUTS_KEY)},
        )
        if check_shims:
            missing = check_package_shims(staged, device=device)
            if missing:
                names = sorted({n for v in missing.values() for n in v})
                lists = SHIM_LIST + (f" + {CUDA_SHIM_LIST}" if device.type == "cuda" else "")
                _remove(path)
                raise ExportError(
                    "the compiled model imports aoti_torch_* shims that aotirt does not "
                    f"provide: {', '.join(names)} (provided set: python/aotirt/{lists}); "
                    f"no package was written to {path}",
                    missing_shims=names,
                )
        os.replace(staged, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path

