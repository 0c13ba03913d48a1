# What the measuring workers share and that needs neither torch nor
# onnxruntime: the process's peak RSS, the relative error of an output and
# the results label of a device, so that ort_worker.py can stay free of
# torch.

from __future__ import annotations

import re

import numpy as np


def device_label(name: str) -> str:
    """The results label of a GPU by its name: the model in lower case
    ("NVIDIA H200" -> "h200", "NVIDIA H100 80GB HBM3" -> "h100"), or "cuda"
    where the name shows none."""
    m = re.search(r"\b([A-Za-z]{1,2}\d{1,4})\b", name or "")
    return m.group(1).lower() if m else "cuda"


def vm_hwm_mb() -> float | None:
    """This process's peak resident set, in MB (None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def rel_error(a: np.ndarray, b: np.ndarray) -> float | None:
    """||a - b|| / ||b|| in float64 (the absolute norm when b is zero);
    None when the shapes differ."""
    if a.shape != b.shape:
        return None
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    denom = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / denom) if denom > 0 else float(np.linalg.norm(a - b))
