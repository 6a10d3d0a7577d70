"""Figure details a reader relies on: Monte Carlo zeros drawn as upper bounds, readable log ticks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnspec.plots.jl import FLOOR, _log_axes, _mc  # noqa: E402


def test_zero_failures_are_upper_bounds_not_a_plunge_to_the_floor() -> None:
    frame = pd.DataFrame(
        {
            "k": [10, 100, 1000],
            "estimate": [0.5, 0.01, 0.0],
            "ci_low": [0.45, 0.005, 0.0],
            "ci_high": [0.55, 0.02, 0.0037],
        }
    )
    fig, ax = plt.subplots()
    values = _mc(ax, frame, "Monte Carlo", "C0")
    line, bound = ax.lines
    assert list(line.get_xdata()) == [10, 100] and list(line.get_ydata()) == [0.5, 0.01]  # no zero, no floor
    assert list(bound.get_xdata()) == [1000] and list(bound.get_ydata()) == [0.0037] and bound.get_marker() == "v"
    _log_axes(ax, values)
    low, high = ax.get_ylim()
    assert low >= FLOOR * 100 and low <= 0.0037 / 2 and high >= 1  # the axis follows the data
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "100" in labels and "1000" in labels  # plain numbers on k, not 10^2
    plt.close(fig)
    assert np.all(np.asarray(values) > 0)


# --- every figure at print size: readable text, nothing clipped, nothing overprinted ---------

import itertools  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from attnspec.plots import MIN_FONT_PT, WIDTHS, fit_title, short_name  # noqa: E402


def _texts(fig) -> list[Text]:  # noqa: ANN001
    """Every text a reader sees: titles, axis and tick labels (on ticks inside the view), legends, notes."""
    found: list[Text] = list(fig.texts) + ([fig._suptitle] if fig._suptitle else [])
    found += [t for leg in fig.legends for t in [*leg.get_texts(), leg.get_title()]]
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        if ax.get_legend():
            found += [*ax.get_legend().get_texts(), ax.get_legend().get_title()]
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if lo - 1e-9 * abs(hi) <= tick.get_loc() <= hi + 1e-9 * abs(hi):
                    found += [tick.label1, tick.label2]
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def legends_off_the_data(fig, renderer) -> list[str]:  # noqa: ANN001
    """The legends that cover a panel's data area (an axes' box, colour bars included), as
    ``"legend 'first entry' over axes 'title'"`` lines; empty when every legend lies outside."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    found = []
    for leg in legends:
        if not leg.get_visible():
            continue
        box = leg.get_window_extent(renderer).shrunk(0.999, 0.999)  # shared edges are no overlap
        for ax in fig.axes:
            if ax.get_visible() and box.overlaps(ax.get_window_extent(renderer).shrunk(0.99, 0.99)):
                first = leg.get_texts()[0].get_text() if leg.get_texts() else ""
                found.append(f"legend {first!r} over axes {ax.get_title() or ax.get_label()!r}")
    return found


def off_palette(fig) -> list[str]:  # noqa: ANN001
    """The colours of a figure's data (lines, markers, bars, fills, images) that are neither
    grey nor Okabe–Ito's nor on the viridis or cividis scale: the palettes the figures may use."""
    import matplotlib as mpl
    from matplotlib.colors import to_hex, to_rgb

    from attnspec.plots import MARK, OKABE_ITO

    allowed = np.array([to_rgb(c) for c in (*OKABE_ITO, MARK)])
    scales = np.vstack([mpl.colormaps[m](np.linspace(0, 1, 256))[:, :3] for m in ("viridis", "cividis")])
    found: list = []
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        for line in ax.lines:
            found += [line.get_color(), line.get_markerfacecolor(), line.get_markeredgecolor()]
        for patch in ax.patches:
            found += [patch.get_facecolor(), patch.get_edgecolor()]
        for coll in ax.collections:
            found += [*coll.get_facecolors(), *coll.get_edgecolors()]
    bad = set()
    for colour in found:
        if isinstance(colour, str) and colour in ("none", "None"):
            continue
        rgb = np.array(to_rgb(colour))
        if len(np.asarray(mpl.colors.to_rgba(colour))) == 4 and mpl.colors.to_rgba(colour)[3] == 0:
            continue  # transparent
        if np.ptp(rgb) < 0.02:  # grey, black, white
            continue
        if np.min(np.abs(allowed - rgb).max(axis=1)) < 0.01 or np.min(np.abs(scales - rgb).max(axis=1)) < 0.02:
            continue
        bad.add(to_hex(rgb))
    return sorted(bad)


