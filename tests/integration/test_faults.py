"""Fault injection on the spectrum job: every outcome is either exactly the
uninterrupted result, or a one-line refusal that leaves the data as it was.

A tiny random RoBERTa (2 layers, 4 heads) runs 12 inputs in batches of 4 (3 batches).
Interruptions are injected before the first checkpoint, between a batch's aggregate
update and its commit, inside an aggregate update, and in the middle of a checkpoint
write; checkpoints are corrupted in every way the verification claims to catch; a second
writer meets the lock; shards are merged with one missing, twice, or unfinished.

Every writer: SIGINT and SIGTERM between two figure files (a deterministic hook
in ``Figure.savefig``), a KeyboardInterrupt raised there, a full disk (ENOSPC simulated at
the n-th table or figure, and a real 2 MB tmpfs when it can be mounted), symbolic and hard
links planted inside ``--out``, readers and a second compare meeting the lock, an
``--out`` of another kind, report's linked results folder, the cache's umask. The table of
these classes is docs/spectrum.md, "What survives what".
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnspec.spectra.job as sr
import attnspec.storage.results as results_mod
from attnspec.errors import ResultsError
from attnspec.spectra.aggregate import SpectrumAccumulator
from attnspec.spectra.checkpoint import DIGEST_KEY, state_digest
from attnspec.spectra.config import SpectrumConfig
from attnspec.spectra.job import run_spectrum
from attnspec.spectra.merge import merge_runs

SEQ = 32
REPO = Path(__file__).resolve().parents[2]


def _cfg(model_dir: Path, text_file: Path, out: Path, **kw) -> SpectrumConfig:
    base = dict(
        model=str(model_dir),
        data=str(text_file),
        seq_len=SEQ,
        num_sentences=12,
        batch_size=4,
        seed=3,
        device="cpu",
        out=out,
    )
    base.update(kw)
    return SpectrumConfig(**base)


def _assert_same_result(a: Path, b: Path) -> None:
    """Bit-identical tables: the run was neither double-counted nor missing a batch."""
    for name in ("spectrum", "metrics"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(a / f"{name}.parquet"), pd.read_parquet(b / f"{name}.parquet"), check_exact=True
        )


def _one_line(e: pytest.ExceptionInfo, *must: str) -> str:
    msg = str(e.value)
    assert "\n" not in msg, msg
    for m in must:
        assert m in msg, msg
    return msg


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def reference(model_dir: Path, text_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "reference"
    assert run_spectrum(_cfg(model_dir, text_file, out), progress=False).status == "complete"
    return out


@pytest.fixture(scope="module")
def interrupted(model_dir: Path, text_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run interrupted after its first batch (4 of 12 inputs), kept as a template."""
    out = tmp_path_factory.mktemp("faults") / "interrupted"

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    outcome = run_spectrum(_cfg(model_dir, text_file, out, checkpoint_every=1), progress=False, on_checkpoint=stop)
    assert outcome.status == "interrupted" and outcome.inputs_done == 4
    return out


def _interrupt_at_commit(monkeypatch: pytest.MonkeyPatch, call: int, how: str = "raise") -> None:
    """Interrupt the run at the ``call``-th point between an aggregate update and its commit."""
    calls = {"n": 0}
    if how == "sigint" and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # pytest started in the background of a non-interactive shell (`cmd &`) inherits SIGINT
        # ignored (POSIX), and Python then installs no KeyboardInterrupt handler: restore the
        # handler of an interactive Python, which is what a real Ctrl-C meets
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def hook() -> None:
        calls["n"] += 1
        if calls["n"] == call:
            if how == "raise":
                raise KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGTERM if how == "sigterm" else signal.SIGINT)
            time.sleep(1)  # the handler raises before this returns

    monkeypatch.setattr(sr, "_before_commit", hook)


# ---------------------------------------------------------------------------------------
# Interruptions at every stage
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "how", "done"),
    [
        (1, "raise", 0),  # before the first checkpoint (and before the first commit)
        (2, "raise", 4),  # between batch 2's update and its commit
        (3, "sigterm", 8),  # the same point, by SIGTERM as timeout/Slurm/docker send it
        (2, "sigint", 4),  # ... and by a real Ctrl-C
    ],
)
def test_interrupt_between_update_and_commit_resumes_to_the_exact_result(
    model_dir: Path,
    text_file: Path,
    tmp_path: Path,
    reference: Path,
    monkeypatch: pytest.MonkeyPatch,
    call: int,
    how: str,
    done: int,
) -> None:
    _interrupt_at_commit(monkeypatch, call, how)
    first = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", checkpoint_every=8), progress=False)
    assert first.status == "interrupted" and first.inputs_done == done
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["inputs_done"] == done
    monkeypatch.setattr(sr, "_before_commit", lambda: None)
    second = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", resume=True), progress=False)
    assert second.status == "complete"
    _assert_same_result(reference, tmp_path / "run")


