"""The claims of Likhosherstov, Choromanski & Weller (2021) that ``sa-check`` checks.

Ids are ``expressivity.<place>.<part>``; places: ``thm1`` (the main theorem and its
proof in the notes: the reduction to logits, the JL dimension, the width), ``jl`` (the
Johnson–Lindenstrauss lemmas the proof uses, Gaussian and orthogonal), ``san`` (what the
reduction does to the normalised attention), ``notes`` (formulas printed in the notes),
``tool`` (attnspec's own numerical method, checked in every run).

Each claim is declared with :mod:`attnspec.theorem` (a ``Statement``: its readings and how
each is decided) and decided by the runner: the claim modules measure, and hand each measured
point (its parameters, seed and numbers) to :func:`attnspec.theorem.measured.read_off`; the
sentences beside the classifier's are rendered here, from the point's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attnspec.theorem.cases import Scoped
from attnspec.theorem.ceiling import Ceiling
from attnspec.theorem.declare import Claim as Statement
from attnspec.theorem.measured import Bound, Measure, Noted, Unmet
from attnspec.theorem.readings import Identity, Point, Probability
from attnspec.theorem.tightest import ExactBound
from attnspec.verdicts.registry import register, register_short_names

COMMAND = "sa-check"


def _span(p: Point, low: str, high: str, fmt: str = ".3g") -> str:
    """``[low, high]`` of two of the point's numbers: the interval every note prints alike."""
    return f"[{p.value(low):{fmt}}, {p.value(high):{fmt}}]"


def _when_met(note: Callable[[Point], str]) -> Callable[[Point], str]:
    """A note only where some trial met the reduction's hypothesis (:func:`_met`)."""
    return lambda p: note(p) if p.value("met") else ""


def _met(v: Mapping[str, Any]) -> str | None:
    """The reduction's hypothesis at a point: some trial reached ‖B − B̂‖∞ <= δ."""
    return None if v["met"] else "no trial reached ‖B − B̂‖∞ <= δ, the hypothesis of the reduction"


def _given_delta_note(p: Point) -> str:
    return (
        f"max over {int(p.value('met'))} trials; exact worst case M(e^δ−1) = {p.value('exact_on'):.4g}; "
        f"bound/observed: tightest {p.value('tightest'):.3g} (worst trial; the label rests on it), typical "
        f"{p.value('typical'):.3g} (median trial)"
    )


ONSUPPORT = Statement(
    "expressivity.thm1.onsupport",
    where="notes p. 2, reduction to logits (on S)",
    statement="If ‖B − B̂‖∞ <= δ and Â = eps·exp(B̂), then |Â_ij − A_ij| <= M e^δ δ for (i, j) in the support S.",
    reading=(
        Noted(
            reading=Bound(
                "given-delta",
                "trials of the construction whose realised ‖B − B̂‖∞ is <= δ: worst |Â − A| on S "
                "against M e^δ δ (exact worst case M(e^δ − 1))",
                observed="on_abs", bound="on_bound", exact="exact_on", shown=("tightest", "typical"), trials="met",
                unmet=_met, value_name="exact worst case",
            ),
            note=_when_met(_given_delta_note),
            after=True,
        ),
        Noted(
            reading=Bound(
                "realised-delta",
                "every trial, with δ its own realised ‖B − B̂‖∞: worst ratio |Â − A| / (M e^δ δ) against 1",
                observed="on_all", bound="realised_bound", decide=("realised_ratio", 1.0), value_name="worst |Â − A| on S",
                bound_name="M e^δ δ",
            ),
            note=lambda p: f"worst |Â−A| / (M e^δ δ) over {p.stats['on_all'].count} trials; bound/observed in "
            + _span(p, "inverse_low", "inverse_high"),
            after=True,
        ),
        Noted(
            reading=Bound(
                "relative", "trials with ‖B − B̂‖∞ <= δ: worst |Â/A − 1| on S against e^δ δ", observed="on_rel",
                bound="relative_bound", exact="relative_exact", trials="met", unmet=_met, value_name="exact worst case",
            ),
            note=_when_met(lambda p: f"M e^δ δ / m = {p.value('on_bound') / p.value('m'):.4g} is the absolute bound "
            "divided by the smallest entry"),
            after=True,
        ),
    ),
    source="notes p. 2",
)  # fmt: skip