def assert_print_ready(fig, name: str) -> None:  # noqa: ANN001
    """Drawn at one of the print widths (a column or a page), no text under MIN_FONT_PT, every
    text inside the figure after a plain savefig, no two axes titles overprinting each other,
    no legend over a panel's data area, and data drawn only in the colour-blind-safe palettes."""
    assert any(abs(fig.get_figwidth() - w) < 1e-6 for w in WIDTHS), (name, fig.get_figwidth())
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    for t in _texts(fig):
        assert t.get_fontsize() >= MIN_FONT_PT, (name, t.get_text(), t.get_fontsize())
        e = t.get_window_extent(renderer)
        if e.width == 0:
            continue
        assert e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1 and e.y0 >= box.y0 - 1 and e.y1 <= box.y1 + 1, (
            name,
            t.get_text(),
        )
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_visible() and ax.get_title()]
    for a, b in itertools.combinations(titles, 2):
        assert not a.overlaps(b), (name, "titles overprint")
    assert not legends_off_the_data(fig, renderer), (name, legends_off_the_data(fig, renderer))
    assert not off_palette(fig), (name, "colours outside Okabe–Ito, viridis and cividis", off_palette(fig))


def _capture(monkeypatch, module) -> list:  # noqa: ANN001
    """Keep the figures a plotting module saves (the files are still written)."""
    kept: list = []

    def keep(fig, stem, formats=("png", "svg")):  # noqa: ANN001, ANN202
        kept.append((Path(stem).name, fig))
        return []

    monkeypatch.setattr(module, "save_figure", keep)
    return kept


def test_titles_break_at_separators_and_names_are_never_paths() -> None:
    title = fit_title("a-long-model-name · a-long-corpus-name · n = 512 · 400 inputs · encoder", 2.0, 8)
    assert all(len(line) <= int(2.0 * 72 / (0.56 * 8)) for line in title.splitlines())
    assert "n = 512" in title.replace("\n", " · ")
    assert short_name("/home/someone/models/my-encoder") == "my-encoder"
    assert short_name("/data/reviews.jsonl") == "reviews"
    assert short_name("EleutherAI/pythia-160m") == "EleutherAI/pythia-160m" and short_name("minilm") == "minilm"


def _spectrum_table(layers: int, heads: int, n: int, shift: float) -> pd.DataFrame:
    rows = []
    for layer, head in itertools.product(range(layers), range(heads)):
        rate = 0.02 * (1 + layer + 0.3 * head) + shift
        for i in range(1, n + 1):
            rows.append(
                {
                    "layer": layer,
                    "head": head,
                    "index": i,
                    "mean": 1 - np.exp(-rate * i) * (1 - i / n),
                    "std": 0.05,
                    "count": 10,
                }
            )
    return pd.DataFrame(rows)


def _spectrum_meta(model: str, data: str, n: int) -> dict:
    return {
        "kind": "spectrum",
        "identity": {"model": model, "data": data, "seq_len": n},
        "status": "complete",
        "inputs_done": 10,
        "inputs_total": 10,
        "family": "encoder",
        "causal": False,
    }


def test_spectrum_figures_are_print_ready_and_comparisons_share_one_scale(tmp_path, monkeypatch) -> None:
    from attnspec.plots import spectrum as sp
    from attnspec.storage.results import write_meta, write_table

    runs = []
    for j, (model, shift) in enumerate((("/abs/path/to/model-a", 0.0), ("roberta-base", 0.05))):
        run = tmp_path / f"run{j}"
        run.mkdir()
        write_table(run, "spectrum", _spectrum_table(6, 12, 64, shift))
        write_meta(run, _spectrum_meta(model, "/abs/data/wiki.valid.raw", 64))
        runs.append(run)
    figs = sp.run_figures(_spectrum_table(6, 12, 64, 0.0), _spectrum_meta("/abs/path/to/model-a", "wiki103", 64))
    for name, fig in figs.items():
        assert_print_ready(fig, name)
        assert all("/abs" not in t.get_text() for t in _texts(fig))
        plt.close(fig)
    kept = _capture(monkeypatch, sp)
    sp.plot_compare(runs, tmp_path / "cmp")
    ((name, fig),) = kept
    assert_print_ready(fig, name)
    heat = [
        ax.collections[0].get_clim()
        for ax in fig.axes
        if ax.get_ylabel() == "layer (1 = first)" or ax.get_xlabel() == "head (1 = first)"
    ]
    assert len(heat) == 2 and heat[0] == heat[1]  # one colour scale
    assert sum(1 for ax in fig.axes if ax.get_label() == "<colorbar>") == 1  # and one colour bar
    assert all("/abs" not in t.get_text() for t in _texts(fig))
    plt.close(fig)


