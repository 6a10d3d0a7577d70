"""Report headings state the parameters that produced the numbers under them (quick or full)."""

from __future__ import annotations

from pathlib import Path

from attnspec.report.experiments import Experiment, load_experiments


def _exp(title: str, args: dict, quick: dict) -> Experiment:
    return Experiment(
        name="x", path=Path("x.toml"), title=title, paper="linformer", command="jl-check", args=args, quick=quick
    )


def test_placeholders_take_the_effective_values() -> None:
    e = _exp(
        "JL (n = {n}, eps = {eps})",
        {"n": 4096, "eps": 0.1},
        {"n": 256, "trials": 500, "timing": False, "sweep": "default"},
    )
    assert e.heading(quick=False) == "JL (n = 4096, eps = 0.1)"
    assert e.heading(quick=True) == "JL (n = 256, eps = 0.1) — quick sizes: trials = 500, --no-timing, no --sweep"
    assert _exp("no {unknown} key", {}, {}).heading(quick=True) == "no {unknown} key"


def test_no_committed_heading_states_full_sizes_above_quick_results() -> None:
    repo = Path(__file__).resolve().parents[2]
    for e in load_experiments(repo / "experiments"):
        quick = e.heading(quick=True)
        for key, value in e.quick.items():
            if key in e.args and f"{key} = {e.args[key]}" in e.title:
                raise AssertionError(f"{e.name}: title hard-codes {key} = {e.args[key]}; write {{{key}}}")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert str(value) in quick, (e.name, key, quick)  # every quick size is stated