def _off_support_worst(p: Point) -> str:
    """The trials with an off-S entry above eps, and the worst entry, its trial and seeds (exact, in the context)."""
    if not p.value("met"):
        return ""
    c, mx, eps = p.context, p.stats["off_max"].high, p.value("eps")
    if not c["over"]:
        return "no off-S entry above eps"
    return (
        f"{c['over']}/{int(p.value('met'))} trials have an off-S entry > eps; worst: trial {c['trial']}, (i, j) = "
        f"{c['ij']}, Â_ij = {mx:.4g} = {mx / eps:.4g}·eps (d = {c['d']}, seed {c['seed']}, A from seed {c['A_seed']})"
    )


OFFSUPPORT = Statement(
    "expressivity.thm1.offsupport",
    where="notes p. 2, reduction to logits (off S)",
    statement="... and the error is eps on the zero entries of A.",
    reading=(
        Noted(
            reading=Bound(
                "range",
                "trials with ‖B − B̂‖∞ <= δ: every off-S entry Â_ij = eps·exp(B̂_ij) lies in "
                "[eps e^-δ, eps e^δ] (what the algebra gives); worst ratio to that range against 1",
                observed="off_max", bound="off_high", decide=("off_ratio", 1.0), trials="met", unmet=_met,
                loose_factor=None, value_name="largest off-S entry", bound_name="eps e^δ",
            ),
            note=_when_met(lambda p: f"off-S entries in [{p.value('off_min'):.4g}, {p.stats['off_max'].high:.4g}], range "
            f"{_span(p, 'off_low', 'off_high', '.4g')} (the worst ratio to its ends decides)"),
        ),
        Noted(
            reading=Bound(
                "literal", "trials with ‖B − B̂‖∞ <= δ: the off-S error |Â_ij − 0| is <= eps, read literally",
                observed="off_max", bound="eps", ci=("over_low", "over_high"), trials="met", unmet=_met,
                loose_factor=None, value_name="worst off-S error", bound_name="eps",
            ),
            note=_off_support_worst,
            after=True,
        ),
    ),
    source="notes p. 2",
)  # fmt: skip

SAN_MASS = Statement(
    "expressivity.san.mass",
    where="consequence of the notes' reduction for SAN (not stated in the notes)",
    statement="With ‖B − B̂‖∞ <= δ, the SAN row mass outside S is at most (L−k)eps e^δ / ((L−k)eps e^δ + k m e^-δ).",
    reading=Noted(
        reading=Bound(
            "bound", "trials with ‖B − B̂‖∞ <= δ: worst row mass of SAN(X) outside S against the bound",
            observed="san_off_mass", bound="san_bound", trials="met", unmet=_met, value_name="worst off-S row mass",
        ),
        note=_when_met(lambda p: f"worst row puts {p.stats['san_off_mass'].high:.1%} of its SAN mass off S: 'error "
        f"eps per entry' sums to (L−k)·eps = {p.value('off_sum'):.3g} per row vs k·m = {p.value('on_sum'):.3g} on S"),
        after=True,
    ),
)  # fmt: skip


def _rownorm_note(p: Point) -> str:
    d_jl, d_rownorm = p.value("d_jl"), p.value("d_rownorm")
    text = f"d_JL / d* = {d_jl / p.value('d_star'):.3g}"
    if d_rownorm:  # the dimension polarisation needs, where measured
        text += (
            f"; with max‖b_i‖² (what polarisation needs) in place of k max|B|² the dimension would be "
            f"{int(d_rownorm)} ({d_jl / d_rownorm:.3g}× smaller)"
        )
    return text


def _jl_ceiling(name: str, description: str, claimed: str, before: Callable[[Point], str], **after: Any) -> Scoped:
    """A JL claim at the notes' own d and ε, read against the union over the L² pairs of each
    pair's exact Chernoff bound (its ceiling)."""
    how = "exact inner-product law of every pair, Chernoff, union over the L² pairs"
    return Scoped(
        reading=Ceiling(
            name, description, event="fails", claimed=claimed, log_ceiling="log_ceiling", how=how,
            ceiling_name="Chernoff upper bound", value_name="Chernoff bound", before=before, **after,
        ),
        at_paper_params=True,
    )  # fmt: skip


