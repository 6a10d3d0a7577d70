"""The report's "Threats to validity": what the spectrum study's setting could change, read from
the results' metadata (meta.json of every spectrum run and scaling length).

One bullet per threat, each saying what it is and what it could change: the models measured
(not the paper's), lengths read past what a model was trained or configured for, weights
dequantised from a quantised file, and small samples. A threat the results do not show is left
out; nothing is typed in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HEADING = "Threats to validity"
#: Fewer inputs than this make a run's intervals rest on a small sample.
FEW_INPUTS = 20


def _configured_length(meta: dict[str, Any]) -> int | None:
    """The sequence length a sentence-transformers model was configured for (its
    ``sentence_bert_config.json``), when its folder is on this machine."""
    folder = Path(str(meta.get("model_path") or ""))
    config = folder / "sentence_bert_config.json"
    if not folder.is_dir() or not config.is_file():
        return None
    value = json.loads(config.read_text()).get("max_seq_length")
    return int(value) if value else None


def _positions(meta: dict[str, Any]) -> str:
    """``514 position embeddings, 512 usable``: the model's own position table (its ``config.json``,
    when its folder is on this machine) and the longest input it takes."""
    usable = meta.get("max_seq_len")
    config = Path(str(meta.get("model_path") or "")) / "config.json"
    table = json.loads(config.read_text()).get("max_position_embeddings") if config.is_file() else None
    if table and usable and int(table) != int(usable):
        return f"{table} position embeddings, {usable} usable"
    return f"{table or usable} position embeddings"


def _few_documents(inputs: dict[tuple[str, int], int]) -> str:
    """``4 documents at n = 128, 256; 16 documents at n = 64``: the runs of one model read with fewer
    than :data:`FEW_INPUTS` documents, by count; empty when there is none."""
    small: dict[int, set[int]] = {}  # documents per run → the lengths read with so few
    for (_, n), v in inputs.items():
        if 0 < v < FEW_INPUTS:
            small.setdefault(v, set()).add(n)
    return "; ".join(f"{v} documents at n = {', '.join(str(n) for n in sorted(ns))}" for v, ns in sorted(small.items()))


def _approx_split(study: Path) -> tuple[int, int] | None:
    """(held-out, fitted) documents of an approximation study (its meta.json ``approx`` record), or
    None for a study without approximations: its intervals resample the held-out documents only."""
    top = study / "meta.json"
    record = (json.loads(top.read_text()).get("approx") or {}) if top.is_file() else {}
    if not record.get("held_out"):
        return None
    return int(record["held_out"]), int(record.get("train") or 0)


def _approx_documents(splits: dict[tuple[int, int], set[int]]) -> str:
    """``the approximations' 8 held-out documents (the intervals resample them; 8 more fitted on) at
    n = 128, 512``: an approximation study's documents, held-out and fitted apart, when the held-out
    ones are fewer than :data:`FEW_INPUTS`; empty otherwise."""
    said = []
    for (held, fitted), ns in sorted(splits.items()):
        if held >= FEW_INPUTS:
            continue
        extra = f"; {fitted} more fitted on" if fitted else ""
        lengths = ", ".join(str(n) for n in sorted(ns))
        said.append(
            f"the approximations' {held} held-out documents (the intervals resample them{extra}) at n = {lengths}"
        )
    return "; ".join(said)


def threats_section(experiments: Sequence[Any], results: Path) -> list[str]:
    """``## Threats to validity``: one bullet per threat the results show; empty without spectrum runs.

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    list of str
        Markdown lines.
    """
    from attnspec.report.decoder import display
    from attnspec.report.run_meta import spectrum_metas

    metas = spectrum_metas(experiments, results)
    if not metas:
        return []
    models: dict[str, dict[str, Any]] = {}
    splits = {name: _approx_split(results / name) for name in dict(metas)}
    for name, meta in metas:
        model = str(meta.get("model") or (meta.get("identity") or {}).get("model"))
        m = models.setdefault(model, {"n": set(), "inputs": {}, "approx": {}, "meta": meta})
        n = int((meta.get("identity") or {}).get("seq_len") or 0)
        m["n"].add(n)
        if splits[name] is None:
            m["inputs"][(name, n)] = int(meta.get("inputs_done") or 0)
        else:  # an approximation study: its held-out and fitted documents said apart
            m["approx"].setdefault(splits[name], set()).add(n)
    names = ", ".join(
        f"{display(model)} ({m['meta'].get('architecture')}, {m['meta'].get('num_layers')} layers)"
        for model, m in models.items()
    )
    bullets = [
        f"- **Models.** {names}: not the paper's RoBERTa, which cannot be loaded offline. Every number is about "
        "these models on these corpora; a larger encoder could concentrate Σσ more or less."
    ]
    beyond: list[str] = []  # every model read past its configured length: one bullet, the caveat is the same
    for model, m in models.items():
        top = max(m["n"])
        configured = _configured_length(m["meta"])
        positions = m["meta"].get("max_seq_len")
        if configured and top > configured:
            beyond.append(
                f"{display(model)} is read up to n = {top}, though its sentence-transformers configuration caps "
                f"inputs at {configured} tokens ({_positions(m['meta'])})"
            )
        elif positions and top >= int(positions):
            bullets.append(
                f"- **Lengths at the edge.** {display(model)} is read at n = {top}, all of its {_positions(m['meta'])}."
            )
        gguf = m["meta"].get("gguf") or {}
        if gguf.get("quantization"):
            bullets.append(
                f"- **Quantisation.** {display(model)}'s weights are dequantised to {gguf.get('dequantized_to')} "
                f"from a {gguf.get('quantization')} file: rounding of the weights perturbs the logits, which could "
                "change the small singular values more than the large ones."
            )
    if beyond:
        bullets.insert(
            1,
            f"- **Lengths beyond training.** {'; '.join(beyond)}: P past a model's cap may be off its training "
            "distribution, which could flatten or sharpen its spectrum there.",
        )
    sizes = [
        f"{display(model)}: {counts}"
        for model, m in models.items()
        if (counts := "; ".join(c for c in (_few_documents(m["inputs"]), _approx_documents(m["approx"])) if c))
    ]
    if sizes:  # one bullet for every model: the caveat is the same
        bullets.append(
            f"- **Sample sizes.** {'; '.join(sizes)}. Intervals over so few documents are wide and rest on a t "
            "approximation, and a corpus's variety may be missed."
        )
    return [f"## {HEADING}", "", *bullets, ""]
