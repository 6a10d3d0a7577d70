"""Shared draws (attnspec.theorem.shared): streams stop by the one sequential rule, rows per sub-point."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from attnspec.theorem import sequential as SQ
from attnspec.theorem.shared import SubPoint, draw_shared


def _coin_look(rates: dict, rng: np.random.Generator, seen: list):
    """Bernoulli failures at each key's rate, one uniform per trial shared by every key."""

    def look(size: int, first: bool, active: frozenset) -> dict:
        seen.append((size, first, active))
        u = rng.random(size)
        return {key: int((u < rate).sum()) for key, (rate, stream) in rates.items() if stream in active}

    return look


def test_streams_stop_apart_and_fixed_rows_never_hold_them() -> None:
    rates = {"a": (0.5, "s"), "b": (0.1, "t"), "c": (0.3, "t")}
    subs = [
        SubPoint("a", {"row": "a"}, claimed=0.01, fixed=False, stream="s"),  # far above its claim: stops early
        SubPoint("b", {"row": "b"}, claimed=0.12, fixed=False, stream="t"),  # near its claim: draws long
        SubPoint("c", {"row": "c"}, tail={"end": 1}, fixed=True, stream="t"),
    ]
    seen: list = []
    drawn = draw_shared(_coin_look(rates, np.random.default_rng(1), seen), subs, trials=5000, size=100)
    assert drawn.counted["s"] == 100 and drawn.counted["t"] > 100
    rows = drawn.rows(subs)
    assert rows[2]["trials"] == drawn.counted["t"] == drawn.drawn  # a fixed row counts its stream's trials
    assert [r["row"] for r in rows] == ["a", "b", "c"] and rows[2]["end"] == 1
    assert list(rows[0])[:2] == ["row", "failures"]
    assert seen[0] == (100, True, frozenset({"s", "t"}))


def test_a_stream_draws_until_its_rows_settle_and_matches_the_rule() -> None:
    rates = {"a": (0.02, "s")}
    subs = [SubPoint("a", {}, claimed=0.03, fixed=False, stream="s")]
    seen: list = []
    drawn = draw_shared(_coin_look(rates, np.random.default_rng(0), seen), subs, trials=4000, size=500)
    f, t = drawn.failures["a"], drawn.counted["s"]
    stopped_early = t < 4000
    assert stopped_early == SQ.can_stop(f, t, 0.03, n_looks=8, trials_max=4000)
    full = draw_shared(_coin_look(rates, np.random.default_rng(0), []), subs, trials=4000, size=500, sequential=False)
    assert full.counted["s"] == 4000 and full.drawn == 4000


def test_partial_readers_count_their_own_trials() -> None:
    subs = [
        SubPoint("a", {}, claimed=0.5, fixed=False, stream="s"),
        SubPoint("first", {}, stream="s", trials=7),
    ]

    def look(size: int, first: bool, active: frozenset) -> dict:
        return {"a": size // 2, **({"first": 3} if first else {})}

    drawn = draw_shared(look, subs, trials=300, size=100, sequential=False)
    assert drawn.trials(subs[1]) == 7 and drawn.failures["first"] == 3
    assert drawn.rows(subs)[0]["trials"] == 300


def test_the_docs_example_runs() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "draw_shared(" in b]
    exec(compile(block, str(doc), "exec"), {})  # noqa: S102 - the doc's own example, with its asserts


def test_sample_frame_keeps_the_first_values_after_their_columns() -> None:
    from attnspec.theorem.shared import sample_frame

    frame = sample_frame(np.arange(5.0), 3, {"claim": "c", "k": 4})
    assert list(frame.columns) == ["claim", "k", "sample", "value"]
    assert frame["value"].tolist() == [0.0, 1.0, 2.0] and frame["k"].tolist() == [4, 4, 4]