JL_PAIRS = Statement(
    "expressivity.jl.pairs",
    where="notes p. 3, JL lemma + polarisation + union bound over the pairs (i, j)",
    statement="P(∃ i, j: |⟨R b1_i, R b2_j⟩ − ⟨b1_i, b2_j⟩| > ε‖b1_i‖‖b2_j‖) <= 4 L² exp(−ε² d/8) for Gaussian R = P/√d.",
    reading=_jl_ceiling(
        "union-bound",
        "at the notes' d = d_JL with the notes' ε = δ/(√k max|B|): 4 L² exp(−ε² d/8) against "
        "a computable upper bound on the true failure probability (the exact inner-product law "
        "of each pair, Chernoff, summed over the L² pairs), with the Monte Carlo rate",
        "claimed",
        lambda p: f"ε = δ/(√k max|B|) = {p.value('eps_jl'):.4g}",
    ),
    source="notes p. 3",
)

DIMENSION = Statement(
    "expressivity.thm1.dimension",
    where="notes p. 3, the dimension that guarantees ‖B − B̂‖∞ <= ε'",
    statement="With d = 8 ln(4L²/β) k max|B|² / δ² (the JL dimension with its constant), P(‖B − B̂‖∞ > δ) <= β.",
    reading=_jl_ceiling(
        "jl-constant",
        "at d = d_JL = 8 ln(4L²/β) k max|B|²/δ² (k max|B|² bounds max‖b1_i‖², as in the "
        "notes): β against a computable upper bound on the true P(‖B − B̂‖∞ > δ) (union over "
        "the pairs of the Chernoff bound of each pair's exact law), with the Monte Carlo rate",
        "beta",
        lambda p: f"d_JL = 8 ln(4L²/β) k max|B|²/δ² = {int(p.value('d_jl'))}",
        after=_rownorm_note,
    ),
    source="notes p. 3",
)


def _wider(limit: str, less: int) -> Callable[[Mapping[str, Any]], str | None]:
    """Vacuous where d* >= L − ``less``: the exact choice d = L is narrower and has zero error."""

    def vacuous(v: Mapping[str, Any]) -> str | None:
        d, bound = v["d"], int(v["L"]) - less
        return (
            f"d* = {d} >= {limit} = {bound}: the exact choice d = L (zero error) beats the construction"
            if d >= bound
            else None
        )

    return vacuous


def _per_k_log_l(p: Point) -> str:
    return f"d* = {p.params['d']} < L = {int(p.value('L'))}; d*/(k log L) = {p.value('d_per_k_log_L'):.3g}"


WIDTH = Statement(
    "expressivity.thm1.width",
    where="the theorem: d = O(k log L)",
    statement="The construction approximates A with a width d = O(k log L) smaller than the exact choice d = L "
    "(X = (B, I), zero error).",
    reading=tuple(
        Noted(
            reading=Bound(
                projection, description, observed="d_star", bound="L", trials="trials", loose_factor=None,
                vacuous=_wider(*limit),
            ),
            note=lambda p, less=limit[1]: "" if p.value("d_star") >= p.value("L") - less else _per_k_log_l(p),
        )
        for projection, description, limit in (
            ("gaussian", "measured d* (Gaussian R) at the run's instance against L: vacuous if d* >= L", ("L", 0)),
            ("orthogonal", "measured d* (orthogonal R) against L: vacuous if d* >= L − 1", ("L − 1", 1)),
        )
    )
    + (
        Noted(
            reading=Bound(
                "grid", "the (L, k) sweep: is d* < L at any configuration (Gaussian, d → ∞ law)?", observed="below",
                decide=("smallest", 1.0), trials="trials", loose_factor=None,
                vacuous=lambda v: None if v["below"] else f"d* >= L at all {int(v['configurations'])} "
                "configurations: the exact choice d = L beats the construction everywhere",
            ),
            note=lambda p: f"{int(p.value('below'))}/{int(p.value('configurations'))} configurations have d* < L; "
            f"smallest d*/L = {p.value('smallest'):.3g}",
        ),
    ),
)  # fmt: skip


def _exponent(name: str) -> Callable[[Point], str]:
    def what(p: Point) -> str:
        v = p.value
        return (
            f"log d* = a + p log k + q log log L over {int(v('configurations'))} configurations: {name} exponent "
            f"{v(name):.3g} {_span(p, name + '_low', name + '_high')} (the theorem allows <= 1)"
        )

    return what


