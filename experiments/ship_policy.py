"""Ship a trained policy checkpoint with the package: a float16 copy (half the size) in
``agents/policies/``, package data that ``ppo:policy=NAME`` loads by name.

    python -m experiments.ship_policy runs/ppo/mountain_bc/best.pt agents/policies/mountain.pt [--note TEXT]

The result is the same safe format as :mod:`agents.ppo` (plain values and tensors); the loader
casts the weights back to float32. A ``.json`` sidecar with the metadata (no weights, plus the
file's sha256) is written next to it; ``mountain-rummy agents`` lists it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--float32", action="store_true", help="keep float32 weights")
    p.add_argument("--note", default="", help="free text stored in the metadata")
    a = p.parse_args(argv)
    import torch

    from agents.ppo import load_policy

    load_policy(a.src)                                    # refuses anything but a policy file
    blob = torch.load(a.src, map_location="cpu", weights_only=True)
    dtype = torch.float32 if a.float32 else torch.float16
    nets = [k for k in blob if k.endswith("state_dict")]   # the actor, and a value network if any
    for key in nets:
        blob[key] = {k: v.to(dtype).contiguous() for k, v in blob[key].items()}
    blob["weights_dtype"] = str(dtype).replace("torch.", "")
    blob["source"] = str(a.src)
    if a.note:
        blob["note"] = a.note
    dst = Path(a.dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    torch.save(blob, tmp)
    os.replace(tmp, dst)
    meta = {k: v for k, v in blob.items() if k not in nets}
    meta["sha256"] = hashlib.sha256(dst.read_bytes()).hexdigest()
    dst.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    load_policy(dst)                                      # the shipped file loads
    print(f"{dst}: {dst.stat().st_size} bytes, {meta['weights_dtype']}, env_steps {meta.get('env_steps')}")


if __name__ == "__main__":
    main()
