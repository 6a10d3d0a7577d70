"""One error contract for the whole CLI: one `error:` line on stderr, documented exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.report.runner import failure_line


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert not any(ch in stderr for ch in "╭╰│─"), stderr  # no boxed rich panel
    return lines[0]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("jl-check", "--n", "abc"), "--n"),
        (("jl-check", "--bogus"), "--bogus"),
        (("osa-check", "--seed", "x"), "--seed"),
        (("merge",), "dirs"),
        (("sa-check", "--L", "x"), "--L"),
    ],
)
def test_parse_errors_are_one_line_with_exit_2(args: tuple[str, ...], names: str) -> None:
    r = _run(*args)
    assert r.exit_code == 2
    assert names in _one_error_line(r.stderr)


@pytest.mark.parametrize(
    ("args", "names"), [(("jl-check", "--eps", "2"), "eps"), (("osa-check", "--seed", "-1"), "--seed")]
)
def test_user_errors_are_one_line_with_exit_1(args: tuple[str, ...], names: str) -> None:
    r = _run(*args)
    assert r.exit_code == 1
    assert names in _one_error_line(r.stderr)


def test_osa_check_names_d_v_before_computing() -> None:
    r = _run("osa-check", "--d-v", "0", "--no-timing")
    assert r.exit_code == 1
    line = _one_error_line(r.stderr)
    assert "--d-v" in line
    assert "Theorem" not in r.stderr  # refused before the first check started


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("--alpha", "1e308"), "--alpha"),
        (("--alpha", "nan"), "--alpha"),
        (("--schedule", "1e308,-1e308"), "--schedule"),
        (("--schedule", "3,0"), "--schedule"),
    ],
)
def test_osa_check_refuses_values_that_would_overflow(args: tuple[str, ...], names: str) -> None:
    r = _run("osa-check", *args, "--no-timing", "--trials", "1")
    assert r.exit_code == 1
    assert names in _one_error_line(r.stderr)


def test_model_that_is_a_file_is_named_a_file(tmp_path) -> None:
    f = tmp_path / "weights.bin"
    f.write_bytes(b"\0")
    r = _run("spectrum", "--model", str(f), "--out", str(tmp_path / "out"), "--quiet")
    assert r.exit_code == 1
    line = _one_error_line(r.stderr)
    assert "is a file" in line and "directory" not in line.split("is a file")[0]


def test_report_shows_the_error_line_not_a_box_border() -> None:
    stderr = "progress 1\nerror: --n must be >= 2, got 1\n"
    assert failure_line(stderr) == "error: --n must be >= 2, got 1"
    assert failure_line("Traceback ...\n  File x\nValueError: boom\n") == "ValueError: boom"
    assert failure_line("") == "(no output)"


# ---------------------------------------------------------------------------------------
# Writers check --out before any work: a file, under a file, /proc, read-only,
# a full disk, another kind of result. The model and runs named below do not exist: a
# refusal that names --out proves the check came first.
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def read_only_dir(tmp_path_factory):  # noqa: ANN001, ANN201
    """A read-only file system (a tmpfs mounted ro; root can write to any chmod-ed folder)."""
    import shutil
    import subprocess

    mnt = tmp_path_factory.mktemp("ro")
    if (
        shutil.which("mount") is None
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(mnt)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a read-only tmpfs here (needs root)")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fake_study(tmp_path):  # noqa: ANN001, ANN202
    """The files `plot scaling` reads first: a scaling meta.json and two finished lengths."""
    import json

    sc = tmp_path / "sc"
    for n in (16, 32):
        (sc / f"n{n}").mkdir(parents=True)
        (sc / f"n{n}" / "meta.json").write_text(json.dumps({"kind": "spectrum"}))
    (sc / "meta.json").write_text(json.dumps({"kind": "spectrum-scaling", "lengths": [16, 32]}))
    return sc


WRITERS = {
    "scaling path": lambda out, tmp: (
        "spectrum",
        "--model",
        str(tmp / "no-model"),
        "--data",
        str(tmp / "no.txt"),
        "--seq-len",
        "16,32",
        "--out",
        out,
        "--quiet",
    ),
    "compare": lambda out, tmp: ("compare", str(tmp / "run-a"), str(tmp / "run-b"), "--out", out),
    "plot scaling": lambda out, tmp: ("plot", "scaling", str(_fake_study(tmp)), "--out", out),
}


@pytest.mark.parametrize("bad", ["a file", "under a file", "in /proc", "read-only", "another kind"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_writers_refuse_an_unusable_out_before_any_work(tmp_path, request, writer: str, bad: str) -> None:  # noqa: ANN001
    import json

    f = tmp_path / "a-file"
    f.write_text("x")
    other = tmp_path / "jl"
    other.mkdir()
    (other / "meta.json").write_text(json.dumps({"kind": "jl-check", "attnspec_version": "0"}))
    out = {
        "a file": str(f),
        "under a file": str(f / "sub"),
        "in /proc": "/proc/attnspec-out",
        "another kind": str(other / "inside"),
    }.get(bad)
    if bad == "read-only":
        out = str(request.getfixturevalue("read_only_dir") / "out")
    r = _run(*WRITERS[writer](out, tmp_path))
    assert r.exit_code == 1, r.output
    line = _one_error_line(r.stderr)
    assert "--out" in line and out in line, line
    assert f.read_text() == "x"


def test_save_refuses_an_unusable_folder_in_one_line(tmp_path, read_only_dir) -> None:  # noqa: ANN001
    import pandas as pd

    from attnspec.api import SpectrumResult
    from attnspec.errors import ResultsError

    f = tmp_path / "a-file"
    f.write_text("x")
    result = SpectrumResult(pd.DataFrame({"x": [1]}), pd.DataFrame({"y": [1]}), {"kind": "spectrum"})
    for bad in (f, f / "sub", Path("/proc/attnspec-save"), read_only_dir / "out"):
        with pytest.raises(ResultsError) as e:
            result.save(bad)
        assert "\n" not in str(e.value) and str(bad) in str(e.value)


# --------------------------------------------------------------------------------- the Python API
# The API has the CLI's contract: a bad argument or a bad file is ONE attnspec error
# (InputError / ResultsError / ModelLoadError) with a one-line message, raised before any
# work; never a bare TypeError, KeyError, OSError or a library's own exception.
@pytest.fixture(scope="module")
def api_run(tmp_path_factory: pytest.TempPathFactory):
    from helpers import make_roberta_tokenizer
    from models_tiny import tiny_roberta

    import attnspec

    root = tmp_path_factory.mktemp("api-contract")
    tok = make_roberta_tokenizer(root / "tok")
    texts = ["attention is low rank and the spectrum decays quickly in every layer of the model " * 2] * 3
    res = attnspec.spectrum(tiny_roberta(vocab=len(tok), n=62), tokenizer=tok, texts=texts, seq_len=16, progress=False)
    return res, res.save(root / "run"), root


def _scaling_dir(root):
    """A scaling directory made by the CLI on a tiny model (shared by the fit_scaling cases)."""
    import json

    from helpers import save_tiny_roberta

    sc = root / "sc"
    if not sc.exists():
        model = save_tiny_roberta(root / "m")
        (root / "d.jsonl").write_text(
            "\n".join(json.dumps({"text": "the attention of a movie was low rank " * 6}) for _ in range(4))
        )
        r = _run(
            "spectrum",
            "--model",
            str(model),
            "--data",
            str(root / "d.jsonl"),
            "--num-sentences",
            "4",
            "--seq-len",
            "12,16",
            "--device",
            "cpu",
            "-q",
            "--no-plots",
            "--out",
            str(sc),
        )
        assert r.exit_code == 0, r.output
    return sc


def _battery(*args):
    from attnspec.battery import run_battery

    return run_battery(*args)


def _api_cases():
    import numpy as np
    import torch

    import attnspec
    from attnspec.errors import InputError, ModelLoadError, ResultsError
    from attnspec.spectra.compare import compare_runs
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.scaling_fit import fit_scaling

    def meta_list(res, run, root):
        import shutil

        bad = root / "meta-list"
        shutil.rmtree(bad, ignore_errors=True)
        shutil.copytree(run, bad)
        (bad / "meta.json").write_text("[]")
        attnspec.load(bad)

    def save_under_file(res, run, root):
        (root / "a-file").write_text("x")
        res.save(root / "a-file" / "run")

    def no_tokenizer(res, run, root):
        from helpers import save_tiny_roberta

        folder = save_tiny_roberta(root / "nt")
        for p in folder.iterdir():
            if p.name.startswith(("tokenizer", "vocab", "merges", "special")):
                p.unlink()
        attnspec.spectrum(str(folder), texts=["a b c"], seq_len=8, device="cpu", progress=False)

    def tokenizer_of_another_model(res, run, root):
        from helpers import make_roberta_tokenizer
        from models_tiny import tiny_bert

        tok = make_roberta_tokenizer(root / "tok-other")
        assert len(tok) > 50
        attnspec.spectrum(
            tiny_bert(vocab=50), tokenizer=tok, texts=["attention is low rank " * 8], seq_len=8, progress=False
        )

    return [
        ("load(123)", InputError, lambda res, run, root: attnspec.load(123)),
        ("load(None)", InputError, lambda res, run, root: attnspec.load(None)),
        ("load(meta.json a list)", ResultsError, meta_list),
        ("plot(at='5')", InputError, lambda res, run, root: res.plot(at="5")),
        ("plot(at=1.5)", InputError, lambda res, run, root: res.plot(at=1.5)),
        ("per_layer(at='5')", InputError, lambda res, run, root: res.per_layer(at="5")),
        ("per_layer(at=0)", InputError, lambda res, run, root: res.per_layer(at=0)),
        ("save('/proc/...')", ResultsError, lambda res, run, root: res.save("/proc/attnspec-run")),
        ("save(under a file)", ResultsError, save_under_file),
        ("save(123)", InputError, lambda res, run, root: res.save(123)),
        ("compare_runs(level=2)", InputError, lambda res, run, root: compare_runs([run, run], level=2)),
        ("compare_runs(at='5')", InputError, lambda res, run, root: compare_runs([run, run], at="5")),
        ("fit_scaling(resamples=0)", InputError, lambda res, run, root: fit_scaling(_scaling_dir(root), resamples=0)),
        (
            "fit_scaling(resamples=10**12)",
            InputError,
            lambda res, run, root: fit_scaling(_scaling_dir(root), resamples=10**12),
        ),
        (
            "singular_values(NaN)",
            InputError,
            lambda res, run, root: singular_values(torch.full((2, 4, 4), float("nan"))),
        ),
        (
            "spectrum(seq_len='64')",
            InputError,
            lambda res, run, root: attnspec.spectrum("minilm", texts=["a"], seq_len="64"),
        ),
        ("spectrum(out=123)", InputError, lambda res, run, root: attnspec.spectrum("minilm", texts=["a"], out=123)),
        ("spectrum(model without tokenizer)", ModelLoadError, no_tokenizer),
        ("singular_values(not a matrix)", InputError, lambda res, run, root: singular_values(torch.zeros(3))),
        ("fit_scaling(level=1.5)", InputError, lambda res, run, root: fit_scaling(_scaling_dir(root), level=1.5)),
        ("run_battery('nosuch')", InputError, lambda res, run, root: _battery("nosuch")),
        (
            "run_battery('jl-check', {'n': 'abc'})",
            InputError,
            lambda res, run, root: _battery("jl-check", {"n": "abc"}),
        ),
        ("np int at is fine", None, lambda res, run, root: res.per_layer(at=np.int64(4))),
        ("spectrum(tokenizer larger than the embedding)", InputError, tokenizer_of_another_model),
    ]


@pytest.mark.parametrize("case", _api_cases(), ids=lambda c: c[0])
def test_api_errors_are_one_attnspec_error_with_one_line(api_run, case) -> None:
    from attnspec.errors import AttnspecError

    _, call, expected = case[0], case[2], case[1]
    res, run, root = api_run
    if expected is None:
        call(res, run, root)  # accepted
        return
    with pytest.raises(AttnspecError) as e:
        call(res, run, root)
    assert isinstance(e.value, expected), repr(e.value)
    assert str(e.value) and "\n" not in str(e.value)


# ------------------------------------------------------------------- what a result was computed on
# A run's identity holds names and paths; the content record beside it (weights, tokenizer and
# inputs digests, attnspec.spectra.content) is what resume, merge, "up to date" and the scaling
# fit compare. The same folder holding other weights is refused in one line naming what changed.
def _tiny_model_and_data(root: Path) -> tuple[Path, Path]:
    import json

    from helpers import save_tiny_roberta

    model = save_tiny_roberta(root / "m")
    data = root / "d.jsonl"
    data.write_text(
        "\n".join(json.dumps({"text": f"the attention of movie {i} was low rank and quick " * 4}) for i in range(8))
    )
    return model, data


def _swap_weights(model: Path, seed: int = 1) -> None:
    """Other weights of the same architecture written over the folder's, same file names."""
    from models_tiny import tiny_roberta
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(model)
    tiny_roberta(vocab=cfg.vocab_size, n=cfg.max_position_embeddings - 2, seed=seed).save_pretrained(model)