#: The models of the least-squares fits of d* over the sweep besides C k log L, by their quantities.
OTHER_FITS = (("rownorm", "max‖b_i‖² log L / δ²"), ("notes", "max|B|² k log L / δ"))


def _ls_fit(p: Point) -> str:
    v = p.value
    others = "; ".join(f"d* = {v('C_' + q):.4g}·{model} (R² {v('r2_' + q):.3f})" for q, model in OTHER_FITS)
    return (
        f"C = {v('C'):.4g}, R² = {v('r2'):.3f}, max relative residual {v('max_rel_residual'):.2f}; other fits: {others}"
    )


def _klogl_heldout(p: Point) -> str:
    v = p.value
    above = v("measured") > v("c_fit") >= v("low_end")
    return (
        f"C = max d*/(k log L) = {v('c_fit'):.4g} over {int(v('configurations'))} configurations with L < "
        f"{p.params['L']}; held-out L = {p.params['L']}: worst k = {int(v('k_worst'))}, d*/(k log L) = "
        f"{v('measured'):.4g}, 95% CI {_span(p, 'low_end', 'high_end', '.4g')}"
        + (" (above C, but not significantly)" if above else "")
        + "; the lower 95% end decides"
    )


KLOGL = Statement(
    "expressivity.thm1.klogl",
    where="the theorem: d = O(k log L)",
    statement="The dimension needed grows at most like k log L.",
    reading=(
        Measure(
            "k-exponent",
            "log d* = a + p log k + q log log L over the sweep: the fitted p with its 95% t "
            "interval (a measurement: fitted and read on the same draws)",
            value="k", ci=("k_low", "k_high"), bound=1.0, trials="trials", sentence=_exponent("k"), level=None,
        ),
        Measure(
            "logl-exponent", "the fitted q of the same regression (a measurement)", value="log L", ci=("log L_low", "log L_high"),
            bound=1.0, trials="trials", sentence=_exponent("log L"), level=None,
        ),
        Measure(
            "ls-fit", "least squares d* = C k log L over the sweep, with R² and the other models (a measurement)",
            value="C", trials="trials", sentence=_ls_fit, level=None,
        ),
        Noted(
            reading=Bound(
                "heldout",
                "C = max d*/(k log L) fitted on the sweep's smaller L, tested on the largest L "
                "(independent draws): the lower 95% end of each held-out d* against C k log L",
                observed="measured", bound="c_fit", decide=("low_end", "c_fit"), ci=("low_end", "high_end"),
                trials="trials", loose_factor=None, value_name="held-out d*/(k log L)", bound_name="fitted C",
                trivial=lambda v: None if v["bounded"] else "too few draws to bound any held-out d* from below",
            ),
            note=_klogl_heldout,
        ),
    ),
)  # fmt: skip


def _heldout_counts(p: Point) -> str:
    fails = p.stats["fails"]
    return f"{int(fails.total)}/{fails.count} independent draws"


def _fails(name: str, description: str, note: Callable[[Point], str]) -> Noted:
    """A failure rate of fresh draws against β, with its note."""
    return Noted(reading=Probability(name, description, event="fails", claimed="beta"), note=note)


def _eps_heldout_note(p: Point) -> str:
    e, train = p.value("exponent"), p.stats["train"]
    return (
        f"C = max d*·δ^{e:g} = {p.value('C'):.4g} fitted at δ = {train.low:g},{train.high:g} (seed of the scaling "
        f"sweep); at δ = {p.params['delta']:.3g} the bound d = C/δ^{e:g} = {p.params['d']} fails in {_heldout_counts(p)}"
    )


def _m_max_a_heldout_note(p: Point) -> str:
    return (
        f"d* = {p.params['d']} measured at eps = {p.value('train'):g} is the formula's d at every eps (M = max A "
        f"fixed); at eps = {p.params['eps']:.3g} it fails in {_heldout_counts(p)}"
    )


def _eps_exponent(p: Point) -> str:
    v = p.value
    return (
        f"exponent of 1/δ in d* = {v('p'):.3g}, bracketed in {_span(p, 'p_low', 'p_high')} by the bisection "
        f"brackets (the formula says 1, JL predicts 2); d*·δ grows from {v('d_delta_large'):.4g} to "
        f"{v('d_delta_small'):.4g} as δ shrinks; fitted on these draws, so tested only in the eps-heldout reading"
    )


