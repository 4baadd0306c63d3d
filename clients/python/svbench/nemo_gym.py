"""NeMo Gym dataset rows for svbench examples.

NeMo Gym's agents, and verifiers' NeMo Gym taskset
(verifiers/v1/tasksets/nemo_gym, PrimeIntellect-ai/verifiers a60a606), read
JSONL rows holding ``responses_create_params`` (the Responses API request:
``input`` messages and flat function ``tools``) and send each row back to
the resources server's ``/seed_session`` and ``/verify``; svbench's
resources-server routes (server/README.md) find the example in the row's
``verifier_metadata``.

    python3 -m svbench.nemo_gym e2 --split train > svbench_e2_train.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional

from svbench.client import Client

__all__ = ["row", "rows"]


def row(env: str, example: dict[str, Any]) -> dict[str, Any]:
    """One example of the examples endpoint as a NeMo Gym row. Responses API
    tools are flat: name and parameters at the top, not under ``function``."""
    tools = []
    for t in example.get("tools") or []:
        fn = t.get("function") if isinstance(t.get("function"), dict) else t
        tools.append({"type": "function", **{k: v for k, v in fn.items() if k != "type"}})
    params: dict[str, Any] = {"input": example["prompt"]}
    if tools:
        params["tools"] = tools
    return {"responses_create_params": params,
            "verifier_metadata": {"env": env, "example_id": str(example["example_id"])}}


def rows(env: str, client: Optional[Client] = None, split: Optional[str] = None, limit: int = 1000,
         seed: Optional[int] = None) -> list[dict[str, Any]]:
    """Up to limit rows of env's split (the server's default split when None)."""
    client = client or Client()
    out: list[dict[str, Any]] = []
    offset = 0
    while len(out) < limit:
        page = client.examples(env, split=split, offset=offset, limit=min(1000, limit - len(out)), seed=seed)
        exs = page.get("examples") or []
        out.extend(row(env, ex) for ex in exs)
        offset += len(exs)
        if not exs or offset >= int(page.get("total") or 0):
            break
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m svbench.nemo_gym", description=__doc__.split("\n\n")[0])
    ap.add_argument("env")
    ap.add_argument("--split")
    ap.add_argument("--limit", type=int, default=100000)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    for r in rows(args.env, split=args.split, limit=args.limit, seed=args.seed):
        sys.stdout.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
