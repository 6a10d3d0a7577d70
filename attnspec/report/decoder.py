"""The report's section "A causal decoder", and its lines in the summary, from saved results only.

Four questions about a causal decoder, each answered with 95% intervals over inputs by
:mod:`attnspec.spectra.decoder_study` and read in sentences generated from the numbers:

1. Is a causal LM's attention low rank in Linformer's sense? (c at n/4, k90/n)
2. Does the rank it needs grow with n, as for the encoder? (β of k90 ∝ n^β)
3. How do the metrics change with depth? (slope over relative depth, first vs last third)
4. How does a causal lower-triangular P differ from an encoder's P at the same n?

and, past the scaling study's lengths (the long-context experiments, few inputs), 5. the long
end: the decoder at longer n against what the fitted β predicts there.

The decoder runs are the spectrum results whose meta.json says ``causal``; the encoder
runs those that do not, matched by corpus and n (the one with the most inputs). The
section is left out when no experiment has a causal model; it says "not available" when
the results are missing, and that the numbers are too few for conclusions when a run has
fewer than :data:`attnspec.spectra.decoder_study.FEW_INPUTS` inputs (the quick report).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from attnspec.report.decoder_runs import DEPTH, Corpus, Study, build_study
from attnspec.spectra.decoder_study import FEW_INPUTS, QUANTITIES, Run

#: The section's heading: this prefix, then the decoder models the results hold
#: ("A causal decoder: SmolLM2-135M"); the summary links to it.
HEADING = "A causal decoder"
#: Names a reader knows the models by (meta.json records the alias the run was given).
DISPLAY = {
    "smollm2": "SmolLM2-135M",
    "smollm2-135m": "SmolLM2-135M",
    "minilm": "MiniLM-L6",
    "all-minilm-l6-v2": "MiniLM-L6",
    "all-MiniLM-L6-v2": "MiniLM-L6",
    "mpnet": "MPNet-base",
    "all-mpnet-base-v2": "MPNet-base",
}
#: The quantities the tables show (all of them are in the contrast of question 4).
HEADLINE = ("c_at", "reach_index", "effective_rank", "rank_for_error_0.1")


def heading(study: Study) -> str:
    """``A causal decoder: SmolLM2-135M`` — the decoder models whose results the section reads.

    Parameters
    ----------
    study : Study

    Returns
    -------
    str
    """
    models = list(dict.fromkeys(display(c.decoder.model) for c in study.corpora))
    return f"{HEADING}: {', '.join(models)}" if models else HEADING


def display(model: str) -> str:
    """A model as the report names it (``SmolLM2-135M``, ``MiniLM-L6``), else as a figure does.

    Parameters
    ----------
    model : str
        The model as the run recorded it.

    Returns
    -------
    str
    """
    if model in DISPLAY:
        return DISPLAY[model]
    from attnspec.plots import short_name  # matplotlib: imported only for a model the report does not name

    return short_name(model)


def scaling_label(run: Path) -> str:
    """``MiniLM-L6 · imdb``: a scaling run's model and corpus, from its longest length's meta.json.

    Parameters
    ----------
    run : Path
        A scaling study's directory: its meta.json lists the ``lengths``, and the run of the
        longest under ``n<len>`` holds a meta.json.

    Returns
    -------
    str
        The model as the report names it (:func:`display`) · the corpus as the run recorded it.
    """
    from attnspec.report.run_meta import describing_meta

    meta = describing_meta(run)
    return f"{display(str(meta.get('model')))} · {(meta.get('identity') or {}).get('data')}"


# ---------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------
def _ci(v: float, lo: float, hi: float, fmt: str = ".3f") -> str:
    from attnspec.report.markdown import with_interval

    return with_interval(v, lo, hi, fmt)


def _overall(stats: pd.DataFrame, q: str) -> pd.Series | None:
    row = stats[(stats["quantity"] == q) & (stats["layer"] < 0)]
    return None if row.empty else row.iloc[0]


def _cell(stats: pd.DataFrame | None, q: str) -> str:
    row = None if stats is None else _overall(stats, q)
    return "—" if row is None else _ci(row["mean"], row["low"], row["high"])


def _name(r: Run) -> str:
    return f"{display(r.model)} · {r.data}"


def _caveat(study: Study, quick: bool) -> list[str]:
    if not (study.few or quick):
        return []
    inputs = sorted({r.inputs for c in study.corpora for r in c.runs.values()})
    return [
        f"_Too few numbers for conclusions: {'quick sizes, ' if quick else ''}runs of "
        f"{', '.join(map(str, inputs))} inputs (a reading needs at least {FEW_INPUTS}); the tables and sentences "
        "below show how the study is read, not what it finds._",
        "",
    ]


# ---------------------------------------------------------------------------------------
# The section
# ---------------------------------------------------------------------------------------
def decoder_section(experiments: Sequence[Any], results: Path, figures: Path, *, quick: bool) -> list[str]:
    """Markdown lines of the section (empty when no experiment concerns a causal model).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    figures : Path
        The report's figure folder (figures are drawn there).
    quick : bool
        The quick arguments were run (the text says so).

    Returns
    -------
    list of str
        Markdown lines.
    """
    study = build_study(experiments, results)
    if study is None:
        wanted = [e.name for e in experiments if e.command == "spectrum" and _names_decoder(e)]
        if not wanted:
            return []
        return [
            f"## {HEADING}",
            "",
            f"_Not available: no results of {', '.join(f'`{w}`' for w in wanted)} (run `attnspec report`)._",
            "",
        ]
    md = [
        f"## {heading(study)}",
        "",
        "Four questions (and the long end), asked of a causal language model's lower-triangular P beside the encoder's P "
        "on the same corpora: intervals are 95% over inputs (documents); quantities kept per input (k90, ranks, "
        "effective rank) have exact t-intervals, the others (c at n/4, row entropy, stable rank, σ₂/σ₁, numerical "
        "rank) intervals from an upper bound of the standard error (at least the nominal coverage; "
        'docs/spectrum.md, "The decoder study"). Ranks are divided by n; depth is relative (0 = first layer, '
        "1 = last), so a 30-layer decoder and a 6-layer encoder share one axis.",
        "",
    ]
    md += _caveat(study, quick)
    md += [f"- _{p}_" for p in study.problems] + ([""] if study.problems else [])
    if not study.corpora:
        return md
    md += _q1(study)
    md += _q2(study, figures)
    md += _q3(study, figures)
    md += _q4(study, figures)
    md += _long_end(study)
    return md


def _names_decoder(exp: Any) -> bool:
    from attnspec.spectra.model_names import GGUF_ALIASES

    model = str(exp.args.get("model", ""))
    return model in GGUF_ALIASES or model.endswith(".gguf")


def _q1(study: Study) -> list[str]:
    md = [
        "### 1. Is a causal LM's attention low rank in Linformer's sense?",
        "",
        "Linformer's reading (its Figure 1): most of the singular-value mass of P in the first n/4 indices. "
        "Overall means (over layers and heads) with 95% intervals over documents (the inputs); the encoder at the same n and corpus beside.",
        "",
        "| model · corpus | n | inputs | c at n/4 | k90 / n | effective rank / n | rank for error ≤ 0.1, / n |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in study.corpora:
        for (causal, n), st in c.stats.items():
            r = c.runs[(causal, n)]
            md.append(f"| {_name(r)} | {n} | {r.inputs} | " + " | ".join(_cell(st, q) for q in HEADLINE) + " |")
    md.append("")
    md += _per_layer(study, "c_at", "Per layer, c at n/4 of the decoder")
    for c in study.corpora:
        st = c.stats[(True, c.decoder.n)]
        cat, k90 = _overall(st, "c_at"), _overall(st, "reach_index")
        if cat is None or k90 is None:
            continue
        most = (
            "yes, the whole interval lies above 0.5"
            if cat["low"] > 0.5
            else "no, the whole interval lies below 0.5"
            if cat["high"] < 0.5
            else "undecided, the interval contains 0.5"
        )
        line = (
            f"Reading ({_name(c.decoder)}, n = {c.decoder.n}): c at index {int(cat['at'])} is "
            f"{_ci(cat['mean'], cat['low'], cat['high'])} — most of the mass in the first quarter? {most}; but "
            f"90% of the mass needs k90 = {_ci(k90['mean'], k90['low'], k90['high'], '.1%')} of n."
        )
        enc = c.stats.get((False, c.decoder.n))
        if enc is not None and _overall(enc, "c_at") is not None:
            e = _overall(enc, "c_at")
            ek = _overall(enc, "reach_index")
            line += (
                f" The encoder at the same n: c = {_ci(e['mean'], e['low'], e['high'])}, k90 = "
                f"{_ci(ek['mean'], ek['low'], ek['high'], '.1%')} of n."
            )
        md += [line + _centred_note(st, c.runs.get((False, c.decoder.n)), enc), ""]
    return md


def _centred_note(decoder: pd.DataFrame, encoder_run: Run | None, encoder: pd.DataFrame | None) -> str:
    """The decoder's centred measure (P less its mean row, :mod:`attnspec.spectra.centred`) with its
    interval, the encoder's at the same n beside it, or that the decoder's results lack it: the
    same measure as Figure 1's, said for every model. Its nulls are drawn or closed-form matrices
    saved without P, so none holds it."""
    held = _overall(decoder, "c_centred")
    if held is None:
        return " Centred measure (P less its mean row): not measured in this run's results."
    said = (
        f" Centred measure (P less its mean row: what differs between queries), c_centred at index "
        f"{int(held['at'])}: {_ci(held['mean'], held['low'], held['high'])}"
    )
    other = None if encoder is None else _overall(encoder, "c_centred")
    if other is not None and encoder_run is not None:
        said += f"; {display(encoder_run.model)} at the same n: {_ci(other['mean'], other['low'], other['high'])}"
    elif encoder_run is not None:
        said += f"; {display(encoder_run.model)} at the same n: not measured"
    # a causal P's centred part also holds the triangle's shape: the lower-triangular uniform P's
    # value (closed form) is what that shape alone gives; its drawn nulls are saved without P
    from attnspec.spectra.centred import uniform_centred_at

    shape = uniform_centred_at(int(held["n"]), int(held["at"]), causal=True)
    said += f"; the lower-triangular uniform P, the triangle's shape alone: {shape:.3f}"
    if held["high"] < shape:
        return said + (
            " — below it: what the decoder's queries do beyond averaging is spread over more directions than the "
            "triangle gives, no learned low-rank structure shown."
        )
    if held["low"] > shape:
        return said + " — above it: beyond averaging, the decoder's P is more concentrated than the triangle gives."
    return said + " — its interval contains it."


def _per_layer(study: Study, quantity: str, title: str) -> list[str]:
    """One quantity of the decoder per layer, with its 95% intervals, one column per corpus."""
    cols = [(c, c.stats[(True, c.decoder.n)]) for c in study.corpora]
    per = [st[(st["quantity"] == quantity) & (st["layer"] >= 0)].set_index("layer") for _, st in cols]
    if not any(len(p) for p in per):
        return []
    layers = sorted(set().union(*(p.index for p in per)))
    md = [
        f"{title} (95% intervals, layer 1 first):",
        "",
        "| layer | " + " | ".join(f"{_name(c.decoder)}, n = {c.decoder.n}" for c, _ in cols) + " |",
        "|---" * (len(cols) + 1) + "|",
    ]
    for layer in layers:
        md.append(
            f"| {layer + 1} | "
            + " | ".join(
                _ci(p.loc[layer, "mean"], p.loc[layer, "low"], p.loc[layer, "high"]) if layer in p.index else "—"
                for p in per
            )
            + " |"
        )
    return md + [""]


def _verdict_counts(per: pd.DataFrame) -> str:
    short = {
        "does not grow": "no growth",
        "grows with n, sublinearly": "sublinear",
        "grows about linearly": "linear",
        "inconclusive": "inconclusive",
    }
    counts: dict[str, int] = {}
    for v in per["verdict"]:
        key = next((s for k, s in short.items() if v.startswith(k)), v)
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def _q2(study: Study, figures: Path) -> list[str]:
    from attnspec.spectra.decoder_study import beta_difference

    md = [
        "### 2. Does the rank it needs grow with n?",
        "",
        "β of k90 ∝ n^β (k90: the index where an input's curve reaches 0.9, head mean per layer), least squares "
        "on log–log axes, 95% percentile bootstrap over inputs (`attnspec.spectra.scaling_fit.fit_per_input`); each model over "
        "its own lengths, then both over the lengths they share.",
        "",
        "| model · corpus | n | inputs | β, all layers | verdict | β per layer (min–max) | layers by verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    drawn = []
    for c in study.corpora:
        for r, fits in c.fits:
            allr = fits[fits["layer"] < 0].iloc[0]
            per = fits[fits["layer"] >= 0]
            md.append(
                f"| {_name(r)} | {allr['lengths']} | {int(allr['inputs'])} | "
                f"{_ci(allr['beta'], allr['low'], allr['high'], '.2f')} | {allr['verdict']} | "
                f"{per['beta'].min():.2f}–{per['beta'].max():.2f} | {_verdict_counts(per)} |"
            )
            drawn.append(fits.assign(model=display(r.model), data=r.data))
    md.append("")
    for c in study.corpora:
        by_range: dict[str, dict[bool, pd.Series]] = {}
        for r, fits in c.fits:
            by_range.setdefault(fits["lengths"].iloc[0], {})[r.causal] = fits[fits["layer"] < 0].iloc[0]
        parts = []
        for lengths, pair in by_range.items():
            if True in pair and False in pair:
                d, lo, hi = beta_difference(pair[True], pair[False])
                parts.append(
                    f"over n = {lengths} the decoder's β is {pair[True]['beta']:.2f} "
                    f"[{pair[True]['low']:.2f}, {pair[True]['high']:.2f}], the encoder's "
                    f"{pair[False]['beta']:.2f} [{pair[False]['low']:.2f}, {pair[False]['high']:.2f}]: "
                    f"difference {d:+.2f} [{lo:+.2f}, {hi:+.2f}] (normal approximation from the two bootstrap "
                    f"intervals), {'an interval that excludes 0' if lo > 0 or hi < 0 else 'an interval that includes 0'}"
                )
        own = [(r, f[f["layer"] < 0].iloc[0]) for r, f in c.fits if r.causal]
        if own:
            r, a = own[0]
            head = (
                f"Reading ({_name(r)}): over its own lengths n = {a['lengths']} the rank it needs "
                f"{_growth(a)} (β = {_ci(a['beta'], a['low'], a['high'], '.2f')})"
            )
            md += [head + ("; " + "; ".join(parts) if parts else "") + ".", ""]
    if drawn:
        from attnspec.plots.decoder import plot_betas

        full = pd.concat(drawn, ignore_index=True)
        first = full.groupby(["model", "data"], sort=False)["lengths"].transform("first")
        plot_betas(full[full["lengths"] == first], figures / "decoder", title="β of k90 ∝ n^β per layer")
        md += ["![β per layer against relative depth](figures/decoder/decoder_beta.png)", ""]
    return md


def _growth(row: pd.Series) -> str:
    from attnspec.spectra.reading import LINEAR_ABOVE, NO_GROWTH_BELOW

    if row["low"] > LINEAR_ABOVE:
        return "grows about linearly with n"
    if row["high"] < NO_GROWTH_BELOW:
        return "does not grow with n"
    if row["low"] > NO_GROWTH_BELOW and row["high"] < LINEAR_ABOVE:
        return "grows with n, sublinearly"
    return "grows at a rate the interval leaves open"


def _q3(study: Study, figures: Path) -> list[str]:
    md = [
        "### 3. How do the metrics change with depth?",
        "",
        "Per run: the mean of the first and of the last third of the layers, their difference, and the "
        "least-squares slope of the layer means against relative depth (the fitted change from the first layer to "
        "the last), each with a 95% interval over inputs (method: `per-input` exact, `bound` conservative): how "
        "precisely this profile is known. Whether depth matters is a question about the layers: Spearman's ρ of the "
        "layer means against depth with its permutation p over their orderings, worded by one rule (rises or falls "
        "at p < 0.05, suggestive at p < 0.1, else no trend shown).",
        "",
        "| model · corpus | n | quantity | first third | last third | last − first [95% CI] | slope over depth [95% CI] | method | ρ, p (layers) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in study.corpora:
        for causal, tr in c.trends.items():
            r = c.runs[(causal, c.decoder.n)]
            for t in tr.itertuples():
                md.append(
                    f"| {_name(r)} | {r.n} | {t.label} | {t.first:.3f} | {t.last:.3f} | "
                    f"{_ci(t.change, t.change_low, t.change_high, '+.3f')} | {_ci(t.slope, t.low, t.high, '+.3f')} | "
                    f"{t.method} | {t.rho:+.2f}, {t.p:.2g} |"
                )
    md.append("")
    tables = [line for q in DEPTH[1:] for line in _per_layer(study, q, f"{QUANTITIES[q][0]} of the decoder per layer")]
    if tables:  # long (one row per layer): folded, the figure below shows the same numbers
        md += [
            "<details><summary>The decoder's per-layer values with their intervals</summary>",
            "",
            *tables,
            "</details>",
            "",
        ]
    for c in study.corpora:
        tr = c.trends.get(True)
        if tr is None or tr.empty:
            continue
        parts = [
            f"{t.label}: {t.phrase} (ρ = {t.rho:+.2f}, permutation p = {t.p:.2g} over the layer means; "
            f"{t.first:.3f} → {t.last:.3f}, slope {_ci(t.slope, t.low, t.high, '+.3f')} over inputs)"
            for t in tr.itertuples()
        ]
        line = f"Reading ({_name(c.decoder)}, n = {c.decoder.n}, {c.decoder.layers} layers): " + "; ".join(parts) + "."
        enc = c.trends.get(False)
        if enc is not None and not enc.empty:
            same = [t.label for t, e in zip(tr.itertuples(), enc.itertuples()) if t.phrase == e.phrase]
            line += (
                f" The encoder's layers read the same for: {', '.join(same) if same else 'none of them'} "
                "(the same wording of the permutation test)."
            )
        md += [line, ""]
    stats = [
        st.assign(model=display(c.runs[(causal, n)].model), data=c.data)
        for c in study.corpora
        for (causal, n), st in c.stats.items()
        if n == c.decoder.n
    ]
    if stats:
        from attnspec.plots.decoder import plot_depth

        plot_depth(
            pd.concat(stats, ignore_index=True),
            figures / "decoder",
            title="Per-layer metrics against relative depth, decoder beside encoder",
        )
        md += ["![per-layer metrics against relative depth](figures/decoder/decoder_depth.png)", ""]
    return md


def _shape_note(ct: pd.DataFrame) -> str:
    """What two clear differences say together when they point opposite ways: a P whose first
    singular direction dominates more (lower stable rank) while its curve needs more indices
    to reach 0.9 (higher k90) has a stronger head and a longer tail at once."""
    clear = {r.quantity: r.diff for r in ct.itertuples() if r.outside}
    if "stable_rank" not in clear or "reach_index" not in clear:
        return ""
    if clear["stable_rank"] < 0 < clear["reach_index"]:
        return (
            " The two measures of rank disagree in direction: the decoder's P is more dominated by its first "
            "singular direction (lower stable rank) yet needs more indices for 90% of the mass (higher k90/n) — a "
            'stronger head over a longer tail, so "lower rank" depends on which measure is read.'
        )
    if clear["stable_rank"] > 0 > clear["reach_index"]:
        return (
            " The two measures of rank disagree in direction: the decoder's P is less dominated by its first "
            "singular direction (higher stable rank) yet reaches 90% of the mass sooner (lower k90/n)."
        )
    return ""


def _q4(study: Study, figures: Path) -> list[str]:
    md = [
        "### 4. A causal, lower-triangular P against an encoder's P at the same n",
        "",
        "A causal P is lower triangular with a positive diagonal (softmax weights are positive), so it is never "
        "singular: all n singular values are positive and low rank can only be approximate, which the curve and "
        "the ranks for error ε measure. Its row i spreads over i + 1 positions only; row entropy is normalised by "
        "log of the positions each row may attend to, so 1 means uniform over what the row can see for both kinds. "
        "Overall means with 95% intervals, and decoder − encoder with a Welch interval (independent inputs). The "
        "documents are each model's own draw (its tokenizer cuts the windows, and an IMDB review must be long "
        "enough in its tokens), so a difference is one of model and inputs together.",
        "",
    ]
    any_table = False
    for c in study.corpora:
        for n, ct in c.contrasts.items():
            dec, enc = c.runs[(True, n)], c.runs[(False, n)]
            any_table = True
            md += [
                f"{_name(dec)} ({dec.inputs} inputs) against {_name(enc)} ({enc.inputs} inputs), n = {n}:",
                "",
                f"| quantity | {display(dec.model)} | {display(enc.model)} | difference [95% CI] | outside the CI of no difference |",
                "|---|---|---|---|---|",
            ]
            for r in ct.itertuples():
                md.append(
                    f"| {r.label} | {_ci(r.a, r.a_low, r.a_high)} | {_ci(r.b, r.b_low, r.b_high)} | "
                    f"{_ci(r.diff, r.diff_low, r.diff_high, '+.3f')} | {'yes' if r.outside else 'no'} |"
                )
            md.append("")
            clear = [
                f"{r.label} {'higher' if r.diff > 0 else 'lower'} by {abs(r.diff):.3f} "
                f"[{r.diff_low:+.3f}, {r.diff_high:+.3f}]"
                for r in ct.itertuples()
                if r.outside
            ]
            unclear = [r.label for r in ct.itertuples() if not r.outside]
            md += [
                f"Reading (n = {n}, {c.data}): the decoder's P against the encoder's: "
                + ("; ".join(clear) if clear else "no difference whose interval excludes 0")
                + "."
                + (f" Intervals include 0 for: {', '.join(unclear)}." if unclear else "")
                + _shape_note(ct),
                "",
            ]
    if not any_table:
        md += ["_No encoder run at the decoder's lengths on the same corpus: nothing to set beside._", ""]
    return md


def _long_fit(c: Corpus) -> pd.Series | None:
    """The decoder's β over all layers, fitted on its own scaling lengths."""
    own = [f for r, f in c.fits if r.causal and r.scaling == c.base[0].scaling]  # the full range comes first
    return None if not own else own[0][own[0]["layer"] < 0].iloc[0]


