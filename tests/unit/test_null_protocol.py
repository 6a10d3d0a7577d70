"""Null baselines through one protocol: the built-ins keep their numbers, and a null added
with register_null and its own sampler is parsed, drawn and labelled like them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnspec.errors import InputError
from attnspec.spectra.baselines import NullRequest, null_accumulator, sampler_of
from attnspec.spectra.nulls import (
    LABELS,
    NULLS,
    SHORT,
    Null,
    needs_model,
    parse_baselines,
    register_null,
    with_role,
)

TARGETS = np.array([[0.9, 0.7, 0.5], [0.95, 0.6, 0.3]])

# Numbers of the nulls as computed before they went through the protocol (seed 7, n = 20, 3 draws,
# layer 0 causal with the given window, layer 1 bidirectional): the same to round-off.
PINNED = {
    "entropy-matched": (
        5,
        [13.838869324886, 14.289595568859, 13.321680786597, 11.70763072965, 14.637267656241, 14.153656073201],
        [0.694630674774, 1.494895022319, 2.537057761345, 0.569460314342, 1.95924754321, 3.861593901026],
        90.18918718961478,
    ),
    "uniform": (None, [9.982371845113, 9.982371845113, 9.982371845113, 1.0, 1.0, 1.0], [np.nan] * 6, 109.8408716274842),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_built_in_nulls_keep_their_numbers(name: str) -> None:
    window, eff, scale, total = PINNED[name]
    acc, how = null_accumulator(name, TARGETS, 20, [True, False], [window, None], seed=7, draws=3)
    tables = acc.tables()
    np.testing.assert_allclose(tables.metrics["effective_rank_mean"], eff, rtol=0, atol=1e-10)
    np.testing.assert_allclose(how["logit_scale"], scale, rtol=0, atol=1e-10)
    assert float(tables.spectrum["mean"].sum()) == pytest.approx(total, abs=1e-9)


def test_the_built_ins_declare_what_the_code_used_to_test_by_name() -> None:
    assert list(NULLS) == ["entropy-matched", "uniform", "random-init"]
    assert needs_model("random-init") and not needs_model("uniform") and not needs_model("nonesuch")
    assert NULLS["uniform"].deterministic and not NULLS["entropy-matched"].deterministic
    assert with_role("chance") == "entropy-matched" and with_role("architecture") == "random-init"
    assert LABELS["uniform"] == "uniform null" and SHORT["random-init"] == "random init"
    with pytest.raises(InputError, match="one of entropy-matched, uniform, got 'random-init'"):
        sampler_of("random-init")


def checkerboard_matrices(request: NullRequest) -> tuple[torch.Tensor, None]:
    """A test null: rows uniform over the allowed positions of one parity (a rank-2 P)."""
    from attnspec.spectra.baselines import allowed_positions

    n = request.n
    parity = (torch.arange(n)[:, None] + torch.arange(n)[None, :]) % 2 == 0
    allowed = allowed_positions(n, request.causal, request.window) & parity
    p = allowed.to(torch.float64) / allowed.sum(dim=1, keepdim=True)
    return p.expand(1, request.heads, n, n), None


@pytest.fixture
def checkerboard():
    null = Null(
        "checkerboard",
        "rows uniform over the positions of their own parity",
        "checkerboard null",
        "checkerboard",
        deterministic=True,
        sampler=f"{__name__}:checkerboard_matrices",
    )
    register_null(null)
    try:
        yield null
    finally:
        del NULLS["checkerboard"]


def test_a_registered_null_is_parsed_drawn_and_labelled(checkerboard) -> None:
    assert parse_baselines("uniform,checkerboard") == ["uniform", "checkerboard"]
    assert LABELS["checkerboard"] == "checkerboard null"
    acc, how = null_accumulator("checkerboard", TARGETS, 12, [False, False], [None, None], seed=0, draws=5)
    m = acc.tables().metrics
    assert acc.input_index.tolist() == [0]  # deterministic: one matrix per layer, whatever draws says
    assert (m["numerical_rank_mean"] == 2).all() and how["logit_scale"].isna().all()
    with pytest.raises(InputError, match="already registered"):
        register_null(checkerboard)


def test_a_null_that_can_draw_nothing_is_refused() -> None:
    with pytest.raises(InputError, match="needs a sampler"):
        register_null(Null("empty", "nothing", "empty null", "empty"))
    with pytest.raises(InputError, match="role must be one of"):
        register_null(Null("odd", "x", "x", "x", sampler="m:f", role="baseline"))
    register_null(Null("broken", "x", "x", "x", sampler="attnspec.spectra.baselines:no_such_sampler"))
    try:
        with pytest.raises(InputError, match="'broken' names the sampler .* cannot be imported"):
            null_accumulator("broken", TARGETS, 8, [False, False], [None, None], seed=0)
    finally:
        del NULLS["broken"]