def _spectrum_args(model: Path, data: Path, out: Path, *extra: str) -> tuple[str, ...]:
    return (
        "spectrum",
        "--model",
        str(model),
        "--data",
        str(data),
        "--num-sentences",
        "8",
        "--seq-len",
        "16",
        "--batch-size",
        "2",
        "--device",
        "cpu",
        "-q",
        "--no-plots",
        "--out",
        str(out),
        *extra,
    )


def test_resume_refuses_weights_swapped_in_place(tmp_path) -> None:  # noqa: ANN001
    from attnspec.errors import ResultsError
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum

    model, data = _tiny_model_and_data(tmp_path)
    cfg = SpectrumConfig(
        model=str(model),
        data=str(data),
        seq_len=16,
        num_sentences=8,
        batch_size=2,
        device="cpu",
        out=tmp_path / "run",
        checkpoint_every=1,
    )

    def swap_then_stop(done: int) -> None:
        _swap_weights(model)
        raise KeyboardInterrupt

    assert run_spectrum(cfg, progress=False, on_checkpoint=swap_then_stop).status == "interrupted"
    before = (tmp_path / "run" / "state.npz").read_bytes()
    r = _run(*_spectrum_args(model, data, tmp_path / "run", "--resume"))
    assert r.exit_code == 1, r.output
    line = _one_error_line(r.stderr)
    assert "model's weights changed" in line and "tokenizer" not in line.split("changed")[0], line
    assert (tmp_path / "run" / "state.npz").read_bytes() == before  # nothing was changed
    with pytest.raises(ResultsError, match="weights changed"):
        run_spectrum(SpectrumConfig(**{**cfg.__dict__, "resume": True}), progress=False)


