"""`attnspec spectrum`, `attnspec merge`, `attnspec plot spectrum`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from attnspec.cli._common import SeedOpt, claim_out_dir, err_console, out_console, user_errors, whole_output
from attnspec.options.declaration import typer_command
from attnspec.options.spectrum import SPECTRUM

#: Result kinds (meta.json "kind") a figures folder may live in: its run, or its scaling study.
_FIGURES_NEST_IN = ("spectrum", "spectrum-scaling")

plot_app = typer.Typer(help="Figures from saved results (never recomputes).", no_args_is_help=True)


@typer_command(SPECTRUM)
def spectrum(
    options: dict[str, Any],
    flags: dict[str, str],
) -> None:
    """Spectrum of the attention matrices P of a pretrained transformer (Linformer Figure 1).

    Encoders and decoder language models (causal, lower-triangular P; meta.json records the
    family). Captures P for every layer and head on n-token inputs, computes the normalised
    cumulative singular-value curves, and averages them per (layer, head, index).
    Writes spectrum.parquet, metrics.parquet, state.npz, meta.json and figures/.
    Run again with the same --out and parameters, a complete run is up to date: its summary
    is printed and nothing is computed (exit 0); --overwrite recomputes it.
    """
    from attnspec.spectra.model_names import reject_alias_typo

    o = options
    with user_errors():
        reject_alias_typo(o["model"])  # at once: before torch loads and before any hub lookup
    from attnspec.errors import InputError
    from attnspec.spectra.config import parse_num_sentences, parse_shard
    from attnspec.spectra.nulls import parse_baselines
    from attnspec.spectra.reading import check_at
    from attnspec.spectra.scaling import parse_lengths
    from attnspec.spectra.study import check_study, run_study, study_kind

    with user_errors():
        from attnspec.options.spectrum import check_given_values
        from attnspec.spectra.projection import parse_ks

        check_given_values(o)

        baselines = parse_baselines(o["baseline"])
        ks = parse_ks(o["projection_k"])
        from attnspec.spectra.approx.saved import make_plan

        approx = make_plan(o["approx"], o["approx_k"], o["approx_split"], seed=o["seed"], steps=o["approx_steps"])
        lengths = parse_lengths(o["seq_len"])
        if len(lengths) > 1 and o["at"] is not None:
            raise InputError(
                "--at applies to one length; with several --seq-len values use "
                "`attnspec plot spectrum OUT/n<len> --at I`"
            )
        shard = parse_shard(o["shard"])
        num_inputs = parse_num_sentences(o["num_inputs"], option=flags.get("num_inputs", "--num-inputs"))
        cfg = _config(o, lengths, num_inputs, shard)
        if o["at"] is not None:
            check_at(o["at"], cfg.seq_len)
        cfg, lengths = check_study(cfg, lengths, baselines)
        kind, nests_in = study_kind(lengths)
        command = "attnspec spectrum" + (f" --seq-len {','.join(map(str, lengths))}" if len(lengths) > 1 else "")
        # held through the figures too; a run may live inside its scaling study, not in another result
        claim_out_dir(cfg.out, command, kind=kind, nests_in=nests_in)
        try:
            study = run_study(
                cfg,
                lengths,
                progress=not o["quiet"],
                baselines=baselines,
                projection_k=ks,
                command=command,
                approx=approx,
            )
        except KeyboardInterrupt as e:  # not inside the run (that one returns its status): e.g. in its nulls
            err_console.print(f"interrupted{f': {e}' if str(e) else ''}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=130) from None
        shown = {"at": o["at"], "label": o["label"], "plots": o["plots"], "seq_len": cfg.seq_len}
        if study.scaling:
            _scaling(study, shard=shard, plots=o["plots"])
        elif study.up_to_date:
            _up_to_date(study.out, **shown)
        else:
            _single(study.last, **shown)


def _config(o: dict[str, Any], lengths: list[int], num_inputs: int | str | None, shard: tuple[int, int] | None) -> Any:
    """The run's :class:`~attnspec.spectra.config.SpectrumConfig` from the command's options:
    each option named as a field of it passes as it is; the parsed ones are given here (the
    field of ``--num-inputs`` keeps the name a run's meta.json and identity record,
    ``num_sentences``)."""
    import dataclasses

    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.study import resolve_out

    parsed = {
        "seq_len": lengths[-1],
        "num_sentences": num_inputs,
        "shard": shard,
        "out": resolve_out(o["out"], o["model"], o["data"], lengths, shard),
    }
    fields = {f.name for f in dataclasses.fields(SpectrumConfig)} - set(parsed)
    return SpectrumConfig(**{k: v for k, v in o.items() if k in fields}, **parsed)


def _single(outcome: Any, *, at: int | None, label: str | None, plots: bool, seq_len: int) -> None:
    """A run computed now: how it ended, then its figures and summary."""
    if outcome.status == "interrupted":
        err_console.print(
            f"interrupted after {outcome.inputs_done} of {outcome.inputs_total} inputs; partial results kept in "
            f"{outcome.out}; continue with the same command and --resume"
        )
        raise typer.Exit(code=130)
    if outcome.status == "partial":
        err_console.print(
            f"--max-time reached after {outcome.inputs_done} of {outcome.inputs_total} inputs; partial results in "
            f"{outcome.out}; continue with the same command and --resume"
        )
    _after_run(outcome, at=at, label=label, plots=plots, seq_len=seq_len)


def _after_run(outcome: Any, *, at: int | None, label: str | None, plots: bool, seq_len: int) -> None:
    """The figures (and the choices meta.json records for them), the summary and where the results are."""
    from attnspec.spectra.figure_record import figure_choices, record_figure_choices
    from attnspec.storage.results import read_meta

    figures = []
    from attnspec.storage.results import result_files

    # the figures and the meta.json that records them: all or none, Ctrl-C held until written
    with whole_output(), result_files(outcome.out):
        if plots and outcome.inputs_done > 0:
            from attnspec.plots.spectrum import plot_run  # matplotlib: only when drawing

            figures = plot_run(outcome.out, at=at, label=label)
        if not figures and outcome.inputs_done > 0:
            # no figures now: still record --at so that `attnspec plot spectrum RUN` draws what was asked
            record_figure_choices(outcome.out, figure_choices(read_meta(outcome.out), seq_len, at=at, label=label))
    if outcome.inputs_done > 0:
        _short_inputs_warning(outcome.out, seq_len)
        _summary(outcome.out, at)
    out_console.print(_what_ran(outcome.out), highlight=False, soft_wrap=True)
    out_console.print(
        f"results: {outcome.out} ({outcome.inputs_done} inputs, {outcome.wall_time_s:.1f} s)"
        + (f"; figures: {outcome.out / 'figures'}" if figures else "")
    )


def _up_to_date(out: Path, *, at: int | None, label: str | None, plots: bool, seq_len: int) -> None:
    """A complete run asked again: its summary, and its figures only when missing or asked
    differently (--at, --label); nothing is computed."""
    from attnspec.spectra.figure_record import figure_choices, record_figure_choices
    from attnspec.storage.results import read_meta

    meta = read_meta(out)
    figures_dir = out / "figures"
    missing = (
        not (figures_dir / "spectrum_layers.png").is_file() or not (figures_dir / "spectrum_heatmap.png").is_file()
    )
    drew = False
    if plots and (missing or at is not None or label is not None):
        from attnspec.plots.spectrum import plot_run
        from attnspec.storage.results import result_files

        with whole_output(), result_files(out):  # every figure and the recorded choices, or none
            plot_run(out, at=at, label=label)
        drew = True
    elif at is not None or label is not None:
        record_figure_choices(out, figure_choices(meta, seq_len, at=at, label=label))
    _summary(out, at)
    out_console.print(_what_ran(out), highlight=False, soft_wrap=True)
    out_console.print(
        f"up to date: {out} already holds this run, complete ({meta.get('inputs_done')} inputs); "
        f"nothing computed{' (figures redrawn)' if drew else ''}; --overwrite recomputes it",
        highlight=False,
        soft_wrap=True,
    )


def _scaling(study: Any, *, shard: tuple[int, int] | None, plots: bool) -> None:
    """`attnspec spectrum --seq-len A,B,...` once :func:`attnspec.spectra.study.run_study` is done:
    how it ended, every length's figures, the fits and their figures (the fits need the whole
    study: not for a shard)."""
    out, lengths = study.out, study.lengths
    if study.up_to_date:
        if plots:  # figures an interruption or a --no-plots run left out, per length and of the study
            _plot_study(
                out,
                [n for n in lengths if not (out / f"n{n}" / "figures" / "spectrum_layers.png").is_file()],
                scaling=shard is None and (study.added or not (out / "figures" / "scaling_k90.png").is_file()),
            )
        out_console.print(
            f"up to date: {out} already holds this scaling run, complete (lengths "
            f"{', '.join(map(str, lengths))}); nothing computed; `attnspec plot scaling {out}` prints the "
            "fits; --overwrite recomputes",
            highlight=False,
            soft_wrap=True,
        )
        _approx_after_up_to_date(out, plots=plots and shard is None)
        return
    if study.status != "complete":
        err_console.print(
            f"stopped at n = {study.last.out.name[1:]} ({study.status}); continue with the same command and --resume"
        )
        raise typer.Exit(code=130 if study.status == "interrupted" else 0)
    if not plots and shard is None:  # no figures and fit tables: still the real-against-null reading
        from attnspec.spectra.scaling_fit import null_comparison

        _print_nulls(null_comparison(out))
        _print_projection(out)
        _print_approx(out)
    if plots:
        _plot_study(out, lengths, scaling=shard is None)
    out_console.print(
        f"results: {out} (lengths {', '.join(map(str, lengths))}; `attnspec plot scaling {out}` redraws the fit)"
    )


def _plot_study(out: Path, lengths: list[int], *, scaling: bool) -> None:
    """The figures of the lengths ``lengths`` of a scaling study, and its fit figures and tables
    when ``scaling``: all or none, Ctrl-C and SIGTERM held from before matplotlib is imported
    (seconds, the likeliest moment for an interruption) until every file is in place."""
    from attnspec.storage.results import result_files

    if not lengths and not scaling:
        return
    with whole_output(), result_files(out):
        from attnspec.plots.spectrum import plot_run

        for n in lengths:
            plot_run(out / f"n{n}")
        if scaling:
            _plot_scaling_dir(out, out / "figures")


def _plot_scaling_dir(
    run: Path,
    out: Path,
    formats: tuple[str, ...] = ("png", "svg"),
    resamples: int = 2000,
    seed: int = 0,
    label: str | None = None,
) -> list[Path]:
    """Scaling table, fits and figures of a scaling directory; prints the fits."""
    from rich.table import Table

    from attnspec.numerics.stats import format_interval
    from attnspec.plots import short_name
    from attnspec.plots.scaling import plot_scaling
    from attnspec.spectra.scaling_fit import fit_study
    from attnspec.storage.results import read_meta, result_files

    fit = fit_study(run, resamples=resamples, seed=seed)
    ident = read_meta(run).get("identity", {})
    title = label or f"{short_name(ident.get('model'))} · {short_name(ident.get('data'))}"
    with whole_output(), result_files(run):  # the fit tables and both figures together
        fit.save(run)
        paths = plot_scaling(fit.table, fit.fits, out, title=title, formats=formats, nulls=fit.null_tables)
        if (run / "approx_summary.parquet").is_file():
            from attnspec.plots.approx import plot_approx
            from attnspec.spectra.approx.reading import read_verdicts
            from attnspec.storage.results import read_table

            summary, rule = read_table(run, "approx_summary"), read_verdicts(run)
            paths += plot_approx(summary, out, rule=rule, title=title, formats=formats)
    fits, nulls = fit.fits, fit.nulls
    t = Table(
        title=f"k ∝ n^β, 95% bootstrap CI resampling {int(fits['inputs'].iloc[0])} inputs (layer 'all' = mean "
        "over layers); this model on this corpus"
    )
    for col in ("metric", "layer", "β", "95% CI", "verdict"):
        t.add_column(col)
    for r in fits.itertuples():
        t.add_row(
            r.metric,
            "all" if r.layer < 0 else str(r.layer + 1),
            f"{r.beta:.2f}",
            format_interval(r.low, r.high),
            r.verdict,
        )
    out_console.print(t)
    _print_nulls(nulls)
    _print_projection(run)
    _print_approx(run)
    return paths


def _print_nulls(nulls: Any) -> None:
    """β and k90/n of the real P beside each null (:func:`attnspec.spectra.scaling_fit.null_comparison`), and the sentence."""
    from rich.table import Table

    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.nulls import SHORT
    from attnspec.spectra.scaling_fit import null_sentence

    if len(nulls) < 2:
        return
    shares = [c for c in nulls.columns if c.startswith("share_n")]
    t = Table(title="k90 ∝ n^β (mean over layers) and k90/n: real attention beside its null baselines")
    for col in ("source", "β", "95% CI", "resamples", *(f"k90/n, n={c[len('share_n') :]}" for c in shares)):
        t.add_column(col)
    for r in nulls.itertuples():
        t.add_row(
            SHORT.get(r.source, r.source),
            f"{r.beta:.2f}",
            format_interval(r.low, r.high, exact=r.resampled.startswith("exact")),
            r.resampled.split(" (")[0],
            *(f"{getattr(r, c):.3f}" for c in shares),
        )
    out_console.print(t)
    out_console.print(null_sentence(nulls), highlight=False, soft_wrap=True)


def _print_projection(run: Path) -> None:
    """The Linformer-projection measurement of a scaling study, when it holds one."""
    from rich.table import Table

    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.projection import projection_sentence
    from attnspec.storage.results import read_meta, read_table

    record = read_meta(run).get("projection")
    if not record:
        return
    if record.get("not_measured"):
        out_console.print(
            f"Linformer-projection error not measured: {record['not_measured']}", highlight=False, soft_wrap=True
        )
        return
    if not (run / "projection_summary.parquet").is_file():
        out_console.print(
            f"Linformer-projection error not measured: no length exceeds k = {min(record['k'])}",
            highlight=False,
            soft_wrap=True,
        )
        return
    s = read_table(run, "projection_summary")
    t = Table(
        title=f"Linformer-style attention with a random projection R (k × n): relative error against PV, "
        f"mean over layers and heads, 95% CI resampling {int(s['inputs'].iloc[0])} inputs"
    )
    for col in ("k", "n", "‖softmax(Q(RK)ᵀ)(RV) − PV‖/‖PV‖", "95% CI", "best rank-k ‖(P − P_k)V‖/‖PV‖"):
        t.add_column(col, justify="right")
    for r in s.sort_values(["k", "n"]).itertuples():
        t.add_row(
            str(r.k),
            str(r.n),
            f"{r.linformer_error:.3f}",
            format_interval(r.linformer_error_low, r.linformer_error_high, 3),
            f"{r.best_rank_error:.3f}",
        )
    out_console.print(t)
    k = 128 if 128 in set(s["k"]) else int(s["k"].min())
    out_console.print(projection_sentence(s, k=k), highlight=False, soft_wrap=True)


def _what_ran(run: Path) -> str:
    """One line naming the model, data and selection that a run used (from its meta.json)."""
    from attnspec.storage.results import read_meta

    m = read_meta(run)
    c = m.get("corpus", {})
    rev = m.get("revision")
    model = (
        f"{m.get('model')} ({m.get('model_source')}{' @ ' + str(rev)[:10] if rev else ''}; "
        f"{m.get('num_layers')} layers x {m.get('num_heads')} heads, {m.get('dtype')}, {m.get('device')})"
    )
    if c.get("hub_id"):
        where = f"{c['hub_id']}" + (f" {c['hub_config']}" if c.get("hub_config") else "")
        where += f" @ {str(c['hub_revision'])[:10]}" if c.get("hub_revision") else ""
    else:
        where = str(c.get("source"))
    available = f"{'' if c.get('num_available_exact', True) else 'at least '}{c.get('num_available')}"
    data = (
        f"{c.get('corpus')} split {c.get('split')} from {where}: {m.get('inputs_done')} of {c.get('num_inputs')} "
        f"inputs of {c.get('seq_len')} tokens ({available} available; mode {c.get('mode')}, short documents "
        f"{c.get('short_policy')}; seed {c.get('seed')})"
    )
    return f"ran: {model} on {data}"


def _summary(run: Path, at: int | None) -> None:
    """Per layer (:func:`attnspec.spectra.layer_summary.per_layer`): mean c_at, index where the
    mean curve reaches 0.9, its nulls, effective and stable rank."""
    from rich.table import Table

    from attnspec.spectra.figure_record import family_note
    from attnspec.spectra.layer_summary import per_layer, reach_column, reading_index
    from attnspec.spectra.nulls import SHORT, baselines_of
    from attnspec.spectra.reading import lengths_text, short_input_note
    from attnspec.spectra.run_error import is_approximate
    from attnspec.storage.results import read_meta, read_table

    meta = read_meta(run)
    approximate = is_approximate(meta)  # an approximate or bfloat16 run says so first
    if approximate:
        out_console.print(approximate, highlight=False, soft_wrap=True)
    note = family_note(meta)
    spectrum, metrics = read_table(run, "spectrum"), read_table(run, "metrics")
    n = int(spectrum["index"].max())
    at = reading_index(meta, n, at, "--at")  # the index the figures read
    nulls = baselines_of(run)
    table = per_layer(
        spectrum, metrics, meta, at, baseline_metrics=read_table(run, "baseline_metrics") if nulls else None
    )
    reach = "median_" + reach_column(metrics)
    done, total = meta.get("inputs_done"), meta.get("inputs_total")
    inputs = f"{done} inputs" if meta.get("status") == "complete" else f"partial: {done} of {total} inputs"
    # short enough not to wrap at 80 columns (the family note must stay whole)
    shown = Table(title=f"spectrum per layer (n = {n}, {inputs}{'; ' + note if note else ''}; heads averaged)")
    for col in (
        "layer (1 = first)",
        f"mean c_{at}",
        "index c≥0.9 (median head)",
        *(f"k90, {SHORT[b]}" for b in nulls),
        "effective rank",
        "stable rank",
    ):
        shown.add_column(col, justify="right")
    undefined = short_input_note(meta, at)  # an input shorter than `at`: c_at is 1 there by construction
    for r in table.to_dict("records"):
        shown.add_row(
            str(r["layer"] + 1),
            "n/a" if undefined else f"{r[f'mean_c_{at}']:.3f}",
            f"{r[reach]:.0f}",
            *(f"{r.get(f'{reach}_{b}_null', float('nan')):.0f}" for b in nulls),
            *(  # a metric the run was saved without (meta.json metrics_absent) is n/a, not nan
                "n/a" if r[name] != r[name] else f"{r[name]:.{digits}f}"
                for name, digits in (("effective_rank_mean", 1), ("stable_rank_mean", 2))
            ),
        )
    out_console.print(shown)
    if nulls:
        out_console.print(
            "null columns: the same statistics of the run's null baselines (meta.json baselines), "
            "computed per (layer, head) at this n; this model on this corpus",
            highlight=False,
            soft_wrap=True,
        )
    if lengths_text(meta):
        out_console.print(
            f"input lengths (tokens, special tokens included): {lengths_text(meta)}; n = {n}",
            highlight=False,
            soft_wrap=True,
        )
    if undefined:
        out_console.print(f"mean c_{at}: n/a — {undefined}", highlight=False, soft_wrap=True)


def _short_inputs_warning(run: Path, seq_len: int) -> None:
    """Warn on stderr when inputs are shorter than --seq-len, with their real lengths."""
    from attnspec.spectra.reading import lengths_text
    from attnspec.storage.results import read_meta

    meta = read_meta(run)
    corpus = meta.get("corpus") or {}
    lengths = corpus.get("input_lengths") or {}
    if isinstance(lengths.get("min"), int) and lengths["min"] < seq_len:
        err_console.print(
            f"warning: inputs are shorter than --seq-len {seq_len} (real lengths {lengths_text(meta)}; "
            f"{lengths.get('full', '?')} of {corpus.get('num_inputs', '?')} have all {seq_len} tokens); "
            "a curve is 1 past its input's length by construction",
            highlight=False,
            soft_wrap=True,
        )


def merge(
    dirs: Annotated[list[Path], typer.Argument(help="Shard result directories of one run.")],
    out: Annotated[Path, typer.Option(help="New directory for the merged result.")],
    csv: Annotated[bool, typer.Option("--csv", help="Also write CSV.")] = False,
    allow_partial: Annotated[
        bool, typer.Option("--allow-partial", help="Merge shards that have not finished.")
    ] = False,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Draw the figures of the merged result.")] = True,
) -> None:
    """Merge spectrum shards (exact: count, mean and squared deviations combine pairwise)."""
    from attnspec.plots.spectrum import plot_run
    from attnspec.spectra.merge import merge_runs

    with user_errors():
        from attnspec.spectra.scaling import KIND as SCALING
        from attnspec.spectra.scaling import merge_scaling
        from attnspec.storage.results import check_out_kind, read_meta, result_files

        claim_out_dir(out, "attnspec merge")  # usable and ours before anything is read; held through the figures too
        _check_shards(dirs)  # every shard's meta.json and tables, before anything is merged
        scaling = bool(dirs) and read_meta(dirs[0]).get("kind") == SCALING  # shards of a scaling run: every length
        # refused when it holds or lies inside another kind of result
        check_out_kind(out, SCALING if scaling else "spectrum", nests_in=() if scaling else (SCALING,))
        if scaling:
            meta = merge_scaling(list(dirs), out, csv=csv, allow_partial=allow_partial)
            if plots:
                with whole_output(), result_files(out):
                    for n in meta["lengths"]:
                        plot_run(out / f"n{n}")
                    _plot_scaling_dir(out, out / "figures")
        else:
            meta = merge_runs(list(dirs), out, csv=csv, allow_partial=allow_partial)
            if plots:
                with whole_output(), result_files(out):
                    plot_run(out)
        if meta["status"] != "complete":
            missing = ", ".join(meta.get("missing_shards", []) + meta.get("unfinished_shards", []))
            err_console.print(
                f"warning: the merged result is PARTIAL ({meta['inputs_done']} of {meta['inputs_total']} "
                f"inputs; missing or unfinished: {missing}); meta.json says status: partial",
                highlight=False,
                soft_wrap=True,
            )
        if meta.get("metrics_absent"):
            from attnspec.spectra.metric_table import absent_note

            err_console.print(f"note: {out}: {absent_note(meta['metrics_absent'])}", highlight=False, soft_wrap=True)
        out_console.print(f"merged {len(dirs)} shards ({meta['inputs_done']} inputs) into {out}")


def _check_shards(dirs: list[Path]) -> None:
    """Refuse, in one line naming the file, shards whose meta.json or tables have the wrong
    shape, shards of different kinds, and a set of shards that holds no input at all."""
    from attnspec.errors import InputError
    from attnspec.spectra.result_checks import SCALING_KIND, SPECTRUM_KIND, check_meta, check_spectrum_run

    if not dirs:
        raise InputError("merge needs at least one results directory")
    metas = [check_meta(d, kind=(SPECTRUM_KIND, SCALING_KIND)) for d in dirs]
    kinds = {m["kind"] for m in metas}
    if len(kinds) > 1:
        raise InputError(f"merge takes shards of one kind; got {', '.join(sorted(kinds))} results")
    runs = (
        [Path(d) for d in dirs]
        if kinds == {SPECTRUM_KIND}
        else [Path(d) / f"n{n}" for d, m in zip(dirs, metas) for n in m["lengths"] if (Path(d) / f"n{n}").is_dir()]
    )
    done = [check_spectrum_run(r, need_inputs=False)["inputs_done"] for r in runs]
    if runs and not any(done):
        raise InputError(
            f"the shards hold no inputs ({', '.join(map(str, dirs))} all record inputs_done 0); nothing to merge"
        )


@plot_app.command("spectrum")
def plot_spectrum(
    runs: Annotated[list[Path], typer.Argument(help="One or more spectrum result directories.")],
    out: Annotated[
        Path | None, typer.Option(help="Where to write figures (default: RUN/figures, or ./figures for a comparison).")
    ] = None,
    at: Annotated[
        int | None,
        typer.Option(
            help="Heatmap index (default: the one the run recorded in meta.json, else 128 when n = 512, else n/4)."
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", help="Vector format next to PNG: svg | pdf (default: what the run recorded, else svg)."
        ),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            help="Title of a run's panels instead of model · corpus · n · inputs; give it once per RUN, in order."
        ),
    ] = None,
) -> None:
    """Figure 1 from saved results: per-layer curves and heatmap per run; a side-by-side comparison for several runs.

    Several runs share one heatmap colour scale, in their own figures and in the comparison.
    """
    from attnspec.errors import InputError
    from attnspec.plots.spectrum import plot_compare, plot_run

    with user_errors():
        if fmt is not None and fmt not in ("svg", "pdf"):
            raise InputError(f"--format must be svg or pdf, got {fmt!r}")
        if label and len(label) != len(runs):
            raise InputError(f"--label must be given once per run: {len(label)} labels for {len(runs)} runs")
        if out is not None and len(runs) > 1:  # each run's figures go to OUT/<its folder name>
            seen: dict[str, Path] = {}
            for run in runs:
                other = seen.setdefault(Path(run).name, Path(run))
                if other != Path(run):
                    raise InputError(
                        f"runs {other} and {run} would write their figures to the same "
                        f"{Path(out) / Path(run).name}; plot them with distinct folder names, or one "
                        "at a time with its own --out"
                    )
        formats = None if fmt is None else ("png", fmt)
        # figure directories checked and locked before anything is drawn
        from attnspec.spectra.result_checks import check_spectrum_run
        from attnspec.storage.results import check_not_being_written, result_files

        for run in runs:
            check_not_being_written(run)  # a run its writer still holds is not read
            if not (Path(run) / "spectrum.parquet").is_file():
                raise InputError(f"{run} is not a spectrum results directory (no spectrum.parquet)")
            own = out is None or (len(runs) == 1 and Path(out).resolve() == (Path(run) / "figures").resolve())
            if own:  # RUN/figures and RUN/meta.json (the recorded choices): the run itself is locked
                claim_out_dir(run, "attnspec plot spectrum", option="RUN", kind="spectrum", nests_in=_FIGURES_NEST_IN)
            else:
                claim_out_dir(
                    out / Path(run).name if len(runs) > 1 else out,
                    "attnspec plot spectrum",
                    kind="figures",
                    nests_in=_FIGURES_NEST_IN,
                )
        if len(runs) > 1:
            claim_out_dir(
                out if out is not None else Path("figures"),
                "attnspec plot spectrum",
                kind="figures",
                nests_in=_FIGURES_NEST_IN,
            )
        for run in runs:  # meta.json and the tables checked: no figure of NaN means or a damaged table
            check_spectrum_run(run)
        paths = []
        scale: dict[str, float] = {}
        if len(runs) > 1:  # one colour scale for every heatmap of the runs compared
            from attnspec.plots.spectrum import heat_range
            from attnspec.spectra.figure_record import figure_choices
            from attnspec.storage.results import read_meta, read_table

            ranges = []
            for r in runs:  # each run's heatmap is read at its own (recorded) index, the comparison at the first's
                t = read_table(r, "spectrum")
                ranges.append(heat_range([t], figure_choices(read_meta(r), int(t["index"].max()), at=at)["at"]))
            scale = {"vmin": min(lo for lo, _ in ranges), "vmax": max(hi for _, hi in ranges)}
        with whole_output(), result_files(out if out is not None else Path(runs[0])):  # every figure, or none
            for i, run in enumerate(runs):
                paths += plot_run(
                    run,
                    out / Path(run).name if (out is not None and len(runs) > 1) else out,
                    at=at,
                    formats=formats,
                    label=label[i] if label else None,
                    **scale,
                )
            if len(runs) > 1:
                paths += plot_compare(
                    runs, out if out is not None else Path("figures"), at=at, formats=formats, labels=label
                )
        for p in paths:
            out_console.print(str(p))


@plot_app.command("scaling")
def plot_scaling_cmd(
    run: Annotated[Path, typer.Argument(help="Scaling directory made by `attnspec spectrum --seq-len A,B,...`.")],
    out: Annotated[Path | None, typer.Option(help="Where to write figures (default: RUN/figures).")] = None,
    resamples: Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples of the inputs.")] = 2000,
    seed: SeedOpt = 0,
    fmt: Annotated[str, typer.Option("--format", help="Vector format next to PNG: svg | pdf.")] = "svg",
    label: Annotated[
        str | None, typer.Option(help="Figure title instead of model · corpus (the lengths and input count are added).")
    ] = None,
) -> None:
    """k90 and effective rank against n (log–log), and the fitted k ∝ n^β per layer with bootstrap CIs and verdicts.

    Also writes RUN/scaling.parquet (per n and layer) and RUN/scaling_fit.parquet (β, CI, verdict).
    """
    from attnspec.errors import InputError

    with user_errors():
        if fmt not in ("svg", "pdf"):
            raise InputError(f"--format must be svg or pdf, got {fmt!r}")
        from attnspec.spectra.scaling import KIND
        from attnspec.spectra.scaling_fit import read_runs

        if out is not None:  # --out first, before anything is read (a folder made here and left empty goes again)
            claim_out_dir(out, "attnspec plot scaling", kind="figures", nests_in=_FIGURES_NEST_IN)
        # a missing, damaged or foreign RUN, or one its writer still holds, is refused before RUN is locked
        read_runs(run)
        # RUN gets scaling.parquet and scaling_fit.parquet: it is locked like any output
        claim_out_dir(run, "attnspec plot scaling", option="RUN", kind=KIND)
        for p in _plot_scaling_dir(
            run, out if out is not None else Path(run) / "figures", ("png", fmt), resamples, seed, label=label
        ):
            out_console.print(str(p))


def register(app: typer.Typer) -> None:
    """Register the spectrum commands on ``app``."""
    app.command("spectrum")(spectrum)
    app.command("merge")(merge)
    app.add_typer(plot_app, name="plot")


def _print_approx(run: Path) -> None:
    """The approximations of attention of a scaling study, when it holds them: a block per k, one
    line per method, within 80 columns (the sentences with every interval: ``approx_verdicts.csv``)."""
    import math

    from rich import box
    from rich.table import Table

    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.approx.reading import read_verdicts
    from attnspec.spectra.approx.rule import NO_BETTER, NO_BETTER_THAN_ZERO, THRESHOLD, VERDICTS

    v = read_verdicts(run)
    if v is None:
        return
    done = v[v["note"] == ""]
    first = int(done["n_first"].min()) if len(done) else 0
    last = int(done["n_last"].max()) if len(done) else 0
    t = Table(box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_edge=False, padding=0)
    t.title = (
        f"Approximations of attention on held-out documents: error ‖Ŷ − PV‖/‖PV‖ (mean over layers and heads, 95% CI over {int(done['inputs'].max()) if len(done) else 0} "
        f"documents) and its slope per doubling of n: a fixed k holds when the error is below 1 (zero output's) at every "
        f"n, the slope's upper end is below +{THRESHOLD} and the error is below uniform attention's at every n (paired over documents)"
    )
    loss = bool(v["loss_change_last"].notna().any())  # a causal model: the change in next-token loss
    for col, justify in (("k · method", "left"), (f"n={first}", "right"), (f"n={last} [95% CI]", "right"),
                         ("slope 95% CI", "right"), ("fixed k", "left"), ("Δloss" if loss else "cos", "right")):  # fmt: skip
        t.add_column(col, justify=justify, no_wrap=True)
    for k, block in v.groupby("k", sort=True):
        t.add_row(f"k = {k}", end_section=False, style="bold")
        for r in block.itertuples():
            name = "  " + r.method + ("*" if r.reference else "") + ("†" if r.scores == "content only" else "")
            if r.note:
                t.add_row(name, "", "", "", "not applied", "")
                continue
            effect = r.loss_change_last if loss else r.cosine_last
            cos = (f"{effect:+.3f}" if loss else f"{effect:.3f}") if math.isfinite(effect) else "—"
            t.add_row(
                name,
                f"{r.error_first:.2f}",
                f"{r.error_last:.2f} {format_interval(r.error_last_low, r.error_last_high, 2)}",
                format_interval(r.slope_low, r.slope_high, 3, signed=True),
                VERDICTS.get(r.verdict, r.verdict),
                cos,
            )
    out_console.print(t)
    notes = ["* reference: uniform attention (must be beaten) and best rank-k P·V (what low rank of P alone allows)"]
    if (v["verdict"] == NO_BETTER_THAN_ZERO).any():
        notes.append(
            f"{VERDICTS[NO_BETTER_THAN_ZERO]}: the error's interval is not below 1 at some n, whatever the slope"
        )
    if (v["verdict"] == NO_BETTER).any():
        notes.append(
            f"{VERDICTS[NO_BETTER]}: the slope holds, but the error is not below uniform attention's at every n"
        )
    if (v["scores"] == "content only").any():
        notes.append("† sees the content scores only (it cannot take the additive score bias)")
    notes.append(
        f"Δloss: change in next-token loss (nats per token) at n={last}, every layer replaced (— not measured)"
        if loss
        else f"cos: sentence-embedding cosine to the exact model at n={last}, every layer replaced (— not measured)"
    )
    if (v["note"] != "").any():
        notes += [f"{m}: {why}" for m, why in v[v["note"] != ""].groupby("method")["note"].first().items()]
    for line in notes:
        out_console.print(line, highlight=False, soft_wrap=False, overflow="fold")


def _approx_after_up_to_date(out: Path, *, plots: bool) -> None:
    """An up-to-date study's approximations (measured by this command or before): their table,
    and their figure when it is missing or older than the tables."""
    summary, figure = out / "approx_summary.parquet", out / "figures" / "approx_errors.png"
    if not summary.is_file():
        return
    if plots and (not figure.is_file() or figure.stat().st_mtime < summary.stat().st_mtime):
        from attnspec.plots import short_name
        from attnspec.plots.approx import plot_approx
        from attnspec.spectra.approx.reading import read_verdicts
        from attnspec.storage.results import read_meta, read_table, result_files

        ident = read_meta(out).get("identity", {})
        with whole_output(), result_files(out):
            plot_approx(
                read_table(out, "approx_summary"),
                out / "figures",
                rule=read_verdicts(out),
                title=f"{short_name(ident.get('model'))} · {short_name(ident.get('data'))}",
            )
    _print_approx(out)
