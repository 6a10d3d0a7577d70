"""The summary that opens REPORT.md: numbered findings, each computed from saved results.

The spectrum study (the share of singular-value mass in the first indices with an interval
over layer means, the depth trend resampling layers, the growth exponent β of k90 with n,
the same beside the entropy-matched null, and what that means for Linformer's premise), the
causal decoder, one line per paper (its claims by the verdict the checking commands print,
from the claims ledger, which pools every experiment that checks a claim), and OSA training
beside the paper's Table 2. Every number is read from the results the report was built
from; nothing is typed in. At most :data:`MAX_LINES` lines and :data:`MAX_WORDS` words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnspec.report.anchors import anchor
from attnspec.report.decoder import scaling_label
from attnspec.report.experiments import spectrum_runs
from attnspec.report.null_values import centred_value


def spectrum_statements(run: Path, at: int | None = None) -> dict[str, Any]:
    """The paper's qualitative statements, measured on one spectrum run.

    * long tail: the mean cumulative value at index ``at`` (128 of 512), over layers and
      heads, with its 95% interval over documents (``ci``, the sampling unit; the same
      interval as the decoder section's, :func:`attnspec.spectra.decoder_study.run_statistics`);
      the model's layers are its whole population of layers, so their spread is a range
      (``layer_range``), not an uncertainty;
    * "higher layers are more skewed": Spearman's ρ of the layer means against depth with its
      permutation p over their orderings (``trend``, :mod:`attnspec.numerics.depth`);
    * k90/n, per input (``k90``: mean, low, high over documents).

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    at : int, optional
        The index read (default: the reading point of the run's n).

    Returns
    -------
    dict
    """
    from attnspec.numerics.depth import MIN_LAYERS, depth_permutation_test
    from attnspec.spectra.decoder_study import run_statistics
    from attnspec.spectra.figure_record import figure_choices
    from attnspec.storage.results import read_meta, read_table

    meta = read_meta(run)
    spec = read_table(run, "spectrum")
    n = int(spec["index"].max())
    at = figure_choices(meta, n, at=at)["at"]  # the index the run's figures read
    at_rows = spec[spec["index"] == at]
    per_head = at_rows["mean"].to_numpy()
    per_layer = at_rows.groupby("layer")["mean"].mean()
    stats = run_statistics(run, at)
    overall = stats[stats["layer"] < 0].set_index("quantity")
    out: dict[str, Any] = {
        "model": meta.get("identity", {}).get("model"),
        "data": meta.get("identity", {}).get("data"),
        "split": meta.get("corpus", {}).get("split"),
        "n": n,
        "at": at,
        "inputs": meta.get("inputs_done"),
        "mean_at": float(per_head.mean()),
        "ci": (float(overall.loc["c_at", "low"]), float(overall.loc["c_at", "high"])),
        "per_layer": [float(v) for v in per_layer.to_numpy()],
        "layer_range": (float(per_layer.min()), float(per_layer.max())),
        "min_head": float(per_head.min()),
        "max_head": float(per_head.max()),
    }
    if "reach_index" in overall.index:
        k = overall.loc["reach_index"]
        out["k90"] = (float(k["mean"]), float(k["low"]), float(k["high"]))
    if "row_entropy" in overall.index:
        entropy = stats[(stats["quantity"] == "row_entropy") & (stats["layer"] >= 0)].sort_values("layer")
        out["row_entropy"] = [float(v) for v in entropy["mean"]]
    if len(per_layer) >= MIN_LAYERS and per_layer.nunique() > 1:
        out["trend"] = depth_permutation_test(per_layer.to_numpy(dtype=float))
    metrics = read_table(run, "metrics")
    out["centred"] = centred_value(metrics)
    out["effective_rank"] = float(metrics["effective_rank_mean"].mean())
    out["stable_rank"] = float(metrics["stable_rank_mean"].mean())
    return out


def _k90_beta(run: Path) -> tuple[float, float, float, list[int], int, str] | None:
    from attnspec.spectra.scaling_fit import fit_scaling, scaling_table

    try:
        table = scaling_table(run)
        fits = fit_scaling(run)
    except Exception:  # noqa: BLE001 - a broken result is reported in its own section
        return None
    overall = fits[(fits["layer"] < 0) & (fits["metric"] == "reach_index")]
    if overall.empty:
        return None
    r = overall.iloc[0]
    return (
        float(r["beta"]),
        float(r["low"]),
        float(r["high"]),
        sorted(int(n) for n in table["n"].unique()),
        int(fits["inputs"].iloc[0]),
        str(r["verdict"]),
    )


def _short(cite: str) -> str:
    m = re.search(r"\*(.+?)\*", cite)
    return m.group(1) if m else cite


#: The summary's budget: at most this many lines and words (a researcher's two minutes).
MAX_LINES = 20
MAX_WORDS = 400


def summary_section(
    experiments: Sequence[Any],
    results: Path,
    *,
    papers: dict[str, str],
    quick: bool,
    verdict_file: str,
    figure1_heading: str,
) -> list[str]:
    """The whole "Summary" section: numbered findings, one a line, each with its numbers and a
    link to its section, in the order models and data; the spectrum at one n; its depth trend;
    its growth with n and what that means for Linformer; the causal decoder; one line per paper;
    OSA training. Empty when there are no results yet. At most MAX_LINES lines and MAX_WORDS
    words (a test holds it to that).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    papers : dict of str to str
        Paper key → its citation (:data:`attnspec.verdicts.registry.PAPERS`).
    quick : bool
        The quick arguments were run.
    verdict_file : str
        The verdict table's file name in a results directory.
    figure1_heading : str
        The heading of the Figure 1 section, linked to.

    Returns
    -------
    list of str
        Markdown lines.
    """
    findings = [
        *_spectrum_findings(experiments, results, figure1_heading),
        *_decoder_finding(experiments, results, quick),
        *_paper_findings(experiments, results, papers, verdict_file),
        *_training_finding(experiments, results),
    ]
    if not findings:
        return []
    md = ["## Summary", ""]
    if quick:
        md += ["_Quick mode: small sizes, the numbers are illustrative only._", ""]
    md += [f"{i}. {text}" for i, text in enumerate(findings, 1)]
    return [*md, ""]


def _pct_documents(s: dict[str, Any]) -> str:
    """The mean share with its interval over documents (:func:`spectrum_statements`)."""
    from attnspec.numerics.stats import format_interval

    ci = format_interval(100 * s["ci"][0], 100 * s["ci"][1], 1).replace(",", "%,").replace("]", "%]")
    return f"{s['mean_at']:.1%} {ci}"


def _null_constant(run: Path) -> tuple[str, float, float, float, float | None] | None:
    """The chance null (the entropy-matched one) beside the real P in a scaling study: (null
    name, null β, real k90/n, null k90/n, the architecture null's (random-init model's) k90/n
    or None, at the longest n); None when the study holds no chance null."""
    from attnspec.spectra.nulls import with_role
    from attnspec.spectra.scaling_fit import null_comparison

    try:
        table = null_comparison(run, resamples=500)
    except Exception:  # noqa: BLE001 - a broken result is reported in its own section
        return None
    share = sorted((c for c in table.columns if c.startswith("share_n")), key=lambda c: int(c[7:]))
    chance, architecture = with_role("chance"), with_role("architecture")
    if not share or chance not in set(table["source"]):
        return None
    real = table[table["source"] == "real"].iloc[0]
    null = table[table["source"] == chance].iloc[0]
    init = table[table["source"] == architecture]
    return (
        chance,
        float(null["beta"]),
        float(real[share[-1]]),
        float(null[share[-1]]),
        float(init[share[-1]].iloc[0]) if len(init) else None,
    )


def _figure1_findings(experiments: Sequence[Any], results: Path, figure1: Sequence[Any], link: str) -> list[str]:
    """Per model: the share of Σσ at one n with its interval over documents (the first model's range
    over layers) and every null beside it (its first corpus), the random-init model read against the
    real P; and the depth trend of each model by the permutation test over its layer means."""
    from attnspec.report.decoder import display

    stats = [spectrum_statements(results / exp.name) for exp in figure1]
    if not stats:
        return []
    by_model: dict[str, list[tuple[Any, dict[str, Any]]]] = {}  # the models in the experiments' order
    for exp, s in zip(figure1, stats):
        by_model.setdefault(display(str(s["model"])), []).append((exp, s))
    s0 = stats[0]
    shares, nulls, above = [], [], []
    first_names: tuple[str, ...] = ()
    # every model's runs on the same corpora, in the same order: the corpora are named once, at the end
    corpora = {tuple(r["data"] for _, r in runs) for runs in by_model.values()}
    same = len(corpora) == 1
    for i, (model, runs) in enumerate(by_model.items()):
        s = runs[0][1]
        lo, hi = s["layer_range"]
        at = "" if (s["at"], s["n"]) == (s0["at"], s0["n"]) else f" at {s['at']} of {s['n']}"
        shares.append(
            f"{model}{at} "
            + ", ".join(
                _pct_documents(r)
                + ("" if same else f" on {r['data']}")
                + (f" (layers {lo:.0%}–{hi:.0%})" if i == j == 0 else "")
                for j, (_, r) in enumerate(runs)
            )
        )
        # each model's nulls on its first corpus, named where they differ from the first model's (every
        # run's: Figure 1's table)
        beside, names, init_above = _nulls_beside(results / runs[0][0].name, s, results, bare=first_names)
        first_names = first_names if i else names
        if beside:
            nulls.append(f"{model} {beside}")
            above.append(init_above)
    # documents per run, in the order the models are named (one count where a model's runs agree)
    inputs = [
        "/".join(dict.fromkeys(str(int(r["inputs"])) for _, r in runs if r.get("inputs"))) for runs in by_model.values()
    ]
    corpus = f" ({s0['data']})" if len({r[0][1]["data"] for r in by_model.values()}) == 1 else ""
    reading = ": random init above real, what averaging gives" if above and all(above) else ""
    out = [
        f"**Low rank at n = {s0['n']}.** Σσ in the first {s0['at']} singular values: "
        + "; ".join(shares)
        + f" ({', '.join(next(iter(corpora))) + '; ' if same else ''}95% CIs over {' and '.join(i for i in inputs if i)} documents)"
        + (f"; nulls{corpus}: {'; '.join(nulls)}{reading}" if nulls else "")
        + f". {link}"
    ]
    depth = _depth_parts(by_model)
    if depth:
        out.append("**Depth.** Permuted layer means: " + "; ".join(depth) + f". {link}")
    return out


def _nulls_beside(
    run: Path, s: dict[str, Any], results: Path, *, bare: tuple[str, ...]
) -> tuple[str, tuple[str, ...], bool | None]:
    """``entropy null 51.6%, uniform null 100.0%, random init 97.4%`` at the run's reading index (the
    values alone when the nulls are ``bare``'s, in its order), the nulls' names, and whether the
    random-init model's share is above the real P's (None without one)."""
    from attnspec.report.null_values import null_values
    from attnspec.spectra.nulls import SHORT

    nulls = null_values(run, s["at"], results)
    named = tuple(nulls) != bare
    beside = ", ".join((f"{SHORT[name]} " if named else "") + f"{v.c_at:.1%}" for name, v in nulls.items())
    init = nulls.get("random-init")
    return beside, tuple(nulls), None if init is None else init.c_at > s["mean_at"]


def _depth_parts(by_model: dict[str, list[tuple[Any, dict[str, Any]]]]) -> list[str]:
    """Per model, its corpora that read alike named together (``MiniLM-L6 (6 layers, 720 orderings)
    imdb: ...; wiki103: ...``), or none when all read alike: ``MiniLM-L6 (6 layers, 720 orderings),
    suggestive rise with depth (ρ = +0.83, p = 0.058)``."""
    from attnspec.numerics.depth import depth_phrase

    parts = []
    for model, runs in by_model.items():
        trends: dict[tuple[str, float, float], list[str]] = {}
        said = ""
        for _, s in runs:
            if "trend" in s:
                t = s["trend"]
                said = f"{t.layers} layers, {t.orderings:,} orderings"
                trends.setdefault((depth_phrase(t), round(t.rho, 2), float(f"{t.p:.2g}")), []).append(s["data"])
        if trends:  # every corpus of the model alike: the corpora go unnamed (the line above names them)
            alike = len(trends) == 1 and len(next(iter(trends.values()))) == len(runs)
            parts.append(
                f"{model} ({said})"
                + ("," if alike else "")
                + "; ".join(
                    f"{'' if alike else ' ' + ', '.join(d) + ':'} {ph} (ρ = {r:+.2f}, p = {p:.2g})"
                    for (ph, r, p), d in trends.items()
                )
            )
    return parts


def _spectrum_findings(experiments: Sequence[Any], results: Path, figure1_heading: str) -> list[str]:
    """Models and data; share of Σσ at one n; depth; growth with n; what it means for Linformer."""

    figure1 = spectrum_runs(experiments, results, "figure1")
    scaling = spectrum_runs(experiments, results, "scaling")
    out: list[str] = []  # the models and corpora: the section under the summary, and every line's own
    out += _figure1_findings(experiments, results, figure1, f"[Figure 1](#{anchor(figure1_heading)})")
    betas = []
    for exp in scaling:
        b = _k90_beta(results / exp.name)
        if b is not None:
            betas.append((exp, b))
    if betas:
        by_model: dict[str, list[tuple[str, Any]]] = {}  # model -> [(corpus, fit)], in the experiments' order
        for exp, b in betas:
            model, corpus = scaling_label(results / exp.name).split(" · ")
            by_model.setdefault(model, []).append((corpus, b))

        def exponents(fits: list[tuple[str, Any]]) -> str:  # one model's corpora: one value, or their range
            lo, hi = min(b[0] for _, b in fits), max(b[0] for _, b in fits)
            return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"

        half = max((b[2] - b[1]) / 2 for _, b in betas)
        spans: dict[tuple[int, int], list[str]] = {}  # the models fitted over the same lengths, together
        for model, fits in by_model.items():
            spans.setdefault((fits[0][1][3][0], fits[0][1][3][-1]), []).append(f"{model} {exponents(fits)}")
        parts = "; ".join(f"{', '.join(said)} (n = {lo}–{hi})" for (lo, hi), said in spans.items())
        chance = [(exp, c) for exp, c in ((exp, _null_constant(results / exp.name)) for exp, _ in betas) if c]
        nulls = sorted(c[1] for _, c in chance)
        out.append(
            f"**The rank needed grows with n.** k90 ∝ n^β, β over both corpora: {parts}; 95% CIs over "
            f"inputs within ±{half:.3f}"
            + (
                f". An entropy-matched null grows as fast (β {nulls[0]:.2f}–{nulls[-1]:.2f}), "
                f"{_against_chance(chance, results)}"
                if chance
                else ""
            )
            + ". [Scaling](#beyond-figure-1)"
        )
        out.append(_linformer_finding(experiments, results, all(b[1] > 0.8 for _, b in betas)))
    return out


def _against_chance(chance: Sequence[tuple[Any, tuple]], results: Path) -> str:
    """``k90/n null/real (imdb): MiniLM-L6 0.63/0.32; SmolLM2-135M 0.46/0.38``: the entropy-matched
    null's k90/n against the real P's, the first corpus of each model (named once when it is one)."""
    first: dict[str, tuple[str, tuple]] = {}
    for exp, c in chance:
        model, corpus = scaling_label(results / exp.name).split(" · ")
        first.setdefault(model, (corpus, c))
    corpora = {corpus for corpus, _ in first.values()}
    one = f" ({next(iter(corpora))})" if len(corpora) == 1 else ""
    return f"k90/n null/real{one}: " + "; ".join(
        f"{model} {c[3]:.2f}/{c[2]:.2f}" + ("" if one else f" ({corpus})") for model, (corpus, c) in first.items()
    )


def _linformer_finding(experiments: Sequence[Any], results: Path, linear: bool) -> str:
    """What the approximation study decides at the read k (:mod:`attnspec.report.approx_part`): per
    model, each method's verdict by the stated rule and the methods below uniform attention at every
    n; without a study, what the spectrum alone says."""
    from attnspec.report.approx_part import HEADING, _by_model, model_verdicts, read_k, studies

    found = studies(experiments, results)
    if not found:
        return (
            "**For Linformer.** "
            + (
                "A fixed truncation rank keeps a shrinking share of P: Figure 1 is no "
                "evidence for an n-independent rank of P"
                if linear
                else "The growth exponents do not all support linear growth; see the scaling section"
            )
            + ". Not tested: Linformer's learned projections, "
            "which approximate PV, not P. [Scaling](#beyond-figure-1)"
        )
    k = read_k([v for *_, v in found])
    said = ". ".join(f"{model}: {model_verdicts(held, k, short=True)}" for model, held in _by_model(found).items())
    return f"**For Linformer** (fixed k = {k}, held-out documents, the stated rule): {said}. [→](#{anchor(HEADING)})"


def _decoder_finding(experiments: Sequence[Any], results: Path, quick: bool) -> list[str]:
    """The decoder section's first summary line (low rank, beside the encoder)."""
    from attnspec.report.decoder import decoder_summary

    lines = decoder_summary(experiments, results, quick=quick)
    return [lines[0].removeprefix("- ").replace("low rank?**", "low rank?** ", 1).replace("  ", " ")] if lines else []


def _theorem_of(claim_id: str, place: str) -> str:
    """The theorem (or equation, or place) a claim belongs to, as the summary names it: the place's
    "Theorem N" or "Lemma N", else the id's ``thmN`` / ``eqN``, else the place's first part."""
    m = re.search(r"\bTheorem [A-Z]?\d+(?:\.\d+)?", place) or re.search(r"\bLemma [A-Z]?\d+(?:\.\d+)?", place)
    if m:
        return m.group(0)
    part = claim_id.split(".")[1] if "." in claim_id else claim_id
    if m := re.fullmatch(r"thm(\d+)", part):
        return f"Theorem {m.group(1)}"
    if m := re.fullmatch(r"eq(\d+)", part):
        return f"eq. ({m.group(1)})"
    return place.split(",")[0]


def _why(row: dict[str, str], words: int = 7) -> str:
    """Why a claim fails, in at most ``words`` words: the deciding numbers of the row that decides
    its verdict, as the ledger renders them from that row's fields (never parsed back from the
    reason's text); the verdict itself when the row carries no numbers.

    Parameters
    ----------
    row : dict of str to str
        A claim of :func:`attnspec.report.ledger.ledger_rows` (``deciding``, ``verdict``).
    words : int
        The most words said.

    Returns
    -------
    str
    """
    text = str(row.get("deciding") or "") or str(row["verdict"])
    cut = text.split()
    return " ".join(cut[:words]) + ("…" if len(cut) > words else "")


def _paper_findings(experiments: Sequence[Any], results: Path, papers: dict[str, str], verdict_file: str) -> list[str]:
    """One line per paper: each theorem with a failing claim and why it fails (the deciding
    numbers of its first failing claim, from the claims ledger), then its misprints apart
    (printed formulas that hold as corrected: no failure)."""
    from attnspec.report.ledger import HEADING, ledger_rows
    from attnspec.verdicts.vocabulary import MISPRINT, is_failure

    rows = ledger_rows(experiments, results, verdict_file)
    out = []
    for paper, cite in papers.items():
        mine = [r for r in rows if r["paper"] == paper]
        if not mine:
            continue
        failing = [r for r in mine if is_failure(r["verdict"])]
        by_theorem: dict[str, str] = {}
        for r in sorted(failing, key=lambda r: r["verdict"] != "violated"):  # a plain violation says why best
            by_theorem.setdefault(_theorem_of(r["id"], r["place"]), _why(r))
        # the first three theorems by their deciding numbers; the rest are counted, the ledger has them
        shown = list(by_theorem.items())[:2]
        more = len(by_theorem) - len(shown)
        told = "; ".join(f"{name}: {why}" for name, why in shown) + (f"; {more} more in the ledger" if more else "")
        misprints = sorted({_theorem_of(r["id"], r["place"]) for r in mine if r["verdict"] == MISPRINT})
        out.append(
            f"**{_short(cite)}.** "
            + (f"{len(failing)} of {len(mine)} claims fail: {told}" if failing else f"No claim of {len(mine)} fails")
            + (f"; misprints that hold as corrected: {', '.join(misprints)}" if misprints else "")
            + f". [Ledger](#{anchor(HEADING)})"
        )
    return out


def _training_finding(experiments: Sequence[Any], results: Path) -> list[str]:
    """OSA training beside the paper's Table 2: each model's test accuracy over seeds with its
    interval, and which of the paper's orderings reproduce, by name. The paper's values are
    set beside the measured ones only when the run trained on MNIST, the paper's data."""
    import json

    import pandas as pd

    from attnspec.plots.osa_train import trained_data

    for exp in experiments:
        d = results / exp.name
        paper, orders = d / "osa_train_paper.parquet", d / "osa_train_orderings.parquet"
        if exp.command != "osa-train" or not paper.is_file():
            continue
        meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").is_file() else {}
        mnist = trained_data(meta) == "mnist"
        t = pd.read_parquet(paper).set_index("model")
        shown = [m for m in ("vit", "osa-qr", "osa-ns") if m in t.index]
        measured = ", ".join(
            f"{t.loc[m, 'label']} {100 * t.loc[m, 'accuracy_mean']:.1f}% "
            f"[{100 * t.loc[m, 'accuracy_ci_low']:.1f}, {100 * t.loc[m, 'accuracy_ci_high']:.1f}]"
            for m in shown
        )
        steps = (meta.get("budget") or {}).get("max_steps")
        setup = f"{int(t['n_seeds'].max())} seeds" + (f", {steps} steps each" if steps else "")
        if mnist:
            head = f"**OSA Table 2** (MNIST, {setup}): test accuracy {measured} against the paper's " + " / ".join(
                f"{100 * t.loc[m, 'paper_accuracy']:.1f}" for m in shown
            )
        else:
            head = f"**OSA training** (8×8 digits, not the paper's MNIST, {setup}): test accuracy {measured}"
        told = ""
        if orders.is_file():
            o = pd.read_parquet(orders)
            labels = {m: str(t.loc[m, "label"]) for m in t.index}
            reversed_ = [
                f"{labels.get(a, a)} > {labels.get(b, b)}"
                for a, b in o.loc[o["outcome"] == "reversed", ["a", "b"]].itertuples(index=False)
            ]
            rest = o["outcome"].value_counts()
            # counted; the reversals of the paper's own comparison (MNIST) named: the OSA section
            # names every ordering
            which = f" (the paper's {'; '.join(reversed_)})" if mnist and reversed_ else ""
            told = (
                f"; of the paper's {len(o)} orderings {int(rest.get('reproduced', 0))} reproduce (95% interval "
                f"over seeds), {int(rest.get('not resolved', 0))} unresolved, {len(reversed_)} reversed{which}"
            )
        return [f"{head}{told}. [Training](#{anchor(exp.heading(False))})"]
    return []