def test_merge_refuses_shards_with_other_weights_under_the_same_path(tmp_path) -> None:  # noqa: ANN001
    import json

    model, data = _tiny_model_and_data(tmp_path)
    assert _run(*_spectrum_args(model, data, tmp_path / "s0", "--shard", "0/2")).exit_code == 0
    _swap_weights(model)
    assert _run(*_spectrum_args(model, data, tmp_path / "s1", "--shard", "1/2")).exit_code == 0
    recorded = [json.loads((tmp_path / s / "meta.json").read_text())["content"] for s in ("s0", "s1")]
    assert recorded[0]["weights_sha256"] != recorded[1]["weights_sha256"]
    assert recorded[0]["tokenizer_sha256"] == recorded[1]["tokenizer_sha256"]
    r = _run("merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "merged"))
    assert r.exit_code == 1, r.output
    assert "model's weights changed" in _one_error_line(r.stderr)
    assert not (tmp_path / "merged" / "meta.json").exists()


def test_up_to_date_check_sees_weights_and_data_edited_in_place(tmp_path) -> None:  # noqa: ANN001
    model, data = _tiny_model_and_data(tmp_path)
    assert _run(*_spectrum_args(model, data, tmp_path / "run")).exit_code == 0
    assert _run(*_spectrum_args(model, data, tmp_path / "run")).exit_code == 0  # up to date
    data.write_text(data.read_text().replace("movie 3", "movie three"))
    r = _run(*_spectrum_args(model, data, tmp_path / "run"))
    assert r.exit_code == 1 and "data file changed" in _one_error_line(r.stderr)
    data.write_text(data.read_text().replace("movie three", "movie 3"))
    _swap_weights(model)
    r = _run(*_spectrum_args(model, data, tmp_path / "run"))
    assert r.exit_code == 1 and "model's weights changed" in _one_error_line(r.stderr)


def test_scaling_fit_refuses_a_length_run_on_other_documents(tmp_path) -> None:  # noqa: ANN001
    import shutil

    from attnspec.errors import ResultsError
    from attnspec.spectra.scaling_fit import fit_scaling

    model, data = _tiny_model_and_data(tmp_path)
    sc = tmp_path / "sc"
    assert _run(*_spectrum_args(model, data, sc, "--seq-len", "12,16")).exit_code == 0
    fit_scaling(sc, resamples=100)  # paired: accepted
    assert _run(*_spectrum_args(model, data, tmp_path / "other", "--seq-len", "12", "--seed", "1")).exit_code == 0
    shutil.rmtree(sc / "n12")
    shutil.copytree(tmp_path / "other", sc / "n12")
    with pytest.raises(ResultsError, match="not computed on the same documents") as e:
        fit_scaling(sc, resamples=100)
    assert "\n" not in str(e.value)
    r = _run("plot", "scaling", str(sc), "--out", str(tmp_path / "figs"))
    assert r.exit_code == 1 and "same documents" in _one_error_line(r.stderr)


# ----------------------------------------------------------------------- names never form paths
TINY_SA = (
    'title = "t"\npaper = "expressivity"\ncommand = "sa-check"\nverdicts = true\n[args]\nL = 16\nk = 1\ntrials = 10\n'
)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("stem", ["..", ".", "...", ".hidden", "a\x1b]0;title\x07"])
def test_report_experiment_named_dots_removes_nothing(tmp_path, stem: str) -> None:  # noqa: ANN001
    """`results/..` is `--out` itself, `results/.` is `results/`: a rerun that emptied the
    experiment's folder would delete every other result and the user's own files."""
    exps = tmp_path / "experiments"
    exps.mkdir()
    (exps / f"{stem}.toml").write_text(TINY_SA)
    out = tmp_path / "reports"
    (out / "results" / "other").mkdir(parents=True)
    (out / "results" / "other" / "kept.json").write_text("{}")
    (out / "mine.txt").write_text("a user's own file")
    (tmp_path / "beside.txt").write_text("beside --out")
    before = _tree(tmp_path)
    r = _run("report", "--experiments", str(exps), "--out", str(out))
    assert r.exit_code == 1, r.output
    line = _one_error_line(r.stderr)
    assert "plain name" in line and "\x1b" not in line and "\x07" not in line
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    ("bad", "words", "code"),
    [
        ('command = "jl-check"\n[args]\nn = "abc"\n', "Invalid value for '--n'", 2),
        ('command = "sa-check"\n[args]\ntrials = 0\n', "trials", 1),
        ('command = "osa-check"\n[args]\nbogus = 1\n', "bogus", 2),
        ('command = "spectrum"\n[args]\nmodel = "minilm"\ndata = "imbd"\n', "did you mean imdb?", 2),
        ('command = "spectrum"\n[args]\nmodel = "minilm"\ndata = "imdb"\nseq-len = "16,16"\n', "seq-len", 1),
        ('command = "spectrum"\n[args]\nmodel = "minilm"\ndata = "imdb"\ndtype = "float16"\n', "--dtype", 1),
        ('command = "spectrum"\n[args]\nmodel = "minilm"\ndata = "imdb"\nat = 9999\n', "--at must be in", 1),
        ('command = "spectrum"\n[args]\nmodel = "minilm"\ndata = "imdb"\nseed = 1e30\n', "--seed", 2),
    ],
)
def test_report_checks_every_experiment_before_the_first_runs(tmp_path, bad: str, words: str, code: int) -> None:  # noqa: ANN001
    """a.toml is fine and would run first; z.toml's bad option refuses the whole report before
    a runs, with the exit code the command line gives the same value (2: it cannot be read as
    its option's kind; 1: it cannot be done): nothing is written under results/a."""
    exps = tmp_path / "exps"
    exps.mkdir()
    (exps / "a.toml").write_text(TINY_SA)
    (exps / "z.toml").write_text('title = "z"\npaper = "expressivity"\n' + bad)
    out = tmp_path / "reports"
    r = _run("report", "--experiments", str(exps), "--out", str(out))
    assert r.exit_code == code, r.output
    line = _one_error_line(r.stderr)
    assert "z.toml" in line and words in line, line
    assert not (out / "results" / "a").exists()


