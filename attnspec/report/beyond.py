"""The report's "Beyond Figure 1" section, from saved results only.

Three parts, each a table, a figure and a reading generated from the numbers:

* scaling with n — every experiment whose results are a scaling run (``attnspec spectrum
  --seq-len A,B,...``): β of k ∝ n^β per layer and overall with bootstrap intervals;
* the metrics beyond the curve, per layer, for the Figure 1 runs;
* comparisons — the Figure 1 runs of one group against the first, with Welch intervals.

Readings state what the intervals support and nothing more: a difference is called one
only when its interval excludes 0, a trend only when ρ's interval does.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnspec.plots.compare import LABELS as QUANTITY_LABELS
from attnspec.report.experiments import spectrum_runs

#: Each quantity's name in the section's text and tables: the figures' names, but for the reading
#: index in words (a table has no axis label to give it), k90 by the name the report uses, and the
#: row entropy without the figure's note.
QUANTITY_NAMES = {
    **QUANTITY_LABELS,
    "c_at": "mean c at the reading index",
    "reach_index": "k90 (index where c reaches 0.9)",
    "row_entropy": "row entropy",
    "c_centred": "centred c at the reading index",
}


def beyond_figure1_section(experiments: Sequence[Any], results: Path, figures: Path) -> list[str]:
    """Markdown lines of the section (empty when no experiment has results for it).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    figures : Path
        The report's figure folder (figures are drawn there).

    Returns
    -------
    list of str
        Markdown lines.
    """
    scaling = spectrum_runs(experiments, results, "scaling")
    figure1 = spectrum_runs(experiments, results, "figure1")
    if not scaling and not figure1:
        return []
    md = [
        "## Beyond Figure 1",
        "",
        "Linformer's argument needs two premises: P is low rank, and the rank it needs does not grow with n. "
        "Figure 1 measures the first at one n. This section measures the second (whether a fixed k suffices for "
        "attention itself is the next section's question), the metrics later papers report, and the "
        "differences between corpora with confidence intervals (definitions: docs/spectrum.md).",
        "",
    ]
    md += _scaling_grid(scaling, results, figures / "scaling-grid")
    for exp in scaling:
        md += _scaling_part(exp, results / exp.name, figures / exp.name)
    if figure1:
        md += _metrics_part(figure1, results)
    groups: dict[str, list[Any]] = {}
    for e in figure1:
        if e.group:
            groups.setdefault(e.group, []).append(e)
    for name, exps in groups.items():
        if len(exps) > 1:
            md += _compare_part(name, exps, results, figures / f"beyond-compare-{name}")
    return md


def _copy(paths: Sequence[Path], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for p in paths:
        shutil.copy2(p, dest / p.name)


def _null_tables(d: Path, table: Any) -> dict[str, Any]:
    """The scaling table of each null every length of study ``d`` holds, by name."""
    from attnspec.spectra.nulls import baselines_of
    from attnspec.spectra.scaling import run_dir
    from attnspec.spectra.scaling_fit import scaling_table

    held = [set(baselines_of(run_dir(d, int(n)))) for n in table["n"].unique()]
    return {
        s: scaling_table(d, source=s)
        for s in baselines_of(run_dir(d, int(table["n"].max())))
        if all(s in h for h in held)
    }


def _scaling_grid(scaling: Sequence[Any], results: Path, fig_dir: Path) -> list[str]:
    """The small multiples of every scaling study (k90/n against n, beside each null), one figure."""
    from attnspec.plots.scaling import plot_scaling_grid
    from attnspec.report.decoder import scaling_label
    from attnspec.spectra.scaling_fit import scaling_table

    panels = []
    for exp in scaling:
        try:
            table = scaling_table(results / exp.name)
        except Exception:  # noqa: BLE001 - a broken result is reported in its own part
            continue
        panels.append((scaling_label(results / exp.name), table, _null_tables(results / exp.name, table)))
    if not panels:
        return []
    fig_dir.mkdir(parents=True, exist_ok=True)
    plot_scaling_grid(panels, fig_dir)
    return [
        f"![k90/n against n for every scaling study, beside its nulls](figures/{fig_dir.name}/scaling_grid.png)",
        "",
    ]


def _scaling_part(exp: Any, d: Path, fig_dir: Path) -> list[str]:
    from attnspec.numerics.stats import format_interval
    from attnspec.plots.scaling import plot_scaling
    from attnspec.spectra.reading import LINEAR_ABOVE, NO_GROWTH_BELOW
    from attnspec.spectra.scaling_fit import fit_scaling, scaling_table

    try:
        table = scaling_table(d)
        fits = fit_scaling(d)
    except Exception as e:  # noqa: BLE001 - a broken result must not stop the report
        return [f"### {exp.title}", "", f"_Not available: {e}_", ""]
    nulls = _null_tables(d, table)  # the nulls every length holds, drawn as bands beside the real layers
    plot_scaling(table, fits, fig_dir, title=exp.title, nulls=nulls)
    lengths = sorted(table["n"].unique())
    md = [
        f"### {exp.title}",
        "",
        f"Lengths n = {', '.join(map(str, lengths))} on the same {int(fits['inputs'].iloc[0])} documents "
        f"(`results/{exp.name}/`). β of k ∝ n^β, least squares on log–log axes, 95% percentile bootstrap over "
        f"inputs; verdict thresholds: the whole interval below {NO_GROWTH_BELOW:g} — does not grow, above "
        f"{LINEAR_ABOVE:g} — grows about linearly.",
        "",
        "| metric | layer | β | 95% CI | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in fits.itertuples():
        md.append(
            f"| {r.metric} | {'all' if r.layer < 0 else r.layer + 1} | {r.beta:.2f} | [{r.low:.2f}, {r.high:.2f}] | {r.verdict} |"
        )
    md.append("")
    md.append(
        "k90 per input (mean over inputs and heads) per n (rows: layers): "
        + "; ".join(
            f"layer {layer + 1}: " + ", ".join(f"{v:.0f}" for v in g.sort_values("n")["reach_index_input_mean"])
            for layer, g in table.groupby("layer")
        )
        + "."
    )
    md.append("")
    overall = fits[fits["layer"] < 0].set_index("metric")
    per = fits[fits["layer"] >= 0]
    k90 = overall.loc["reach_index"]
    reading = (
        f"Reading: over all layers k90 scales as n^{k90.beta:.2f} (95% CI {format_interval(k90.low, k90.high)}): "
        f"{k90.verdict}. Per layer β ranges from {per[per['metric'] == 'reach_index']['beta'].min():.2f} to "
        f"{per[per['metric'] == 'reach_index']['beta'].max():.2f}. " + beta_depth_sentence(per)
    )
    for eps in ("0.1", "0.2"):
        f = overall.loc[f"rank_for_error_{eps}"]
        reading += (
            f"The rank needed for relative Frobenius error ≤ {eps} scales as n^{f.beta:.2f} "
            f"{format_interval(f.low, f.high)} ({f.verdict}). "
        )
    reading += (
        f"These are {int(fits['inputs'].iloc[0])} inputs of one model and corpus between n = {lengths[0]} and "
        f"{lengths[-1]}; the fit says nothing outside that range."
    )
    from attnspec.report.projection import run_projection_lines

    md += [reading, "", *_null_lines(d), *run_projection_lines(d)]
    md += [
        f"![{exp.name} k90 against n](figures/{exp.name}/scaling_k90.png) "
        f"![{exp.name} fitted exponents](figures/{exp.name}/scaling_beta.png)",
        "",
    ]
    return md


def beta_depth_sentence(per_layer: Any) -> str:
    """Whether β of k90 changes with depth: the permutation test over the per-layer βs, worded by the
    one depth rule (:func:`attnspec.numerics.depth.depth_sentence`); empty below
    :data:`~attnspec.numerics.depth.MIN_LAYERS` layers or when every layer has one β.

    Parameters
    ----------
    per_layer : pandas.DataFrame
        The per-layer rows of :func:`attnspec.spectra.scaling_fit.fit_scaling` (``metric``, ``layer``, ``beta``).

    Returns
    -------
    str
        One sentence and a trailing space, or empty.
    """
    from attnspec.numerics.depth import MIN_LAYERS, depth_permutation_test, depth_sentence

    betas = per_layer[per_layer["metric"] == "reach_index"].sort_values("layer")["beta"].to_numpy(dtype=float)
    if len(betas) < MIN_LAYERS or len(set(betas.tolist())) < 2:
        return ""
    return depth_sentence("β of k90", depth_permutation_test(betas)) + " "


def _null_lines(run: Path) -> list[str]:
    """The real P's β and k90/n beside each null baseline the study holds, per length."""
    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.nulls import LABELS
    from attnspec.spectra.scaling_fit import REAL, null_comparison

    try:
        table = null_comparison(run)
    except Exception:  # noqa: BLE001 - a study without nulls, or a broken one: its other parts still render
        return []
    if len(table) < 2:
        return []
    shares = sorted((c for c in table.columns if c.startswith("share_n")), key=lambda c: int(c[len("share_n") :]))
    md = [
        "k90 against the null baselines: β of k90 ∝ n^β (95% percentile bootstrap over inputs) and k90/n per "
        "length, for the real P and each null the study holds at every length.",
        "",
        "| source | β of k90 | 95% CI | " + " | ".join(f"k90/n at n = {c[len('share_n') :]}" for c in shares) + " |",
        "|---|---|---|" + "---|" * len(shares),
    ]
    for r in table.to_dict("records"):
        name = "real P" if r["source"] == REAL else LABELS.get(r["source"], r["source"])
        ci = format_interval(r["low"], r["high"], exact=str(r["resampled"]).startswith("exact"))
        md.append(f"| {name} | {r['beta']:.2f} | {ci} | " + " | ".join(f"{r[c]:.3f}" for c in shares) + " |")
    return [*md, ""]