def test_interrupt_inside_an_aggregate_update_counts_no_batch_twice(
    model_dir: Path, text_file: Path, tmp_path: Path, reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after one layer of batch 2 was added: a checkpoint must not save that layer's
    matrices with an inputs_done that does not include them, or a resume adds them again."""
    original = SpectrumAccumulator.add
    calls = {"n": 0}

    def add_then_interrupt(self: SpectrumAccumulator, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        added = original(self, *args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 3:  # batch 2, layer 0 added; layer 1 not yet
            raise KeyboardInterrupt
        return added

    monkeypatch.setattr(SpectrumAccumulator, "add", add_then_interrupt)
    first = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run"), progress=False)
    assert first.status == "interrupted" and first.inputs_done == 4
    monkeypatch.setattr(SpectrumAccumulator, "add", original)
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", resume=True), progress=False)
    _assert_same_result(reference, tmp_path / "run")


def test_interrupt_in_the_middle_of_a_checkpoint_write(
    model_dir: Path, text_file: Path, tmp_path: Path, reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while state.npz is being replaced: the old state stays whole, no temporary file remains."""
    real_replace = os.replace
    hits = {"n": 0}

    def replace(src, dst):  # noqa: ANN001, ANN202
        if Path(dst).name == sr.STATE_FILE:
            hits["n"] += 1
            if hits["n"] == 2:  # the second checkpoint's state write (after batch 2)
                raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    first = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", checkpoint_every=1), progress=False)
    assert first.status == "interrupted" and first.inputs_done == 8  # the final checkpoint saved batch 2
    assert not list((tmp_path / "run").glob(".attnspec-tmp-*"))
    monkeypatch.setattr(os, "replace", real_replace)
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", resume=True), progress=False)
    _assert_same_result(reference, tmp_path / "run")


def test_a_killed_writer_leaves_nothing_that_blocks_the_resume(
    model_dir: Path, text_file: Path, tmp_path: Path, reference: Path, interrupted: Path
) -> None:
    """SIGKILL mid-write leaves a temporary file and a lock file nobody holds: both are harmless."""
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    (run / ".attnspec-tmp-state.npz.abc.tmp").write_bytes(b"PK\x03\x04 half a zip")
    (run / results_mod.LOCK_FILE).write_text(json.dumps({"pid": 999999, "host": "gone", "command": "x"}))
    run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    _assert_same_result(reference, run)
    assert not list(run.glob(".attnspec-tmp-*"))


def test_meta_json_deleted_but_state_intact(
    model_dir: Path, text_file: Path, tmp_path: Path, reference: Path, interrupted: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    (run / "meta.json").unlink()
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, text_file, run), progress=False)
    _one_line(e, "no meta.json", "--resume", "4 of 12")
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, text_file, run, resume=True, seed=4), progress=False)
    _one_line(e, "different run", "seed")
    run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    _assert_same_result(reference, run)
    assert json.loads((run / "meta.json").read_text())["status"] == "complete"


# ---------------------------------------------------------------------------------------
# Corrupted and foreign checkpoints
# ---------------------------------------------------------------------------------------
def _rewrite_state(path: Path, change, *, keep_digest: bool = False) -> None:  # noqa: ANN001
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    if not keep_digest:  # a forger who also recomputes the digest: the other checks must catch it
        arrays[DIGEST_KEY] = np.asarray(state_digest(arrays))
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _set(key: str, fn):  # noqa: ANN001, ANN202
    def change(a: dict) -> None:
        a[key] = fn(a[key].copy())

    return change


def _nan_mean(m: np.ndarray) -> np.ndarray:
    m[0, 0, 3] = np.nan
    return m


def _above_one(m: np.ndarray) -> np.ndarray:
    m[1, 2, 5] = 1.5
    return m