def test_report_removes_only_an_experiments_own_folder(tmp_path) -> None:  # noqa: ANN001
    """Even past the name check (a direct caller of run_experiment), nothing but results/<name> is removed."""
    from attnspec.errors import InputError
    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import run_experiment

    results = tmp_path / "out" / "results"
    (results / "other").mkdir(parents=True)
    (results / "other" / "kept.json").write_text("{}")
    before = _tree(tmp_path)
    exp = Experiment(
        name="..",
        path=tmp_path / "...toml",
        title="t",
        paper="expressivity",
        command="sa-check",
        args={"L": 16},
        verdicts=False,
        group=None,
        note="",
        quick={},
    )
    with pytest.raises(InputError, match="nothing was removed"):
        run_experiment(exp, results, quick=True, force=True, data_dir=None, log=lambda m: None)
    assert _tree(tmp_path) == before


def test_labels_are_titles_never_paths(tmp_path) -> None:  # noqa: ANN001
    """`--label ../../x` titles the figures; every file is written under --out."""
    model, data = _tiny_model_and_data(tmp_path)
    run = tmp_path / "run"
    assert _run(*_spectrum_args(model, data, run)).exit_code == 0
    outside = set(tmp_path.parent.iterdir())
    r = _run("plot", "spectrum", str(run), "--label", "../../escaped", "--out", str(tmp_path / "figs"))
    assert r.exit_code == 0, r.output
    assert set(tmp_path.parent.iterdir()) == outside
    assert not any("escaped" in str(p) for p in tmp_path.rglob("*"))


def test_control_sequences_in_run_names_are_escaped_when_printed(tmp_path) -> None:  # noqa: ANN001
    """ESC]0; (window title), ESC]52; (clipboard) and ESC[2J (clear screen) in a corpus path,
    a run folder or --out reach the terminal as text: compare's tables, its file lines and an
    error line escape them."""
    model, data = _tiny_model_and_data(tmp_path)
    odd = data.rename(tmp_path / "d\x1b]0;pwned\x07.jsonl")
    a, b = tmp_path / "a\x1b]52;c;Zm9v\x07", tmp_path / "b"
    assert _run(*_spectrum_args(model, odd, a)).exit_code == 0
    assert _run(*_spectrum_args(model, odd, b, "--seed", "1")).exit_code == 0
    r = _run("compare", str(a), str(b), "--out", str(tmp_path / "cmp\x1b[2J"), "--no-plots")
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout, repr(r.stdout)
    flat = r.stdout.replace("\n", "")  # rich wraps long lines
    assert "\\x1b]0;pwned" in flat and "\\x1b[2J" in flat
    r = _run("compare", str(a), str(tmp_path / "nosuch\x1b[2J"), "--out", str(tmp_path / "cmp2"))
    assert r.exit_code == 1
    line = _one_error_line(r.stderr)
    assert "\x1b" not in line and "\\x1b[2J" in line


# ------------------------------------------------------------------ forked workers die with their parent
# jl-check, osa-check and sa-check compute part of their work in a forked second process. A
# parent killed outright must not leave it computing, or blocked for ever on a pipe nobody
# reads; Ctrl-C (delivered to every process of the terminal's group) is the parent's to report.
FORKING = {
    "jl-check": ("jl-check", "--out", "{tmp}/jl"),
    "osa-check": ("osa-check", "--no-timing"),
    "sa-check": ("sa-check",),
}