def _m_max_a(p: Point) -> str:
    v = p.value
    text = (
        f"at fixed M = {v('M'):g}, d* grows ×{v('grow'):.3g} as eps goes from {v('eps_max'):.3g} to "
        f"{v('eps_min'):.3g} (max|B| {v('B_min'):.3g} → {v('B_max'):.3g}); the formula with M = max A does not "
        "depend on eps"
    )
    if "M_ratio" in p.stats:
        r, g = v("M_ratio"), v("M_growth")
        text += f"; at fixed m, M/m ×{r:g} makes M² grow ×{r * r:g} but d* only ×{g:.3g} (d* follows max|log(A/eps)|², not M²)"
    return text


def _m_max_b(p: Point) -> str:
    lo, hi = p.value("c_min"), p.value("c_max")
    return (
        f"C = d*·δ/(max|B|² k log L) in [{lo:.3g}, {hi:.3g}] over eps (ratio {hi / lo:.3g}; the eps-exponent "
        "reading shows C must grow like 1/δ)"
    )


STATED = Statement(
    "expressivity.notes.dstated",
    where="notes p. 3, the formula d = O(M² k log L / ε')",
    statement="d = O(M² k log L / ε') suffices for ‖B − B̂‖∞ <= ε', with M 'a sup of the coefficients'.",
    reading=(
        Measure(
            "eps-exponent",
            "the exponent of 1/ε' (ε' = δ) in d*, from the δ scaling sweep, bracketed by the "
            "bisection brackets (a measurement: the formula says 1, JL gives 2)",
            value="p",
            ci=("p_low", "p_high"),
            bound=1.0,
            trials="trials",
            sentence=_eps_exponent,
            level=None,
        ),
        _fails(
            "eps-heldout",
            "C = max d*·δ fitted at the two largest δ of the sweep; at the smallest δ, d = C/δ "
            "is tested on independent draws: failure rate of ‖B − B̂‖∞ <= δ against β",
            _eps_heldout_note,
        ),
        Measure(
            "m-max-a",
            "M = max A_ij, so the formula does not depend on eps: growth of d* as eps falls at fixed M (a measurement)",
            value="d_max",
            bound="d_stated",
            trials="trials",
            sentence=_m_max_a,
            level=None,
        ),
        _fails(
            "m-max-a-heldout",
            "M = max A_ij: the d* fitted at the largest eps is tested on independent draws "
            "at the smallest eps: failure rate against β",
            _m_max_a_heldout_note,
        ),
        Measure(
            "m-max-b",
            "M = max|B_ij| = max|log(A/eps)|: the range of d*·δ/(max|B|² k log L) over eps (a measurement)",
            value="c_max",
            trials="trials",
            sentence=_m_max_b,
            level=None,
        ),
    ),
    source="notes p. 3",
)  # fmt: skip

# The single-vector lemmas are read against their exact laws along d = 1..L by the
# declarative API (:mod:`.jl_lemma` declares the check; the quantities are its setup's).
JL_GAUSSIAN = Statement(
    "expressivity.jl.gaussian",
    where="notes p. 3, the lemma",
    statement="For fixed u and R = P/√d (P i.i.d. N(0, 1)): P(|‖Ru‖² − ‖u‖²| >= ε‖u‖²) <= 2 exp(−ε² d/8).",
    reading=ExactBound(
        "exact-law",
        "‖Ru‖²/‖u‖² ~ χ²_d/d exactly: the bound against the exact probability at every d = 1..L (worst ratio)",
        exact="p_gaussian", bound="bound_gaussian", label="2 exp(−ε²d/8)", over="d",
    ),
    source="notes p. 3",
)  # fmt: skip

