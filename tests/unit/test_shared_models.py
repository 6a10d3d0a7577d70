"""Models shared inside one report: loaded once per request and content, never changed by a user,
dropped when the scope ends, and never shared outside one."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from models_tiny import tiny_bert

from attnspec.spectra import models
from attnspec.spectra.shared_models import shared_model, sharing_models


@pytest.fixture
def loader(monkeypatch: pytest.MonkeyPatch) -> dict:
    """``load_model`` replaced by a tiny BERT per call, counted; ``named_content`` by a digest the test sets."""
    state = {"loads": [], "digest": "a" * 64}

    def fake_load(name: str, *, device: str = "auto", dtype: str = "float32", revision: str | None = None):
        state["loads"].append((name, dtype))
        model = tiny_bert(positions=128).to(models.resolve_dtype(dtype))
        return models.wrap_model(model, tokenizer=None, name=name)

    def fake_content(name: str) -> dict:
        return {} if state["digest"] is None else {"weights_sha256": state["digest"], "weights_from": "files"}

    monkeypatch.setattr(models, "load_model", fake_load)
    monkeypatch.setattr("attnspec.spectra.content.named_content", fake_content)
    return state


def test_two_jobs_on_one_model_load_it_once(loader: dict, tmp_path: Path) -> None:
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import _prepare_model

    cfg = SpectrumConfig(model="tiny", data="wiki103", seq_len=32, out=tmp_path, device="cpu")
    with sharing_models() as share:
        first, _, _ = _prepare_model(cfg, None)
        second, _, _ = _prepare_model(cfg, None)
        assert first.model is second.model and first is not second  # one model, a record each
        assert (share.loads, share.reuses) == (1, 1)
    assert len(loader["loads"]) == 1


def test_changed_content_dtype_or_scope_loads_again(loader: dict) -> None:
    with sharing_models():
        a = shared_model("tiny", device="cpu")
        loader["digest"] = "b" * 64  # other weights under the same name
        b = shared_model("tiny", device="cpu")
        assert b.model is not a.model
        assert shared_model("tiny", device="cpu").model is b.model
        assert shared_model("tiny", device="cpu", dtype="float64").model is not b.model
    assert len(loader["loads"]) == 3
    with sharing_models():  # a new scope holds nothing of the last one
        assert shared_model("tiny", device="cpu").model is not b.model
    assert len(loader["loads"]) == 4


def test_no_sharing_outside_a_scope_or_without_local_files(loader: dict) -> None:
    assert shared_model("tiny").model is not shared_model("tiny").model
    loader["digest"] = None  # files not found before loading: nothing tells a swapped model apart
    with sharing_models() as share:
        assert shared_model("tiny").model is not shared_model("tiny").model
        assert share.loads == 2
    assert len(loader["loads"]) == 4


def test_a_changed_model_is_loaded_again(loader: dict) -> None:
    with sharing_models() as share:
        first = shared_model("tiny", device="cpu")
        with torch.no_grad():
            next(first.model.parameters()).mul_(2.0)
        second = shared_model("tiny", device="cpu")
        assert second.model is not first.model
        second.model.train()
        assert shared_model("tiny", device="cpu").model is not second.model
        assert share.loads == 3


def test_a_forward_pass_under_capture_keeps_the_model_shared(loader: dict) -> None:
    from attnspec.spectra.capture import capture_attention

    with sharing_models() as share:
        first = shared_model("tiny", device="cpu")
        probs = []
        with capture_attention(first.model, lambda la: probs.append(la.probs)) as cap:
            cap.forward(torch.arange(1, 17).reshape(1, 16))
        assert len(probs) == first.num_layers
        assert shared_model("tiny", device="cpu").model is first.model
        assert (share.loads, share.reuses) == (1, 1)


def test_random_init_null_leaves_the_shared_model_alone(loader: dict) -> None:
    from attnspec.spectra.content import parameters_digest
    from attnspec.spectra.random_init import reinitialised

    with sharing_models() as share:
        real = shared_model("tiny", device="cpu")
        before = parameters_digest(real.model)
        null = reinitialised(real, seed=0)
        assert null.model is not real.model and parameters_digest(null.model) != before
        again = shared_model("tiny", device="cpu")
        assert again.model is real.model and parameters_digest(again.model) == before
        assert (share.loads, share.reuses) == (1, 1)


def test_a_report_shares_models_across_experiments(
    loader: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import attnspec.report as report
    from attnspec.report.runner import RunRecord

    def fake_run(exp, results, **kw):
        shared_model("tiny", device="cpu")
        return RunRecord(exp.name, "ran", 0.0)

    monkeypatch.setattr(report, "run_experiment", fake_run)
    monkeypatch.setattr(report, "build_report", lambda *a, **k: tmp_path / "REPORT.md")
    monkeypatch.setattr(report, "check_options", lambda *a, **k: None)
    for name in ("one", "two"):
        (tmp_path / f"{name}.toml").write_text(
            f'title = "{name}"\npaper = "osa"\ncommand = "osa-check"\nverdicts = true\n\n[args]\nseed = 0\n'
        )
    lines: list[str] = []
    for _ in range(2):  # two separate reports: each loads once
        report.run_report(experiments_dir=tmp_path, out=tmp_path / "out", log=lines.append)
    assert len(loader["loads"]) == 2
    assert lines.count("models: 1 loaded, 1 reused") == 2


def test_a_study_and_its_random_init_null_load_the_model_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import save_tiny_roberta

    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.study import run_study

    folder = save_tiny_roberta(tmp_path / "m")
    real_load, loads = models.load_model, []
    monkeypatch.setattr(models, "load_model", lambda name, **kw: loads.append(name) or real_load(name, **kw))
    texts = [" ".join(["the attention of a movie was low rank"] * 6)] * 2
    cfg = SpectrumConfig(
        model=str(folder), data="texts", seq_len=24, num_sentences=2, out=tmp_path / "run", device="cpu"
    )
    outcome = run_study(cfg, 24, progress=False, baselines=["random-init"], texts=texts)
    assert outcome.status == "complete" and outcome.added == ["random-init"]
    assert loads == [str(folder)]  # the job's load, reused by the null
    run_study(cfg, 24, progress=False, texts=texts)  # up to date: nothing loads, nothing held from the last call
    assert loads == [str(folder)]
