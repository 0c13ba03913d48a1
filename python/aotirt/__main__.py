# Command line for inspecting packages: `python -m aotirt shims PKG` lists the
# aoti_torch_* imports and whether aotirt provides them; `python -m aotirt
# metadata PKG` prints the package metadata.

from __future__ import annotations

import argparse
import json
import sys

from ._export import provided_shims
from ._package import imported_shims_by_model, read_metadata


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aotirt")
    sub = parser.add_subparsers(dest="command", required=True)
    shims = sub.add_parser("shims", help="list the aoti_torch_* symbols a package imports")
    shims.add_argument("package")
    meta = sub.add_parser("metadata", help="print a package's metadata json")
    meta.add_argument("package")
    meta.add_argument("--model", default=None)
    args = parser.parse_args(argv)

    if args.command == "metadata":
        print(json.dumps(read_metadata(args.package, args.model), indent=2))
        return 0

    missing_any = False
    for model, names in imported_shims_by_model(args.package).items():
        device = read_metadata(args.package, model).get("AOTI_DEVICE_KEY", "cpu")
        provided = provided_shims(device)
        print(f"# model {model} ({device}): {len(names)} aoti_torch_* imports")
        for name in names:
            ok = name in provided
            missing_any |= not ok
            print(f"{name}{'' if ok else '  MISSING'}")
    return 1 if missing_any else 0


if __name__ == "__main__":
    sys.exit(main())