def _start_with_worker(tmp_path, name: str):  # noqa: ANN001, ANN202
    """The command, once its forked worker exists: (process, worker pid)."""
    import os
    import subprocess
    import sys
    import time

    args = [a.format(tmp=tmp_path) for a in FORKING[name]]
    import attnspec

    # the attnspec this test imported, in the child too
    env = {**os.environ, "PYTHONPATH": str(Path(attnspec.__file__).resolve().parents[1]), "ATTNSPEC_NO_FORK": "0"}
    tmp_path.mkdir(parents=True, exist_ok=True)
    # cwd: `python -m` puts the working directory first on the path, before PYTHONPATH
    import signal

    # as a terminal starts it: a suite run in the background of a non-interactive shell
    # (`cmd &`) has SIGINT ignored, which a child inherits, and Python then raises no KeyboardInterrupt
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnspec.cli.main", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if _children(proc.pid):
            time.sleep(1.0)  # past any short-lived helper process: the worker computes for seconds
            kids = [k for k in _children(proc.pid) if _alive(k)]
            if kids:
                return proc, kids[0]
        time.sleep(0.02)
    proc.kill()
    pytest.skip(f"{name} ran without a second process here (one core, or no fork)")


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    """Running (a zombie nobody reaped is dead: it computes nothing and holds no core)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads process children from /proc")
@pytest.mark.parametrize("name", sorted(FORKING))
def test_a_forked_worker_exits_when_its_parent_is_killed(tmp_path, name: str) -> None:  # noqa: ANN001
    import os
    import signal
    import time

    proc, worker = _start_with_worker(tmp_path, name)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()  # not communicate(): the worker holds the output pipes too, reading them waits for it
    # promptly: long before the worker could finish its share and exit by itself
    deadline = time.monotonic() + 1.5
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = _alive(worker)
    if survived:
        os.kill(worker, signal.SIGKILL)  # the test's own orphan, not left behind
    proc.stdout.close()
    proc.stderr.close()
    assert not survived, f"{name}'s worker {worker} outlived its killed parent"


@pytest.mark.slow  # the run goes on to its end: the command at its defaults, minutes of CPU
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads process children from /proc")
@pytest.mark.parametrize("name", sorted(FORKING))
def test_ctrl_c_to_the_worker_alone_changes_nothing(tmp_path, name: str) -> None:  # noqa: ANN001
    """SIGINT to the worker alone: the run finishes, exit 0, no traceback (Ctrl-C is the parent's to report)."""
    import os
    import signal

    proc, worker = _start_with_worker(tmp_path, name)
    os.kill(worker, signal.SIGINT)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0 and "Traceback" not in err.decode(), err.decode()[-2000:]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads process children from /proc")
@pytest.mark.parametrize("name", sorted(FORKING))
def test_ctrl_c_to_the_group_ends_the_run_in_one_line(tmp_path, name: str) -> None:  # noqa: ANN001
    """SIGINT to the whole group (a terminal's Ctrl-C) ends the run with exit 130 and at most one line."""
    import os
    import signal

    proc, worker = _start_with_worker(tmp_path / "again", name)
    for pid in (worker, proc.pid):  # as a terminal's Ctrl-C: every process of the group
        os.kill(pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    lines = [ln for ln in err.decode().splitlines() if ln.strip()]
    assert proc.returncode == 130 and len(lines) <= 1 and "Traceback" not in err.decode(), err.decode()[-2000:]
    assert not _alive(worker)


# ------------------------------------------------------------ P is a probability matrix, or refused
def test_weights_holding_inf_are_refused_naming_layer_and_head(tmp_path) -> None:  # noqa: ANN001
    import torch
    from transformers import AutoModel

    model, data = _tiny_model_and_data(tmp_path)
    m = AutoModel.from_pretrained(model)
    with torch.no_grad():
        m.encoder.layer[1].attention.self.query.weight[0, 0] = float("inf")  # head 0 of layer 1
    m.save_pretrained(model)
    r = _run(*_spectrum_args(model, data, tmp_path / "run"))
    assert r.exit_code == 1, r.output
    line = _one_error_line(r.stderr)
    assert "layer 1, head 0" in line and "NaN or infinite" in line, line
    assert not (tmp_path / "run" / "spectrum.parquet").exists()


def test_check_stochastic_accepts_p_and_refuses_what_is_not() -> None:
    import torch

    from attnspec.errors import ModelLoadError
    from attnspec.spectra.stochastic import check_stochastic

    g = torch.Generator().manual_seed(0)
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])  # (B=2, n=6), input 1 padded
    scores = torch.randn(2, 3, 6, 6, generator=g).masked_fill(~mask[:, None, None, :], float("-inf"))
    p = torch.softmax(scores, dim=-1) * mask[:, None, :, None]  # (B, H, n, n), padding rows zero
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        check_stochastic(p.to(dtype), mask, layer=0, model="m")  # a probability matrix passes
    cases = {
        "NaN or infinite": lambda q: q.__setitem__((1, 2, 0, 0), float("nan")),
        "summing to": lambda q: q[0, 1, 3].mul_(0.9),
        "negative entry": lambda q: (q[1, 0, 2, 0].sub_(0.5), q[1, 0, 2, 1].add_(0.5)),
        "not 0": lambda q: q.__setitem__((1, 1, 5, 0), 0.5),  # a padding row that is not zero
    }
    for words, spoil in cases.items():
        q = p.clone()
        spoil(q)
        with pytest.raises(ModelLoadError, match=words) as e:
            check_stochastic(q, mask, layer=7, model="m")
        assert "layer 7, head" in str(e.value) and "\n" not in str(e.value)


# --------------------------------------------------------------------------- the API's types, one rule
# Integers: any numbers.Integral (not bool); booleans: bool only; lists: any sequence or array;
# texts: a sequence of str; seeds: 0 <= seed < 2**63 (attnspec.errors, attnspec.options.declaration.convert).
def _api_type_cases():

    import attnspec

    def gen():
        yield "a b c"

    return [
        ("osa_check(timing='no')", lambda m, t: attnspec.osa_check(timing="no"), "--timing"),
        ("sa_check(sweep='yes')", lambda m, t: attnspec.sa_check(sweep="yes"), "--sweep"),
        ("sa_check(L='64')", lambda m, t: attnspec.sa_check(L="64"), "--L"),
        ("jl_check(seed=2**70)", lambda m, t: attnspec.jl_check(seed=2**70), "2**63"),
        ("jl_check(seed=-1)", lambda m, t: attnspec.jl_check(seed=-1), "2**63"),
        ("jl_check(eps=1e-320)", lambda m, t: attnspec.jl_check(eps=1e-320), "eps"),
        ("jl_check(resume='no')", lambda m, t: attnspec.jl_check(resume="no"), "resume"),
        ("spectrum(texts=dict)", lambda m, t: attnspec.spectrum(m, tokenizer=t, texts={"a b": 1, "c d": 2}), "a dict"),
        ("spectrum(texts=set)", lambda m, t: attnspec.spectrum(m, tokenizer=t, texts={"a b", "c d"}), "a set"),
        ("spectrum(texts=generator)", lambda m, t: attnspec.spectrum(m, tokenizer=t, texts=gen()), "generator"),
        ("spectrum(texts=[1, 2])", lambda m, t: attnspec.spectrum(m, tokenizer=t, texts=["a", 2]), "int"),
        ("spectrum(seed=2**63)", lambda m, t: attnspec.spectrum(m, tokenizer=t, texts=["a b"], seed=2**63), "2**63"),
        (
            "spectrum(progress='no')",
            lambda m, t: attnspec.spectrum(m, tokenizer=t, texts=["a b"], progress="no"),
            "progress",
        ),
        (
            "spectrum(seq_len=True)",
            lambda m, t: attnspec.spectrum(m, tokenizer=t, texts=["a b"], seq_len=True),
            "seq_len",
        ),
    ]


@pytest.fixture(scope="module")
def tiny_api_model(tmp_path_factory: pytest.TempPathFactory):
    from helpers import make_roberta_tokenizer
    from models_tiny import tiny_roberta

    tok = make_roberta_tokenizer(tmp_path_factory.mktemp("api-types"))
    return tiny_roberta(vocab=len(tok), n=62), tok


