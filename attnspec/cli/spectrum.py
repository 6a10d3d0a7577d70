"""`attnspec spectrum`, `attnspec merge`, `attnspec plot spectrum`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from attnspec.cli._common import err_console, out_console, user_errors

plot_app = typer.Typer(help="Figures from saved results (never recomputes).", no_args_is_help=True)


def _default_out(model: str, data: str, seq_len: int, shard: str | None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{Path(model).name}-{Path(data).stem}-n{seq_len}").strip("-")
    if shard:
        slug += "-shard" + shard.replace("/", "of")
    return Path("results") / slug


def spectrum(
    model: Annotated[str, typer.Option(help="Hub id (roberta-base, gpt2, EleutherAI/pythia-160m, ...), local model directory, or alias 'minilm' (installed weights).")] = "roberta-base",
    data: Annotated[str, typer.Option(help="'wiki103', 'imdb', or a PATH (WikiText .raw, aclImdb dir, .jsonl, .csv, .txt).")] = "wiki103",
    split: Annotated[str | None, typer.Option(help="Corpus split (wiki103: validation|test; imdb: test|train). Default: validation / test.")] = None,
    data_dir: Annotated[str | None, typer.Option("--data-dir", help="Folder laid out like shared/data (wikitext103/, imdb/); default $ATTNSPEC_DATA_DIR, else ../shared/data when it exists.")] = None,
    seq_len: Annotated[int, typer.Option("--seq-len", help="n: tokens per input, special tokens included.")] = 512,
    num_sentences: Annotated[str | None, typer.Option("--num-sentences", metavar="N|all", help="Number of inputs (windows or documents) to average over, or 'all' (every available input). Default: 1000, or all of them when the corpus has fewer.")] = None,
    seed: Annotated[int, typer.Option(help="Chooses the inputs; recorded with the results.")] = 0,
    short_policy: Annotated[str, typer.Option("--short-policy", help="Documents shorter than n: skip | keep (as zero-extended P) | pack (concatenate).")] = "skip",
    batch_size: Annotated[int, typer.Option("--batch-size", help="Inputs per forward pass.")] = 4,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda.")] = "auto",
    dtype: Annotated[str, typer.Option(help="Model precision: float32 | float64 | bfloat16.")] = "float32",
    svd_method: Annotated[str, typer.Option("--svd-method", help="auto (lapack on the CPU, svd on CUDA) | lapack | svd | gram. All compute the full spectrum; meta.json records the method used.")] = "auto",
    out: Annotated[Path | None, typer.Option(help="Results directory (default results/<model>-<data>-n<seq_len>); with --shard, '{shard}' in it becomes e.g. 0of4.")] = None,
    csv: Annotated[bool, typer.Option("--csv", help="Also write CSV next to the parquet tables.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted or time-limited run in --out.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Recompute a run that --out already holds.")] = False,
    max_time: Annotated[float | None, typer.Option("--max-time", help="Stop cleanly after this many seconds (resume later).")] = None,
    checkpoint_every: Annotated[int, typer.Option("--checkpoint-every", help="Save the aggregate every this many batches.")] = 8,
    shard: Annotated[str | None, typer.Option(help="INDEX/COUNT: process every COUNT-th input from INDEX (or 'auto' from RANK/WORLD_SIZE); merge shards with `attnspec merge`.")] = None,
    at: Annotated[int | None, typer.Option(help="Heatmap index, recorded in meta.json for later redraws (default 128 when n = 512, else n/4).")] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Draw the figures when the run completes.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Spectrum of the attention matrices P of a pretrained transformer (Linformer Figure 1).

    Encoders and decoder language models (causal, lower-triangular P; meta.json records the
    family). Captures P for every layer and head on n-token inputs, computes the normalised
    cumulative singular-value curves, and averages them per (layer, head, index).
    Writes spectrum.parquet, metrics.parquet, state.npz, meta.json and figures/.
    """
    from attnspec.model_names import reject_alias_typo

    with user_errors():
        reject_alias_typo(model)  # at once: before torch loads and before any hub lookup
    from attnspec.errors import InputError
    from attnspec.plots.spectrum import figure_choices, plot_run, record_figure_choices
    from attnspec.results import read_meta
    from attnspec.spectrum import check_at
    from attnspec.spectrum_run import SpectrumConfig, parse_num_sentences, parse_shard, run_spectrum

    with user_errors():
        shard_t = parse_shard(shard)
        num_sentences_v = parse_num_sentences(num_sentences)
        if out is not None and "{shard}" in str(out):
            if shard_t is None:
                raise InputError(f"--out {out} contains {{shard}} but no --shard was given")
            out = Path(str(out).replace("{shard}", f"{shard_t[0]}of{shard_t[1]}"))
        if at is not None:
            check_at(at, seq_len)
        cfg = SpectrumConfig(
            model=model, data=data, split=split, data_dir=data_dir, seq_len=seq_len, num_sentences=num_sentences_v,
            seed=seed, short_policy=short_policy, batch_size=batch_size, device=device, dtype=dtype,
            svd_method=svd_method, shard=shard_t,
            out=out if out is not None else _default_out(model, data, seq_len, None if shard_t is None else f"{shard_t[0]}/{shard_t[1]}"),
            csv=csv, resume=resume, overwrite=overwrite, max_time=max_time, checkpoint_every=checkpoint_every,
        )
        outcome = run_spectrum(cfg, progress=not quiet)
        if outcome.status == "interrupted":
            err_console.print(f"interrupted after {outcome.inputs_done} of {outcome.inputs_total} inputs; partial results kept in "
                              f"{outcome.out}; continue with the same command and --resume")
            raise typer.Exit(code=130)
        if outcome.status == "partial":
            err_console.print(f"--max-time reached after {outcome.inputs_done} of {outcome.inputs_total} inputs; partial results in "
                              f"{outcome.out}; continue with the same command and --resume")
        figures = plot_run(outcome.out, at=at) if plots and outcome.inputs_done > 0 else []
        if not figures and outcome.inputs_done > 0:
            # no figures now: still record --at so that `attnspec plot spectrum RUN` draws what was asked
            record_figure_choices(outcome.out, figure_choices(read_meta(outcome.out), seq_len, at=at))
        _summary(outcome.out, at)
        out_console.print(f"results: {outcome.out} ({outcome.inputs_done} inputs, {outcome.wall_time_s:.1f} s)"
                          + (f"; figures: {outcome.out / 'figures'}" if figures else ""))