CORRUPTIONS = {
    "nan_mean": (lambda p: _rewrite_state(p, _set("mean", _nan_mean)), "finite check"),
    "out_of_range": (lambda p: _rewrite_state(p, _set("mean", _above_one)), "range check"),
    "altered_counts": (lambda p: _rewrite_state(p, _set("count", lambda c: c + 1)), "count check"),
    "altered_inputs_done": (lambda p: _rewrite_state(p, _set("inputs_done", lambda v: v + 4)), "count check"),
    "altered_coverage": (lambda p: _rewrite_state(p, _set("covered", lambda c: c + 1)), "coverage check"),
    "wrong_digest": (lambda p: _rewrite_state(p, _set("m2", lambda m: m * 1.0001), keep_digest=True), "digest check"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "unreadable"),
    "garbage": (lambda p: p.write_bytes(os.urandom(2000)), "unreadable"),
    "empty": (lambda p: p.write_bytes(b""), "unreadable"),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupted_checkpoint_is_refused_and_kept(
    model_dir: Path, text_file: Path, tmp_path: Path, interrupted: Path, kind: str
) -> None:
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    corrupt, check = CORRUPTIONS[kind]
    corrupt(run / sr.STATE_FILE)
    before = _snapshot(run)
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    _one_line(e, str(run / sr.STATE_FILE), check)
    assert _snapshot(run) == before  # nothing overwritten
    with pytest.raises(ResultsError) as e:  # and a merge trusts it no more than a resume
        merge_runs([run], tmp_path / "merged", allow_partial=True)
    _one_line(e, str(run / sr.STATE_FILE))


def test_a_foreign_checkpoint_is_refused(model_dir: Path, text_file: Path, tmp_path: Path, interrupted: Path) -> None:
    """state.npz of another seed under this run's meta.json: the identity inside the state decides."""

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    other = tmp_path / "other"
    run_spectrum(_cfg(model_dir, text_file, other, seed=4, checkpoint_every=1), progress=False, on_checkpoint=stop)
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    shutil.copy(other / sr.STATE_FILE, run / sr.STATE_FILE)
    before = _snapshot(run)
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    _one_line(e, "identity check", "seed: 4 there vs 3 now")
    assert _snapshot(run) == before


def test_cli_refusal_is_one_line_exit_1(model_dir: Path, text_file: Path, tmp_path: Path, interrupted: Path) -> None:
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    CORRUPTIONS["truncated"][0](run / sr.STATE_FILE)
    r = CliRunner().invoke(
        app,
        [
            "spectrum",
            "--model",
            str(model_dir),
            "--data",
            str(text_file),
            "--seq-len",
            str(SEQ),
            "--num-sentences",
            "12",
            "--batch-size",
            "4",
            "--seed",
            "3",
            "--device",
            "cpu",
            "--out",
            str(run),
            "--resume",
            "--quiet",
        ],
    )
    assert r.exit_code == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: checkpoint") and "unreadable" in lines[0]


# ---------------------------------------------------------------------------------------
# One writer per output directory
# ---------------------------------------------------------------------------------------
def test_a_second_writer_is_refused_with_the_holder_named(
    model_dir: Path, text_file: Path, tmp_path: Path, reference: Path
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from attnspec.storage.results import OutputLock; "
            "lock = OutputLock(sys.argv[1], 'attnspec spectrum (the first writer)'); lock.acquire(); "
            "print('held', flush=True); time.sleep(60)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        for attempt in (
            lambda: run_spectrum(_cfg(model_dir, text_file, out), progress=False),
            lambda: merge_runs([reference], out),
        ):
            with pytest.raises(ResultsError) as e:
                attempt()
            _one_line(e, f"pid {holder.pid}", "the first writer", "in use")
        from typer.testing import CliRunner

        from attnspec.cli.main import app

        r = CliRunner().invoke(app, ["osa-check", "--no-timing", "--out", str(out)])
        assert r.exit_code == 1 and r.stderr.count("\n") == 1 and f"in use by pid {holder.pid}" in r.stderr
        assert [p.name for p in out.iterdir()] == [results_mod.LOCK_FILE]  # nothing written
    finally:
        holder.kill()  # SIGKILL: the kernel drops the lock, the lock file stays behind
        holder.wait()
    assert (out / results_mod.LOCK_FILE).exists()
    run_spectrum(_cfg(model_dir, text_file, out), progress=False)  # the stale lock does not block
    _assert_same_result(reference, out)
    assert not (out / results_mod.LOCK_FILE).exists()


# ---------------------------------------------------------------------------------------
# Merges know their shards
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shards(model_dir: Path, text_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("shards")
    for i in range(2):
        run_spectrum(_cfg(model_dir, text_file, d / f"s{i}", shard=(i, 2)), progress=False)

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    run_spectrum(
        _cfg(model_dir, text_file, d / "s1-unfinished", shard=(1, 2), checkpoint_every=1),
        progress=False,
        on_checkpoint=stop,
    )
    return d


def test_merge_of_a_missing_shard_is_refused_or_marked_partial(
    model_dir: Path, text_file: Path, tmp_path: Path, shards: Path
) -> None:
    with pytest.raises(ResultsError) as e:
        merge_runs([shards / "s0"], tmp_path / "m")
    _one_line(e, "shard 1/2 missing", "--allow-partial")
    assert not (tmp_path / "m").exists()

    meta = merge_runs([shards / "s0"], tmp_path / "m", allow_partial=True)
    assert meta["status"] == "partial" and meta["missing_shards"] == ["1/2"]
    assert json.loads((tmp_path / "m" / "meta.json").read_text())["status"] == "partial"
    # a later resume with the whole run's parameters never takes the partial merge for complete
    for kw in ({"resume": True}, {}):
        with pytest.raises(ResultsError) as e:
            run_spectrum(_cfg(model_dir, text_file, tmp_path / "m", **kw), progress=False)
        msg = _one_line(e)
        assert "complete" not in msg.replace("incomplete", ""), msg


def test_merge_refuses_duplicated_and_unfinished_shards(tmp_path: Path, shards: Path) -> None:
    with pytest.raises(ResultsError) as e:
        merge_runs([shards / "s0", shards / "s0"], tmp_path / "m")
    _one_line(e, "same shard 0/2")
    with pytest.raises(ResultsError) as e:
        merge_runs([shards / "s1", shards / "s1-unfinished"], tmp_path / "m")
    _one_line(e, "same shard 1/2")
    with pytest.raises(ResultsError) as e:
        merge_runs([shards / "s0", shards / "s1-unfinished"], tmp_path / "m")
    _one_line(e, "unfinished: 1/2 (4 of 6 inputs)")
    meta = merge_runs([shards / "s0", shards / "s1-unfinished"], tmp_path / "m", allow_partial=True)
    assert meta["status"] == "partial" and meta["inputs_done"] == 10 and meta["missing_shards"] == []


def test_complete_merge_is_the_whole_run(
    model_dir: Path, text_file: Path, tmp_path: Path, shards: Path, reference: Path
) -> None:
    meta = merge_runs([shards / "s1", shards / "s0"], tmp_path / "m")
    assert meta["status"] == "complete" and meta["inputs_done"] == 12 and meta["missing_shards"] == []
    a, b = pd.read_parquet(reference / "spectrum.parquet"), pd.read_parquet(tmp_path / "m" / "spectrum.parquet")
    np.testing.assert_array_equal(a["count"], b["count"])
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=0, atol=1e-12)
    with pytest.raises(ResultsError, match="already holds this run, complete"):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "m", resume=True), progress=False)


