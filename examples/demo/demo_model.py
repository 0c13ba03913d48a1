"""Exports the demo model (a small CNN classifier) with aotirt's exporter and
saves an input and eager PyTorch's output next to the package.

    python examples/demo/demo_model.py OUT_DIR [--device cpu]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import aotirt  # noqa: E402


class SmallCnn(nn.Module):
    """Conv-BN-ReLU blocks with a residual add, pooling and a linear head."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16))
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        x = self.down(x)
        return self.head(x.mean(dim=(2, 3)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = SmallCnn().eval().to(args.device)
    x = torch.randn(4, 3, 32, 32, device=args.device)
    pkg = os.path.join(args.out_dir, "small_cnn.pt2")
    t0 = time.time()
    aotirt.export(model, (x,), pkg, device=args.device)
    print(f"exported {pkg} in {time.time() - t0:.1f} s")
    with torch.no_grad():
        y = model(x)
        iters = 50
        for _ in range(5):
            model(x)
        t0 = time.perf_counter()
        for _ in range(iters):
            model(x)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        eager_us = (time.perf_counter() - t0) / iters * 1e6
    np.save(os.path.join(args.out_dir, "input.npy"), x.cpu().numpy())
    np.save(os.path.join(args.out_dir, "expected.npy"), y.cpu().numpy())
    with open(os.path.join(args.out_dir, "eager_us.txt"), "w") as f:
        f.write(f"{eager_us:.1f}\n")


if __name__ == "__main__":
    main()