JL_ORTHOGONAL = Statement(
    "expressivity.jl.orthogonal",
    where="notes p. 4, remark: the orthogonal variant R^ort = Q",
    statement="With R^ort from the QR decomposition of a Gaussian matrix, P(deviation) <= 2(1 − 1/(L+2)) exp(−c ε² d).",
    reading=(
        ExactBound(
            "scaled",
            "R = √(L/d) Qᵀ (norms preserved in mean), c = 1/8 (c is unspecified): the bound "
            "against the exact Beta law at every d = 1..L, with the one looseness rule",
            exact="p_orthogonal", bound="bound_orthogonal", label="2(1−1/(L+2)) exp(−ε²d/8)", over="d",
            minimum=(("c_orthogonal", "largest c for which the bound holds at every d <= L (c is unspecified)"),),
            count=(("orthogonal_below_gaussian", "orthogonal <= Gaussian exact probability"),),
        ),
        ExactBound(
            "unscaled",
            "R = Qᵀ as the notes write it (no √(L/d)), c = 1/8: the bound against the exact law "
            "of ‖Qᵀu‖²/‖u‖² ~ Beta(d/2, (L−d)/2) at every d = 1..L",
            exact="p_unscaled", bound="bound_orthogonal", label="2(1−1/(L+2)) exp(−ε²d/8)", over="d", ratios=False,
            minimum=(("c_unscaled", "R = Qᵀ shrinks norms by d/L in mean; largest c for which the bound holds"),),
        ),
    ),
    source="notes p. 4",
)  # fmt: skip


def _norm_note(scale: str, suffix: str) -> Callable[[Point], str]:
    def note(p: Point) -> str:
        v = p.value
        return (
            f"E‖Ru‖²/‖u‖² = {v('mean'):.4g} exactly ({scale}); Monte Carlo {v('mc_mean'):.4g} "
            f"{_span(p, 'mc_low', 'mc_high', '.4g')}" + (suffix if v("mean") != 1 else "")
        )

    return note


def _mean_reading(name: str, description: str, scale: str, suffix: str) -> Noted:
    return Noted(
        reading=Bound(
            name, description, observed="mc_mean", bound=1.0, decide=("residual", 1e-12), exact="mean", ci=("mc_low",
            "mc_high"), trials="trials", identity=True, value_name="E‖Ru‖²/‖u‖²", bound_name="target",
        ),
        note=_norm_note(scale, suffix),
    )  # fmt: skip


JL_ORTH_NORM = Statement(
    "expressivity.jl.orthnorm",
    where="notes p. 4, remark (what R^ort = Q must satisfy to be a JL projection)",
    statement="R^ort preserves norms in mean, E‖Ru‖² = ‖u‖², and concentrates at least as well as Gaussian R.",
    reading=(
        _mean_reading(
            "unscaled",
            "R = Qᵀ (d×L, orthonormal rows): exact E‖Ru‖²/‖u‖² = d/L against 1 (identity), "
            "with a Monte Carlo mean as a check of the law",
            "d/L",
            "; the √(L/d) scale is needed",
        ),
        _mean_reading("scaled", "R = √(L/d) Qᵀ: exact mean against 1 (identity), Monte Carlo check", "1", ""),
        Noted(
            reading=Bound(
                "variance",
                "Var(‖Ru‖²/‖u‖²) of the scaled orthogonal R, 2(L−d)/(d(L+2)), against the Gaussian "
                "2/d (Monte Carlo check of both)",
                observed="mc_var", bound="var_gaussian", decide=("var_orthogonal", "var_gaussian"),
                exact="var_orthogonal", trials="trials", loose_factor=None, value_name="variance",
                bound_name="Gaussian's",
            ),
            note=lambda p: f"Var = 2(L−d)/(d(L+2)) = {p.value('var_orthogonal'):.4g} vs Gaussian 2/d = "
            f"{p.value('var_gaussian'):.4g} (ratio (L−d)/(L+2) = {p.value('var_orthogonal') / p.value('var_gaussian'):.3g}); "
            f"Monte Carlo {p.value('mc_var'):.4g} and {p.value('mc_var_gaussian'):.4g}",
        ),
    ),
    source="notes p. 4",
)  # fmt: skip


def _orthogonal_width_note(p: Point) -> str:
    v = p.value
    return (
        f"{int(v('live'))}/{int(v('configurations'))} configurations exercise the claim (d*_Gaussian < L); "
        f"d*_orth/d*_gauss there: tightest {v('tightest'):.3g}, median {v('typical'):.3g} (the label rests on the "
        f"tightest); over all configurations in [{v('ratio_min'):.3g}, {p.stats['ratio_max'].high:.3g}]; orthogonal "
        f"d* = L (only the exact choice works) in {int(v('orthogonal_at_L'))}/{int(v('orthogonal'))} configurations"
    )