def _method_note(run: Run) -> str | None:
    """How a long run's values were computed and the error its meta.json states, unless exact in float64."""
    from attnspec.spectra.run_error import is_approximate
    from attnspec.storage.results import read_meta

    meta = read_meta(run.path)
    where = f"{_name(run)} at n = {run.n}"
    approximate = is_approximate(meta)  # longn spectra or a bfloat16 model, with their stated error
    if approximate:
        return f"{where} is {approximate}."
    if meta.get("svd_method") == "gram32":
        curve = (meta.get("svd_method_error") or {}).get("curve_max_abs", float("nan"))
        return (
            f"{where} is computed from the float32 Gram matrix (`gram32`): its curves are within {curve:.1e} "
            'of the float64 computation, as measured (docs/spectrum.md, "Long context").'
        )
    return None


def _long_end(study: Study) -> list[str]:
    """Past the scaling study: the decoder at longer n (few inputs each), against what β predicts."""
    from attnspec.spectra.decoder_study import predicted_share

    corpora = [c for c in study.corpora if c.long and c.base is not None]
    if not corpora:
        return []
    methods = " ".join(note for c in corpora for r, _ in c.long.values() if (note := _method_note(r)))
    md = [
        "### 5. The long end",
        "",
        "The spectrum past the scaling study's lengths (the long-context experiments; each input's 270 "
        "matrices take minutes at these n, so these runs have few inputs and wide intervals). Beside each, the "
        "scaling study's longest run, and k90/n as the power law fitted there predicts it: "
        "k90(n)/n = k90(n₀)/n₀ · (n/n₀)^(β − 1), its interval from the two 95% intervals at their ends "
        "(coverage at least 90%). The long runs draw their own documents (windows of n tokens), so they are "
        "another sample than the scaling study's." + (f" {methods}" if methods else ""),
        "",
        "| model · corpus | n | inputs | c at n/4 | k90 / n | effective rank / n | rank for error ≤ 0.1, / n |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in corpora:
        for r, st in [c.base, *c.long.values()]:
            md.append(f"| {_name(r)} | {r.n} | {r.inputs} | " + " | ".join(_cell(st, q) for q in HEADLINE) + " |")
    md.append("")
    for c in corpora:
        base_run, base_st = c.base
        k0, c0 = _overall(base_st, "reach_index"), _overall(base_st, "c_at")
        beta = _long_fit(c)
        for n, (r, st) in c.long.items():
            k, cat = _overall(st, "reach_index"), _overall(st, "c_at")
            if k is None or cat is None or k0 is None or c0 is None:
                continue
            line = (
                f"Reading ({_name(r)}, n = {n}, {r.inputs} inputs): c at index {int(cat['at'])} is "
                f"{_ci(cat['mean'], cat['low'], cat['high'])} (n = {base_run.n}: {_ci(c0['mean'], c0['low'], c0['high'])}); "
                f"k90 is {_ci(k['mean'], k['low'], k['high'], '.1%')} of n "
                f"(n = {base_run.n}: {_ci(k0['mean'], k0['low'], k0['high'], '.1%')})"
            )
            if beta is not None:
                p, lo, hi = predicted_share(k0, beta, base_run.n, n)
                meets = k["low"] <= hi and lo <= k["high"]
                said = "overlaps: no sign that the growth changes" if meets else "misses: the growth changes"
                line += (
                    f"; the power law of n = {beta['lengths']} (β = {_ci(beta['beta'], beta['low'], beta['high'], '.2f')}) "
                    f"predicts {p:.1%} [{lo:.1%}, {hi:.1%}], which the measured interval {said} past {base_run.n}"
                )
            md += [line + ".", ""]
    return md


# ---------------------------------------------------------------------------------------
# The summary's lines
# ---------------------------------------------------------------------------------------
def decoder_summary(experiments: Sequence[Any], results: Path, *, quick: bool = False) -> list[str]:
    """One bullet line per question (empty without causal results), each linked to the section.

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    quick : bool
        The quick arguments were run (the text says so).

    Returns
    -------
    list of str
        Markdown lines.
    """
    from attnspec.report.anchors import anchor

    try:
        study = build_study(experiments, results)
    except Exception:  # noqa: BLE001 - the section reports what is broken
        return []
    if study is None or not study.corpora:
        return []
    link = f"[→](#{anchor(heading(study))})"
    note = " (too few inputs for conclusions)" if study.few or quick else ""
    lines = []
    q1 = []
    for c in study.corpora[:1]:  # the first corpus; the section gives every corpus
        dec, enc = c.stats[(True, c.decoder.n)], c.stats.get((False, c.decoder.n))
        cat, k90 = _overall(dec, "c_at"), _overall(dec, "reach_index")
        if cat is None or k90 is None:
            continue
        text = (
            f"{c.data}: c at n/4 {_ci(cat['mean'], cat['low'], cat['high'], '.2f')}, "
            f"k90 {_ci(k90['mean'], k90['low'], k90['high'], '.0%')} of n"
        )
        if enc is not None and _overall(enc, "c_at") is not None:
            e, ek = _overall(enc, "c_at"), _overall(enc, "reach_index")
            text += f" (encoder {e['mean']:.2f}, {ek['mean']:.0%})"
        q1.append(text)
    if q1:
        lines.append(
            f"- **Causal decoder ({display(study.corpora[0].decoder.model)}), low rank?**{note} "
            + f"n = {study.corpora[0].decoder.n}, "
            + "; ".join(q1)
            + f". {link}"
        )
    q2 = []
    for c in study.corpora:
        for r, fits in c.fits:
            a = fits[fits["layer"] < 0].iloc[0]
            q2.append(
                f"{display(r.model)} · {r.data} (n = {a['lengths']}) β = {_ci(a['beta'], a['low'], a['high'], '.2f')}"
            )
    if q2:
        lines.append(f"- **Decoder rank against n**{note}: k90 ∝ n^β with " + "; ".join(q2) + f". {link}")
    q3 = []
    for c in study.corpora:
        tr = c.trends.get(True)
        if tr is not None and not tr.empty:
            q3.append(
                f"{c.data}: "
                + ", ".join(f"{t.label} {t.phrase} (ρ = {t.rho:+.2f}, p = {t.p:.2g})" for t in tr.itertuples())
            )
    if q3:
        lines.append(
            f"- **Decoder, depth**{note}: permutation test over its layer means, " + "; ".join(q3) + f". {link}"
        )
    q4 = []
    for c in study.corpora:
        if c.decoder.n in c.contrasts:
            ct = c.contrasts[c.decoder.n]
            out = [f"{r.label} {r.diff:+.3f}" for r in ct.itertuples() if r.outside]
            q4.append(
                f"{c.data}, n = {c.decoder.n}: " + (", ".join(out) if out else "none") + f" (of {len(ct)} quantities)"
            )
    if q4:
        lines.append(
            f"- **Causal against encoder P**{note}: decoder − encoder differences outside their 95% "
            "intervals: " + "; ".join(q4) + f". {link}"
        )
    q5 = []
    for c in study.corpora:
        for n, (r, st) in c.long.items():
            k = _overall(st, "reach_index")
            if k is not None:
                q5.append(
                    f"{c.data}, n = {n} ({r.inputs} inputs): k90 {_ci(k['mean'], k['low'], k['high'], '.1%')} of n "
                    f"(n = {c.base[0].n}: {_overall(c.base[1], 'reach_index')['mean']:.1%})"
                )
    if q5:
        lines.append(f"- **Decoder, long end**{note}: " + "; ".join(q5) + f". {link}")
    return lines