# ---------------------------------------------------------------------------------------
# Output files
# ---------------------------------------------------------------------------------------
def test_results_are_readable_by_others_and_meta_is_strict_json(tmp_path: Path, reference: Path) -> None:
    old = os.umask(0o022)
    try:
        results_mod.write_meta(
            tmp_path, {"inf": float("inf"), "ninf": -np.inf, "nan": np.float64("nan"), "nested": [1.0, float("nan")]}
        )
        results_mod.write_table(tmp_path, "t", pd.DataFrame({"x": [1.0]}), csv=True)
    finally:
        os.umask(old)
    for name in ("meta.json", "t.parquet", "t.csv"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name

    def refuse(token: str) -> None:
        raise AssertionError(f"meta.json holds {token}, which is not JSON")

    meta = json.loads((tmp_path / "meta.json").read_text(), parse_constant=refuse)
    assert meta == {"inf": "inf", "ninf": "-inf", "nan": None, "nested": [1.0, None]}
    mask = os.umask(0)
    os.umask(mask)
    for p in reference.rglob("*"):  # a real run's files get what the umask gives any file
        if p.is_file():
            assert p.stat().st_mode & 0o777 == 0o666 & ~mask, p


# ---------------------------------------------------------------------------------------
# The inputs a checkpoint was made on
# ---------------------------------------------------------------------------------------
def _mixed_corpus(path: Path) -> Path:
    """Documents of 5 to 60 words: some are too short for a window, so the two selection
    rules draw different inputs."""
    rng = np.random.default_rng(1)
    words = "attention matrix rank lobster movie actors story music numbers singular value curve".split()
    path.write_text("\n".join(" ".join(rng.choice(words, size=int(k))) for k in rng.integers(5, 60, size=60)) + "\n")
    return path


def _stop(done: int) -> None:
    raise KeyboardInterrupt


def test_resume_with_another_selection_is_refused(model_dir: Path, tmp_path: Path) -> None:
    corpus = _mixed_corpus(tmp_path / "mixed.txt")
    run = tmp_path / "run"
    run_spectrum(
        _cfg(model_dir, corpus, run, selection="documents", checkpoint_every=1), progress=False, on_checkpoint=_stop
    )
    before = _snapshot(run)
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, corpus, run, resume=True), progress=False)
    _one_line(e, "selection: 'documents' there vs None now")
    assert _snapshot(run) == before
    done = run_spectrum(_cfg(model_dir, corpus, run, selection="documents", resume=True), progress=False)
    assert done.status == "complete"
    ref = tmp_path / "ref"
    run_spectrum(_cfg(model_dir, corpus, ref, selection="documents"), progress=False)
    _assert_same_result(run, ref)


def test_a_checkpoint_made_on_other_inputs_is_refused(model_dir: Path, tmp_path: Path) -> None:
    """A checkpoint written before the state kept the inputs' digest is checked against
    meta.json's record; one whose inputs differ (here: drawn by the other rule, as a
    release that defaulted to it would have) is refused, with the way out named."""
    corpus = _mixed_corpus(tmp_path / "mixed.txt")
    other = tmp_path / "documents-rule"
    run_spectrum(_cfg(model_dir, corpus, other, selection="documents"), progress=False)
    run = tmp_path / "run"
    run_spectrum(_cfg(model_dir, corpus, run, checkpoint_every=1), progress=False, on_checkpoint=_stop)
    _rewrite_state(run / sr.STATE_FILE, lambda a: a.pop("inputs_sha256"))  # as an older attnspec wrote it
    meta = json.loads((run / "meta.json").read_text())
    meta["corpus"] = json.loads((other / "meta.json").read_text())["corpus"]
    (run / "meta.json").write_text(json.dumps(meta))
    before = _snapshot(run)
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, corpus, run, resume=True), progress=False)
    _one_line(e, "computed on other inputs than this run draws", "resume with that option", "nothing was changed")
    assert _snapshot(run) == before
    # With the true record back, the old-style checkpoint resumes to the uninterrupted result.
    ref = tmp_path / "ref"
    run_spectrum(_cfg(model_dir, corpus, ref), progress=False)
    meta["corpus"] = json.loads((ref / "meta.json").read_text())["corpus"]
    (run / "meta.json").write_text(json.dumps(meta))
    assert run_spectrum(_cfg(model_dir, corpus, run, resume=True), progress=False).status == "complete"
    _assert_same_result(run, ref)


def test_shards_of_a_changed_corpus_are_not_merged(model_dir: Path, tmp_path: Path) -> None:
    corpus = _mixed_corpus(tmp_path / "mixed.txt")
    run_spectrum(_cfg(model_dir, corpus, tmp_path / "s0", shard=(0, 2)), progress=False)
    lines = corpus.read_text().splitlines()
    corpus.write_text("\n".join(lines[::-1]) + "\n")  # same documents, another order: other inputs
    run_spectrum(_cfg(model_dir, corpus, tmp_path / "s1", shard=(1, 2)), progress=False)
    with pytest.raises(ResultsError) as e:
        merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "m")
    _one_line(e, "the shards were drawn from different inputs")
    assert not (tmp_path / "m").exists() or not any(p.name != ".attnspec.lock" for p in (tmp_path / "m").iterdir())