def _metrics_part(exps: Sequence[Any], results: Path) -> list[str]:
    from attnspec.spectra.compare import METRICS
    from attnspec.storage.results import read_table

    md = [
        "### The metrics beyond the curve, per layer (Figure 1 runs)",
        "",
        "Means over inputs and heads per layer (layer 1 first). σ₂/σ₁: small means one direction dominates; "
        "row entropy: 1 = uniform rows, 0 = one-hot.",
        "",
    ]
    for exp in exps:
        metrics = read_table(results / exp.name, "metrics")
        have = [m for m in METRICS if f"{m}_mean" in metrics.columns and metrics[f"{m}_mean"].notna().any()]
        missing = [m for m in METRICS if m not in have]
        md.append(f"`{exp.name}`:")
        md.append("")
        per_layer = metrics.groupby("layer")[[f"{m}_mean" for m in have]].mean()
        md += ["| layer | " + " | ".join(QUANTITY_NAMES.get(m, m) for m in have) + " |", "|---" * (len(have) + 1) + "|"]
        for layer, row in per_layer.iterrows():
            md.append(f"| {layer + 1} | " + " | ".join(f"{row[f'{m}_mean']:.3g}" for m in have) + " |")
        md.append("")
        if missing:
            md += [f"_Not in these results (made by an earlier attnspec): {', '.join(missing)}._", ""]
        if "row_entropy" in have and "sigma2_over_sigma1" in have:
            ent = per_layer["row_entropy_mean"]
            gap = per_layer["sigma2_over_sigma1_mean"]
            md += [
                f"Reading: row entropy per layer lies between {ent.min():.2f} (layer {int(ent.idxmin()) + 1}) and "
                f"{ent.max():.2f} (layer {int(ent.idxmax()) + 1}); σ₂/σ₁ between {gap.min():.2f} (layer "
                f"{int(gap.idxmin()) + 1}) and {gap.max():.2f} (layer {int(gap.idxmax()) + 1}). Their intervals and "
                "the comparison between corpora are in the next part.",
                "",
            ]
    return md