ORTH_WIDTH = Statement(
    "expressivity.jl.orthogonaldim",
    where="notes p. 4, remark: orthogonal projections in the construction",
    statement="Orthogonal projections need no larger d than Gaussian ones.",
    reading=Noted(
        reading=Bound(
            "vs-gaussian",
            "the sweep: d*_orthogonal <= d*_Gaussian at every configuration where the claim can "
            "fail (d*_Gaussian < L: orthogonal R has d <= L and d = L is exact, so elsewhere it "
            "cannot fail); one looseness rule on the worst exercised ratio",
            observed="ratio_max", decide=("tightest", 1.0), trials="trials", shown=("tightest", "typical"),
            trivial=lambda v: None if v["live"] else f"d*_Gaussian >= L at all {int(v['configurations'])} "
            "configurations, and orthogonal R has d <= L with d = L exact: orthogonal d* <= Gaussian d* whatever the draws",
        ),
        note=_orthogonal_width_note,
        after=True,
    ),
    source="notes p. 4",
)  # fmt: skip

ASYMPTOTIC = Statement(
    "expressivity.tool.asymptotic",
    where="attnspec's method (not a claim of the paper)",
    statement="The d → ∞ law √d (RᵀR − I) → Z reproduces the d* of the exact sampler.",
    reading=Noted(
        reading=Bound(
            "vs-exact",
            "sweep configurations with L <= 128: number of exact d* outside the asymptotic "
            "interval widened by the bisection bracket, against 0",
            observed="ratio_max", decide=("disagree", 0.0), trials="trials", loose_factor=None,
        ),
        note=lambda p: f"exact/asymptotic d* in [{p.value('ratio_min'):.3g}, {p.stats['ratio_max'].high:.3g}] over "
        f"{int(p.value('configurations'))} configurations with L <= {int(p.value('L_max'))}; "
        f"{int(p.value('disagree'))} disagree beyond the CI and bisection bracket",
    ),
)  # fmt: skip


def _row_only_note(factorization: str) -> Callable[[Point], str]:
    def note(p: Point) -> str:
        v, fails = p.value, p.stats["fails"]
        return (
            f"{factorization} factorization: d = {p.params['d']} (upper 95% end of d* = {int(v('d_fit_point'))}) "
            f"fitted on a k-per-row-and-column A fails on the dense-column A (column of "
            f"{int(v('max_column_nonzeros'))} nonzeros) in {int(fails.total)}/{fails.count} fresh draws; that A's "
            f"own d* = {int(v('d_row_only'))} ({v('d_row_only') / v('d_fit_point'):.3g}× the training d*)"
        )

    return note


def _column_unmet(p: Point) -> str:
    return f"A has a column with {int(p.value('max_column_nonzeros'))} nonzeros: the column factorization needs column sparsity"


def _ratio_dimension(p: Point) -> str:
    v = p.value
    return (
        f"d* for ratio precision δ = {int(v('d_ratio'))} {_span(p, 'd_ratio_low', 'd_ratio_high', '.4g')} vs "
        f"additive {int(v('d_additive'))} {_span(p, 'd_low', 'd_high', '.4g')} (ratio {v('ratio'):.3g}), same "
        f"{int(v('trials'))} draws of the d → ∞ law"
    )


HYPOTHESES = Statement(
    "expressivity.thm1.hypotheses",
    where="the theorem's hypotheses: notes (row sparsity, additive precision) vs the "
    "paper's abstract (k nonzeros per row and column, element ratios preserved)",
    statement="The construction approximates A at d = O(k log L) under the notes' hypotheses (k nonzeros per row, "
    "‖B − B̂‖∞ <= δ) as under the paper's (k per row and column, ratios A_ij/A_il preserved).",
    reading=(
        _fails(
            "row-only",
            "A with k nonzeros per row and one dense column (row sparsity only), row factorization: "
            "the d* (upper 95% end) of a k-per-row-and-column A of the same size, tested on "
            "independent draws (d → ∞ law): failure rate against β",
            _row_only_note("row"),
        ),
        Noted(
            reading=Unmet(
                reading=Probability(
                    "row-only-column",
                    "the same A with the column factorization B = I·B (the notes' 'analogous' column "
                    "case): its hypothesis (column sparsity) is not met; the failure rate is reported",
                    event="fails", claimed="beta",
                ),
                unmet=_column_unmet,
            ),
            note=_row_only_note("column"),
        ),
        Noted(
            reading=Bound(
                "ratio-implied",
                "the paper's precision, ratios: ‖B − B̂‖∞ <= δ implies |log(Â_ij/Â_il) − "
                "log(A_ij/A_il)| <= 2δ on S; worst log-ratio error over the trials at d* with "
                "‖B − B̂‖∞ <= δ against 2δ",
                observed="ratio_on",
                bound="two_delta",
                trials="met",
                unmet=lambda v: None if v["met"] else "no trial reached ‖B − B̂‖∞ <= δ",
            ),
            note=lambda p: "worst log-ratio error within a row's support over the trials at d* with ‖B − B̂‖∞ <= δ",
        ),
        Measure(
            "ratio-dimension",
            "d* for ratio precision δ (max over rows of the range of E on S) against d* for "
            "additive precision δ, from the same draws of the d → ∞ law (a measurement)",
            value="ratio",
            sentence=_ratio_dimension,
            level=None,
            trials="trials",
        ),
    ),
)  # fmt: skip