@pytest.mark.parametrize("case", _api_type_cases(), ids=lambda c: c[0])
def test_api_types_are_one_rule(tiny_api_model, case) -> None:  # noqa: ANN001
    from attnspec.errors import InputError

    model, tok = tiny_api_model
    _, call, words = case
    with pytest.raises(InputError) as e:
        call(model, tok)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_api_takes_numpy_numbers_and_arrays_and_gives_the_model_back_as_it_came(tiny_api_model) -> None:  # noqa: ANN001
    import numpy as np
    import pandas as pd

    import attnspec
    from attnspec.battery import check_option_types

    model, tok = tiny_api_model
    model.train()
    model.embeddings.eval()  # a mixed state, restored module by module
    before = {name: m.training for name, m in model.named_modules()}
    texts = pd.Series(["the attention of a movie was low rank " * 3, "a spectrum decays quickly in layers " * 3])
    res = attnspec.spectrum(
        model,
        tokenizer=tok,
        texts=texts,
        seq_len=np.int64(16),
        num_inputs=np.int64(2),
        seed=np.uint8(3),
        progress=np.bool_(False),
    )
    assert res.meta["seed"] == 3 and res.meta["inputs_done"] == 2
    assert {name: m.training for name, m in model.named_modules()} == before
    checked = check_option_types("osa-check", {"alpha": np.array([0.1, 1.0]), "seed": np.uint8(3)}, text=False)
    assert checked == {"alpha": [0.1, 1.0], "seed": 3} and type(checked["seed"]) is int


# ------------------------------------------------------- values refused before anything loads or runs
# The model named does not exist: a refusal naming the value (not the model) shows the value
# was checked first. A value the command line reads but cannot take as its option's kind is
# a usage error (exit 2); a value of the right kind outside what is allowed exits 1.
@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("spectrum", "--data", "imbd"), 2, "did you mean imdb?"),
        (("spectrum", "--data", "wikitext"), 2, "did you mean wiki103?"),
        (("spectrum", "--data", "imdb", "--num-sentences", "abc"), 2, "--num-sentences"),
        (("jl-check", "--k", "64,", "--claims", "lemma1"), 1, "empty item"),
        (("jl-check", "--k", "64,,128", "--claims", "lemma1"), 1, "empty item"),
        (("jl-check", "--k", "9" * 30, "--claims", "lemma1"), 1, "larger than the largest n allowed"),
        (("jl-check", "--seed", str(2**63)), 1, "--seed must be an integer with 0 <= seed < 2**63"),
        (("spectrum", "--data", "imdb", "--seed", str(10**30)), 1, "--seed must be an integer with 0 <= seed < 2**63"),
        (("jl-check", "--eps", "1e-320"), 1, "eps must be >= 1e-150"),
        (("sa-check", "--sweep-L", "16,16"), 1, "more than once"),
        (("sa-check", "--sweep-k", "1,,2"), 1, "empty item"),
        (("sa-check", "--d", str(10**14)), 1, "d must be <= 2^44"),
        (
            ("osa-check", "--d-model", "100000", "--no-timing"),
            1,
            "--d-model 100000 with --d-v 2 (the Jacobian check) needs",
        ),
        (("osa-check", "--schedule", "1", "--no-timing"), 1, "needs 2 or 3 coefficients"),
        (("osa-train", "--ns-coefficients", "x", "--quick"), 1, "schedule must be one of"),
    ],
)
def test_values_are_refused_before_any_work(tmp_path, args: tuple[str, ...], code: int, words: str) -> None:  # noqa: ANN001
    if args[0] == "spectrum":
        args = (*args, "--model", str(tmp_path / "no-model"), "--out", str(tmp_path / "out"), "-q")
    r = _run(*args)
    assert r.exit_code == code, r.output
    assert words in _one_error_line(r.stderr)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------- compare refuses what it cannot interpret
def test_compare_refuses_a_one_input_run_and_nan_spreads(tmp_path) -> None:  # noqa: ANN001
    import shutil

    import pandas as pd

    model, data = _tiny_model_and_data(tmp_path)
    assert _run(*_spectrum_args(model, data, tmp_path / "a")).exit_code == 0
    assert _run(*_spectrum_args(model, data, tmp_path / "one", "--num-sentences", "1")).exit_code == 0
    r = _run("compare", str(tmp_path / "a"), str(tmp_path / "one"), "--out", str(tmp_path / "c1"), "--no-plots")
    assert r.exit_code == 1 and "holds 1 input" in _one_error_line(r.stderr)
    shutil.copytree(tmp_path / "a", tmp_path / "nan")
    t = pd.read_parquet(tmp_path / "nan" / "spectrum.parquet")
    t.loc[t.index[5], "std"] = float("nan")  # a hand-edited spread
    t.to_parquet(tmp_path / "nan" / "spectrum.parquet")
    r = _run("compare", str(tmp_path / "a"), str(tmp_path / "nan"), "--out", str(tmp_path / "c2"), "--no-plots")
    assert r.exit_code == 1 and "'std' holds NaN" in _one_error_line(r.stderr)
    assert not (tmp_path / "c1" / "compare.parquet").exists() and not (tmp_path / "c2" / "compare.parquet").exists()


def test_plot_spectrum_refuses_two_runs_that_would_share_a_figure_folder(tmp_path) -> None:  # noqa: ANN001
    """a/r64 and b/r64 drawn into one --out would both write OUT/r64/: one would overwrite the other."""
    import shutil

    model, data = _tiny_model_and_data(tmp_path)
    assert _run(*_spectrum_args(model, data, tmp_path / "a" / "r")).exit_code == 0
    shutil.copytree(tmp_path / "a" / "r", tmp_path / "b" / "r")
    r = _run("plot", "spectrum", str(tmp_path / "a" / "r"), str(tmp_path / "b" / "r"), "--out", str(tmp_path / "figs"))
    assert r.exit_code == 1 and "same" in _one_error_line(r.stderr)
    assert not list((tmp_path / "figs").rglob("*.png")) if (tmp_path / "figs").exists() else True


# -------------------------------------------------------------- malformed files: one line naming file and field
def test_malformed_result_files_are_refused_naming_file_and_field(tmp_path) -> None:  # noqa: ANN001
    import json
    import shutil

    import pandas as pd

    import attnspec
    from attnspec.errors import ResultsError
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum

    model, data = _tiny_model_and_data(tmp_path)
    cfg = SpectrumConfig(
        model=str(model),
        data=str(data),
        seq_len=16,
        num_sentences=8,
        batch_size=2,
        device="cpu",
        out=tmp_path / "run",
        checkpoint_every=1,
    )

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    run_spectrum(cfg, progress=False, on_checkpoint=stop)
    shutil.copytree(tmp_path / "run", tmp_path / "whole")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    (tmp_path / "run" / "meta.json").write_text(json.dumps({**meta, "corpus": ["a", "list"]}))
    r = _run(*_spectrum_args(model, data, tmp_path / "run", "--resume"))
    assert r.exit_code == 1 and "meta.json: field 'corpus' is list" in _one_error_line(r.stderr), r.output
    (tmp_path / "run" / "meta.json").write_text(json.dumps(meta))
    assert _run(*_spectrum_args(model, data, tmp_path / "run", "--resume")).exit_code == 0
    whole_meta = json.loads((tmp_path / "whole" / "meta.json").read_text())
    for field, value in (
        ("identity", ["a"]),
        ("figures", "png"),
        ("family", ["x"]),
        ("layers", {"a": 1}),
        ("svd_method_error", [1]),
    ):
        (tmp_path / "whole" / "meta.json").write_text(json.dumps({**whole_meta, field: value}))
        r = _run(*_spectrum_args(model, data, tmp_path / "whole"))  # the "up to date" check
        assert r.exit_code == 1 and "meta.json" in _one_error_line(r.stderr), (field, r.output)
        with pytest.raises(ResultsError, match=f"meta.json: field '{field}' is") as e:
            repr(attnspec.load(tmp_path / "whole"))
        assert "\n" not in str(e.value)
    (tmp_path / "whole" / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ResultsError, match="nested deeper"):
        attnspec.load(tmp_path / "whole")
    t = pd.read_parquet(tmp_path / "run" / "metrics.parquet")
    t.drop(columns=[c for c in t.columns if c.endswith("_of_mean_curve")]).to_parquet(
        tmp_path / "run" / "metrics.parquet"
    )
    with pytest.raises(ResultsError, match="metrics.parquet is not a metrics table: no 'index_at_") as e:
        attnspec.load(tmp_path / "run").per_layer()
    assert "\n" not in str(e.value)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("claims",), ("claims", "--json")])
