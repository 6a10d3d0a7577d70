"""osa-check's config validation (before computing) and the labels that the redesign fixed:
each relabel has a test that the old label would have failed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.theory.osa.battery import config_from_options
from attnspec.theory.osa.jacobian import check_jacobian
from attnspec.theory.osa.lemc1 import scalar_range
from attnspec.theory.osa.thm21 import check_layer_orthogonality
from attnspec.theory.osa.thm31 import verdicts_orthogonality


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"alpha": [1e308]}, r"--alpha must be a finite number in \[-1000, 1000\], got 1e\+308"),
        ({"alpha": float("nan")}, "--alpha must be a finite number"),
        ({"d_v": 0}, "--d-v must be an integer >= 1, got 0"),
        ({"d_v": 5, "d_model": 8}, "--d-v: the initialisation needs 2\\*d_v <= d_model"),
        ({"schedule": ["1e308,1e308"]}, "--schedule 'custom\\(1e\\+308,1e\\+308\\)' must keep the singular values"),
        ({"schedule": ["10,0"]}, "they reach 1e\\+12"),
        ({"schedule": ["3,0"]}, "within \\[0, 10\\] over K = 0..12; they reach 5.31e\\+05"),
        ({"schedule": ["quartic"]}, "--schedule: Newton–Schulz schedule must be one of"),
        ({"steps": 101}, r"--steps must be an integer in \[0, 100\]"),
        ({"trials": 0}, r"--trials must be an integer in \[1, 1000\]"),
        ({"bogus": 1}, "osa-check has no option 'bogus'"),
    ],
)
def test_config_names_the_option_before_computing(options, match):
    with pytest.raises(InputError, match=match):
        config_from_options(options)


def test_config_defaults_and_toml_style_values():
    cfg = config_from_options({"seed": 0, "trials": 2, "timing": False, "alpha": 0.5, "schedule": "1.5,-0.5"})
    assert cfg.alphas == (0.5,) and cfg.schedules == ([(1.5, -0.5)],) and cfg.trials == 2
    assert config_from_options({}).alphas == (0.05, 0.5, 2.0)


def test_schedule_range_known_answers():
    # eq. (9)'s cubic maps [0, 1] into [0, 1]; Muon's quintic overshoots to ~1.2; a
    # huge custom polynomial overflows
    assert scalar_range("cubic", 12)[1] == pytest.approx(1.0)
    assert 1.1 < scalar_range("muon", 6)[1] < 1.3
    assert scalar_range([(1e308, 1e308)], 3)[1] == float("inf")


def test_layer_so_n_with_finite_newton_schulz_is_hypothesis_unmet():
    """Old label: "violated". A finite-K Newton–Schulz basis is not orthonormal, so the
    layer's A is not exp(S): Theorem 2.1's hypothesis fails, no counterexample."""
    rows, frame = check_layer_orthogonality(
        0, n=32, d=8, d_v=2, alphas=(1.0,), schedules=("cubic",), trials=1, ns_steps=2
    )
    v = {r.params["basis"]: r for r in rows}
    assert {r.claim for r in rows} == {"osa.thm21.so_n"}
    assert v["qr"].verdict == "holds"
    ns = v["NS cubic K=2"]
    assert ns.verdict == "hypothesis-unmet" and ns.estimate > 1e-6  # the deviation is measured, and reported
    assert "not orthonormal" in ns.evidence


def test_thm31_no_instance_meeting_sigma_le_1_is_hypothesis_unmet():
    """Old label: "vacuous". When every evaluation has σ_max(B) > 1 the proof's hypothesis
    is unmet; the bound itself is not vacuous."""
    frame = pd.DataFrame(
        {
            "schedule": "cubic",
            "steps": [1, 2],
            "n": 8,
            "d_v": 2,
            "alpha": 0.5,
            "weights": "stiefel",
            "seed": 1,
            "error": [1e-3, 2e-3],
            "s_norm": 0.3,
            "sigma_min": 0.5,
            "sigma_max": [1.1, 1.2],
            "bound10": [1e-4, 1e-4],
            "bound11": [1e-2, 1e-2],
            "det": 1.0,
        }
    )
    rows = {(r.claim, r.reading): r for r in verdicts_orthogonality(frame, 0)}
    assert rows[("osa.thm31.eq10", "sigma-le-1")].verdict == "hypothesis-unmet"
    # as stated (no hypothesis on σ(B) in the statement) the same numbers are a violation
    assert rows[("osa.thm31.eq10", "as-stated")].verdict == "violated"
    assert rows[("osa.thm31.eq11", "as-stated")].verdict == "holds"


def test_thm44_constant_is_fitted_on_other_draws_than_it_is_tested_on():
    """Old: C fitted as max ||J1||/alpha on the very instance the bound was tested on, which
    (by Weyl) can hardly fail. Now the fit and test draws are disjoint, the fitted C comes
    from the fit draws only, and the row's numbers come from a test draw."""
    rows, frame = check_jacobian(
        0,
        n=4,
        d_model=6,
        d_v=3,
        alphas=(1e-3, 1e-2, 1e-1),
        trials=2,
        multihead=0,
        bases=(("newton-schulz", "cubic", 6),),
    )
    fit, test = frame[frame.role == "fit"], frame[frame.role == "test"]
    assert set(fit.seed).isdisjoint(set(test.seed)) and len(set(test.seed)) == 2
    assert np.allclose(frame.c_fit, fit.j1_over_alpha.max())
    held = next(r for r in rows if r.claim == "osa.thm44" and r.reading == "held-out-c")
    assert held.verdict in ("holds", "loose", "violated")
    assert held.estimate in set(test.kappa_j) and held.trials == len(test)
    measured = next(r for r in rows if r.claim == "osa.thm44" and r.reading == "measured")
    assert measured.verdict == "measured" and measured.estimate == pytest.approx(fit.j1_over_alpha.max())


def test_thm44_held_out_c_can_fail():
    """A known-false case: shrink the fitted C by hand (as if fitted on easier draws) and the
    held-out bound must come out violated at the larger alphas."""
    from attnspec.theory.osa import jacobian as jac

    rows, frame = check_jacobian(
        0, n=4, d_model=6, d_v=3, alphas=(0.1, 0.3), trials=1, multihead=0, bases=(("newton-schulz", "cubic", 6),)
    )
    fit = frame[frame.role == "fit"].copy()
    fit["j1_over_alpha"] = fit.j1_over_alpha / 50  # a C far too small
    test = frame[frame.role == "test"].copy()
    c = float(fit.j1_over_alpha.max())
    test["bound44"] = (1 + test.delta + c * test.alpha) / (1 - test.delta - c * test.alpha)
    bad = jac._thm44_rows(fit, test, "NS cubic K=6", 0, "0.1..0.3")[0]
    assert bad.verdict == "violated"
