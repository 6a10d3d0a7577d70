"""Every figure the report draws, drawn from the committed results: at one of the two print
widths, no text under 7 pt at that width, no legend over a panel's data area (the checks of
``assert_print_ready``), and captured from every plotting module, so a figure function the
report calls is checked whichever section calls it."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from test_plots_readable import assert_print_ready  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "reports" / "results"
#: Figures checked elsewhere instead (none: every figure the report draws is checked here).
ELSEWHERE: set[str] = set()
MODULES = (
    "spectrum",
    "null_curves",
    "scaling",
    "compare",
    "decoder",
    "approx",
    "jl",
    "expressivity",
    "osa",
    "osa_train",
)


@pytest.fixture
def kept(monkeypatch) -> list:  # noqa: ANN001
    """(stem, figure) of every figure a plotting module saves, nothing written."""
    found: list = []

    def keep(fig, stem, formats=("png", "svg")):  # noqa: ANN001, ANN202
        found.append((Path(stem).name, fig))
        return []

    for name in MODULES:
        monkeypatch.setattr(importlib.import_module(f"attnspec.plots.{name}"), "save_figure", keep)
    return found


def _copy_results(name: str, dest: Path) -> Path:
    src = RESULTS / name
    if not (src / "meta.json").is_file():
        pytest.skip(f"no committed results in {src}")
    run = dest / name
    shutil.copytree(src, run, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    return run


@pytest.mark.parametrize("name", ["jl-check", "jl-check-real", "sa-check", "osa-check"])
def test_every_check_figure_is_print_ready(name, kept, tmp_path) -> None:  # noqa: ANN001
    from attnspec.battery import plot_results

    command = {"jl-check-real": "jl-check"}.get(name, name)
    plot_results(command, _copy_results(name, tmp_path))
    assert kept
    for stem, fig in kept:
        assert_print_ready(fig, f"{name}/{stem}")
        plt.close(fig)


def test_theorem_1s_panel_shows_where_the_failure_probability_moves_with_k(kept, tmp_path) -> None:  # noqa: ANN001
    """Not every curve at 1: w = a column of V, along P's top directions, is drawn beside the random
    and bottom-direction w that fail at every k < n."""
    from attnspec.plots.jl import plot_failure_vs_k

    plot_failure_vs_k(_copy_results("jl-check", tmp_path))
    ((_, fig),) = kept
    (ax,) = [a for a in fig.axes if a.get_title().startswith("Theorem 1")]
    lows = [min(line.get_ydata()) for line in ax.get_lines() if len(line.get_ydata()) > 1]
    assert any(v < 0.5 for v in lows), lows  # a curve that falls with k
    assert any(t.get_text() == "w = V's column" for t in ax.get_legend().get_texts())
    plt.close(fig)


def test_figure_1_of_one_run_and_of_a_comparison_is_print_ready(kept, tmp_path) -> None:  # noqa: ANN001
    """Figure 1 of the first committed run and the comparison of the first two: each kind of
    spectrum figure once (the slow test below draws every one the report draws)."""
    from attnspec.plots.spectrum import plot_compare, plot_run
    from attnspec.report.experiments import load_experiments, spectrum_runs

    runs = spectrum_runs(load_experiments(REPO / "experiments"), RESULTS, "figure1")[:2]
    if not runs:
        pytest.skip("no committed spectrum results")
    plot_run(RESULTS / runs[0].name, tmp_path / runs[0].name)
    plot_compare([RESULTS / e.name for e in runs], tmp_path / "compare")
    stems = {stem for stem, _ in kept}
    assert {"spectrum_layers", "spectrum_heatmap", "spectrum_compare"} <= stems
    for stem, fig in kept:
        assert_print_ready(fig, stem)
        plt.close(fig)


@pytest.mark.slow  # every figure of the report's spectrum sections: minutes of CPU
def test_every_spectrum_figure_the_report_draws_is_print_ready(kept, tmp_path) -> None:  # noqa: ANN001
    """Figure 1, the scaling study, the comparison of corpora and the decoder section."""
    from attnspec.plots.spectrum import plot_compare, plot_run
    from attnspec.report.beyond import beyond_figure1_section
    from attnspec.report.decoder import decoder_section
    from attnspec.report.experiments import load_experiments, spectrum_runs

    experiments = load_experiments(REPO / "experiments")
    runs = spectrum_runs(experiments, RESULTS, "figure1")
    if not runs:
        pytest.skip("no committed spectrum results")
    for exp in runs:
        plot_run(RESULTS / exp.name, tmp_path / exp.name)
    plot_compare([RESULTS / e.name for e in runs], tmp_path / "compare")
    beyond_figure1_section(experiments, RESULTS, tmp_path)
    decoder_section(experiments, RESULTS, tmp_path, quick=False)
    stems = {stem for stem, _ in kept}
    assert {"spectrum_layers", "spectrum_heatmap", "spectrum_compare", "scaling_beta", "compare_runs"} <= stems
    for stem, fig in kept:
        if stem not in ELSEWHERE:
            assert_print_ready(fig, stem)
        plt.close(fig)


#: The figures that carry the summary, by (folder, stem): drawn at one column.
SUMMARY_FIGURES = (
    ("figure1-nulls", "spectrum_nulls"),
    ("scaling-grid", "scaling_grid"),
    ("decoder", "decoder_beta"),
    ("approx-minilm-imdb", "approx_errors"),
)


@pytest.mark.slow  # draws the three summary figures from the committed results (about 17 s)
def test_the_figures_that_carry_the_summary_are_drawn_at_one_column(kept, tmp_path) -> None:  # noqa: ANN001
    from attnspec.plots import COLUMN_IN
    from attnspec.report.approx_part import approx_section
    from attnspec.report.beyond import beyond_figure1_section
    from attnspec.report.decoder import decoder_section
    from attnspec.report.experiments import load_experiments, spectrum_runs
    from attnspec.report.figure1 import _spectrum_section

    experiments = load_experiments(REPO / "experiments")
    runs = spectrum_runs(experiments, RESULTS, "figure1")
    if not runs:
        pytest.skip("no committed spectrum results")
    _spectrum_section(runs, RESULTS, tmp_path, lambda *a, **k: None, lambda *a, **k: None)
    beyond_figure1_section(experiments, RESULTS, tmp_path)
    decoder_section(experiments, RESULTS, tmp_path, quick=False)
    approx_section(experiments, RESULTS, tmp_path)
    drawn = dict(kept)
    for _, stem in SUMMARY_FIGURES:
        assert stem in drawn, stem
        assert abs(drawn[stem].get_figwidth() - COLUMN_IN) < 1e-6, (stem, drawn[stem].get_figwidth())
        assert_print_ready(drawn[stem], stem)
    for _, fig in kept:
        plt.close(fig)


def test_the_committed_summary_figures_are_one_column_wide_at_print_resolution() -> None:
    from PIL import Image

    from attnspec.plots import COLUMN_IN

    for folder, stem in SUMMARY_FIGURES:
        png = REPO / "reports" / "figures" / folder / f"{stem}.png"
        assert png.is_file(), f"{png} is missing: regenerate the report"
        with Image.open(png) as im:
            width_in = im.size[0] / 150  # savefig.dpi of attnspec.plots.style
        assert COLUMN_IN - 0.1 <= width_in <= COLUMN_IN + 0.25, (png.name, width_in)