def test_a_full_stdout_is_one_error_line(tmp_path, args: tuple[str, ...]) -> None:  # noqa: ANN001
    import os
    import subprocess
    import sys

    import attnspec

    env = {**os.environ, "PYTHONPATH": str(Path(attnspec.__file__).resolve().parents[1])}
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-m", "attnspec.cli.main", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert r.returncode == 1
    assert "No space left" in _one_error_line(r.stderr)


# ------------------------------------------------- malformed model and data files: one line naming the file
def _deep_json() -> str:
    return "[" * 100_000 + "]" * 100_000


def _edit_config(folder: Path, **fields: object) -> None:
    import json

    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, **fields}))


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("hidden_size '32'", "field 'hidden_size' is '32' (str), not a positive integer"),
        ("num_hidden_layers [2]", "field 'num_hidden_layers' is [2] (list)"),
        ("config nested too deeply", "config.json is not readable JSON (nested deeper"),
        ("JSONL line nested too deeply", "line 1 is not valid JSON (nested deeper"),
        ("empty .gguf", "is empty (0 bytes)"),
        ("garbage .gguf", "is not a readable GGUF file"),
    ],
)
def test_malformed_model_and_data_files_are_one_line(tmp_path, case: str, words: str) -> None:  # noqa: ANN001
    model, data = _tiny_model_and_data(tmp_path)
    if case.startswith("hidden_size"):
        _edit_config(model, hidden_size="32")
    elif case.startswith("num_hidden_layers"):
        _edit_config(model, num_hidden_layers=[2])
    elif case.startswith("config"):
        (model / "config.json").write_text('{"a": ' + _deep_json() + "}")
    elif case.startswith("JSONL"):
        data.write_text('{"text": ' + _deep_json() + "}\n")
    else:
        model = tmp_path / "model.gguf"
        model.write_bytes(b"" if case.startswith("empty") else b"garbage, not a GGUF header " * 4)
    r = _run(*_spectrum_args(model, data, tmp_path / "out"))
    assert r.exit_code == 1, r.output
    assert words in _one_error_line(r.stderr)


def _wordpiece_tokenizer(with_unk: bool):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["[PAD]", "[CLS]", "[SEP]", "the", "movie", "was", "low", "rank"] + (["[UNK]"] if with_unk else [])
    backend = Tokenizer(models.WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )


def test_a_wordpiece_tokenizer_without_its_unknown_token_is_refused() -> None:
    from models_tiny import tiny_bert

    import attnspec
    from attnspec.errors import ModelLoadError

    texts = ["the movie was low rank and a snowman ☃ watched " * 3] * 2
    model = tiny_bert(vocab=16)
    attnspec.spectrum(model, tokenizer=_wordpiece_tokenizer(True), texts=texts, seq_len=8, progress=False)
    with pytest.raises(ModelLoadError, match="has no '\\[UNK\\]'") as e:
        attnspec.spectrum(model, tokenizer=_wordpiece_tokenizer(False), texts=texts, seq_len=8, progress=False)
    assert "\n" not in str(e.value)


def test_a_rerun_draws_every_figure_a_scaling_study_lacks(tmp_path) -> None:  # noqa: ANN001
    """A study whose figures were never drawn (interrupted after its last length, or run with
    --no-plots) is up to date: a plain rerun computes nothing and draws the per-length figures
    as well as the study's."""
    model, data = _tiny_model_and_data(tmp_path)
    sc = tmp_path / "sc"
    assert _run(*_spectrum_args(model, data, sc, "--seq-len", "12,16")).exit_code == 0
    assert not list(sc.rglob("*.png"))
    args = [a for a in _spectrum_args(model, data, sc, "--seq-len", "12,16") if a != "--no-plots"]
    r = _run(*args)
    assert r.exit_code == 0 and "up to date" in r.output, r.output
    for n in (12, 16):
        assert (sc / f"n{n}" / "figures" / "spectrum_layers.png").is_file()
    assert (sc / "figures" / "scaling_k90.png").is_file()


