"""A result's meta.json read one way by every section: one per length, and the one that describes it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class _Exp:
    name: str
    command: str = "spectrum"


def _write(path: Path, meta: dict) -> None:  # noqa: ANN001
    path.mkdir(parents=True, exist_ok=True)
    (path / "meta.json").write_text(json.dumps(meta))


def test_a_scaling_study_reads_per_length_and_by_its_longest(tmp_path: Path) -> None:
    from attnspec.report.run_meta import describing_meta, length_metas, spectrum_metas

    _write(tmp_path / "scaling", {"kind": "spectrum-scaling", "lengths": [32, 64, 128]})
    for n in (32, 128):  # n = 64 not on disk: left out, not an error
        _write(tmp_path / "scaling" / f"n{n}", {"kind": "spectrum", "identity": {"seq_len": n}})
    _write(tmp_path / "single", {"kind": "spectrum", "identity": {"seq_len": 512}})
    assert [m["identity"]["seq_len"] for m in length_metas(tmp_path / "scaling")] == [32, 128]
    assert describing_meta(tmp_path / "scaling")["identity"]["seq_len"] == 128
    assert describing_meta(tmp_path / "single")["identity"]["seq_len"] == 512
    assert length_metas(tmp_path / "absent") == []
    exps = [_Exp("single"), _Exp("scaling"), _Exp("jl", "jl-check"), _Exp("absent")]
    assert [(name, m["identity"]["seq_len"]) for name, m in spectrum_metas(exps, tmp_path)] == [
        ("single", 512),
        ("scaling", 32),
        ("scaling", 128),
    ]
