"""The decoder study: depth trends, contrasts and β fits on synthetic saved tables,
with intervals that cover at their stated rate; the report section built from saved results,
at full and at quick sizes, and when results are missing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from attnspec.spectra.decoder_study import beta_fits, contrast, depth_trend, layer_stats


# ---------------------------------------------------------------------------------------
# Synthetic tables: per-head (mean, std, count) and per-input head means of known values
# ---------------------------------------------------------------------------------------
def _tables(slope: float, m: int, L: int, H: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """X[i, l, h] = 1 + slope·x_l + input effect (shared by the heads of a layer) + head noise.

    x_l = l / (L − 1), the relative depth; the layer means' true slope against x is ``slope``.
    """
    x = np.arange(L) / (L - 1)
    v = (
        1
        + slope * x[None, :, None]
        + rng.normal(0, 0.3, (m, 1, 1))
        + rng.normal(0, 0.2, (m, L, 1))
        + rng.normal(0, 0.2, (m, L, H))
    )  # (m, L, H)
    layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
    per_head = pd.DataFrame(
        {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "mean": v.mean(0).ravel(),
            "std": v.std(0, ddof=1).ravel() if m > 1 else np.nan,
            "count": m,
        }
    )
    per_input = pd.DataFrame(
        {"input": np.repeat(np.arange(m), L), "layer": np.tile(np.arange(L), m), "v": v.mean(axis=2).ravel()}
    )
    return per_head, per_input


def test_depth_slope_intervals_cover_at_their_stated_rate() -> None:
    rng = np.random.default_rng(24)
    true, reps = 0.25, 200
    misses = {"per-input": 0, "bound": 0}
    for _ in range(reps):
        per_head, per_input = _tables(true, m=12, L=9, H=3, rng=rng)
        exact = depth_trend(per_head, per_input, "v")
        bound = depth_trend(per_head)
        assert exact["method"] == "per-input" and bound["method"] == "bound"
        # both read the same layer means: the same point estimate, the bound only widens the interval
        assert exact["slope"] == pytest.approx(bound["slope"], abs=1e-12)
        assert bound["high"] - bound["low"] >= exact["high"] - exact["low"] - 1e-12
        misses["per-input"] += not exact["low"] <= true <= exact["high"]
        misses["bound"] += not bound["low"] <= true <= bound["high"]
    # the per-input t-interval is exact: misses ~ Binomial(200, 0.05); accept its central 99.9%
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05)
    assert lo <= misses["per-input"] <= hi, misses
    assert misses["bound"] <= misses["per-input"], misses


def test_depth_trend_finds_a_trend_and_none_where_there_is_none() -> None:
    rng = np.random.default_rng(7)
    per_head, per_input = _tables(0.5, m=60, L=30, H=9, rng=rng)
    t = depth_trend(per_head, per_input, "v")
    assert t["low"] > 0 and abs(t["slope"] - 0.5) < 0.1
    assert t["third"] == 10 and t["change_low"] > 0  # last third above the first
    # the first and last third are the means of layers 1..10 and 21..30
    means = per_input.groupby("layer")["v"].mean().to_numpy()
    assert t["first"] == pytest.approx(means[:10].mean()) and t["last"] == pytest.approx(means[20:].mean())
    flat = depth_trend(*_tables(0.0, m=60, L=30, H=9, rng=np.random.default_rng(8)), "v")
    assert flat["low"] < 0 < flat["high"]
    scaled = depth_trend(per_head, per_input, "v", scale=0.5)  # ranks divided by n
    assert scaled["slope"] == pytest.approx(t["slope"] / 2) and scaled["high"] == pytest.approx(t["high"] / 2)


def test_depth_trend_with_one_input_or_one_layer_has_no_interval() -> None:
    per_head, per_input = _tables(0.5, m=1, L=4, H=2, rng=np.random.default_rng(0))
    t = depth_trend(per_head.assign(std=np.nan), per_input, "v")
    assert np.isfinite(t["slope"]) and np.isnan(t["low"]) and np.isnan(t["high"])
    one = pd.DataFrame({"layer": [0, 0], "head": [0, 1], "mean": [1.0, 2.0], "std": [0.1, 0.1], "count": [5, 5]})
    t = depth_trend(one)
    assert t["layers"] == 1 and np.isnan(t["slope"]) and np.isnan(t["low"])


def test_contrast_is_welch_on_the_overall_rows_and_says_which_differences_are_clear() -> None:
    rng = np.random.default_rng(3)
    ha, ia = _tables(0.0, m=40, L=6, H=4, rng=rng)
    hb, ib = _tables(0.0, m=25, L=30, H=9, rng=rng)
    hb = hb.assign(mean=hb["mean"] + 1.0)  # b is higher by 1 everywhere: a − b = −1
    a = layer_stats(ha, ia, "v").assign(quantity="q", label="q")
    b = layer_stats(hb).assign(quantity="q", label="q")  # no per-input values: bounded standard error
    ct = contrast(a, b).iloc[0]
    oa, ob = a[a["layer"] < 0].iloc[0], b[b["layer"] < 0].iloc[0]
    assert ct["diff"] == pytest.approx(oa["mean"] - ob["mean"]) and ct["diff_high"] < 0 and ct["outside"]
    assert ct["method"] == "bound"  # one side bounded: the difference's interval is conservative
    same = contrast(a, a).iloc[0]
    assert same["diff"] == 0 and not same["outside"]
    # a layer's depth runs 0..1 whatever the number of layers; the overall row has none
    assert list(b[b["layer"] >= 0]["depth"].round(6))[:2] == [0.0, round(1 / 29, 6)] and np.isnan(ob["depth"])


def test_layer_stats_t_intervals_cover_the_layer_means() -> None:
    rng = np.random.default_rng(11)
    misses, reps, L = 0, 150, 3
    for _ in range(reps):
        per_head, per_input = _tables(0.3, m=10, L=L, H=2, rng=rng)
        st = layer_stats(per_head, per_input, "v")
        truth = 1 + 0.3 * np.arange(L) / (L - 1)
        for row in st[st["layer"] >= 0].itertuples():
            misses += not row.low <= truth[row.layer] <= row.high
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps * L, 0.05)
    assert lo <= misses <= hi


# ---------------------------------------------------------------------------------------
# Synthetic saved runs: real accumulators over P matrices of known spectra
# ---------------------------------------------------------------------------------------
def _spectra(
    n: int, m: int, L: int, H: int, beta: float, causal: bool, seed: int, spread: float = 0.05
) -> tuple[torch.Tensor, torch.Tensor]:
    """Singular values (m, L, H, n) whose k90 grows as n^beta, and row entropies (m, L, H)."""
    g = torch.Generator().manual_seed(seed)
    scale = 1.0 * n**beta * torch.exp(0.1 * torch.randn(m, 1, 1, 1, generator=g))  # input effect, every n alike
    depth = torch.linspace(1.0, 0.6, L).view(1, L, 1, 1)  # later layers decay faster: lower rank with depth
    j = torch.arange(n, dtype=torch.float64).view(1, 1, 1, n)
    sv = torch.exp(-j / (scale * depth * (1 + 0.05 * torch.rand(m, L, H, 1, generator=g))))
    base = 0.5 if causal else 0.7
    ent = base - spread / 2 + spread * torch.rand(m, L, H, generator=g, dtype=torch.float64)
    return sv.to(torch.float64), ent


def _write_run(
    out: Path,
    *,
    n: int,
    m: int,
    L: int,
    H: int,
    beta: float,
    causal: bool,
    model: str,
    data: str,
    seed: int,
    spread: float = 0.05,
) -> None:
    from attnspec.spectra.aggregate import SpectrumAccumulator
    from attnspec.storage.results import write_meta, write_table

    sv, ent = _spectra(n, m, L, H, beta, causal, seed, spread)
    acc = SpectrumAccumulator(L, H, n)
    for i in range(m):
        acc.add_batch([(layer, sv[i : i + 1, layer], ent[i : i + 1, layer]) for layer in range(L)], [i])
    t = acc.tables()
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in (("spectrum", t.spectrum), ("metrics", t.metrics), ("inputs", t.inputs)):
        write_table(out, name, frame)
    write_meta(
        out,
        {
            "kind": "spectrum",
            "identity": {"model": model, "data": data, "split": "validation", "seq_len": n, "seed": 0},
            "inputs_done": m,
            "status": "complete",
            "causal": causal,
            "family": "decoder" if causal else "encoder",
            "num_layers": L,
            "num_heads": H,
            "corpus": {"input_lengths": {"min": n, "max": n, "full": m}},
        },
    )


def _write_scaling(out: Path, lengths: list[int], **kw: object) -> None:
    from attnspec.storage.results import write_meta

    for n in lengths:
        _write_run(out / f"n{n}", n=n, **kw)
    write_meta(
        out,
        {
            "kind": "spectrum-scaling",
            "identity": {"model": kw["model"], "data": kw["data"], "seq_len": lengths},
            "lengths": lengths,
            "runs": [f"n{n}" for n in lengths],
        },
    )


def test_beta_fits_recover_the_growth_and_agree_with_fit_scaling(tmp_path: Path) -> None:
    from attnspec.spectra.scaling_fit import fit_scaling

    d = tmp_path / "dec"
    _write_scaling(
        d, [32, 64, 128, 256], m=12, L=3, H=2, beta=0.5, causal=True, model="smollm2", data="wiki103", seed=1
    )
    fits = beta_fits(d, resamples=400)
    overall = fits[fits["layer"] < 0].iloc[0]
    # k90 is an integer index, which biases β slightly (about −0.01 here); a wrong exponent (or the
    # encoder's β ≈ 1) is far outside these bounds
    assert abs(overall["beta"] - 0.5) < 0.03 and 0.45 < overall["low"] <= overall["high"] < 0.55
    assert overall["lengths"] == "32–256" and overall["inputs"] == 12
    assert list(fits["depth"].iloc[:3]) == [0.0, 0.5, 1.0]
    # the same fit as the scaling section's (same inputs, seed and resamples)
    ref = fit_scaling(d, resamples=400)
    ref = ref[(ref["metric"] == "reach_index") & (ref["layer"] < 0)].iloc[0]
    assert overall["beta"] == pytest.approx(ref["beta"]) and overall["low"] == pytest.approx(ref["low"])
    sub = beta_fits(d, [64, 128], resamples=400)
    assert sub["lengths"].iloc[0] == "64–128"
    from attnspec.errors import InputError

    with pytest.raises(InputError, match=r"\[64, 512\]"):
        beta_fits(d, [64, 512])


# ---------------------------------------------------------------------------------------
# The report section from saved results
# ---------------------------------------------------------------------------------------
def _experiments(folder: Path) -> list:
    from attnspec.report import load_experiments

    folder.mkdir(parents=True, exist_ok=True)
    for name, model in (
        ("scaling-smollm2-wiki103", "smollm2"),
        ("scaling-minilm-wiki103", "minilm"),
        ("spectrum-minilm-wiki103", "minilm"),
    ):
        seq = '"32,64,128"' if name.startswith("scaling") else "128"
        (folder / f"{name}.toml").write_text(
            f'title = "{name}"\ncommand = "spectrum"\n[args]\nmodel = "{model}"\ndata = "wiki103"\nseq-len = {seq}\n'
        )
    return load_experiments(folder)


def _results(root: Path, m_dec: int, m_enc: int) -> Path:
    results = root / "results"
    _write_scaling(
        results / "scaling-smollm2-wiki103",
        [32, 64, 128],
        m=m_dec,
        L=6,
        H=2,
        beta=0.9,
        causal=True,
        model="smollm2",
        data="wiki103",
        seed=2,
    )
    _write_scaling(
        results / "scaling-minilm-wiki103",
        [32, 64, 128],
        m=m_enc,
        L=3,
        H=2,
        beta=0.9,
        causal=False,
        model="minilm",
        data="wiki103",
        seed=3,
    )
    _write_run(
        results / "spectrum-minilm-wiki103",
        n=128,
        m=m_enc + 4,
        L=3,
        H=2,
        beta=0.9,
        causal=False,
        model="minilm",
        data="wiki103",
        seed=4,
    )
    return results


def test_section_answers_the_four_questions_from_saved_results(tmp_path: Path) -> None:
    from attnspec.report.decoder import HEADING, decoder_section, decoder_summary

    exps = _experiments(tmp_path / "experiments")
    results = _results(tmp_path, m_dec=10, m_enc=12)
    figures = tmp_path / "figures"
    md = "\n".join(decoder_section(exps, results, figures, quick=False))
    assert md.startswith(f"## {HEADING}: SmolLM2-135M\n") and "Too few numbers" not in md
    for q in ("### 1.", "### 2.", "### 3.", "### 4."):
        assert q in md
    # the encoder beside the decoder at the two longest shared lengths; its n = 128 run is the one with more inputs
    assert "| SmolLM2-135M · wiki103 | 128 | 10 |" in md and "| MiniLM-L6 · wiki103 | 128 | 16 |" in md
    assert "| MiniLM-L6 · wiki103 | 64 | 12 |" in md
    # later layers decay faster in both synthetic models: k90 / n falls with depth, with an interval below 0
    trend = next(l for l in md.splitlines() if l.startswith("| SmolLM2-135M · wiki103 | 128 | k90 / n"))
    slope = trend.split("|")[7]
    assert float(slope.split("[")[1].split(",")[1].rstrip("] ")) < 0
    # the row entropies were drawn 0.5–0.55 (decoder) and 0.7–0.75 (encoder): a clear difference of about −0.2
    row = next(l for l in md.splitlines() if l.startswith("| row entropy |"))
    diff = float(row.split("|")[4].split("[")[0])
    assert -0.25 < diff < -0.15 and row.rstrip().endswith("| yes |")
    for fig in ("decoder_depth.png", "decoder_beta.png"):
        assert (figures / "decoder" / fig).is_file()
    summary = decoder_summary(exps, results)
    assert len(summary) == 4 and all("(#a-causal-decoder-smollm2-135m)" in s for s in summary)


@pytest.mark.slow
def test_section_at_quick_sizes_says_the_numbers_are_too_few(tmp_path: Path) -> None:
    from attnspec.report.decoder import decoder_section, decoder_summary

    exps = _experiments(tmp_path / "experiments")
    results = _results(tmp_path, m_dec=2, m_enc=3)  # the quick report's sizes
    md = "\n".join(decoder_section(exps, results, tmp_path / "figures", quick=True))
    assert "Too few numbers for conclusions" in md and "### 4." in md
    assert all("too few inputs" in s for s in decoder_summary(exps, results, quick=True))


def test_section_when_results_are_missing_or_broken(tmp_path: Path) -> None:
    from attnspec.report.decoder import decoder_section, decoder_summary

    exps = _experiments(tmp_path / "experiments")
    results = tmp_path / "results"
    results.mkdir()
    md = decoder_section(exps, results, tmp_path / "figures", quick=False)
    assert md[0].startswith("## A causal decoder") and "Not available" in md[2] and "scaling-smollm2-wiki103" in md[2]
    assert decoder_summary(exps, results) == []
    # no experiment with a causal model: no section at all
    assert decoder_section([e for e in exps if "smollm2" not in e.name], results, tmp_path / "f", quick=False) == []
    # a damaged table is named, and the report goes on
    results = _results(tmp_path / "broken", m_dec=4, m_enc=4)
    (results / "scaling-smollm2-wiki103" / "n64" / "metrics.parquet").write_bytes(b"not parquet")
    md = "\n".join(decoder_section(exps, results, tmp_path / "figures", quick=False))
    assert "scaling-smollm2-wiki103" in md and "Not available" not in md
    assert str(tmp_path) not in md and "results/scaling-smollm2-wiki103/n64" in md  # no path of this machine


@pytest.mark.slow
def test_quick_report_builds_with_the_decoder_section(tmp_path: Path) -> None:
    """The report's own path (build_report) over quick-sized saved results: the section and its
    summary lines are in REPORT.md, and every figure it links exists."""
    from attnspec.report import build_report

    exps = _experiments(tmp_path / "experiments")
    out = tmp_path / "report"
    _results(out, m_dec=2, m_enc=3)
    path = build_report(exps, out, {}, quick=True, data_dir=None)
    text = path.read_text()
    assert "## A causal decoder: SmolLM2-135M" in text and "Too few numbers for conclusions" in text
    summary = text.split("## Summary")[1].split("\n## ")[0]
    # the summary's budget holds one decoder line: the first question, against the encoder
    assert "**Causal decoder (SmolLM2-135M), low rank?**" in summary and "(encoder " in summary
    for link in [l.split("](")[1].split(")")[0] for l in text.split("![")[1:]]:
        assert (out / link).is_file(), link


def test_run_statistics_cut_intervals_to_where_the_quantity_lies(tmp_path: Path) -> None:
    from attnspec.spectra.decoder_study import RANGES, run_statistics

    # two inputs whose row entropies spread over most of [0, 1]: t-intervals with 1 degree of freedom leave it
    _write_run(
        tmp_path / "r", n=32, m=2, L=3, H=2, beta=0.9, causal=True, model="smollm2", data="wiki103", seed=5, spread=0.9
    )
    st = run_statistics(tmp_path / "r")
    assert set(st["quantity"]) == set(RANGES) - {"c_centred"}  # a run written without the centred measure
    for q, (low, high) in RANGES.items():
        s = st[st["quantity"] == q]
        assert (s["low"] >= low).all() and (s["high"] <= high).all() and (s["low"] <= s["mean"]).all(), q
    # the cut interval is the t-interval clipped, nothing else
    from attnspec.spectra.decoder_study import run_frames

    raw = layer_stats(*run_frames(tmp_path / "r")["row_entropy"])
    assert (raw["low"] < 0).any() and (raw["high"] > 1).any()  # so the cut below is tested
    cut = st[st["quantity"] == "row_entropy"]
    assert np.allclose(cut["low"], raw["low"].clip(0, 1)) and np.allclose(cut["high"], raw["high"].clip(0, 1))
    assert np.allclose(cut["mean"], raw["mean"])


def test_shape_note_only_when_two_clear_rank_measures_point_opposite_ways() -> None:
    from attnspec.report.decoder import _shape_note

    def ct(stable: float, k90: float, outside: bool = True) -> pd.DataFrame:
        return pd.DataFrame(
            {"quantity": ["stable_rank", "reach_index"], "diff": [stable, k90], "outside": [outside, True]}
        )

    assert "stronger head over a longer tail" in _shape_note(ct(-2.0, 0.05))
    assert "reaches 90% of the mass sooner" in _shape_note(ct(2.0, -0.05))
    assert _shape_note(ct(-2.0, -0.05)) == ""  # both lower: no disagreement
    assert _shape_note(ct(-2.0, 0.05, outside=False)) == ""  # stable rank's interval includes 0: nothing to say


def test_predicted_share_follows_the_power_law_and_brackets_with_both_intervals() -> None:
    from attnspec.spectra.decoder_study import predicted_share

    base = {"mean": 0.3, "low": 0.25, "high": 0.35}
    assert predicted_share(base, {"beta": 1.0, "low": 1.0, "high": 1.0}, 1024, 2048) == pytest.approx((0.3, 0.25, 0.35))
    p, lo, hi = predicted_share(base, {"beta": 0.0, "low": -1.0, "high": 2.0}, 1024, 2048)
    assert (p, lo, hi) == pytest.approx((0.15, 0.25 / 4, 0.7))  # k90 flat: the share halves when n doubles


def _with_long_run(tmp_path: Path, beta: float) -> tuple[list, Path]:
    """The synthetic study (decoder and encoder scaling at n = 32–128, an encoder run at 128)
    plus a long-context decoder run at n = 512 (4 inputs) whose k90 grows as n^beta."""
    from attnspec.report import load_experiments

    folder = tmp_path / "experiments"
    _experiments(folder)
    (folder / "long-smollm2-wiki103.toml").write_text(
        'title = "long"\ncommand = "spectrum"\n[args]\nmodel = "smollm2"\ndata = "wiki103"\nseq-len = 512\n'
    )
    results = _results(tmp_path, m_dec=10, m_enc=12)
    _write_run(
        results / "long-smollm2-wiki103",
        n=512,
        m=4,
        L=6,
        H=2,
        beta=beta,
        causal=True,
        model="smollm2",
        data="wiki103",
        seed=7,
    )
    return load_experiments(folder), results


@pytest.mark.slow
@pytest.mark.parametrize(("beta", "word"), [(0.9, "overlaps"), (1.6, "misses")])
def test_long_end_reads_a_longer_run_against_the_fitted_growth(tmp_path: Path, beta: float, word: str) -> None:
    # the synthetic spectra have k90 ∝ n^0.9 at n = 32–128; a run at n = 512 drawn with the same
    # growth must agree with the prediction, one drawn with a much steeper growth must not
    from attnspec.report.decoder import decoder_section, decoder_summary

    exps, results = _with_long_run(tmp_path, beta)
    md = "\n".join(decoder_section(exps, results, tmp_path / "figures", quick=False))
    long = md.split("### 5. The long end")[1]
    assert "| SmolLM2-135M · wiki103 | 128 | 10 |" in long and "| SmolLM2-135M · wiki103 | 512 | 4 |" in long
    reading = next(line for line in long.splitlines() if line.startswith("Reading"))
    assert "n = 512, 4 inputs" in reading and "the power law of n = 32–128" in reading and f"interval {word}" in reading
    summary = decoder_summary(exps, results)
    assert len(summary) == 5 and "long end" in summary[-1] and "n = 512 (4 inputs)" in summary[-1]


def test_a_decoders_single_runs_are_the_decoder_sections_not_figure_1s(tmp_path: Path) -> None:
    # Figure 1 is "the spectrum of P in pretrained encoders": the long-context decoder runs are
    # read by the decoder section (its long end), not listed among Figure 1's runs or lines
    from attnspec.report.experiments import PAPERS, spectrum_runs
    from attnspec.report.summary import summary_section

    exps, results = _with_long_run(tmp_path, 0.9)
    assert [e.name for e in spectrum_runs(exps, results, "figure1")] == ["spectrum-minilm-wiki103"]
    assert sorted(e.name for e in spectrum_runs(exps, results, "scaling")) == [
        "scaling-minilm-wiki103",
        "scaling-smollm2-wiki103",
    ]
    lines = "\n".join(
        summary_section(
            exps, results, papers=PAPERS, quick=False, verdict_file="verdicts.json", figure1_heading="Figure 1"
        )
    )
    assert "MiniLM" in lines and "n = 512, 4 inputs" not in lines


@pytest.mark.parametrize(
    "meta, said",
    [
        ({"svd_method": "gram"}, None),
        (
            {"svd_method": "gram32", "svd_method_error": {"curve_max_abs": 2.5e-4}},
            "is computed from the float32 Gram matrix (`gram32`): its curves are within 2.5e-04",
        ),
        (
            {"svd_method": "longn", "svd_error_run": {"curve_max_abs_bound": 0.082}},
            "is approximate: longn spectra (curve error <= 0.082",
        ),
    ],
)
def test_the_long_end_names_each_runs_method_and_stated_error(tmp_path: Path, meta: dict, said: str | None) -> None:
    import json

    from attnspec.report.decoder import _method_note
    from attnspec.spectra.decoder_study import Run

    (tmp_path / "meta.json").write_text(json.dumps(meta))
    run = Run(tmp_path, "long", "HuggingFaceTB/SmolLM2-135M", "wiki103", 4096, 4, True, 30, 9, None)
    note = _method_note(run)
    assert (note is None) if said is None else (said in note and "at n = 4096" in note)