def test_a_full_disk_while_drawing_a_checking_commands_figures_leaves_no_result(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The tables and meta.json are written, then the disk fills at the second figure: no
    figure is kept, the tables and meta.json go too, and the line says so (every checking
    command writes through the same run_and_write)."""
    import errno

    from matplotlib.figure import Figure

    real, calls = Figure.savefig, []

    def savefig(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    out = tmp_path / "jl"
    r = _run(
        "jl-check",
        "--n",
        "16",
        "--eps",
        "0.5",
        "--trials",
        "20",
        "--trials-other",
        "10",
        "--d",
        "4",
        "--k",
        "4,8",
        "--claims",
        "lemma1",
        "--out",
        str(out),
    )
    assert r.exit_code == 1, r.output
    line = _one_error_line(r.stderr)
    assert "drawing the figures" in line and "tables and meta.json were removed" in line, line
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()], list(out.rglob("*"))


# ------------------------------------------------------------ the process's surroundings: one line, never a traceback
JL_SMALL = (
    "jl-check",
    "--n",
    "16",
    "--eps",
    "0.5",
    "--trials",
    "20",
    "--trials-other",
    "10",
    "--d",
    "4",
    "--k",
    "4,8",
    "--claims",
    "lemma1",
)


def _cli_process(tmp_path: Path, args: tuple[str, ...], env: dict[str, str] | None = None, preexec=None):  # noqa: ANN001, ANN202
    import os
    import subprocess
    import sys

    import attnspec

    full_env = {**os.environ, "PYTHONPATH": str(Path(attnspec.__file__).resolve().parents[1]), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "attnspec.cli.main", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=tmp_path,
        timeout=300,
        preexec_fn=preexec,
    )


def test_an_ascii_terminal_gets_escaped_characters_not_a_traceback(tmp_path) -> None:  # noqa: ANN001
    r = _cli_process(tmp_path, ("claims",), {"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "\\u" in r.stdout or "\\x" in r.stdout  # a character ASCII lacks, escaped


def test_an_unknown_mplbackend_does_not_stop_the_figures(tmp_path) -> None:  # noqa: ANN001
    r = _cli_process(tmp_path, (*JL_SMALL, "--out", str(tmp_path / "jl")), {"MPLBACKEND": "nosuch"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert list((tmp_path / "jl").rglob("*.png"))


def test_a_file_size_limit_is_one_line_and_no_half_result(tmp_path) -> None:  # noqa: ANN001
    import resource

    def limit() -> None:  # 20 KiB: the tables fit, a figure does not
        resource.setrlimit(resource.RLIMIT_FSIZE, (20 * 1024, resource.RLIM_INFINITY))

    r = _cli_process(tmp_path, (*JL_SMALL, "--out", str(tmp_path / "jl")), preexec=limit)
    assert r.returncode == 1, r.stderr[-2000:]
    assert "file-size limit" in _one_error_line(r.stderr)
    out = tmp_path / "jl"
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


def test_a_weights_file_the_user_cannot_read_is_one_line(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """(Simulated: root reads any file, so the denial is raised by open itself.)"""
    import builtins

    import attnspec.spectra.model_files as model_files

    model, data = _tiny_model_and_data(tmp_path)
    real_open = builtins.open

    def denied(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if str(path).endswith("model.safetensors"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(model_files, "open", denied, raising=False)
    r = _run(*_spectrum_args(model, data, tmp_path / "out"))
    assert r.exit_code == 1, r.output
    assert "cannot be read: Permission denied" in _one_error_line(r.stderr)


def test_a_lock_file_deleted_under_a_writer_is_one_line(tmp_path) -> None:  # noqa: ANN001
    """A third party deletes the lock file of a writer; a second writer then gets in and clears
    the first one's temporary files as a killed writer's leftovers. The first writer ends in one
    line saying so, and keeps nothing half-written."""
    import os
    import subprocess
    import sys

    import attnspec
    from attnspec.errors import ResultsError
    from attnspec.storage.writer import LOCK_FILE, OutputLock, atomic_write_bytes, result_files

    out = tmp_path / "r"
    out.mkdir()
    second = f"from pathlib import Path; from attnspec.storage.writer import OutputLock; OutputLock(Path({str(out)!r}), 'b').acquire()"
    env = {**os.environ, "PYTHONPATH": str(Path(attnspec.__file__).resolve().parents[1])}
    with OutputLock(out, "a"):
        with pytest.raises(ResultsError, match="removed by another program") as e, result_files(out):
            atomic_write_bytes(out / "a.bin", b"x")
            (out / LOCK_FILE).unlink()
            subprocess.run([sys.executable, "-c", second], check=True, env=env, timeout=120)
        assert "\n" not in str(e.value) and LOCK_FILE in str(e.value)
    assert not (out / "a.bin").exists()


# ------------------------------------------------------------------ families whose P is not captured: refused by name
def _tiny_family(kind: str, vocab: int):
    import torch
    import transformers as T

    torch.manual_seed(0)
    if kind == "albert":
        return T.AlbertModel(
            T.AlbertConfig(
                vocab_size=vocab,
                embedding_size=16,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=64,
                max_position_embeddings=64,
            )
        )
    return T.ModernBertModel(
        T.ModernBertConfig(
            vocab_size=vocab,
            hidden_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=64,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
            cls_token_id=0,
            sep_token_id=2,
        )
    )


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("albert", "is ALBERT, which shares one attention layer"),
        ("modernbert", "is ModernBERT, whose local layers attend within a bidirectional sliding window"),
    ],
)
def test_families_that_cannot_be_captured_are_refused_by_name(tmp_path, kind: str, words: str) -> None:  # noqa: ANN001
    from helpers import make_roberta_tokenizer

    import attnspec
    from attnspec.errors import ModelLoadError

    tok = make_roberta_tokenizer(tmp_path / "tok")
    model = _tiny_family(kind, len(tok))
    with pytest.raises(ModelLoadError, match=words) as e:
        attnspec.spectrum(model, tokenizer=tok, texts=["attention is low rank " * 8] * 2, seq_len=16, progress=False)
    assert "\n" not in str(e.value)
    folder = tmp_path / kind
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    data = tmp_path / "d.txt"
    data.write_text("attention is low rank and the spectrum decays quickly in every layer\n" * 8)
    r = _run(
        "spectrum",
        "--model",
        str(folder),
        "--data",
        str(data),
        "--num-sentences",
        "2",
        "--seq-len",
        "16",
        "--device",
        "cpu",
        "-q",
        "--no-plots",
        "--out",
        str(tmp_path / "out"),
    )
    assert r.exit_code == 1 and words in _one_error_line(r.stderr), r.output
    if kind == "modernbert":  # a config.json whose window is null fails inside transformers' own config
        _edit_config(folder, sliding_window=None)
        r = _run(
            "spectrum",
            "--model",
            str(folder),
            "--data",
            str(data),
            "--num-sentences",
            "2",
            "--seq-len",
            "16",
            "--device",
            "cpu",
            "-q",
            "--no-plots",
            "--out",
            str(tmp_path / "out2"),
        )
        assert r.exit_code == 1 and "cannot load model" in _one_error_line(r.stderr), r.output


def test_every_shard_placeholder_in_out_is_filled_as_documented(tmp_path) -> None:  # noqa: ANN001
    """Every {shard} becomes 0of2, at any depth; other braces stay. The filled path is what
    --out is checked as (here: under a file, refused before the model is looked up)."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "0of2").write_text("x")
    args = (
        "spectrum",
        "--model",
        str(tmp_path / "no-model"),
        "--data",
        str(tmp_path / "d.jsonl"),
        "-q",
        "--out",
        str(tmp_path / "runs" / "{shard}" / "part{shard}-{rank}"),
    )
    r = _run(*args, "--shard", "0/2")
    assert r.exit_code == 1 and f"--out {tmp_path / 'runs' / '0of2' / 'part0of2-{rank}'} is under" in _one_error_line(
        r.stderr
    ), r.output
    r = _run(*args)
    assert r.exit_code != 0 and "no --shard" in _one_error_line(r.stderr)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "spectrum.md").read_text()
    assert "`runs/{shard}/part{shard}` → `runs/0of2/part0of2`" in doc
