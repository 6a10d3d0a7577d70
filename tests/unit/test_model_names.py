"""A misspelt alias fails at once with a suggestion; real hub ids and aliases pass."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.errors import InputError
from attnspec.spectra.model_names import ALIASES, reject_alias_typo


@pytest.mark.parametrize(
    "typo, alias", [("minlm", "minilm"), ("MiniLM", "minilm"), ("all-minilm-l6v2", "all-minilm-l6-v2")]
)
def test_typo_of_an_alias_is_rejected_with_a_suggestion(typo: str, alias: str) -> None:
    with pytest.raises(InputError, match=f"did you mean {alias}\\?"):
        reject_alias_typo(typo)


@pytest.mark.parametrize(
    "name",
    [
        *ALIASES,
        "roberta-base",
        "roberta-large",
        "bert-base-uncased",
        "gpt2",
        "distilbert-base-uncased",
        "all-mpnet-base-v2",
        "sentence-transformers/all-MiniLM-L6-v1",
    ],
)
def test_aliases_and_hub_ids_pass(name: str) -> None:
    reject_alias_typo(name)


def test_resolve_model_rejects_the_typo_before_any_hub_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    import attnspec.spectra.models as models

    def no_probe(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("the hub was probed for a misspelt alias")

    monkeypatch.setattr(models, "_hub_reachable", no_probe)
    with pytest.raises(InputError, match="did you mean minilm"):
        models.resolve_model("minlm")


def test_spectrum_cli_says_did_you_mean() -> None:
    res = CliRunner().invoke(app, ["spectrum", "--model", "minlm", "--num-sentences", "1"])
    assert res.exit_code == 1
    assert "error: --model 'minlm' is not a local directory or an alias; did you mean minilm?" in res.output
