"""sa-check's verdict rows: claim ids, the relabels of the classifier (fitted quantities are
measurements, or tested on independent draws), held-out tests with known answers, and the
battery's option validation."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.numerics.stats import spawn_seeds
from attnspec.theory.expressivity import fit, measure
from attnspec.theory.expressivity.battery import config_from_options, verdicts_of_instance
from attnspec.theory.expressivity.config import Config
from attnspec.theory.expressivity.construction import sparse_target
from attnspec.verdicts import registry as claims

SMALL = Config(L=32, k=2, eps=0.05, delta=0.3, m=0.2, M=1.0, beta=0.2, trials=30, scaling_L=16)


@pytest.fixture(scope="module")
def small():
    ms = measure.measure(SMALL)
    return ms, verdicts_of_instance(SMALL, ms)


def test_rows_carry_registered_ids(small) -> None:
    _, rows = small
    claims.check_rows(rows)
    ids = {r.claim for r in rows}
    assert {
        "expressivity.thm1.onsupport",
        "expressivity.thm1.offsupport",
        "expressivity.san.mass",
        "expressivity.jl.gaussian",
        "expressivity.jl.orthogonal",
        "expressivity.notes.dstated",
    } <= ids


def test_fitted_quantities_are_measurements(small) -> None:
    """Relabels: the 1/ε' exponent (was violated) and both "which M" rows (violated, holds)
    are fitted and read on the same draws, so they are measurements, not verdicts."""
    _, rows = small
    by = {(r.claim, r.reading): r for r in rows}
    for reading in ("eps-exponent", "m-max-a", "m-max-b"):
        assert by["expressivity.notes.dstated", reading].verdict == "measured"


def test_heldout_rows_use_independent_draws(small) -> None:
    ms, rows = small
    ho = ms.frame.query("kind == 'heldout'")
    assert len(ho) == 2
    used = set(ms.frame.query("kind != 'heldout'")["seed"].astype("uint64"))
    assert not set(ho["seed"].astype("uint64")) & used  # fresh seeds
    by = {(r.claim, r.reading): r for r in rows}
    # the notes' power of ε' (1) and M = max A both fail on the held-out draws
    assert by["expressivity.notes.dstated", "eps-heldout"].verdict == "violated"
    assert by["expressivity.notes.dstated", "m-max-a-heldout"].verdict == "violated"


def test_heldout_delta_known_answer(small) -> None:
    """d = C/δ^p fitted at 2δ, 4δ and tested at δ/4: p = 1 must fail (d* grows like 1/δ²);
    p = 2.5 over-provisions the held-out δ and must not."""
    ms, _ = small
    seeds = spawn_seeds(SMALL.seed, measure.N_SEEDS)
    As = sparse_target(16, 2, m=SMALL.m, M=SMALL.M, seed=seeds[measure.SEED_SCALING_A])
    fresh = 12345
    verdicts = {}
    for p in (1.0, 2.5):
        r = measure.heldout_delta(SMALL, As, ms.frame, fresh, exponent=p)
        verdicts[p] = fit.check_stated_heldout(pd.DataFrame([r]), beta=SMALL.beta)[0].verdict
    assert verdicts[1.0] == "violated"
    # a correct power passes: not violated. With 0 failures the classifier says "measured"
    # (looseness unresolved without an exact law) or, with an exact law, "holds" or "loose".
    assert verdicts[2.5] in ("holds", "loose", "measured")


def _sweep_frame(d_of, ci_low_of) -> pd.DataFrame:
    rows = []
    for L in (64, 128, 256):
        for k in (1, 2, 4):
            kl = k * math.log(L)
            rows.append(
                {
                    "kind": "sweep",
                    "projection": "gaussian",
                    "method": "asymptotic",
                    "L": L,
                    "k": k,
                    "eps": 0.01,
                    "delta": 0.1,
                    "k_log_L": kl,
                    "d": d_of(L, kl),
                    "ci_low": ci_low_of(L, kl),
                    "ci_high": 2 * d_of(L, kl),
                    "trials": 100,
                    "seed": L * 10 + k,
                }
            )
    return pd.DataFrame(rows)


def test_klogl_heldout_known_answers() -> None:
    """Fit C on L = 64, 128, test at L = 256: d* = 50 k log L holds; d* = 50 k log L · L/64
    (grows faster than k log L) is violated; with no lower CI end the check cannot fail."""
    ok = fit.check_klogl_heldout(_sweep_frame(lambda L, kl: 50 * kl, lambda L, kl: 40 * kl))[0]
    assert ok.verdict == "holds" and ok.reading == "heldout"
    bad = fit.check_klogl_heldout(_sweep_frame(lambda L, kl: 50 * kl * L / 64, lambda L, kl: 45 * kl * L / 64))[0]
    assert bad.verdict == "violated"
    blind = fit.check_klogl_heldout(_sweep_frame(lambda L, kl: 50 * kl * L / 64, lambda L, kl: 0.0))[0]
    assert blind.verdict == "cannot-fail"
    one_L = _sweep_frame(lambda L, kl: 50 * kl, lambda L, kl: 40 * kl).query("L == 64")
    assert fit.check_klogl_heldout(one_L) == []


def test_klogl_exponents_are_measurements() -> None:
    sw = _sweep_frame(lambda L, kl: 50 * kl, lambda L, kl: 40 * kl)
    sw["max_row_norm"], sw["max_abs_B"] = 3.0, 2.0
    rows = fit.check_klogl_measured(sw, fit.fit_d_star(sw))
    assert {r.reading for r in rows} == {"k-exponent", "logl-exponent", "ls-fit"}
    assert all(r.verdict == "measured" for r in rows)
    k_exp = next(r for r in rows if r.reading == "k-exponent")
    assert k_exp.estimate == pytest.approx(1.0, abs=1e-9)


def test_config_from_options_types() -> None:
    """Options as typed on the command line or in experiments/*.toml."""
    c = config_from_options({"L": 64, "k": 2, "sweep_L": "64,128", "sweep_k": [1, 2], "d": None})
    assert c.sweep_L == (64, 128) and c.sweep_k == (1, 2) and c.d is None
    assert config_from_options({"sweep_L": 64}).sweep_L == (64,)
    assert config_from_options({"sweep": True, "sweep_k": "64"}).grid_k == [1, 2, 4, 8, 16, 32]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"sweep_L": "32", "sweep_k": "64"}, "sweep-k values must be <= the largest sweep-L (32)"),
        ({"sweep_L": "1"}, "sweep-L values must be in [2, inf), got 1"),
        ({"sweep_L": "x"}, "sweep-L must be a comma list of integers"),
        ({"L": 1, "k": 1}, "L must be in [2, inf), got 1"),
        ({"threads": 0}, "threads must be in [1, "),  # capped at attnspec.runtime.threads.max_threads()
        ({"threads": 1_000_000}, "got 1000000"),
        ({"sweep_trials": 5}, "sweep-trials must be in [10, inf), got 5"),
        ({"lenght": 5}, "unknown sa-check option(s) lenght"),
    ],
)
def test_config_errors_before_computing(options, message) -> None:
    with pytest.raises(InputError) as e:
        config_from_options(options)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_orthogonal_sweep_verdicts_match_ratio() -> None:
    """The orthogonal-vs-Gaussian row, under the one looseness rule. Where every
    Gaussian d* is >= L the claim cannot fail (orthogonal d <= L, d = L exact): cannot-fail,
    not holds (the claim could not have failed there). Where some Gaussian d* < L the
    worst exercised ratio decides: violated above 1, loose more than 10x below, else holds."""
    from attnspec.theory.expressivity.sweep import check_sweep

    sw = _sweep_frame(lambda L, kl: 50 * kl, lambda L, kl: 40 * kl)  # d*_gauss >= L everywhere
    o = sw.assign(projection="orthogonal", method="exact", d=sw["L"])
    row = {(r.claim, r.reading): r for r in check_sweep(pd.concat([sw, o]))}[
        "expressivity.jl.orthogonaldim", "vs-gaussian"
    ]
    assert row.verdict == "cannot-fail" and "0/9 configurations exercise" in row.evidence
    small = _sweep_frame(lambda L, kl: L // 2, lambda L, kl: L // 4)  # d*_gauss = L/2 < L
    for d_orth, verdict in ((lambda L: L // 4, "holds"), (lambda L: L // 64, "loose"), (lambda L: L - 1, "violated")):
        o = small.assign(projection="orthogonal", method="exact", d=[d_orth(L) for L in small["L"]])
        row = {(r.claim, r.reading): r for r in check_sweep(pd.concat([small, o]))}[
            "expressivity.jl.orthogonaldim", "vs-gaussian"
        ]
        assert row.verdict == verdict, (verdict, row.evidence)
        assert row.params["tightest"] >= row.params["typical"] and "the label rests on the tightest" in row.evidence
