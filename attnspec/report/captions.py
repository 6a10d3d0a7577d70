"""Figure captions, and the placing of the report's figures: one image per paragraph, numbered,
each followed by its caption; a figure whose file is byte-identical to one already placed is
left out and its file deleted.

A caption says what is plotted, over what unit its statistics run, which statistic is drawn
(median, mean, maximum) and what to see, in one or two sentences. Numbers in a caption are
read from the saved results of the figure's experiment, never typed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: ``![alt](figures/<folder>/<stem>.png)`` inside a line (a line may hold several)
_IMAGE = re.compile(r"!\[([^\]]*)\]\(((?:\.\./)?figures/[^)\s]+\.png)\)")
#: A placed figure's caption: the line under its image, ``*Figure 3.* ...`` (``*Figure A2.* ...``
#: in the appendix); the tests find captions by it.
CAPTION = re.compile(r"^\*Figure (A)?\d+\.\* \S")


def _meta(run: Path) -> dict[str, Any]:
    path = run / "meta.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _table(run: Path, name: str) -> Any:
    from attnspec.storage.results import read_table

    return read_table(run, name)


def _spectrum_layers(run: Path) -> str:
    m = _meta(run)
    at = (m.get("figures") or {}).get("at")
    return (
        f"Mean normalised cumulative singular-value curve of P per layer (heads pooled; shading: ± 1 sd over "
        f"(input, head)), {m.get('inputs_done')} inputs. A curve that rises steeply puts most of Σσ in few "
        f"singular values" + (f"; the dotted line marks index {at}, read by the heatmap." if at else ".")
    )


def _spectrum_heatmap(run: Path) -> str:
    m = _meta(run)
    at = (m.get("figures") or {}).get("at")
    where = f"the first {at}" if at else "the first quarter"
    return (
        f"Share of Σσ in {where} singular values per (layer, head), the mean over {m.get('inputs_done')} inputs "
        "(Linformer's Figure 1, right). Brighter cells are heads whose P is closer to low rank."
    )


def _spectrum_compare(_: Path) -> str:
    return (
        "The two corpora side by side: per-layer mean curves (top; shading ± 1 sd over (input, head)) and the "
        "layer × head share at the reading index (bottom) on one colour scale, so cells compare across corpora."
    )


def _scaling_k90(run: Path) -> str:
    from attnspec.spectra.nulls import LABELS, baselines_of

    m = _meta(run)
    held = [set(baselines_of(run / f"n{n}")) for n in m.get("lengths") or []]
    nulls = [
        LABELS.get(b, b)
        for b in (baselines_of(run / f"n{max(m['lengths'])}") if held else [])
        if all(b in h for h in held)
    ]
    return (
        "k90 per input (the first index where an input's curve reaches 0.9, averaged over heads and inputs; left) "
        "and the effective rank (right), against n "
        "on log–log axes: the mean over layers, the min–max band over layers, the first, middle and last layer, "
        f"and the band of each null baseline the study holds ({'; '.join(nulls) or 'none'}), "
        "with reference slopes β = 0 and β = 1. Lines parallel to β = 1 mean a fixed rank keeps a shrinking "
        "share of P; the gap to the entropy-matched band is how much more concentrated than chance P is."
    )


def _spectrum_nulls(_: Path) -> str:
    return (
        "The share of Σσ in the first i singular values of P against i, one panel per model: the mean over "
        "layers, heads and documents of each corpus (solid; the band is the min–max over the layers' mean curves "
        "of the first), "
        "beside the mean curve of each null at the same n (entropy-matched random softmax, dashed; uniform rows, "
        "dotted; the model with re-initialised weights, dash-dot); the dotted vertical line is the reading index. "
        "Near-uniform rows (uniform, random-init) put almost all of Σσ in σ₁: a curve high at small i is also "
        "what averaging gives."
    )


def _scaling_grid(_: Path) -> str:
    return (
        "k90/n against n for each model and corpus (log₂ n axis): k90 per input (the first index where an "
        "input's curve reaches 0.9, averaged over heads and inputs), the mean over layers (line) and its "
        "min–max band over layers, beside each null's mean over layers (entropy-matched random softmax; "
        "uniform rows; the model with re-initialised weights, where the study holds it). A flat line is k90 "
        "growing linearly with n, a falling one slower growth; the vertical gap between the real line and a null's "
        "is how far P is from that null at each n."
    )


def _approx_errors(run: Path) -> str:
    from attnspec.report.decoder import scaling_label

    approx = _meta(run).get("approx") or {}
    return (
        f"{scaling_label(run)}: held-out error ‖Ŷ − PV‖_F/‖PV‖_F of each approximation of attention against n (log axes), one panel per "
        "k: the mean over layers, heads and held-out documents, its 95% interval over "
        f"{approx.get('held_out', 'the held-out')} documents as a band; black lines are the references, uniform "
        "attention (dashed, which a method must beat) and the best rank-k P applied to V (dotted); the grey dotted "
        "line at 1 is zero output's error. Hollow markers are the rule's no better than uniform or zero output. "
        "A line that stays flat as n doubles holds a fixed k; one above the dashed line does worse than averaging "
        "V, one above the grey line worse than outputting nothing."
    )


def _scaling_beta(run: Path) -> str:
    return (
        "Fitted exponent β of k ∝ n^β per layer and over all layers, with 95% percentile bootstrap intervals "
        "over inputs; dotted lines are the verdict thresholds (below: no growth; above: about linear growth)."
    )


def _compare_runs(_: Path) -> str:
    return (
        "Per-layer means of each spectrum metric for each corpus, with 95% intervals over inputs "
        '("all": the mean over layers).'
    )


def _compare_diff(_: Path) -> str:
    return (
        "Difference of each metric from the reference corpus per layer, with 95% Welch intervals over inputs; "
        "an interval clear of the zero line is a difference the data support."
    )


def _decoder_beta(_: Path) -> str:
    return (
        "Fitted β of k90 ∝ n^β per layer for the causal decoder and the encoder on each corpus, with 95% "
        "bootstrap intervals over inputs; the grey lines mark β = 0 and β = 1."
    )


def _decoder_depth(_: Path) -> str:
    return (
        "Spectrum metrics against relative depth (0 = first layer, 1 = last), means over inputs and heads "
        "with 95% intervals over inputs, decoder against encoder."
    )


def _jl_failure(run: Path) -> str:
    from attnspec.plots.jl import real_matrices, trials_span

    m = _meta(run)
    table = _table(run, "jl")
    lo, hi = trials_span(table)
    trials = f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"
    n, k = int(m["parameters"]["n"]), float(m["dimensions"]["linformer_k"])
    mats = real_matrices(table, m)
    if mats:
        return (
            f"Theorem 1 on {len(mats)} real attention matrices: the failure probability over {trials} draws of R "
            f"per point (95% Clopper–Pearson band) against k ≤ n = {n}, for w = a column of V and the "
            f"adversarial w, in both readings. "
            + (
                f"Theorem 1's own k = {k:.0f} exceeds n, so the theorem promises nothing on this axis; the curves "
                "show what a smaller k does."
                if k >= n
                else f"Black: the claimed failure probability 2n·e^(−(ε²−ε³)k/4) where it is below 1; dashed: Theorem "
                f"1's own k = {k:.0f}. Points above the black line contradict the claim."
            )
        )
    return (
        f"Failure probability against k: Monte Carlo estimates over {trials} draws of R per point (95% "
        "Clopper–Pearson band; a triangle where no failure was seen, drawn at the interval's upper end) beside "
        f"the paper's bound (black) and the exact law where one is known; n = {n}. Where the bound lies far "
        "above the points it is loose; where points lie above it, it is violated."
        + (
            " Theorem 1's panel draws a w per style: a random w and one along P's bottom singular directions, "
            "and w = a column of V, along P's top directions; only the last can fail less often as k grows."
            if "w" in table.columns
            and {"value", "random"} <= set(table.loc[table["claim"] == "linformer.thm1.eq3", "w"].dropna())
            else ""
        )
    )


def _jl_errors(run: Path) -> str:
    from attnspec.plots.jl import real_matrices

    m = _meta(run)
    samples = _table(run, "jl_errors")
    per = samples.groupby([c for c in ("claim", "attention", "w", "k") if c in samples.columns]).size()
    count = int(per.min()) if len(per) else 0
    eps = float(m["parameters"]["eps"])
    if real_matrices(samples, m):
        return (
            f"Relative error ‖P̃w − Pw‖/‖Pw‖ (log₁₀) of each real attention matrix with w = a column of V, "
            f"over {count} draws of R at each of three k; a draw fails right of the dashed line (ε = {eps:.3g})."
        )
    return (
        f"Distributions of the relative errors over {count} draws of R at each of three k (x range: the "
        f"0.5–99.5% quantiles); a draw fails beyond the dashed line(s) at ε = {eps:g}."
    )


def _sa_success(_: Path) -> str:
    return (
        "Success probability P(‖B − B̂‖∞ ≤ δ) against the projection width d, one panel per L and one colour "
        "per k, with 95% intervals over random instances; the dashed line is the target 1 − β, the dotted one "
        "d = L."
    )


def _sa_dstar(_: Path) -> str:
    return (
        "The smallest width d* that reaches success 1 − β, against k·log L (left; dotted: d = L for each L) and "
        "against the JL scale max‖b_i‖² log L / δ² of the instance (right), with least-squares lines through the "
        "origin; each point is one (L, k)."
    )


def _sa_row_error(run: Path) -> str:
    from attnspec.plots.expressivity import row_error_mass

    mass = row_error_mass(_table(run, "error_map"))
    share = mass["off_share"]
    return (
        f"One instance, per row: the error Σ_j |Â − A| on A's support and off it, rows ordered by their total. "
        f"Off the support each entry of Â is about eps, yet together they make {share.median():.0%} of a row's "
        f"error (median over the {len(mass)} rows; {share.min():.0%}–{share.max():.0%})."
    )


def _orthogonality(run: Path) -> str:
    frame = _table(run, "thm31")
    per = int(frame.groupby(["schedule", "steps"]).size().min())
    return (
        f"Theorem 3.1: the orthogonality error ‖YᵀY − I‖₂ of the Newton–Schulz basis against the step K, the "
        f"median over {per} instances per point with a 10–90% band, beside the medians of bounds (10) and (11); "
        "below, the range of σ(B) (the proof needs σ ≤ 1)."
    )


def _kappa(run: Path) -> str:
    frame = _table(run, "jacobian")
    draws = frame.groupby(["reading", "basis", "alpha"]).size()
    span = f"{int(draws.min())}" if draws.min() == draws.max() else f"{int(draws.min())}–{int(draws.max())}"
    return (
        f"Conditioning of OSA's input–output Jacobian at the paper's initialisation against alpha, per basis: "
        f"solid lines the maximum over {span} draws (the statistic the verdicts quote), dotted the median. "
        "Single-head κ(J) − 1 grows like alpha; the multi-head reading starts far from 1."
    )


def _timing(_: Path) -> str:
    return (
        "Forward time of one OSA layer against N on log–log axes (float32, the minimum over repeats, one CPU "
        "thread), with the fitted exponent of each method in the legend."
    )


def _train_data(run: Path) -> str:
    from attnspec.plots.osa_train import DATA_LABELS, trained_data

    data = trained_data(_meta(run))
    return DATA_LABELS.get(data, data)


def _train_curves(run: Path) -> str:
    seeds = _meta(run).get("identity", {}).get("seeds")
    return f"Training curves per model on {_train_data(run)}: mean over {seeds} seeds with ± 1 sd bands, per epoch."


def _train_accuracy(run: Path) -> str:
    seeds = _meta(run).get("identity", {}).get("seeds")
    data = _train_data(run)
    paper = (
        "the paper's Table 2 values are the open diamonds on the same MNIST axis."
        if data == "MNIST"
        else f"the paper's Table 2 values (MNIST) are the hatched bars of the lower panel, on an MNIST axis of "
        f"their own: they are not {data} accuracies."
    )
    table = run / "osa_train_paper.parquet"
    with_ci = table.is_file() and "accuracy_ci_low" in _table(run, "osa_train_paper").columns
    bars = "the 95% interval over seeds, as in the table" if with_ci else "± 1 sd"
    return (
        f"Final test accuracy per model on {data}: bars the mean over {seeds} seeds (error bar {bars}), dots the "
        f"seeds; the dotted line is chance (10 classes); {paper}"
    )


def _train_signal(_: Path) -> str:
    return (
        "RMS of the token representations at initialisation on one batch of training images, stage by stage "
        "(log scale), per model; the band is the range over replicates. A collapsing or exploding signal shows as a falling or "
        "rising line. OSA (QR) and OSA (NS) lie on one line: their bases span the same subspace (Newton–Schulz "
        "orthonormalises what QR does), so the two layers compute the same output at initialisation."
    )


CAPTIONS: dict[str, Callable[[Path], str]] = {
    "spectrum_layers": _spectrum_layers,
    "spectrum_heatmap": _spectrum_heatmap,
    "spectrum_compare": _spectrum_compare,
    "scaling_k90": _scaling_k90,
    "scaling_beta": _scaling_beta,
    "compare_runs": _compare_runs,
    "compare_diff": _compare_diff,
    "decoder_beta": _decoder_beta,
    "decoder_depth": _decoder_depth,
    "scaling_grid": _scaling_grid,
    "approx_errors": _approx_errors,
    "spectrum_nulls": _spectrum_nulls,
    "jl_failure_vs_k": _jl_failure,
    "jl_relative_errors": _jl_errors,
    "sa_success_vs_d": _sa_success,
    "sa_dstar_vs_klogL": _sa_dstar,
    "sa_row_error": _sa_row_error,
    "orthogonality_vs_K": _orthogonality,
    "kappa_vs_alpha": _kappa,
    "time_vs_n": _timing,
    "osa_train_curves": _train_curves,
    "osa_train_accuracy": _train_accuracy,
    "osa_train_signal": _train_signal,
}


def caption(stem: str, run: Path) -> str:
    """The caption of figure ``stem`` drawn from the results in ``run``; a figure without a
    caption is an error (every figure of the report has one).

    Parameters
    ----------
    stem : str
        The figure's file stem.
    run : Path
        The results directory that drew it.

    Returns
    -------
    str

    Raises
    ------
    KeyError
        No caption is registered for ``stem``.
    """
    if stem not in CAPTIONS:
        raise KeyError(f"figure {stem!r} has no caption: add one to attnspec.report.captions.CAPTIONS")
    return CAPTIONS[stem](run)


def place_figures(
    md: list[str], out: Path, *, label: str = "Figure", placed: dict[str, str] | None = None, start: int = 0
) -> list[str]:
    """Every figure of ``md`` in a paragraph of its own with its caption under it,
    ``*Figure N.* caption``; a figure byte-identical to one in ``placed`` (sha256 of the PNG →
    path; filled as figures are placed) is dropped and its PNG and SVG deleted.

    ``out`` is the report folder: ``figures/<folder>/<stem>.png`` (or ``../figures/...`` from
    an appendix page) is captioned from ``results/<folder>``, the experiment that drew it.
    ``label`` names the figures (``Figure`` in the body, ``Figure A`` in the appendix); their
    numbers follow ``start``.

    Parameters
    ----------
    md : list of str
        Markdown lines.
    out : Path
        The report folder.
    label : str
        The figures' label.
    placed : dict of str to str, optional
        Figures already placed (sha256 of the PNG → path), extended here.
    start : int
        The number before the first figure's.

    Returns
    -------
    list of str
        Markdown lines.
    """
    placed = {} if placed is None else placed
    lines: list[str] = []
    number = start
    for line in md:
        images = _IMAGE.findall(line)
        if not images:
            lines.append(line)
            continue
        rest = _IMAGE.sub("", line).strip()
        if rest:
            lines += [rest, ""]
        for _alt, link in images:
            rel = link.removeprefix("../")
            path = out / rel
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else rel
            if digest in placed:
                for twin in (path, path.with_suffix(".svg")):
                    twin.unlink(missing_ok=True)
                continue
            placed[digest] = rel
            number += 1
            folder = Path(rel).parent.name
            text = caption(Path(rel).stem, out / "results" / folder)
            lines += [f"![{label} {number}: {alt_text(text)}]({link})", f"*{label} {number}.* {text}", ""]
    return _squeeze_blank(lines)


def alt_text(text: str, limit: int = 160) -> str:
    """A figure's alt text: its caption's first sentence (what it shows), cut at a word within
    ``limit`` characters, with brackets made parentheses (an image's text may not hold a bare one).

    Parameters
    ----------
    text : str
        The figure's caption.
    limit : int
        The most characters kept.

    Returns
    -------
    str
    """
    first = re.split(r"(?<=\.)\s", text.strip(), maxsplit=1)[0].rstrip(".")
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0].rstrip(",:;") + " …"
    if first.rfind("(") > first.rfind(")"):  # an aside cut short: left out
        first = first[: first.rfind("(")].rstrip(",:; ") + " …"
    # read aloud as it is meant: an alt text cannot raise an exponent
    return first.replace("[", "(").replace("]", ")").replace("*", "").replace("^", " to the power ")


def _squeeze_blank(lines: list[str]) -> list[str]:
    """No two blank lines in a row (placing figures leaves some)."""
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return out