# ---------------------------------------------------------------------------------------
# Writers: whole files only, under interrupts, full disks and planted links
# ---------------------------------------------------------------------------------------
FIGURES = ("spectrum_layers.png", "spectrum_layers.svg", "spectrum_heatmap.png", "spectrum_heatmap.svg")
COMPARE_FILES = (
    "compare.parquet",
    "trends.parquet",
    "meta.json",
    "figures/compare_runs.png",
    "figures/compare_runs.svg",
    "figures/compare_diff.png",
    "figures/compare_diff.svg",
)


def _cli(*args: str):
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    return CliRunner().invoke(app, [str(a) for a in args])


def _cli_one_line(r, *must: str) -> str:
    assert r.exit_code == 1, (r.exit_code, r.output)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for m in must:
        assert m in lines[0], lines[0]
    return lines[0]


def _spectrum_args(model_dir: Path, text_file: Path, out: Path) -> list[str]:
    return [
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        str(text_file),
        "--seq-len",
        str(SEQ),
        "--num-sentences",
        "12",
        "--batch-size",
        "4",
        "--seed",
        "3",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--quiet",
    ]


def _assert_whole_file(p: Path) -> None:
    """A figure or table that is complete: PNGs decode, SVGs parse, parquet tables read, JSON loads."""
    import xml.etree.ElementTree as ET

    from PIL import Image

    if p.suffix == ".png":
        with Image.open(p) as im:
            im.load()
    elif p.suffix == ".svg":
        ET.parse(p)
    elif p.suffix == ".parquet":
        pd.read_parquet(p)
    elif p.suffix == ".json":
        json.loads(p.read_text())


def _no_temporary_files(d: Path) -> None:
    assert not [p for p in d.rglob(f"{results_mod.TMP_PREFIX}*")], list(d.rglob(f"{results_mod.TMP_PREFIX}*"))


def _all_whole(d: Path) -> None:
    _no_temporary_files(d)
    for p in d.rglob("*"):
        if p.is_file():
            _assert_whole_file(p)


