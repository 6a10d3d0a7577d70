"""The report's readings, built from the committed results: one interval per quantity (over
documents) in the summary, the body and the decoder section; depth by the permutation test,
worded by one rule everywhere; every null beside the real value in Figure 1's table.

The summary, Figure 1's section, the decoder section and the beyond-Figure-1 section are built
from every committed run and scaling study (their fits and nulls read back from disk: about 30
CPU-seconds together), so the tests that read them run in the slow set (``-m slow``); the
default run keeps the checks that read one caption, one field or one metadata file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "reports" / "results"
FIGURE1_RUNS = ("spectrum-minilm-imdb", "spectrum-minilm-wiki103")


def _need_results() -> list:
    from attnspec.report.experiments import load_experiments

    for name in FIGURE1_RUNS:
        if not (RESULTS / name / "meta.json").is_file():
            pytest.skip(f"no committed results in {RESULTS / name}")
    return load_experiments(REPO / "experiments")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The summary, the Figure 1 section and its per-layer page, and the decoder section's text."""
    from attnspec.report import PAPERS
    from attnspec.report.decoder import decoder_section
    from attnspec.report.experiments import FIGURE1_HEADING, VERDICT_FILE, spectrum_runs
    from attnspec.report.figure1 import _spectrum_section
    from attnspec.report.summary import summary_section

    experiments = _need_results()
    figures = tmp_path_factory.mktemp("figures")
    runs = spectrum_runs(experiments, RESULTS, "figure1")
    figure1 = _spectrum_section(runs, RESULTS, figures, lambda *a, **k: None, lambda *a, **k: None)
    summary = summary_section(
        experiments,
        RESULTS,
        papers=PAPERS,
        quick=False,
        verdict_file=VERDICT_FILE,
        figure1_heading=FIGURE1_HEADING,
    )
    decoder = decoder_section(experiments, RESULTS, figures, quick=False)
    return {"summary": "\n".join(summary), "figure1": "\n".join(figure1), "decoder": "\n".join(decoder)}


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_one_quantity_has_one_interval_over_documents_everywhere(built: dict[str, str]) -> None:
    # c at index 128 of MiniLM on IMDB, n = 512: summary (percent), Figure 1 table, decoder section table
    body = re.search(
        r"\| `spectrum-minilm-imdb` \| 512 \| 400 \| (0\.\d+) at 128 \[(0\.\d+), (0\.\d+)\]", built["figure1"]
    )
    assert body, "Figure 1's table gives c at 128 with its interval over documents"
    mean, low, high = (float(v) for v in body.groups())
    decoder = re.search(r"\| MiniLM-L6 · imdb \| 512 \| 400 \| (0\.\d+) \[(0\.\d+), (0\.\d+)\]", built["decoder"])
    assert decoder and tuple(float(v) for v in decoder.groups()) == (mean, low, high)
    # MiniLM's first corpus (imdb) leads; the corpora are named once when every model ran on the same ones
    summary = re.search(
        r"(\d+\.\d)% \[(\d+\.\d+)%, (\d+\.\d+)%\](?: on imdb)? \(layers (\d+)%–(\d+)%\)", built["summary"]
    )
    assert summary, "the summary gives the share with its interval over documents and the layers' range"
    s_mean, s_low, s_high = (float(v) / 100 for v in summary.groups()[:3])
    assert s_mean == pytest.approx(mean, abs=6e-4) and s_low == pytest.approx(low, abs=6e-4)
    assert s_high == pytest.approx(high, abs=6e-4)
    assert "layer means)" not in built["summary"] and "t interval" not in built["summary"]


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_depth_is_worded_by_the_permutation_rule_in_summary_and_body(built: dict[str, str]) -> None:
    # MiniLM's 6 layer means at index 128: ρ = +0.83, p = 42/720 = 0.058: suggestive, not a trend
    assert "suggestive rise with depth (ρ = +0.83, p = 0.058)" in built["summary"]
    assert "6 layers, 720 orderings" in built["summary"]
    assert "+0.83, 0.058" in built["figure1"]
    assert "shows a suggestive rise with depth" in built["figure1"]
    assert "independent draws" not in built["figure1"] and "bootstrap" not in built["summary"]


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_the_decoder_depth_readings_use_the_permutation_rule(built: dict[str, str]) -> None:
    readings = [line for line in built["decoder"].splitlines() if line.startswith("Reading (SmolLM2-135M")]
    depth = [line for line in readings if "permutation p" in line]
    assert depth, "the decoder's depth reading quotes the permutation p"
    for line in depth:
        for part in line.split(";"):
            m = re.search(r"(rises|falls) with depth \(ρ = [+-]\d\.\d+, permutation p = ([\d.e-]+)", part)
            if m:
                assert float(m.group(2)) < 0.05, part


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_figure1_shows_every_null_beside_the_real_value_and_reads_averaging(built: dict[str, str]) -> None:
    row = next(line for line in built["figure1"].splitlines() if line.startswith("| `spectrum-minilm-imdb`"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[6:9] == ["0.516", "1.000", "0.974"]  # entropy-matched, uniform, random-init at index 128
    assert "what averaging gives" in built["figure1"]
    assert "random init 97.4%" in built["summary"] and "entropy null 51.6%" in built["summary"]


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_every_model_has_its_random_init_null_read_beside_the_real_value(built: dict[str, str]) -> None:
    """MPNet's random-init model comes from its scaling study, as MiniLM's does; it is read in the
    sentence that gives the real value, in the body and in the summary."""
    if not (RESULTS / "scaling-mpnet-imdb" / "n512" / "meta.json").is_file():
        pytest.skip("no MPNet scaling study in the committed results")
    row = next(line for line in built["figure1"].splitlines() if line.startswith("| `spectrum-mpnet-imdb`"))
    init = [c.strip() for c in row.split("|")][8]
    assert re.fullmatch(r"0\.\d{3}", init), row
    reading = next(line for line in built["figure1"].splitlines() if line.startswith("Reading:"))
    sentence = next(s for s in reading.split("`spectrum-")[1:] if s.startswith("mpnet-imdb`"))
    assert f"the random-init model {init}" in sentence and "the trained P" in sentence
    assert "MPNet-base" in built["summary"].split("nulls")[1].split("[Figure 1]")[0]


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_mpnets_scaling_study_stands_beside_minilms_in_the_summary_and_the_table(built: dict[str, str]) -> None:
    from attnspec.report.beyond import scaling_table

    if not (RESULTS / "scaling-mpnet-imdb" / "n512" / "meta.json").is_file():
        pytest.skip("no MPNet scaling study in the committed results")
    line = next(x for x in built["summary"].splitlines() if "**The rank needed grows with n.**" in x)
    assert re.search(r"MiniLM-L6 [\d.–]+, MPNet-base [\d.–]+ \(n = 32–512\)", line), line  # same lengths, together
    assert re.search(r"MPNet-base 0\.\d\d/0\.\d\d", line), line  # its entropy-matched null beside its real k90/n
    rows = [r for r in scaling_table(_need_results(), RESULTS) if r.startswith("| all-mpnet-base-v2")]
    assert rows and all("random init" in r for r in rows), rows  # its three nulls, random-init among them


def test_k90_is_read_per_input_in_every_caption() -> None:
    from attnspec.plots.scaling import K90
    from attnspec.report.captions import caption

    _need_results()
    run = RESULTS / "scaling-minilm-imdb"
    for stem in ("scaling_k90", "scaling_grid"):
        text = caption(stem, run)
        assert "mean curve reaches" not in text and "per input" in text, stem
    assert K90 == "reach_index_input_mean"


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_k90_is_read_per_input_in_every_caption_and_figure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import attnspec.plots.compare
    import attnspec.plots.scaling
    from attnspec.plots.scaling import K90
    from attnspec.report.beyond import beyond_figure1_section
    from attnspec.report.captions import caption

    experiments = _need_results()
    run = RESULTS / "scaling-minilm-imdb"
    for stem in ("scaling_k90", "scaling_grid"):
        text = caption(stem, run)
        assert "mean curve reaches" not in text and "per input" in text, stem
    assert K90 == "reach_index_input_mean"
    for module, name in (
        (attnspec.plots.scaling, "plot_scaling"),
        (attnspec.plots.scaling, "plot_scaling_grid"),
        (attnspec.plots.compare, "plot_comparison"),
    ):
        monkeypatch.setattr(module, name, lambda *a, **k: [])  # the text only: no drawing
    md = "\n".join(beyond_figure1_section(experiments, RESULTS, tmp_path))
    assert "mean curve" not in md and "k90 per input" in md


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_each_paper_line_names_the_theorems_that_fail_and_why(built: dict[str, str]) -> None:
    line = next(x for x in built["summary"].splitlines() if "**Linformer" in x)
    assert "Theorem 1: 500/500 fail, claimed P ≤ 0.25" in line and "Lemma 1:" in line
    assert re.search(r"; \d+ more in the ledger", line)  # two theorems named, the rest counted
    assert "claims fail:" in line and "loose" not in line and "cannot-fail" not in line
    osa = next(x for x in built["summary"].splitlines() if "**Orthogonal Self-Attention" in x)
    assert "No claim of" in osa and "misprints that hold as corrected: eq. (26), eq. (49), eq. (89)" in osa


def test_the_why_reads_the_deciding_rows_fields_not_the_reason_text() -> None:
    from attnspec.report.summary import _theorem_of, _why
    from attnspec.verdicts.classify import VerdictRow
    from attnspec.verdicts.headline import claim_verdict, deciding_words
    from attnspec.verdicts.sentences import summarize

    # a reason whose first clause holds a comparison that is not the deciding one: a regex over the
    # text picks "bound (≤ 3 > 2 by design)"; the fields say what decided
    row = {
        "verdict": "violated",
        "reason": "at k = 8: the bound (≤ 3 > 2 by design) is below 1; relative: 5/5 fail",
        "deciding": "5/5 fail, claimed P ≤ 0.1",
    }
    assert _why(row) == "5/5 fail, claimed P ≤ 0.1"
    assert _why({**row, "deciding": ""}) == "violated"  # no numbers: the verdict, never the text
    assert _why({**row, "deciding": "one two three four five six seven eight"}) == "one two three four five six seven…"
    # the deciding row is the one at the paper's parameters, as the claim's verdict reads it
    claim = "linformer.thm1.eq3"
    rows = [
        VerdictRow(claim, "violated", {"n": 64, "k": 8}, bound=0.25, estimate=1.0, trials=500, at_paper_params=True),
        VerdictRow(claim, "violated", {"n": 64, "k": 4}, bound=1e-5, estimate=1.0, trials=9000),
    ]
    (cs,) = summarize(rows)
    said = deciding_words(cs, claim_verdict(cs).verdict)
    assert said == "observed 1 > bound 0.25"  # not the other row's bound 1e-05
    assert _theorem_of("linformer.thm1.eq18", "Appendix A, eq. (18)") == "Theorem 1"
    assert _theorem_of("linformer.eq4", "Section 3, eq. (4)") == "eq. (4)"
    assert _theorem_of("linformer.lemma1.eq12", "Appendix A, Lemma 1, eq. (12)") == "Lemma 1"


def test_threats_to_validity_are_read_from_the_results_metadata() -> None:
    from attnspec.report.threats import threats_section

    experiments = _need_results()
    text = "\n".join(threats_section(experiments, RESULTS))
    assert text.startswith("## Threats to validity")
    assert "Q4_1" in text and "16 documents at n = 64" in text
    assert re.search(r"\b4 documents at n = [0-9, ]*\b2048\b", text)  # the decoder's long end
    # an approximation study's documents: the held-out ones its intervals resample, the fitted ones apart
    assert "MiniLM-L6: the approximations' 8 held-out documents (the intervals resample them; 8 more fitted on)" in text
    assert "16 documents at n = 128, 256, 384" not in text
    assert "not the paper's RoBERTa" in text
    assert text.count("**Sample sizes.**") == 1  # one bullet names every model's few-document runs
    assert text.count("**Lengths beyond training.**") <= 1  # and every model read past its cap
    config = Path(__import__("json").loads((RESULTS / FIGURE1_RUNS[0] / "meta.json").read_text())["model_path"])
    if (config / "sentence_bert_config.json").is_file():
        assert "caps inputs at 256 tokens" in text and "read up to n = 512" in text


def test_a_models_position_table_is_said_with_the_length_it_takes(tmp_path: Path) -> None:
    import json

    from attnspec.report.threats import _positions

    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 514}))
    meta = {"model_path": str(tmp_path), "max_seq_len": 512}
    assert _positions(meta) == "514 position embeddings, 512 usable"  # MPNet: two reserved for padding
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 512}))
    assert _positions(meta) == "512 position embeddings"
    assert _positions({"model_path": str(tmp_path / "absent"), "max_seq_len": 256}) == "256 position embeddings"


@pytest.mark.slow  # built from every committed result: see the module docstring
def test_every_model_s_centred_measure_is_read_with_its_random_init_or_triangle_reference(
    built: dict[str, str],
) -> None:
    # the decoder: c_centred with its interval beside the encoder's and the triangle's, on both corpora
    said = re.findall(r"c_centred at index 128: (0\.\d+) \[0\.\d+, 0\.\d+\]; MiniLM-L6 at the same n", built["decoder"])
    assert len(said) == 2 and "Centred measure (P less its mean row): not measured" not in built["decoder"]
    assert built["decoder"].count("the triangle's shape alone: 0.882") == 2
    # Figure 1: every run's random-init model read beside the trained P's value
    figure1 = built["figure1"]
    assert "random init not measured" not in figure1
    assert re.search(r"`spectrum-minilm-imdb` 0\.\d{3} \(random init 0\.\d{3}\)", figure1)