def test_scaling_references_go_through_the_data_and_ticks_are_plain(tmp_path, monkeypatch) -> None:
    from attnspec.plots import scaling

    ns = [32, 64, 128, 256]
    table = pd.DataFrame(
        [
            {
                "n": n,
                "layer": layer,
                "reach_index_input_mean": 0.3 * n * (layer + 1) ** 0.5,
                "effective_rank": 0.2 * n + layer,
            }
            for n in ns
            for layer in range(4)
        ]
    )
    fits = pd.DataFrame(
        [
            {
                "metric": "reach_index",
                "layer": layer,
                "beta": 1.0,
                "low": 0.9,
                "high": 1.1,
                "inputs": 37,
                "verdict": "grows about linearly",
            }
            for layer in (-1, 0, 1, 2, 3)
        ]
    )
    kept = _capture(monkeypatch, scaling)
    scaling.plot_scaling(table, fits, tmp_path, title="minilm · wiki103")
    (k90_name, k90), (beta_name, beta) = kept
    for name, fig in kept:
        assert_print_ready(fig, name)
    assert [t.get_text() for t in beta.axes[0].get_legend().get_texts()] == ["k90 (index where the curve reaches 0.9)"]
    assert "n = 32–256" in k90._suptitle.get_text() and "37 inputs" in k90._suptitle.get_text()
    ax = k90.axes[0]
    flat = [line for line in ax.lines if line.get_label().startswith("β = 0")][0]
    slope = [line for line in ax.lines if line.get_label().startswith("β = 1")][0]
    centre_n = np.exp(np.mean(np.log(ns)))
    centre_v = np.exp(np.mean(np.log(table["reach_index_input_mean"])))
    assert np.allclose(flat.get_ydata(), centre_v)  # anchored at the data's geometric centre
    assert np.allclose(
        np.interp(np.log(centre_n), np.log(slope.get_xdata()), np.log(slope.get_ydata())), np.log(centre_v)
    )
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all("times" not in lab and "×" not in lab for lab in labels)  # no "6×10⁰"
    plt.close("all")


def test_sa_row_error_bars_split_each_row_on_and_off_the_support(tmp_path, monkeypatch) -> None:
    from attnspec.plots import expressivity

    L, eps = 16, 0.01
    rng = np.random.default_rng(0)
    i, j = np.meshgrid(range(L), range(L), indexing="ij")
    A = np.where(rng.random((L, L)) < 0.2, rng.uniform(0.05, 1, (L, L)), 0.0)
    A_hat = np.where(A > 0, A * (1 + rng.normal(0, 0.1, (L, L))), eps)
    em = pd.DataFrame(
        {
            "i": i.ravel(),
            "j": j.ravel(),
            "A": A.ravel(),
            "A_hat": A_hat.ravel(),
            "d": 500,
            "d_star": 232412,
            "k": 3,
            "seed": 8123779382384759428,
            "err_inf": 0.25,
        }
    )
    kept = _capture(monkeypatch, expressivity)
    expressivity.row_mass_bars(em, tmp_path / "sa_row_error")
    ((name, fig),) = kept
    assert_print_ready(fig, name)
    ax = fig.axes[0]
    bars = [b.get_height() for b in ax.patches]
    on, off = np.array(bars[:L]), np.array(bars[L:])
    # the same sums computed here, row by row, independently of the module
    err = np.abs(A_hat - A)
    want_on = np.where(A > 0, err, 0).sum(axis=1)
    want_off = np.where(A > 0, 0, err).sum(axis=1)
    order = np.argsort(-(want_on + want_off), kind="stable")
    assert np.allclose(on, want_on[order]) and np.allclose(off, want_off[order])
    assert np.all(np.diff(on + off) <= 1e-12)  # largest row first
    assert np.allclose(off, eps * (L - (A > 0).sum(axis=1))[order])  # off the support: eps per entry
    assert "8123779382384759428" not in fig._suptitle.get_text()
    plt.close(fig)