def _interrupt_in_savefig(monkeypatch: pytest.MonkeyPatch, how: str, at_call: int = 1) -> dict[str, int]:
    """Interrupt right after the ``at_call``-th figure file was drawn (deterministic, not timing luck):
    a real SIGINT or SIGTERM to this process, or a KeyboardInterrupt raised on the spot."""
    from matplotlib.figure import Figure

    real = Figure.savefig
    calls = {"n": 0}

    def savefig(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        real(self, *args, **kwargs)
        calls["n"] += 1
        if calls["n"] == at_call:
            if how == "raise":
                raise KeyboardInterrupt
            os.kill(os.getpid(), signal.SIGINT if how == "sigint" else signal.SIGTERM)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return calls


def _writer_case(
    name: str, model_dir: Path, text_file: Path, tmp_path: Path, reference: Path, shards: Path
) -> tuple[list[str], Path, tuple[str, ...]]:
    """(CLI arguments, the folder it writes, the files a whole result has there) for each figure writer."""
    out = tmp_path / "out"
    if name == "spectrum":
        return (
            _spectrum_args(model_dir, text_file, out),
            out,
            ("meta.json", "spectrum.parquet", *(f"figures/{f}" for f in FIGURES)),
        )
    if name == "merge":
        return (
            ["merge", str(shards / "s0"), str(shards / "s1"), "--out", str(out)],
            out,
            ("meta.json", "state.npz", *(f"figures/{f}" for f in FIGURES)),
        )
    if name == "plot-spectrum":
        shutil.copytree(reference, out)
        return ["plot", "spectrum", str(out)], out, tuple(f"figures/{f}" for f in FIGURES)
    return ["compare", str(reference), str(shards / "s0"), "--out", str(out)], out, COMPARE_FILES


@pytest.mark.parametrize("how", ["sigint", "sigterm"])
@pytest.mark.parametrize("name", ["spectrum", "merge", "plot-spectrum", "compare"])
def test_a_signal_while_figures_are_written_leaves_the_whole_result(
    model_dir: Path,
    text_file: Path,
    tmp_path: Path,
    reference: Path,
    shards: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    how: str,
) -> None:
    """SIGINT/SIGTERM after the first figure file: the signal is held until every figure and
    meta.json are in place, then the command stops (exit 130); nothing truncated, nothing missing."""
    args, out, whole = _writer_case(name, model_dir, text_file, tmp_path, reference, shards)
    calls = _interrupt_in_savefig(monkeypatch, how)
    r = _cli(*args)
    assert calls["n"] >= 2, "the interrupt must fall between two figure files"
    assert r.exit_code == 130, (r.exit_code, r.output)
    for f in whole:
        assert (out / f).is_file(), f
    _all_whole(out)


@pytest.mark.parametrize("name", ["spectrum", "merge", "plot-spectrum", "compare"])
def test_an_interrupt_raised_between_figure_files_keeps_old_files_and_no_half_result(
    model_dir: Path,
    text_file: Path,
    tmp_path: Path,
    reference: Path,
    shards: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    """KeyboardInterrupt raised inside the figure writing (no signal to hold): the figures of
    this invocation are dropped together, the files already there stay byte for byte, and no
    temporary or truncated file remains; a new comparison is absent, not half there."""
    args, out, _ = _writer_case(name, model_dir, text_file, tmp_path, reference, shards)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} if out.exists() else {}
    _interrupt_in_savefig(monkeypatch, "raise")
    r = _cli(*args)
    assert r.exit_code != 0
    if out.exists():
        _all_whole(out)
        for rel, data in before.items():
            assert (out / rel).read_bytes() == data, rel
        assert not (out / "figures").exists() or not any((out / "figures").iterdir())  # no figure of a half set
    if name == "compare":
        assert not (out / "compare.parquet").exists() and not (out / "meta.json").exists()


# ---- a full disk ------------------------------------------------------------------------
def _enospc(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
    raise OSError(errno.ENOSPC, "No space left on device")


def _fail_nth(monkeypatch: pytest.MonkeyPatch, owner: object, attr: str, n: int) -> None:
    """``owner.attr`` raises ENOSPC on its ``n``-th call (earlier calls succeed)."""
    real = getattr(owner, attr)
    calls = {"n": 0}

    def wrapped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls["n"] += 1
        if calls["n"] == n:
            _enospc()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, attr, wrapped)


def test_a_full_disk_during_a_merge_leaves_no_lone_state(
    tmp_path: Path, shards: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_nth(monkeypatch, pd.DataFrame, "to_parquet", 2)  # state.npz and spectrum.parquet written, then full
    with pytest.raises(ResultsError) as e:
        merge_runs([shards / "s0", shards / "s1"], tmp_path / "m")
    _one_line(e, f"no space left on device writing {tmp_path / 'm'}")
    assert not (tmp_path / "m").exists()  # made for the merge, left empty: removed


def test_a_full_disk_at_a_checkpoint_keeps_the_previous_one(
    model_dir: Path,
    text_file: Path,
    tmp_path: Path,
    reference: Path,
    interrupted: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    before = _snapshot(run)
    _fail_nth(monkeypatch, pd.DataFrame, "to_parquet", 2)  # the new state.npz is staged, the tables fail
    with pytest.raises(ResultsError) as e:
        run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    _one_line(e, f"no space left on device writing {run}")
    assert _snapshot(run) == before  # the previous checkpoint, byte for byte; nothing new half-renamed
    monkeypatch.undo()
    run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    _assert_same_result(reference, run)


def test_a_full_disk_while_drawing_is_one_line_and_no_half_comparison(
    tmp_path: Path, reference: Path, shards: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    _fail_nth(monkeypatch, Figure, "savefig", 3)
    r = _cli("compare", reference, shards / "s0", "--out", tmp_path / "cmp")
    _cli_one_line(r, f"error: no space left on device writing {tmp_path / 'cmp'}")
    assert not (tmp_path / "cmp").exists()


def test_a_full_disk_in_a_checking_command_leaves_no_tables_without_meta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_nth(monkeypatch, pd.DataFrame, "to_parquet", 2)
    r = _cli(
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
        tmp_path / "jl",
    )
    _cli_one_line(r, "no space left on device writing")
    assert not (tmp_path / "jl").exists() or not any((tmp_path / "jl").iterdir())


@pytest.fixture
def small_disk(tmp_path: Path):  # noqa: ANN201
    """A 2 MB tmpfs, filled but for 8 KB (needs root and mount; skipped otherwise)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if (
        shutil.which("mount") is None
        or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        ballast = mnt / "ballast"
        with open(ballast, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        os.truncate(ballast, ballast.stat().st_size - 8192)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.parametrize("name", ["spectrum", "merge", "compare"])
def test_a_real_full_disk_is_one_line_and_no_half_result(
    model_dir: Path, text_file: Path, reference: Path, shards: Path, small_disk: Path, name: str
) -> None:
    out = small_disk / "out"
    args = {
        "spectrum": _spectrum_args(model_dir, text_file, out),
        "merge": ["merge", str(shards / "s0"), str(shards / "s1"), "--out", str(out)],
        "compare": ["compare", str(reference), str(shards / "s0"), "--out", str(out)],
    }[name]
    r = _cli(*args)
    _cli_one_line(r, "error: no space left on device writing")
    assert "Traceback" not in r.output
    assert not out.exists() or not (out / "meta.json").exists()
    assert [p.name for p in small_disk.iterdir()] == ["ballast"] or not any(
        p.is_file() and p.name != "ballast" for p in small_disk.rglob("*")
    )


# ---- planted links ------------------------------------------------------------------------
@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside every --out that a planted link points at; it must never change."""
    v = tmp_path / "victim.txt"
    v.write_text("precious\n")
    return v


def _planted(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_a_planted_lock_link_is_replaced_never_written_through(tmp_path: Path, victim: Path, how: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    if how == "symlink":
        _planted(out / results_mod.LOCK_FILE, victim)
    else:
        os.link(victim, out / results_mod.LOCK_FILE)
    with results_mod.OutputLock(out, "attnspec test"):
        assert not (out / results_mod.LOCK_FILE).is_symlink()
        assert (out / results_mod.LOCK_FILE).stat().st_ino != victim.stat().st_ino
    assert victim.read_text() == "precious\n"


def test_spectrum_and_merge_replace_a_planted_lock_link(
    model_dir: Path, text_file: Path, tmp_path: Path, shards: Path, victim: Path
) -> None:
    _planted(tmp_path / "run" / results_mod.LOCK_FILE, victim)
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "run"), progress=False)
    _planted(tmp_path / "m" / results_mod.LOCK_FILE, victim)
    merge_runs([shards / "s0", shards / "s1"], tmp_path / "m")
    _planted(tmp_path / "jl" / results_mod.LOCK_FILE, victim)  # a checking command too
    r = _cli(
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
        tmp_path / "jl",
    )
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "precious\n"
    for d in ("run", "m", "jl"):
        assert (tmp_path / d / "meta.json").is_file() and not (tmp_path / d / results_mod.LOCK_FILE).exists()


@pytest.mark.parametrize("where", ["figure", "folder"])
def test_plot_spectrum_never_writes_through_a_planted_link(
    tmp_path: Path, reference: Path, victim: Path, where: str
) -> None:
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    victim_dir = tmp_path / "victim-dir"
    victim_dir.mkdir()
    if where == "figure":
        _planted(run / "figures" / "spectrum_layers.png", victim)
    else:
        _planted(run / "figures", victim_dir)
    r = _cli("plot", "spectrum", run)
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "precious\n" and not any(victim_dir.iterdir())
    assert not (run / "figures").is_symlink() and not (run / "figures" / "spectrum_layers.png").is_symlink()
    _all_whole(run)


def test_spectrum_cli_replaces_a_planted_figures_link(
    model_dir: Path, text_file: Path, tmp_path: Path, interrupted: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    victim_dir = tmp_path / "victim-dir"
    victim_dir.mkdir()
    _planted(run / "figures", victim_dir)
    r = _cli(*_spectrum_args(model_dir, text_file, run), "--resume")
    assert r.exit_code == 0, r.output
    assert not any(victim_dir.iterdir()) and (run / "figures" / "spectrum_layers.png").is_file()


def test_compare_never_writes_through_a_planted_figure_or_table_link(
    tmp_path: Path, reference: Path, shards: Path, victim: Path
) -> None:
    out = tmp_path / "cmp"
    _planted(out / "figures" / "compare_runs.png", victim)
    _planted(out / "compare.parquet", victim)
    _planted(out / results_mod.LOCK_FILE, victim)
    r = _cli("compare", reference, shards / "s0", "--out", out)
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "precious\n"
    for f in COMPARE_FILES:
        assert (out / f).is_file() and not (out / f).is_symlink(), f
    assert json.loads((out / "meta.json").read_text())["kind"] == "compare"


def test_save_replaces_a_planted_lock_link(tmp_path: Path, reference: Path, victim: Path) -> None:
    import attnspec

    _planted(tmp_path / "saved" / results_mod.LOCK_FILE, victim)
    attnspec.load(reference).save(tmp_path / "saved")
    assert victim.read_text() == "precious\n" and (tmp_path / "saved" / "meta.json").is_file()


# ---- a scaling study: plot scaling's links and locks ---------------------------------------------
@pytest.fixture(scope="module")
def study(model_dir: Path, text_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from attnspec.spectra.scaling import run_scaling

    out = tmp_path_factory.mktemp("study") / "sc"
    outcomes = run_scaling(_cfg(model_dir, text_file, out, num_sentences=6), [16, 32], progress=False)
    assert all(o.status == "complete" for o in outcomes)
    return out


def test_plot_scaling_never_writes_through_a_planted_link(tmp_path: Path, study: Path, victim: Path) -> None:
    sc = tmp_path / "sc"
    shutil.copytree(study, sc)
    _planted(sc / "figures" / "scaling_k90.png", victim)
    _planted(sc / "scaling.parquet", victim)
    r = _cli("plot", "scaling", sc, "--resamples", "100")
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "precious\n"
    assert not (sc / "figures" / "scaling_k90.png").is_symlink() and not (sc / "scaling.parquet").is_symlink()
    _all_whole(sc)


# ---- readers and a second writer meet the lock ---------------------------------------------------
@pytest.fixture
def holder():  # noqa: ANN201
    """Hold the OutputLock of a folder from another process, as a running writer does."""
    procs = []

    def hold(folder: Path, command: str = "attnspec spectrum (the writer)") -> subprocess.Popen:
        p = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, time; from attnspec.storage.results import OutputLock; "
                "lock = OutputLock(sys.argv[1], sys.argv[2]); lock.acquire(); print('held', flush=True); time.sleep(60)",
                str(folder),
                command,
            ],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        procs.append(p)
        assert p.stdout.readline().strip() == "held"
        return p

    yield hold
    for p in procs:
        p.kill()
        p.wait()


def test_readers_refuse_a_run_whose_writer_holds_the_lock(
    tmp_path: Path, reference: Path, shards: Path, study: Path, holder
) -> None:  # noqa: ANN001
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    sc = tmp_path / "sc"
    shutil.copytree(study, sc)
    p = holder(run)
    q = holder(sc, "attnspec spectrum --seq-len 16,32")
    before = _snapshot(run)
    for args, pid in (
        (("compare", run, shards / "s0", "--out", tmp_path / "cmp"), p.pid),
        (("plot", "spectrum", run, "--out", tmp_path / "figs"), p.pid),
        (("merge", run, "--out", tmp_path / "m"), p.pid),
        (("plot", "scaling", sc, "--out", tmp_path / "figs2", "--resamples", "100"), q.pid),
    ):
        line = _cli_one_line(_cli(*args), f"pid {pid}")
        assert "being written" in line or "in use" in line, line
    assert _snapshot(run) == before
    for d in ("cmp", "figs", "m", "figs2"):
        assert not (tmp_path / d).exists()


def test_a_second_compare_writer_is_refused(tmp_path: Path, reference: Path, shards: Path, holder) -> None:  # noqa: ANN001
    out = tmp_path / "cmp"
    out.mkdir()
    p = holder(out, "attnspec compare (the first writer)")
    _cli_one_line(_cli("compare", reference, shards / "s0", "--out", out), f"in use by pid {p.pid}", "first writer")
    assert [x.name for x in out.iterdir()] == [results_mod.LOCK_FILE]


# ---- --out holding or inside another kind of result -----------------------------------------------
def test_an_out_holding_or_inside_another_kind_of_result_is_refused(
    tmp_path: Path, reference: Path, shards: Path
) -> None:
    jl = tmp_path / "jl"
    jl.mkdir()
    (jl / "meta.json").write_text(
        json.dumps({"kind": "jl-check", "command": "attnspec jl-check", "attnspec_version": "0"})
    )
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    before = _snapshot(run)
    for out, what in (
        (run, "holds a 'spectrum' result"),
        (run / "cmp", "inside"),
        (jl, "holds a 'jl-check' result"),
        (jl / "sub", "inside"),
    ):
        _cli_one_line(_cli("compare", reference, shards / "s0", "--out", out), what)
    _cli_one_line(_cli("merge", shards / "s0", shards / "s1", "--out", jl / "m"), "inside")
    _cli_one_line(_cli("plot", "spectrum", reference, "--out", jl), "holds a 'jl-check' result")
    assert _snapshot(run) == before and not (run / "cmp").exists() and not (jl / "sub").exists()


# ---- report: a results folder that is a link ------------------------------------------------------------
@pytest.mark.parametrize("which", ["results", "results/osa"])
def test_report_refuses_a_results_folder_that_is_a_link(tmp_path: Path, which: str) -> None:
    exps = tmp_path / "experiments"
    exps.mkdir()
    (exps / "osa.toml").write_text('command = "osa-check"\n[args]\ntrials = 1\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep\n")
    rep = tmp_path / "rep"
    _planted(rep / which, elsewhere)
    r = _cli("report", "--out", rep, "--experiments", exps, "--quick")
    _cli_one_line(r, "is a symbolic link")
    assert (elsewhere / "keep.txt").read_text() == "keep\n" and [p.name for p in elsewhere.iterdir()] == ["keep.txt"]


def test_report_figures_link_is_replaced_not_emptied(tmp_path: Path) -> None:
    from attnspec.report import build_report
    from attnspec.report.experiments import load_experiments

    exps = tmp_path / "experiments"
    exps.mkdir()
    (exps / "osa.toml").write_text('command = "osa-check"\n[args]\ntrials = 1\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep\n")
    rep = tmp_path / "rep"
    (rep / "results").mkdir(parents=True)
    _planted(rep / "figures", elsewhere)
    build_report(load_experiments(exps), rep, {}, quick=True, data_dir=None)
    assert (elsewhere / "keep.txt").is_file() and not (rep / "figures").is_symlink()
    assert (rep / "REPORT.md").is_file()


# ---- the token-count cache follows the umask ----------------------------------------------------------
@pytest.mark.parametrize(("umask", "mode"), [(0o077, 0o600), (0o002, 0o664), (0o022, 0o644)])
def test_token_count_cache_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    from attnspec.spectra.data import token_counts as token_lengths

    old = os.umask(umask)
    try:
        assert token_lengths._write(tmp_path / "c" / "x.npz", "k", np.arange(3, dtype=np.int64)) is None
    finally:
        os.umask(old)
    assert (tmp_path / "c" / "x.npz").stat().st_mode & 0o777 == mode


# ---- the unit of one result ------------------------------------------------------------------------------
def test_a_result_is_renamed_with_every_meta_json_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of one result become visible together, meta.json files last and the study's own after its lengths'."""
    real = os.replace
    order: list[str] = []

    def replace(src, dst):  # noqa: ANN001, ANN202
        order.append(Path(dst).relative_to(tmp_path).as_posix())
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with results_mod.result_files(tmp_path):
        results_mod.atomic_write_bytes(tmp_path / "n16" / "state.npz", b"s")
        results_mod.atomic_write_bytes(tmp_path / "n16" / "meta.json", b"{}")
        results_mod.atomic_write_bytes(tmp_path / "meta.json", b"{}")
        results_mod.atomic_write_bytes(tmp_path / "figures" / "a.png", b"p")
        assert not (tmp_path / "n16" / "state.npz").exists()  # nothing visible before the end of the result
    assert order == ["n16/state.npz", "figures/a.png", "n16/meta.json", "meta.json"]


def test_an_unrelated_meta_json_above_out_is_not_taken_for_a_result(tmp_path: Path) -> None:
    (tmp_path / "meta.json").write_text(json.dumps({"kind": "photo-album"}))  # some other tool's file
    results_mod.check_out_kind(tmp_path / "cmp", "compare")  # no refusal
    (tmp_path / "meta.json").write_text(json.dumps({"kind": "jl-check", "attnspec_version": "0"}))
    with pytest.raises(ResultsError) as e:
        results_mod.check_out_kind(tmp_path / "cmp", "compare")
    _one_line(e, "inside", "'jl-check'")