def _compare_part(name: str, exps: Sequence[Any], results: Path, fig_dir: Path) -> list[str]:
    from attnspec.plots.compare import plot_comparison
    from attnspec.spectra.compare import compare_runs, depth_trends

    runs = [results / e.name for e in exps]
    table = compare_runs(runs)
    trends = depth_trends(table)
    plot_comparison(table, fig_dir)
    ref, others = exps[0].name, [e.name for e in exps[1:]]
    at = int(table["at"].iloc[0])
    md = [
        f"### Comparison: {', '.join(f'`{o}`' for o in others)} against `{ref}`",
        "",
        f"Differences (run − `{ref}`) with 95% Welch intervals; `c_at` is read at index {at}. Standard errors: "
        "per-input where the runs keep per-input values, else an upper bound (docs/spectrum.md), so those "
        "intervals are conservative.",
        "",
        "| quantity | run | layer | difference | 95% CI | excludes 0 |",
        "|---|---|---|---|---|---|",
    ]
    diffs = table[table["run"] != str(runs[0])]
    for r in diffs.itertuples():
        excl = "yes" if r.diff_low > 0 or r.diff_high < 0 else "no"
        md.append(
            f"| {r.quantity} | `{Path(r.run).name}` | {'all' if r.layer < 0 else r.layer + 1} | {r.diff:+.3g} | "
            f"[{r.diff_low:+.3g}, {r.diff_high:+.3g}] | {excl} |"
        )
    md.append("")
    md += [
        "Depth trend per run (Spearman ρ between layer and layer mean, two-sided permutation p over the "
        "orderings of the layer means; docs/spectrum.md):",
        "",
        "| quantity | run | ρ | p | reading |",
        "|---|---|---|---|---|",
    ]
    for r in trends.itertuples():
        md.append(f"| {r.quantity} | `{Path(r.run).name}` | {r.rho:+.2f} | {r.p:.2g} | {r.phrase} |")
    md.append("")
    overall = diffs[diffs["layer"] < 0]
    clear = [
        f"{QUANTITY_NAMES.get(r.quantity, r.quantity)} {'higher' if r.diff > 0 else 'lower'} by {abs(r.diff):.3g} "
        f"[{r.diff_low:+.3g}, {r.diff_high:+.3g}]"
        for r in overall.itertuples()
        if r.diff_low > 0 or r.diff_high < 0
    ]
    unclear = [
        QUANTITY_NAMES.get(r.quantity, r.quantity) for r in overall.itertuples() if r.diff_low <= 0 <= r.diff_high
    ]
    trend_clear = [
        f"{QUANTITY_NAMES.get(r.quantity, r.quantity)} {r.phrase} in `{Path(r.run).name}` (ρ = {r.rho:+.2f}, p = {r.p:.2g})"
        for r in trends.itertuples()
        if r.phrase != "no trend shown"
    ]
    reading = (
        f"Reading: over all layers, {', '.join(others)} against {ref}: "
        + ("; ".join(clear) if clear else "no difference whose interval excludes 0")
        + ". "
        + (f"Intervals include 0 for: {', '.join(unclear)}. " if unclear else "")
        + (
            "Depth trends at p < 0.1 (permutation test over the layers): " + "; ".join(trend_clear) + "."
            if trend_clear
            else "No depth trend at p < 0.1 (permutation test over the layers)."
        )
    )
    md += [
        reading,
        "",
        f"![compare {name}](figures/beyond-compare-{name}/compare_runs.png) "
        f"![differences {name}](figures/beyond-compare-{name}/compare_diff.png)",
        "",
    ]
    return md


