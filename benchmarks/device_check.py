"""The GPU path measured: exactness against the CPU, throughput at the paper's scale, long context.

    bash benchmarks/device_check.sh             # on a CUDA machine: one JSON file in $OUT (or benchmarks/)
    bash benchmarks/device_check.sh --dry-run   # the same code path on the CPU at tiny sizes (JSON in $TMPDIR)

Runs on a bare GPU machine with no network: the models are randomly initialised from the
real architectures' configurations (the attention cost does not depend on the weights'
values), the tokenizer is a byte-level BPE trained on a small slice of WikiText-103 that
the shell script copies into ``.device-data/`` (ignored by git) before the repository
travels. Sections, each timed against ``--budget-s`` and skipped, with the reason, when the
time left would not cover it:

1. ``exactness``: the engine's ``svd`` (float32) and ``gram`` (float64) on CUDA against
   ``lapack`` on the CPU, on the same matrices: random softmax P (logits N(0, 3²)) and the
   captured P of the RoBERTa-base-shaped model (near rank one: random weights give almost
   uniform rows), each against a float64 SVD; ``max_curve_diff_svd_vs_lapack`` is the
   largest difference of the normalised cumulative curves between the two engines.
2. ``throughput``: ``attnspec.spectrum`` end to end (tokenise, forward under capture,
   singular values, aggregation) at n = 512 for RoBERTa-base (12 × 12, hidden 768) and
   RoBERTa-large (24 × 16, hidden 1024) shapes, at the default batch size and at a larger
   one, after a warm-up run; the time for 10,000 inputs is extrapolated linearly.
3. ``long_context``: one input at n = 4096 and 8192 through a SmolLM2-135M-shaped Llama
   (9 query heads, 3 key/value heads, hidden 576), exact spectra on the GPU. Only the first
   ``--long-layers`` of the 30 layers are built (every layer has the same shape and cost),
   and the per-input time is extrapolated to 30 layers; the JSON says so.
4. ``tests``: ``pytest -m cuda`` (the suite's CUDA tests), its summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SLICE = REPO / ".device-data" / "wiki.valid.slice.txt"
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "benchmarks")]

# The real architectures' shapes (Hugging Face configs of roberta-base, roberta-large and
# HuggingFaceTB/SmolLM2-135M); vocabulary sizes follow the BPE trained here.
ROBERTA_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
ROBERTA_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
SMOLLM2_135M = dict(
    hidden_size=576,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    intermediate_size=1536,
    rope_theta=100000.0,
    rms_norm_eps=1e-5,
    tie_word_embeddings=True,
)
# --dry-run: the same code at sizes a 2-core CPU runs in about a minute.
TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


class Budget:
    """Wall-clock budget for the whole check; a section runs only if its estimate fits."""

    def __init__(self, seconds: float):
        self.end = time.perf_counter() + seconds

    def left(self) -> float:
        return self.end - time.perf_counter()


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _texts(tokenizer, n: int, count: int) -> list[str]:
    """``count`` documents of at least ``n`` tokens each, consecutive paragraphs of the slice joined."""
    paragraphs = [p.strip() for p in SLICE.read_text().split("\n") if len(p.strip()) > 40]
    out, cur, i = [], [], 0
    while len(out) < count:
        cur.append(paragraphs[i % len(paragraphs)])
        i += 1
        text = " ".join(cur)
        if len(tokenizer(text)["input_ids"]) >= n:
            out.append(text)
            cur = []
    return out


def _tokenizer(work: Path, decoder: bool):
    """A byte-level BPE trained on the slice (RoBERTa's special tokens, or Llama's BOS)."""
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    text = SLICE.read_text()
    special = ["<s>", "</s>"] if decoder else ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([text], vocab_size=8000, min_frequency=2, special_tokens=special, show_progress=False)
    if decoder:
        bpe.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
        tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>")
        tok.model_max_length = 1 << 20
        return tok
    out = work / "roberta-tok"
    out.mkdir(parents=True, exist_ok=True)
    bpe.save_model(str(out))
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "RobertaTokenizer",
                "model_max_length": 1 << 20,
                "bos_token": "<s>",
                "eos_token": "</s>",
                "sep_token": "</s>",
                "cls_token": "<s>",
                "unk_token": "<unk>",
                "pad_token": "<pad>",
                "mask_token": "<mask>",
            }
        )
    )
    return AutoTokenizer.from_pretrained(str(out))


def _roberta(shape: dict, vocab: int, n: int, device):
    import torch
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    # RoBERTa numbers positions from padding_idx + 1: max_position_embeddings = n + 2.
    cfg = RobertaConfig(
        vocab_size=vocab, max_position_embeddings=n + 2, pad_token_id=1, attn_implementation="eager", **shape
    )
    return RobertaModel(cfg, add_pooling_layer=False).eval().to(device)


def _llama(shape: dict, vocab: int, n: int, layers: int, device):
    import torch
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    cfg = LlamaConfig(
        **dict(shape, num_hidden_layers=layers),
        vocab_size=vocab,
        max_position_embeddings=max(n, 8192),
        bos_token_id=0,
        eos_token_id=1,
        attn_implementation="eager",
    )
    return LlamaModel(cfg).eval().to(device)


def _spectrum_seconds(
    model, tok, texts: list[str], n: int, batch_size: int | None, device, svd_method: str = "auto"
) -> float:
    import attnspec

    _sync(device)
    t0 = time.perf_counter()
    attnspec.spectrum(
        model,
        texts=texts,
        tokenizer=tok,
        seq_len=n,
        num_inputs=len(texts),
        batch_size=batch_size,
        svd_method=svd_method,
        progress=False,
    )
    _sync(device)
    return time.perf_counter() - t0


def exactness(device, tiny: bool, work: Path) -> dict:
    """svd and gram on ``device`` against lapack on the CPU, curves against a float64 SVD."""
    import numpy as np
    import torch

    from attnspec.spectra.capture import collect_attention
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.metrics import cumulative_curve

    n = 64 if tiny else 512
    g = torch.Generator().manual_seed(0)
    sets = {"random_softmax": (torch.randn(144, n, n, generator=g) * 3).softmax(-1)}
    tok = _tokenizer(work, decoder=False)
    model = _roberta(TINY if tiny else ROBERTA_BASE, len(tok), n, device)
    ids = torch.tensor([tok(t)["input_ids"][:n] for t in _texts(tok, n, 1)], device=device)
    sets["roberta_base_shape_captured"] = torch.cat([p.reshape(-1, n, n) for p in collect_attention(model, ids)]).cpu()
    del model
    out = {}
    for name, probs in sets.items():
        ref = np.linalg.svd(probs.double().numpy(), compute_uv=False)
        ref_curve = torch.from_numpy(np.cumsum(ref, -1) / ref.sum(-1, keepdims=True))
        curves, row = {}, {"matrices": f"{probs.shape[0]} x {n}^2"}
        for method, dev in (("lapack", torch.device("cpu")), ("svd", device), ("gram", device)):
            x = probs.to(dev)
            singular_values(x[:2], method)  # warm-up: CUDA context, cuSOLVER handles
            _sync(dev)
            t0 = time.perf_counter()
            sv = singular_values(x, method)
            _sync(dev)
            curves[method] = cumulative_curve(sv.double())
            row[f"{method}_{dev.type}"] = {
                "s": round(time.perf_counter() - t0, 4),
                "curve_error_vs_float64": float((curves[method] - ref_curve).abs().max()),
            }
        row["max_curve_diff_svd_vs_lapack"] = float((curves["svd"] - curves["lapack"]).abs().max())
        out[name] = row
    return out


def throughput(
    device, tiny: bool, work: Path, budget: Budget, max_inputs: int, methods: tuple[str, ...] = ("svd", "gram")
) -> dict:
    """End-to-end spectrum jobs at n = 512 for the RoBERTa-base and -large shapes.

    Per shape: each of ``methods`` (default ``svd`` and ``gram`` on the device; ``lapack`` keeps
    the model on the device and factorises on the CPU) at the default batch size, then the
    fastest at batch 32. Each timed run gets an equal share of the budget left: the number of inputs is
    chosen from a warm-up run's time per input (at least one batch, at most ``max_inputs``).
    """
    from attnspec.spectra.config import DEFAULT_BATCH_SIZE

    n = 64 if tiny else 512
    tok = _tokenizer(work, decoder=False)
    texts = _texts(tok, n, max_inputs)
    default_batch = DEFAULT_BATCH_SIZE[device.type]
    out = {
        "n": n,
        "default_batch_size": default_batch,
        "how": "wall time of attnspec.spectrum(...) over the inputs timed, after a warm-up; 10,000 inputs "
        "extrapolated linearly",
    }
    runs_left = 2 * (len(methods) + 1)
    for name, shape in (("roberta_base_shape", ROBERTA_BASE), ("roberta_large_shape", ROBERTA_LARGE)):
        model = _roberta(TINY if tiny else shape, len(tok), n, device)
        row = {"layers_x_heads": f"{model.config.num_hidden_layers} x {model.config.num_attention_heads}"}
        per_input = _spectrum_seconds(model, tok, texts[:default_batch], n, default_batch, device) / default_batch
        plan = [*((m, default_batch) for m in methods), (None, 32)]
        for method, batch in plan:
            if method is None:  # the faster method of the two at the larger batch
                timed = {m: row[f"{m}_batch_{default_batch}"] for m in methods}
                timed = {m: r for m, r in timed.items() if "s_per_input" in r}
                if not timed:
                    break
                method = min(timed, key=lambda m: timed[m]["s_per_input"])
            share = budget.left() / runs_left
            runs_left -= 1
            inputs = max(batch, min(max_inputs, int(share * 0.8 / max(per_input, 1e-3)) // batch * batch))
            if not tiny and inputs * per_input > share:
                row[f"{method}_batch_{batch}"] = {
                    "skipped": f"about {inputs * per_input:.0f} s needed, {share:.0f} s of the budget per run left"
                }
                continue
            s = _spectrum_seconds(model, tok, texts[:inputs], n, batch, device, svd_method=method)
            per_input = s / inputs
            row[f"{method}_batch_{batch}"] = {
                "inputs": inputs,
                "s": round(s, 3),
                "s_per_input": round(per_input, 5),
                "minutes_for_10000_inputs": round(per_input * 10_000 / 60, 2),
            }
        out[name] = row
        del model
    return out


def long_context(device, tiny: bool, work: Path, budget: Budget, layers: int, lengths: list[int]) -> dict:
    """One input at each n through the first ``layers`` layers of a SmolLM2-135M-shaped Llama.

    Both exact GPU methods at the first length; at longer ones only the faster, and only when
    its time, scaled by (n'/n)³ from the length before, fits the budget left.
    """
    import torch

    tok = _tokenizer(work, decoder=True)
    real_layers = SMOLLM2_135M["num_hidden_layers"]
    out = {
        "layers_built": layers,
        "layers_real": real_layers,
        "how": f"one input, wall time of attnspec.spectrum(...) through {layers} of the {real_layers} layers "
        f"(every layer has the same shape), scaled by {real_layers}/{layers} to a whole-model input",
    }
    methods, previous = ["svd", "gram"], None
    for n in lengths:
        row = {}
        model = _llama(TINY if tiny else SMOLLM2_135M, len(tok), n, layers, device)
        texts = _texts(tok, n, 1)
        for method in methods:
            if previous is not None and not tiny:
                need = previous[method] * (n / previous["n"]) ** 3
                if need > budget.left() - 30:
                    row[method] = {"skipped": f"about {need:.0f} s needed, {budget.left():.0f} s of the budget left"}
                    continue
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            s = _spectrum_seconds(model, tok, texts, n, 1, device, svd_method=method)
            row[method] = {"s_measured": round(s, 3), "s_per_input_whole_model": round(s * real_layers / layers, 2)}
            if device.type == "cuda":
                row[method]["peak_gpu_memory_gb"] = round(torch.cuda.max_memory_allocated(device) / 2**30, 2)
        out[f"n_{n}"] = row
        del model
        timed = {m: r["s_measured"] for m, r in row.items() if "s_measured" in r}
        if not timed:
            break
        methods = [min(timed, key=timed.get)]
        previous = dict(timed, n=n)
    return out


def cuda_tests(tiny: bool) -> dict:
    """The suite's CUDA tests (``-m cuda``); on the CPU they skip, which the dry run shows."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-m", "cuda", "-p", "no:cacheprovider", "tests"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240)
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    return {
        "command": " ".join(cmd[2:]),
        "exit_code": p.returncode,
        "summary": lines[-1] if lines else "",
        "s": round(time.perf_counter() - t0, 1),
        "failures": [line for line in lines if line.startswith("FAILED")][:10],
    }


def environment(device) -> dict:
    import torch
    import transformers

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": str(device),
        "cpu_count": os.cpu_count(),
    }
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        env["gpu_memory_gb"] = round(torch.cuda.get_device_properties(device).total_memory / 2**30, 1)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="run every section on the CPU at tiny sizes")
    ap.add_argument("--out", type=Path, help="the JSON file (default: $OUT/device_check.json, else benchmarks/)")
    ap.add_argument("--budget-s", type=float, default=400.0, help="wall-clock budget for all sections (default 400)")
    ap.add_argument("--inputs", type=int, default=128, help="most inputs timed per throughput run (default 128)")
    ap.add_argument("--long-layers", type=int, default=2, help="SmolLM2-shaped layers built for long context")
    ap.add_argument("--long-n", default="4096,8192", help="long-context lengths (default 4096,8192)")
    ap.add_argument(
        "--sections",
        default="exactness,throughput,long_context,tests",
        help="which sections to run, comma-separated (default: all four)",
    )
    ap.add_argument(
        "--methods",
        default="svd,gram",
        help="engine methods timed in the throughput section (default svd,gram; lapack: CPU)",
    )
    args = ap.parse_args(argv)
    import torch

    if not SLICE.is_file():
        print(
            f"device_check: {SLICE.relative_to(REPO)} is missing; run benchmarks/device_check.sh, which makes it",
            file=sys.stderr,
        )
        return 2
    if not args.dry_run and not torch.cuda.is_available():
        print("device_check: no CUDA device here; use --dry-run to exercise the code on the CPU", file=sys.stderr)
        return 2
    device = torch.device("cpu" if args.dry_run else "cuda")
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "attnspec-device-check"
    out_file = args.out or (
        work / "device_check_dry_run.json"
        if args.dry_run
        else Path(os.environ.get("OUT") or REPO / "benchmarks") / "device_check.json"
    )
    budget = Budget(args.budget_s)
    result: dict = {
        "what": "benchmarks/device_check.py" + (" --dry-run" if args.dry_run else ""),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "environment": environment(device),
    }
    lengths = [64, 128] if args.dry_run else [int(x) for x in args.long_n.split(",")]
    sections = (
        ("exactness", lambda: exactness(device, args.dry_run, work)),
        (
            "throughput",
            lambda: throughput(
                device, args.dry_run, work, budget, 32 if args.dry_run else args.inputs, tuple(args.methods.split(","))
            ),
        ),
        ("long_context", lambda: long_context(device, args.dry_run, work, budget, args.long_layers, lengths)),
        ("tests", lambda: cuda_tests(args.dry_run)),
    )
    wanted = args.sections.split(",")
    unknown = sorted(set(wanted) - {name for name, _ in sections})
    if unknown:
        print(
            f"device_check: --sections got {', '.join(unknown)}; allowed: {', '.join(name for name, _ in sections)}",
            file=sys.stderr,
        )
        return 2
    sections = tuple((name, run) for name, run in sections if name in wanted)
    for name, run in sections:
        t0 = time.perf_counter()
        print(f"[{name}] ...", flush=True)
        try:
            result[name] = run()
        except Exception as e:  # noqa: BLE001 - one section failing must not lose the others' figures
            result[name] = {"error": f"{type(e).__name__}: {e}"}
        result[name + "_s"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(result[name], indent=1)[:3000], flush=True)
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(json.dumps(result, indent=2) + "\n")  # after every section: a timeout keeps the rest
    print(f"wrote {out_file}")
    return 1 if any("error" in result[s] for s, _ in sections if isinstance(result.get(s), dict)) else 0


if __name__ == "__main__":
    sys.exit(main())