def test_relative_error_range_follows_the_samples_not_an_outlier() -> None:
    from attnspec.plots.jl import _quantile_range

    values = np.concatenate([np.random.default_rng(0).normal(0.0, 0.1, 10_000), [25.0]])
    lo, hi = _quantile_range(values, [-1.0])
    assert lo < -1.0 and hi < 1.0  # the threshold is shown, the outlier at 25 does not squeeze the rest


@pytest.fixture(scope="module")
def jl_run(tmp_path_factory) -> Path:  # noqa: ANN001
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    out = tmp_path_factory.mktemp("jl") / "run"
    r = CliRunner().invoke(
        app,
        [
            "jl-check",
            "--n",
            "32",
            "--eps",
            "0.3",
            "--trials",
            "100",
            "--trials-other",
            "20",
            "--d",
            "4",
            "--family",
            "gaussian",
            "--claims",
            "lemma1.eq11,lemma1.eq12,thm1,thm2",
            "--k",
            "4,8,16,31",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    return out


def test_jl_figures_are_print_ready_with_n_eps_and_few_distinct_series(jl_run, monkeypatch) -> None:
    from attnspec.plots import jl

    kept = _capture(monkeypatch, jl)
    jl.plot_jl(jl_run)
    names = [name for name, _ in kept]
    assert names == ["jl_failure_vs_k", "jl_relative_errors"]
    for name, fig in kept:
        assert_print_ready(fig, name)
        assert 0.5 <= fig.get_figheight() / fig.get_figwidth() <= 1.2 or name == "jl_relative_errors"  # no 5:1 strip
        title = fig._suptitle.get_text()
        assert "n = 32" in title and "ε = 0.3" in title
    errors = kept[1][1]
    for ax in errors.axes:
        assert ax.get_xlabel()
        colours = [tuple(p.get_edgecolor()) for p in ax.patches]
        assert len(colours) == len(set(colours)) <= 3  # one distinct colour per k, three k at most
    plt.close("all")
    meta = json.loads((jl_run / "meta.json").read_text())
    assert meta["parameters"]["n"] == 32


REPORT_RESULTS = Path(__file__).resolve().parents[2] / "reports" / "results"


@pytest.mark.parametrize(
    "name, module, function",
    [
        ("osa-check", "attnspec.plots.osa", "plot_osa_check"),
        ("osa-train", "attnspec.plots.osa_train", "plot_osa_train"),
        ("sa-sweep", "attnspec.plots.expressivity", "plot_expressivity"),
    ],
)
def test_the_committed_results_figures_are_print_ready(name, module, function, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Every figure of the other checks, drawn from the committed report's tables."""
    import importlib
    import shutil

    src = REPORT_RESULTS / name
    if not (src / "meta.json").is_file():
        pytest.skip(f"no committed results in {src}")
    run = tmp_path / name
    run.mkdir()
    for f in src.iterdir():
        if f.suffix in (".parquet", ".json"):
            shutil.copy(f, run / f.name)
    mod = importlib.import_module(module)
    kept = _capture(monkeypatch, mod)
    getattr(mod, function)(run)
    assert kept
    for stem, fig in kept:
        assert_print_ready(fig, f"{name}/{stem}")
        plt.close(fig)


def test_the_training_accuracy_figure_is_the_same_at_every_redraw(tmp_path) -> None:  # noqa: ANN001
    # the report redraws every figure on every run; a figure drawn from the same results must
    # come out byte for byte the same (its dots were jittered from numpy's global random state)
    from attnspec.plots.osa_train import plot_accuracy
    from attnspec.storage.results import read_table

    runs = read_table(Path(__file__).resolve().parents[2] / "reports" / "results" / "osa-train", "osa_train_runs")
    np.random.seed(1)
    a = plot_accuracy(runs, tmp_path / "a" / "acc")
    np.random.seed(2)
    b = plot_accuracy(runs, tmp_path / "b" / "acc")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