def scaling_table(experiments: Sequence[Any], results: Path) -> list[str]:
    """The question's one small table: per scaling run, β of k90 and of the rank for error ≤ 0.1
    over all layers, with 95% bootstrap intervals over inputs (the per-layer fits are in the
    appendix).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    list of str
        Markdown lines.
    """
    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.scaling_fit import fit_scaling
    from attnspec.spectra.scaling_fit import scaling_table as lengths_table

    rows = []
    for exp in spectrum_runs(experiments, results, "scaling"):
        try:
            fits = fit_scaling(results / exp.name)
            ns = sorted(int(n) for n in lengths_table(results / exp.name)["n"].unique())
        except Exception:  # noqa: BLE001 - a broken result is reported in its own part
            continue
        overall = fits[fits["layer"] < 0].set_index("metric")
        cells = [
            f"{overall.loc[m, 'beta']:.2f} {format_interval(overall.loc[m, 'low'], overall.loc[m, 'high'])}"
            if m in overall.index
            else "—"
            for m in ("reach_index", "rank_for_error_0.1")
        ]
        verdict = overall.loc["reach_index", "verdict"] if "reach_index" in overall.index else "—"
        rows.append(
            f"| {exp.title.split(': ', 1)[-1]} | {ns[0]}–{ns[-1]} | {int(fits['inputs'].iloc[0])} | "
            f"{cells[0]} | {cells[1]} | {verdict} | {_shares(results / exp.name)} |"
        )
    if not rows:
        return []
    return [
        "β of k ∝ n^β over all layers, least squares on log–log axes, 95% percentile bootstrap over inputs "
        "(documents); k90/n at the longest n for the real P and each null baseline the study holds (β of the "
        "nulls: the appendix):",
        "",
        "| model on corpus | n | inputs | β of k90 | β of rank for error ≤ 0.1 | verdict (k90) | k90/n: real · nulls |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def _shares(run: Path) -> str:
    """``0.32 · entropy null 0.63 · uniform null 0.94``: k90/n at the longest n, real first."""
    from attnspec.spectra.nulls import SHORT
    from attnspec.spectra.scaling_fit import REAL, null_comparison

    try:
        table = null_comparison(run, resamples=200)
    except Exception:  # noqa: BLE001 - a broken result is reported in its own part
        return "—"
    last = max((c for c in table.columns if c.startswith("share_n")), key=lambda c: int(c[len("share_n") :]))
    return " · ".join(  # two significant digits, trailing zeros kept (0.40, not 0.4)
        f"{r[last]:#.2g}" if r["source"] == REAL else f"{SHORT.get(r['source'], r['source'])} {r[last]:#.2g}"
        for r in table.to_dict("records")
    )
