"""The Python API (attnspec.spectrum / load) and the job on decoder LMs: the same tables as the CLI,
padding-free spectra, family and causality recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import make_decoder_tokenizer
from models_tiny import tiny_gpt2, tiny_llama, tiny_mpnet

import attnspec
from attnspec.errors import InputError, ResultsError

SEQ = 24
WORDS = (
    "attention matrix rank lobster movie actors story music numbers quotes brackets the of and "
    "a was to in it is that singular value curve decoder"
).split()


def _texts(count: int, seed: int = 0, lo: int = 4, hi: int = 40) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(lo, hi)))) for _ in range(count)]


@pytest.fixture(scope="module")
def llama_like(tmp_path_factory: pytest.TempPathFactory):
    """A tiny Llama-style model (GQA) and a Llama-convention tokenizer (BOS, no pad)."""
    tok = make_decoder_tokenizer(tmp_path_factory.mktemp("tok"), bos=True)
    return tiny_llama(), tok


def test_api_with_a_loaded_decoder_and_texts(llama_like, tmp_path: Path) -> None:
    model, tok = llama_like
    res = attnspec.spectrum(
        model=model, tokenizer=tok, texts=_texts(6), seq_len=SEQ, seed=1, batch_size=3, progress=False
    )
    assert isinstance(res, attnspec.SpectrumResult) and res.path is None
    assert res.family == "decoder" and res.causal is True
    assert res.meta["capture"] == "registry" and res.meta["num_heads"] == 4 and res.meta["inputs_done"] == 6
    assert len(res.curves) == 2 * 4 * SEQ and list(res.curves.columns[:3]) == ["layer", "head", "index"]
    assert len(res.metrics) == 2 * 4
    assert "decoder, causal P" in repr(res)
    figs = res.plot()
    assert set(figs) == {"spectrum_layers", "spectrum_heatmap"}
    assert "causal P" in figs["spectrum_layers"].axes[0].get_title()
    saved = res.save(tmp_path / "saved")
    again = attnspec.load(saved)
    pd.testing.assert_frame_equal(again.curves, res.curves)
    pd.testing.assert_frame_equal(again.metrics, res.metrics)
    assert again.meta == json.loads(json.dumps(res.meta)) and again.state is not None
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("someone else's file")
    with pytest.raises(ResultsError, match="not empty"):
        res.save(tmp_path / "busy")
    table = again.per_layer()
    assert list(table["layer"]) == [0, 1] and table.shape[1] == 5


def test_padding_gives_the_spectra_of_unpadded_single_inputs(llama_like) -> None:
    """Texts of different lengths: batches of 3 (right-padded) equal batches of 1 (no padding)."""
    model, tok = llama_like
    texts = _texts(6, seed=2, lo=2, hi=14)
    one = attnspec.spectrum(model=model, tokenizer=tok, texts=texts, seq_len=SEQ, batch_size=1, progress=False)
    three = attnspec.spectrum(model=model, tokenizer=tok, texts=texts, seq_len=SEQ, batch_size=3, progress=False)
    assert one.meta["corpus"]["input_lengths"]["min"] < SEQ  # really padded
    np.testing.assert_allclose(three.curves["mean"], one.curves["mean"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        three.metrics["effective_rank_mean"], one.metrics["effective_rank_mean"], rtol=0, atol=1e-5
    )


def test_cli_and_api_make_the_same_run_and_load_reads_cli_runs(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    tok = make_decoder_tokenizer(tmp_path / "tok", bos=False)  # GPT-2 convention: no BOS, no pad
    model_dir = tmp_path / "gpt2-tiny"
    tiny_gpt2().save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    data = tmp_path / "docs.txt"
    data.write_text("\n".join(_texts(10, seed=3, lo=30, hi=40)) + "\n")
    cli_out = tmp_path / "cli"
    r = CliRunner().invoke(
        app,
        [
            "spectrum",
            "--model",
            str(model_dir),
            "--data",
            str(data),
            "--seq-len",
            str(SEQ),
            "--num-sentences",
            "5",
            "--device",
            "cpu",
            "--out",
            str(cli_out),
            "--quiet",
            "--no-plots",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "decoder, causal P" in r.output
    from_cli = attnspec.load(cli_out)
    assert from_cli.meta["family"] == "decoder" and from_cli.meta["causal"] is True
    assert from_cli.meta["model_class"] == "GPT2Model"
    from_api = attnspec.spectrum(
        str(model_dir), data=str(data), seq_len=SEQ, num_inputs=5, device="cpu", progress=False
    )
    pd.testing.assert_frame_equal(from_api.curves, from_cli.curves)
    assert from_api.meta["corpus"]["inputs_sha256"] == from_cli.meta["corpus"]["inputs_sha256"]


def test_older_style_encoder_through_the_api(tmp_path: Path) -> None:
    from helpers import make_roberta_tokenizer

    tok = make_roberta_tokenizer(tmp_path)
    res = attnspec.spectrum(tiny_mpnet(), tokenizer=tok, texts=_texts(3), seq_len=SEQ, progress=False)
    assert (res.family, res.causal, res.meta["capture"]) == ("encoder", False, "hooks")


def test_api_rejects_bad_arguments_before_computing(llama_like) -> None:
    model, tok = llama_like
    with pytest.raises(InputError, match="exactly one of data= .* and texts="):
        attnspec.spectrum(model, tokenizer=tok)
    with pytest.raises(InputError, match="needs its tokenizer"):
        attnspec.spectrum(model, texts=["a b c"])
    with pytest.raises(InputError, match="texts must be a list of strings"):
        attnspec.spectrum(model, tokenizer=tok, texts="a b c")
    with pytest.raises(InputError, match="num_inputs must be an integer >= 1, got 0"):
        attnspec.spectrum(model, tokenizer=tok, texts=["a b"], num_inputs=0)
    with pytest.raises(InputError, match="model must be a name"):
        attnspec.spectrum(3.5, texts=["a"])
    with pytest.raises(ResultsError, match="not a results directory"):
        attnspec.load(Path("/nonexistent-attnspec-dir"))


def test_import_attnspec_is_light_and_spectrum_stays_callable() -> None:
    import subprocess
    import sys

    code = (
        "import sys, attnspec; assert 'torch' not in sys.modules, 'torch imported'; "
        "import attnspec.spectra.job; assert callable(attnspec.spectrum); print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ---------------------------------------------------------------------------------------- the edge
@pytest.fixture(scope="module")
def saved_run(llama_like, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, tok = llama_like
    res = attnspec.spectrum(
        model=model, tokenizer=tok, texts=_texts(4, seed=5, lo=30, hi=40), seq_len=SEQ, progress=False
    )
    return res.save(tmp_path_factory.mktemp("api-edge") / "run")


def test_load_refuses_a_state_copied_from_another_run(llama_like, saved_run: Path, tmp_path: Path) -> None:
    import shutil

    model, tok = llama_like
    other = attnspec.spectrum(
        model=model, tokenizer=tok, texts=_texts(4, seed=6, lo=30, hi=40), seq_len=SEQ, progress=False
    ).save(tmp_path / "other")
    mixed = tmp_path / "mixed"
    shutil.copytree(saved_run, mixed)
    shutil.copy(other / "state.npz", mixed / "state.npz")
    with pytest.raises(ResultsError, match="state.npz belongs to another run"):
        attnspec.load(mixed)
    assert attnspec.load(saved_run).state is not None  # its own state is accepted


def test_save_refuses_a_read_only_folder_instead_of_returning(saved_run: Path, tmp_path: Path) -> None:
    res = attnspec.load(saved_run)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(ResultsError, match="read-only"):
            res.save(ro / "run")
        assert list(ro.iterdir()) == []  # nothing written, even as root
    finally:
        ro.chmod(0o755)


def test_ctrl_c_raises_keyboard_interrupt_after_keeping_the_partial_result(
    llama_like, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import attnspec.spectra.job as sr

    model, tok = llama_like
    calls = []

    def interrupt_on_second_batch() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(sr, "_before_commit", interrupt_on_second_batch)
    texts = _texts(6, seed=7, lo=30, hi=40)
    with pytest.raises(KeyboardInterrupt, match="1 of 6 inputs kept in"):
        attnspec.spectrum(
            model=model, tokenizer=tok, texts=texts, seq_len=SEQ, batch_size=1, out=tmp_path / "run", progress=False
        )
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert (meta["status"], meta["inputs_done"]) == ("interrupted", 1)
    calls.clear()
    with pytest.raises(KeyboardInterrupt, match="nothing kept"):
        attnspec.spectrum(model=model, tokenizer=tok, texts=texts, seq_len=SEQ, batch_size=1, progress=False)
    monkeypatch.setattr(sr, "_before_commit", lambda: None)
    done = attnspec.spectrum(
        model=model,
        tokenizer=tok,
        texts=texts,
        seq_len=SEQ,
        batch_size=1,
        out=tmp_path / "run",
        resume=True,
        progress=False,
    )
    assert done.meta["status"] == "complete" and done.meta["inputs_done"] == 6


def test_short_inputs_are_visible_and_c_beyond_them_is_not_one(minilm_path: Path) -> None:
    """Two texts of about 20 tokens at n = 128: the lengths are stated and c_32 is not 1."""
    texts = [
        "Attention matrices of pretrained transformers are said to be low rank in practice.",
        "The spectrum of each head decays quickly, which Linformer uses to project keys and values.",
    ]
    with pytest.warns(UserWarning, match="inputs are shorter than seq_len=128"):
        res = attnspec.spectrum("minilm", texts=texts, seq_len=128, device="cpu", progress=False)
    lengths = res.meta["corpus"]["input_lengths"]
    assert lengths["max"] < 32 and set(lengths) >= {"min", "median", "max"}
    assert f"input lengths min {lengths['min']}, median" in repr(res)
    with pytest.warns(UserWarning, match="c_32 is not defined: the shortest input has"):
        table = res.per_layer()
    assert table["mean_c_32"].isna().all()  # never the 1.0 of zero-extension
    at = lengths["min"] // 2
    ok = res.per_layer(at=at)  # within every input: defined
    assert ok[f"mean_c_{at}"].between(0, 1).all()


def test_compare_leaves_out_c_at_beyond_a_short_input(llama_like, tmp_path: Path) -> None:
    from attnspec.spectra.compare import compare_runs

    model, tok = llama_like
    runs = []
    for seed in (8, 9):
        with pytest.warns(UserWarning, match="shorter than seq_len"):
            res = attnspec.spectrum(
                model=model, tokenizer=tok, texts=_texts(4, seed=seed, lo=3, hi=8), seq_len=SEQ, progress=False
            )
        runs.append(res.save(tmp_path / f"r{seed}"))
    with pytest.warns(UserWarning, match="c_20 is left out of the comparison"):
        table = compare_runs(runs, at=20)
    assert "c_at" not in set(table["quantity"]) and "effective_rank" in set(table["quantity"])
    inside = compare_runs(runs, at=2)  # within every input: compared
    assert "c_at" in set(inside["quantity"])


def test_api_null_baselines_on_a_causal_decoder_survive_save_and_load(llama_like, tmp_path: Path) -> None:
    model, tok = llama_like
    res = attnspec.spectrum(
        model=model,
        tokenizer=tok,
        texts=_texts(4, lo=30, hi=40),
        seq_len=16,
        seed=2,
        progress=False,
        baseline="entropy-matched,uniform",
    )
    assert res.meta["baselines"]["names"] == ["entropy-matched", "uniform"] and res.meta["baselines"]["seed"] == 2
    m = res.baselines["baseline_metrics"]
    uniform = m[m["baseline"] == "uniform"]
    # causal layers: the lower-triangular uniform matrix, whose k90 is above 1 (not the encoder's rank-1 matrix)
    assert (uniform["reach_index_mean"] > 1).all() and np.allclose(uniform["row_entropy_mean"], 1.0)
    table = res.per_layer()
    assert {
        "median_index_at_0.9_of_mean_curve_uniform_null",
        "median_index_at_0.9_of_mean_curve_entropy-matched_null",
    } <= set(table.columns)
    again = attnspec.load(res.save(tmp_path / "saved"))
    for name, frame in res.baselines.items():
        pd.testing.assert_frame_equal(again.baselines[name], frame)
    with pytest.raises(InputError, match="--baseline must be one of"):
        attnspec.spectrum(model=model, tokenizer=tok, texts=_texts(2), seq_len=16, progress=False, baseline="noise")


def test_random_init_null_runs_the_same_architecture_on_the_same_inputs(llama_like) -> None:
    import torch

    from attnspec.spectra.models import wrap_model
    from attnspec.spectra.random_init import reinitialised

    model, tok = llama_like
    texts = _texts(3, lo=30, hi=40)
    state = torch.get_rng_state()
    res = attnspec.spectrum(
        model=model, tokenizer=tok, texts=texts, seq_len=16, seed=5, progress=False, baseline="random-init"
    )
    assert torch.equal(torch.get_rng_state(), state)  # the caller's global random state is untouched
    assert res.meta["baselines"]["names"] == ["random-init"] and res.meta["baselines"]["matrices_per_head"] == {
        "random-init": 3
    }
    real = res.state.inputs_table()
    null = res.baselines["baseline_inputs"]
    assert sorted(null["input"].unique()) == sorted(real["input"].unique())  # the run's own inputs
    m = res.baselines["baseline_metrics"]
    assert not np.allclose(m["row_entropy_mean"].to_numpy(), res.metrics["row_entropy_mean"].to_numpy())
    # the same seed gives the same weights; another seed other weights; the trained model is not touched
    loaded = wrap_model(model, tok)
    a, b, c = reinitialised(loaded, 5).model, reinitialised(loaded, 5).model, reinitialised(loaded, 6).model
    first = next(iter(model.state_dict()))
    assert torch.equal(a.state_dict()[first], b.state_dict()[first])
    assert not torch.equal(a.state_dict()[first], c.state_dict()[first])
    assert not torch.equal(a.state_dict()[first], model.state_dict()[first])


def test_a_scaling_study_from_python_is_the_one_the_cli_runs(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attnspec.cli.main import app
    from attnspec.spectra.reading import FITTED

    opts = dict(data=str(text_file), num_inputs=4, device="cpu", progress=False)
    out = tmp_path / "study"
    res = attnspec.spectrum(str(model_dir), seq_len=[12, 24], baseline="uniform", projection_k=[4], out=out, **opts)
    assert isinstance(res, attnspec.ScalingResult) and res.lengths == [12, 24] and res.path == out
    assert {n: r.meta["identity"]["seq_len"] for n, r in res.runs.items()} == {12: 12, 24: 24}
    assert res.runs[12].meta["corpus"]["cut_from_seq_len"] == 24  # the same documents, cut
    assert set(res.fits["metric"]) == set(FITTED) and sorted(res.fits["layer"].unique()) == [-1, 0, 1]
    assert res.nulls["source"].tolist() == ["real", "uniform"] and "uniform null gives" in res.sentence()
    assert sorted(set(zip(res.projection["k"], res.projection["n"]))) == [(4, 12), (4, 24)]
    figures = res.plot(tmp_path / "figs")
    assert sorted(p.name for p in figures) == [
        "scaling_beta.png",
        "scaling_beta.svg",
        "scaling_k90.png",
        "scaling_k90.svg",
    ] and all(p.is_file() for p in figures)
    assert "n=[12, 24]" in repr(res)
    # the command line on the same study: up to date, nothing recomputed; its fits are the API's
    stamp = (out / "n24" / "state.npz").stat().st_mtime_ns
    cli = [
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        str(text_file),
        "--seq-len",
        "12,24",
        "--num-sentences",
        "4",
        "--device",
        "cpu",
        "-q",
        "--baseline",
        "uniform",
        "--projection-k",
        "4",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(app, cli)
    assert r.exit_code == 0 and "up to date" in r.stdout, r.output
    assert (out / "n24" / "state.npz").stat().st_mtime_ns == stamp
    pd.testing.assert_frame_equal(pd.read_parquet(out / "scaling_fit.parquet"), res.fits)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "scaling_null.parquet"), res.nulls)
    again = attnspec.spectrum(str(model_dir), seq_len=[12, 24], baseline="uniform", projection_k=[4], out=out, **opts)
    assert (out / "n24" / "state.npz").stat().st_mtime_ns == stamp  # Python asked again: up to date too
    pd.testing.assert_frame_equal(again.table, res.table)
    # without out=: held in memory, saved and loaded whole
    mem = attnspec.spectrum(str(model_dir), seq_len=[12, 24], projection_k=None, **opts)
    assert mem.path is None and mem.nulls["source"].tolist() == ["real"]
    loaded = attnspec.load(mem.save(tmp_path / "saved"))
    pd.testing.assert_frame_equal(loaded.fits, mem.fits)
    pd.testing.assert_frame_equal(loaded.runs[12].curves, mem.runs[12].curves)
    with pytest.raises(InputError, match="texts="):
        attnspec.spectrum(str(model_dir), texts=["a b c"], seq_len=[12, 24], progress=False)
    with pytest.raises(InputError, match="seq_len lengths must be strictly increasing"):
        attnspec.spectrum(str(model_dir), seq_len=[24, 12], **opts)