#: Relative tolerance of the construction's identity: float64 round-off of products of length <= 2d.
CONSTRUCTION_TOLERANCE = 1e-12

CONSTRUCTION = Statement(
    "expressivity.thm1.construction",
    where="notes p. 2, 'Compresser la matrice': the construction of X, W_Q, W_K",
    statement="With X = (B̂1, B̂2) ∈ R^{L×2d}, W_Q = I_{2d} and W_K = [[0, 0], [I_d, 0]]: X W_Q W_Kᵀ Xᵀ = B̂1 B̂2ᵀ "
    "(exactly), so SA(X) = exp(B̂1 B̂2ᵀ).",
    reading=(
        Scoped(
            reading=Identity(
                "identity",
                "the construction materialised (X, W_Q, W_K from B̂1 = B1 Rᵀ, B̂2 = B2 Rᵀ, Gaussian R): worst "
                "|X W_Q W_Kᵀ Xᵀ − B1 Rᵀ R B2ᵀ| relative to max|B1 Rᵀ R B2ᵀ|, against float64 round-off, "
                "row and column factorizations, d below and above L",
                residual="residual", tol=CONSTRUCTION_TOLERANCE,
            ),
            where=lambda params: "d" not in params, at_paper_params=True,
        ),
        Scoped(
            reading=Identity(
                "exact-choice",
                "the d = L choice X = (B, I): X W_Q W_Kᵀ Xᵀ = B exactly (the width the construction must beat)",
                residual="exact_choice", tol=CONSTRUCTION_TOLERANCE,
            ),
            where=lambda params: "d" in params, at_paper_params=True,
        ),
    ),
    source="notes p. 2",
)  # fmt: skip

CLAIMS = (
    CONSTRUCTION,
    ONSUPPORT,
    OFFSUPPORT,
    SAN_MASS,
    JL_PAIRS,
    DIMENSION,
    WIDTH,
    KLOGL,
    STATED,
    JL_GAUSSIAN,
    JL_ORTHOGONAL,
    JL_ORTH_NORM,
    ORTH_WIDTH,
    ASYMPTOTIC,
    HYPOTHESES,
)
register(*(c.registered(COMMAND) for c in CLAIMS))
# names for one-screen tables, where the claim's name is long
register_short_names(
    {
        "expressivity.jl.gaussian": "JL lemma (p. 3)",
        "expressivity.jl.orthnorm": "Orthogonal R, norms",
        "expressivity.jl.orthogonal": "Orthogonal R (p. 4)",
        "expressivity.jl.orthogonaldim": "Orthogonal R, d*",
        "expressivity.jl.pairs": "JL + union bound",
        "expressivity.notes.dstated": "d = O(M² k log L / ε')",
        "expressivity.san.mass": "SAN row mass",
        "expressivity.thm1.construction": "Construction (p. 2)",
        "expressivity.thm1.dimension": "JL dimension (p. 3)",
        "expressivity.thm1.hypotheses": "Hypotheses",
        "expressivity.thm1.klogl": "d = O(k log L), fit",
        "expressivity.thm1.width": "d = O(k log L), width",
        "expressivity.thm1.offsupport": "Off S (p. 2)",
        "expressivity.thm1.onsupport": "On S (p. 2)",
        "expressivity.tool.asymptotic": "attnspec's d → ∞ law",
    }
)
