"""One length of a saved scaling study recomputed: every saved value bit-identical, only the
columns of a later metric added, the recomputation recorded; a changed value leaves the run alone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from attnspec.errors import ResultsError
from attnspec.spectra.config import SpectrumConfig

#: A tiny study with its three nulls, recomputed three times: about 10 s on 2 cores.
pytestmark = pytest.mark.slow

#: The columns a run saved before the centred measure lacks.
CENTRED = ["c_centred_mean", "c_centred_std"]


@pytest.fixture(scope="module")
def study(model_dir: Path, text_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny scaling study at 16 and 32 tokens with all three nulls."""
    from attnspec.spectra.study import run_study

    out = tmp_path_factory.mktemp("study") / "scaling"
    cfg = SpectrumConfig(
        model=str(model_dir), data=str(text_file), num_sentences=4, batch_size=2, seed=3, device="cpu", out=out
    )
    run_study(cfg, [16, 32], progress=False, baselines=["entropy-matched", "uniform", "random-init"])
    return out


def _drop_centred(run: Path) -> dict[str, pd.DataFrame]:
    """The run as a study saved before the centred measure: its columns removed; the tables kept."""
    kept = {}
    for table in ("metrics", "baseline_metrics"):
        frame = pd.read_parquet(run / f"{table}.parquet")
        kept[table] = frame
        frame.drop(columns=CENTRED).to_parquet(run / f"{table}.parquet", index=False)
    return kept


def test_a_length_recomputed_adds_only_the_missing_columns_bit_identical(study: Path, tmp_path: Path) -> None:
    from attnspec.spectra.recompute import recompute_length

    run = study / "n16"
    before = _drop_centred(run)
    untouched = {t: (run / f"{t}.parquet").read_bytes() for t in ("spectrum", "inputs", "baseline_spectrum")}
    done = recompute_length(study, 16, scratch=tmp_path / "scratch", write=True, progress=False)
    assert done.identical and done.bit_identical and done.written
    assert done.added == {"metrics": CENTRED, "baseline_metrics": CENTRED}
    for table, frame in before.items():  # the saved tables as a run made with the metric writes them
        pd.testing.assert_frame_equal(pd.read_parquet(run / f"{table}.parquet"), frame, check_exact=True)
    for table, data in untouched.items():  # tables that gain nothing are not rewritten
        assert (run / f"{table}.parquet").read_bytes() == data
    # the random-init null holds the measure, the drawn nulls cannot (no P)
    nulls = pd.read_parquet(run / "baseline_metrics.parquet").groupby("baseline")["c_centred_mean"].count()
    assert nulls["random-init"] > 0 and nulls["entropy-matched"] == 0 and nulls["uniform"] == 0
    entry = json.loads((run / "meta.json").read_text())["recomputed"][-1]
    assert entry["columns_added"] == done.added and "baseline_inputs" in entry["bit_identical"]
    assert entry["tolerance"] == {"rtol": 0.0, "atol": 0.0} and entry["largest_differences"] == {}
    assert entry["exempt"] == {} and "reused_scratch" not in entry
    assert entry["utc"].endswith("Z") and entry["by"].endswith("recompute_length")


def test_a_saved_value_that_differs_leaves_the_run_as_saved(study: Path, tmp_path: Path) -> None:
    from attnspec.spectra.recompute import recompute_length

    run = study / "n32"
    _drop_centred(run)
    metrics = pd.read_parquet(run / "metrics.parquet")
    metrics.loc[0, "stable_rank_mean"] += 1e-12  # one value off in its last bits
    metrics.to_parquet(run / "metrics.parquet", index=False)
    saved = (run / "metrics.parquet").read_bytes()
    with pytest.raises(ResultsError, match=r"left as saved.*metrics: stable_rank_mean \(largest difference 1e-12\)"):
        recompute_length(study, 32, scratch=tmp_path / "a", write=True, progress=False)
    assert (run / "metrics.parquet").read_bytes() == saved and "recomputed" not in json.loads(
        (run / "meta.json").read_text()
    )
    # within a tolerance the columns are added, the saved value kept and its difference recorded
    done = recompute_length(study, 32, scratch=tmp_path / "d", write=True, progress=False, rtol=1e-9, atol=0.0)
    assert done.identical and not done.bit_identical and done.written
    kept = pd.read_parquet(run / "metrics.parquet")
    assert kept.loc[0, "stable_rank_mean"] == metrics.loc[0, "stable_rank_mean"] and "c_centred_mean" in kept
    entry = json.loads((run / "meta.json").read_text())["recomputed"][-1]
    assert entry["largest_differences"]["metrics"]["stable_rank_mean"] == pytest.approx(1e-12, rel=0.01)
    assert "metrics" not in entry["bit_identical"] and "spectrum" in entry["bit_identical"]
    # a complete recomputation left in its scratch folder is compared again without computing
    again = recompute_length(study, 32, scratch=tmp_path / "d", reuse=True, exempt={"metrics.stable_rank_mean": "test"})
    assert again.identical and again.wall_s < done.wall_s  # bit for bit but the exempt column
    assert again.checks[1].exempt["stable_rank_mean"] == pytest.approx(1e-12, rel=0.01)
    with pytest.raises(ResultsError, match="no run at n = 24; its lengths are \\[16, 32\\]"):
        recompute_length(study, 24, scratch=tmp_path / "b", progress=False)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("")
    with pytest.raises(ResultsError, match="not empty"):
        recompute_length(study, 16, scratch=tmp_path / "c", progress=False)