def _summary(run: Path, at: int | None) -> None:
    """Per layer: mean cumulative value at `at`, index where the mean curve reaches 0.9, effective and stable rank."""
    from rich.table import Table

    from attnspec.plots.spectrum import family_note, figure_choices
    from attnspec.results import read_meta, read_table

    note = family_note(read_meta(run))
    spectrum = read_table(run, "spectrum")
    metrics = read_table(run, "metrics")
    n = int(spectrum["index"].max())
    at = figure_choices(read_meta(run), n, at=at)["at"]  # the index the figures read
    heat = spectrum[spectrum["index"] == at].groupby("layer")["mean"].mean()
    per_layer = metrics.groupby("layer").mean(numeric_only=True)
    reach_col = [c for c in metrics.columns if c.endswith("_of_mean_curve")][0]
    meta = read_meta(run)
    done, total = meta.get("inputs_done"), meta.get("inputs_total")
    inputs = f"{done} inputs" if meta.get("status") == "complete" else f"partial: {done} of {total} inputs"
    # short enough not to wrap at 80 columns (the family note must stay whole)
    table = Table(title=f"spectrum per layer (n = {n}, {inputs}{'; ' + note if note else ''}; heads averaged)")
    for col in ("layer (1 = first)", f"mean c_{at}", "index c≥0.9 (median head)", "effective rank", "stable rank"):
        table.add_column(col, justify="right")
    for layer in heat.index:
        table.add_row(
            str(layer + 1),
            f"{heat[layer]:.3f}",
            f"{metrics.loc[metrics['layer'] == layer, reach_col].median():.0f}",
            f"{per_layer.loc[layer, 'effective_rank_mean']:.1f}",
            f"{per_layer.loc[layer, 'stable_rank_mean']:.2f}",
        )
    out_console.print(table)


def merge(
    dirs: Annotated[list[Path], typer.Argument(help="Shard result directories of one run.")],
    out: Annotated[Path, typer.Option(help="New directory for the merged result.")],
    csv: Annotated[bool, typer.Option("--csv", help="Also write CSV.")] = False,
    allow_partial: Annotated[bool, typer.Option("--allow-partial", help="Merge shards that have not finished.")] = False,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Draw the figures of the merged result.")] = True,
) -> None:
    """Merge spectrum shards (exact: count, mean and squared deviations combine pairwise)."""
    from attnspec.plots.spectrum import plot_run
    from attnspec.spectrum_run import merge_runs

    with user_errors():
        meta = merge_runs(list(dirs), out, csv=csv, allow_partial=allow_partial)
        if plots:
            plot_run(out)
        out_console.print(f"merged {len(dirs)} shards ({meta['inputs_done']} inputs) into {out}")


@plot_app.command("spectrum")
def plot_spectrum(
    runs: Annotated[list[Path], typer.Argument(help="One or more spectrum result directories.")],
    out: Annotated[Path | None, typer.Option(help="Where to write figures (default: RUN/figures, or ./figures for a comparison).")] = None,
    at: Annotated[int | None, typer.Option(help="Heatmap index (default: the one the run recorded in meta.json, else 128 when n = 512, else n/4).")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="Vector format next to PNG: svg | pdf (default: what the run recorded, else svg).")] = None,
) -> None:
    """Figure 1 from saved results: per-layer curves and heatmap per run; a side-by-side comparison for several runs."""
    from attnspec.errors import InputError
    from attnspec.plots.spectrum import plot_compare, plot_run

    with user_errors():
        if fmt is not None and fmt not in ("svg", "pdf"):
            raise InputError(f"--format must be svg or pdf, got {fmt!r}")
        formats = None if fmt is None else ("png", fmt)
        paths = []
        for run in runs:
            paths += plot_run(run, out / Path(run).name if (out is not None and len(runs) > 1) else out, at=at, formats=formats)
        if len(runs) > 1:
            paths += plot_compare(runs, out if out is not None else Path("figures"), at=at, formats=formats)
        for p in paths:
            out_console.print(str(p))


def register(app: typer.Typer) -> None:
    """Register the spectrum commands on ``app``."""
    app.command("spectrum")(spectrum)
    app.command("merge")(merge)
    app.add_typer(plot_app, name="plot")
