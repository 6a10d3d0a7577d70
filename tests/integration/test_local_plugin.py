"""The spectrum wing's doors tried from outside: examples/attnspec-local adds an approximation,
a metric and a null baseline with the documented API only, and attnspec finds all three through
the plug-in's entry points, as a user's installed package would be found.

The package and a ``.dist-info`` holding its entry points (what pip writes) are put on
``sys.path``; the registries are read afresh and restored after each test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "attnspec-local"
ENTRY_POINTS = """[attnspec.approximations]
sliding-window = attnspec_local

[attnspec.nulls]
banded = attnspec_local

[attnspec.metrics]
participation_ratio = attnspec_local
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The plug-in on sys.path with its entry points, no plug-in loaded yet; every registry as before, after."""
    from attnspec.runtime import plugins
    from attnspec.spectra import metric_table, nulls
    from attnspec.spectra.approx import protocol, registry

    registry.registered()  # the shipped methods and any installed plug-in's, before this one is visible
    saved = (dict(protocol._REGISTRY), dict(nulls.NULLS), list(metric_table.METRIC_TABLE))
    info = tmp_path / "attnspec_local-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: attnspec-local\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.setattr(plugins, "_LOADED", set())  # no entry-point group read yet
    monkeypatch.delitem(sys.modules, "attnspec_local", raising=False)
    try:
        yield
    finally:
        # in place: other modules hold these objects by name
        protocol._REGISTRY.clear()
        protocol._REGISTRY.update(saved[0])
        nulls.NULLS.clear()
        nulls.NULLS.update(saved[1])
        metric_table.METRIC_TABLE[:] = saved[2]
        sys.modules.pop("attnspec_local", None)


def _heads(n: int, causal: bool, bias: bool = True):
    from attnspec.spectra.approx.protocol import Heads

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, n, 4, generator=g, dtype=torch.float64) for _ in range(3))  # (H, n, d)
    b = torch.randn(2, n, n, generator=g, dtype=torch.float64) if bias else None
    return Heads(q, k, v, 0.5, b, causal)


def _gap(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def test_each_door_finds_the_plugin_through_its_entry_point(installed) -> None:  # noqa: ANN001
    from attnspec.spectra.aggregate import SpectrumAccumulator
    from attnspec.spectra.approx.registry import get, parse_approx
    from attnspec.spectra.metric_table import metric_frame, metric_names
    from attnspec.spectra.nulls import LABELS, parse_baselines

    assert "attnspec_local" not in sys.modules
    assert parse_approx("performer,sliding-window") == ["performer", "sliding-window"]
    assert parse_baselines("uniform,banded") == ["uniform", "banded"] and LABELS["banded"] == "banded null"
    assert metric_names()[-1] == "participation_ratio" and "participation_ratio" in SpectrumAccumulator.METRICS
    assert metric_frame().iloc[-1]["range"] == "[1, n]"
    method = get("sliding-window")
    assert method.causal and method.bias and not method.reference and method.fit is None


@pytest.mark.parametrize("causal", [False, True])
def test_the_plugins_approximation_against_a_direct_computation(installed, causal: bool) -> None:  # noqa: ANN001
    import attnspec_local

    from attnspec.spectra.approx.dense import exact_output, probabilities
    from attnspec.spectra.approx.registry import get

    apply = get("sliding-window").apply
    h = _heads(10, causal)
    # a window of every key is attention itself; a window of one key is V
    assert _gap(apply(h, k=20, state=None, seed=0), exact_output(h)) < 1e-12
    assert _gap(apply(h, k=1, state=None, seed=0), h.v) < 1e-12
    # k = 3: P restricted to the band and renormalised, computed from the exact P
    band = attnspec_local.window_mask(10, 3, causal)
    p = probabilities(h) * band
    assert _gap(apply(h, k=3, state=None, seed=0), (p / p.sum(-1, keepdim=True)) @ h.v) < 1e-12
    assert band.sum(-1).tolist() == ([1, 2] + [3] * 8 if causal else [2] + [3] * 8 + [2])


def test_the_plugins_null_and_metric_run_through_the_accumulator(installed) -> None:  # noqa: ANN001
    from attnspec.spectra.aggregate import SpectrumAccumulator
    from attnspec.spectra.baselines import null_accumulator

    n, targets = 12, np.full((2, 3), 0.5)
    acc, how = null_accumulator("banded", targets, n, [True, False], [None, None], seed=0, draws=4)
    metrics = acc.tables().metrics
    assert acc.input_index.tolist() == [0] and how["logit_scale"].isna().all()  # deterministic: one draw
    # the metric, from the null's own matrices computed here: (Σσ²)²/Σσ⁴
    import attnspec_local

    from attnspec.spectra.baselines import NullRequest

    for layer, causal in enumerate([True, False]):
        p, _ = attnspec_local.banded_matrices(NullRequest("banded", n, causal, None, 3, layer, 0, 0, targets[layer]))
        s2 = torch.linalg.svdvals(p[0, 0]).square()
        want = float(s2.sum() ** 2 / s2.square().sum())
        got = metrics.loc[metrics["layer"] == layer, "participation_ratio_mean"].to_numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert 1 <= want <= n
    # a state saved before the metric was registered resumes without it, and says so in one line
    state = {k: v for k, v in acc.state().items() if not k.startswith("participation_ratio.")}
    state.pop("metric_names")
    older = SpectrumAccumulator.from_state(state)
    assert older.absent == ("participation_ratio",) and "participation_ratio" in older.absent_note


def test_a_door_refuses_what_it_cannot_hold(installed) -> None:  # noqa: ANN001
    from attnspec.errors import InputError
    from attnspec.spectra.metric_table import Metric, metric_names, register_metric

    metric_names()  # the plug-in's metric is in the table
    import attnspec_local

    with pytest.raises(InputError, match="'participation_ratio' is already in the table"):
        register_metric(Metric("participation_ratio", "σ", attnspec_local.participation_ratio))
    with pytest.raises(InputError, match="letters, digits, '_' and '-', got 'a.b'"):
        register_metric(Metric("a.b", "σ", attnspec_local.participation_ratio))
    with pytest.raises(InputError, match="needs a callable compute"):
        register_metric(Metric("c", "σ", None))  # type: ignore[arg-type]


@pytest.mark.slow  # a whole spectrum study of a tiny model with the three plug-ins (about 10 s)
def test_the_command_line_runs_all_three(installed, model_dir: Path, text_file: Path, tmp_path: Path) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    import attnspec
    from attnspec.cli.main import app

    out = tmp_path / "study"
    args = ["spectrum", "--model", str(model_dir), "--data", str(text_file), "--num-inputs", "6", "--seq-len", "12,24"]
    args += ["--device", "cpu", "--approx", "sliding-window", "--approx-k", "4", "--approx-split", "0,6"]
    args += ["--baseline", "banded", "--projection-k", "none", "--out", str(out), "--no-plots", "-q"]
    ran = CliRunner().invoke(app, args)
    assert ran.exit_code == 0, ran.output
    study = attnspec.load(out)
    rule = study.approx["approx_rule"]
    assert "sliding-window" in set(rule["method"])
    run = out / "n24"
    from attnspec.storage.results import read_table

    assert read_table(run, "metrics")["participation_ratio_mean"].between(1, 24).all()
    assert set(read_table(run, "baseline_metrics")["baseline"]) == {"banded"}
