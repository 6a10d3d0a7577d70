"""The parameters of one `jl-check` run: options parsed, validated and priced before any
computation, so that a bad option costs no work."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attnspec.errors import InputError, check_choice, check_range
from attnspec.options.checks import option_names
from attnspec.theory.linformer import lemma1 as L1
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer.dimensions import check_eps, check_ks, check_n

COMMAND = "jl-check"
CLAIM_GROUPS: tuple[str, ...] = ("lemma1.eq11", "lemma1.eq12", "thm1", "thm2", "eq4")
_ALIASES = {"lemma1": ("lemma1.eq11", "lemma1.eq12"), "all": CLAIM_GROUPS}
#: input limits, checked before any work: values of k, trials, n with dense n×n
#: attention (Theorem 1, eq. 4), n otherwise, d, and the memory any one part may need
MAX_K_VALUES = 1_000
MAX_TRIALS = 10_000_000
MAX_N_DENSE = 16_384
MAX_N = 1_000_000
MAX_D = 4_096
MEMORY_LIMIT_BYTES = 8 * 2**30


def _items(spec: str | Sequence[str]) -> list[str]:
    """The items of a comma list (or of a sequence), stripped, empty ones left out."""
    return [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]


def parse_claims(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"all"``, ``"lemma1"``, or a comma list of lemma1.eq11, lemma1.eq12, thm1, thm2, eq4
    (each may carry the ``linformer.`` prefix of the claim ids).

    Parameters
    ----------
    spec : str or sequence of str
        The comma list, or its items; spaces around an item and empty items are ignored.

    Returns
    -------
    tuple of str
        The claim groups of :data:`CLAIM_GROUPS`, aliases expanded (``lemma1``: both
        equations; ``all``: every group), in the order given, each once.

    Raises
    ------
    InputError
        No item, or an item that is not a claim group, ``lemma1`` or ``all``.
    """
    items = [s.removeprefix("linformer.") for s in _items(spec)]
    if not items:
        raise InputError(f"claims must name at least one of {', '.join(CLAIM_GROUPS)} (or lemma1, all), got none")
    out: list[str] = []
    for it in items:
        if it in _ALIASES:
            out.extend(_ALIASES[it])
        elif it in CLAIM_GROUPS:
            out.append(it)
        else:
            raise InputError(f"claim must be one of {', '.join(CLAIM_GROUPS)}, lemma1 or all, got {it!r}")
    return tuple(dict.fromkeys(out))


def parse_families(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"all"`` or a comma list of gaussian, orthogonal, achlioptas, sparse.

    Parameters
    ----------
    spec : str or sequence of str
        The comma list, or its items; spaces around an item and empty items are ignored.
        ``all`` stands alone.

    Returns
    -------
    tuple of str
        The projection families, in the order given, each once; every family of
        :data:`attnspec.theory.linformer.samplers.FAMILIES` for ``all``.

    Raises
    ------
    InputError
        No item, or an item that is not a family.
    """
    items = _items(spec)
    if items == ["all"]:
        return S.FAMILIES
    if not items:
        raise InputError(f"family must name at least one of {', '.join(S.FAMILIES)} (or all), got none")
    for it in items:
        S.check_family(it)
    return tuple(dict.fromkeys(items))


def parse_ks(spec: str) -> list[int]:
    """k values: a comma list of integers and inclusive ranges ``start:stop[:step]``.

    ``"64,128,256"``, ``"64:4096:64"`` (64, 128, ..., 4096), ``"16:32"`` (step 1).

    Parameters
    ----------
    spec : str
        ``--k``: integers and ranges separated by single commas.

    Returns
    -------
    list of int
        The values, sorted, each once, each in 1..:data:`MAX_N`.

    Raises
    ------
    InputError
        An empty item, an item that is not an integer or a range, a range with step < 1 or
        stop < start, more than :data:`MAX_K_VALUES` values from a range, or a value below
        1 or above :data:`MAX_N`.
    """
    out: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:  # "64," or "64,,128": a value was left out, not an empty sweep to skip
            raise InputError(
                f"k has an empty item in {spec!r}; write the values separated by single commas, e.g. 64,128"
            )
        try:
            if ":" in part:
                fields = [int(x) for x in part.split(":")]
                if len(fields) not in (2, 3):
                    raise ValueError
                start, stop = fields[0], fields[1]
                step = fields[2] if len(fields) == 3 else 1
                if step < 1:
                    raise InputError(f"k range step must be >= 1, got {step} in {part!r}")
                if stop < start:
                    raise InputError(f"k range {part!r} is empty (stop < start)")
                count = (stop - start) // step + 1
                if count + len(out) > MAX_K_VALUES:
                    raise InputError(
                        f"k range {part!r} has {count:,} values (about {count * 8 / 2**30:.3g} GiB as a "
                        f"list, each a Monte Carlo point); at most {MAX_K_VALUES:,} values of k allowed"
                    )
                out.extend(range(start, stop + 1, step))
            else:
                out.append(int(part))
        except ValueError as e:
            if isinstance(e, InputError):
                raise
            raise InputError(f"k must be integers or ranges start:stop[:step], got {part!r}") from None
    if not out:
        raise InputError(f"k must hold at least one value, got {spec!r}")
    for k in out:
        check_range("k", k, low=1)
        if k > MAX_N:  # k <= n <= MAX_N; also keeps every k an int64
            raise InputError(f"k = {k} is larger than the largest n allowed ({MAX_N:,}); Lemma 1 needs k <= n")
    return sorted(set(out))


@dataclass
class JLConfig:
    """Every parameter of a `jl-check` run (see ``attnspec jl-check --help``)."""

    n: int = 4096
    eps: float = 0.1
    ks: Sequence[int] | None = None
    trials: int = 10_000
    trials_other: int = 1_000
    seed: int = 0
    families: Sequence[str] = S.FAMILIES
    claims: Sequence[str] = CLAIM_GROUPS
    d: int = 64
    temperature: float = 1.0
    rhos: Sequence[float] = L1.DEFAULT_RHOS
    attention_kinds: Sequence[str] = T1.ATTENTION_KINDS
    model: str | None = None
    data: str | None = None
    data_dir: str | None = None
    count: int = 2

    def validate(self) -> None:
        """Raise :class:`InputError` naming the first bad parameter and its allowed range."""
        check_n(self.n)
        check_eps(self.eps)
        check_range("trials", self.trials, low=1)
        check_range("trials_other", self.trials_other, low=1)
        check_range("d", self.d, low=2)
        check_range("temperature", self.temperature, low=0.0, low_open=True)
        check_range("count", self.count, low=1)
        if self.ks is not None:
            check_ks(self.ks)
        parse_claims(list(self.claims))
        parse_families(list(self.families))
        for a in self.attention_kinds:
            check_choice("attention kind", a, T1.ATTENTION_KINDS)
        if (self.model is None) != (self.data is None):
            raise InputError("--model and --data go together: give both (real attention) or neither")
        self.check_budget()

    def check_budget(self) -> None:
        """Refuse, in one line naming the value, its estimate and the limit, what could not
        run: k > n (Lemma 1 needs 1 <= k <= n; at k >= n the theorems reduce nothing), and
        sizes whose memory (or time) is out of reach on one machine."""
        n, d = int(self.n), int(self.d)
        claims = parse_claims(list(self.claims))
        if self.ks is not None:
            big = [int(k) for k in self.ks if int(k) > n]
            if big:
                raise InputError(
                    f"k = {big[0]} > n = {n}: Lemma 1 needs 1 <= k <= n and at k >= n the theorems reduce "
                    f"nothing; give k <= n (the theorems' own k is added and reported by itself)"
                )
        gib = 2**30
        dense = any(c in ("thm1", "eq4") for c in claims)
        mem_dense = 3 * 8 * n * n  # P (float64), its float32 copy and the LU of the inverse iteration
        if dense and n > MAX_N_DENSE:
            raise InputError(
                f"n = {n:,} needs about {mem_dense / gib:.3g} GiB for Theorem 1's dense n×n attention "
                f"(and eq. 4's); at most n = {MAX_N_DENSE:,} with thm1 or eq4 (or choose --claims "
                f"lemma1,thm2)"
            )
        if n > MAX_N:
            raise InputError(
                f"n = {n:,} needs about {16 * n * max(self.trials_other, 1) / gib:.3g} GiB for Lemma 1's "
                f"pair sampler; at most n = {MAX_N:,}"
            )
        if "thm2" in claims or "eq4" in claims:
            mem_d = 8 * (3 * n * d + 2 * d * d + 3 * 500 * d)
            if d > MAX_D or mem_d > MEMORY_LIMIT_BYTES:
                raise InputError(
                    f"d = {d:,} needs about {mem_d / gib:.3g} GiB for Theorem 2's Q, K, V ({n}×{d} each) "
                    f"and O(d²) work per row; at most d = {MAX_D:,}"
                )
        for name, t in (("trials", self.trials), ("trials_other", self.trials_other)):
            if t > MAX_TRIALS:
                mem = 8 * 8 * t  # the Gaussian chi-square draws held per k, their failure masks and samples
                raise InputError(
                    f"{name} = {t:,} needs about {mem / gib:.3g} GiB for Lemma 1's draws held per k and "
                    f"about {t * 1e-6:.3g} CPU-hours at ~1 µs per trial and point; at most "
                    f"{MAX_TRIALS:,}"
                )


def config_from_options(options: Mapping[str, Any]) -> JLConfig:
    """A validated :class:`JLConfig` from options by CLI name (``k`` as text like ``"64,128"`` or a list).

    Parameters
    ----------
    options : mapping of str to object
        Option name → value, the names jl-check declares (``n``, ``eps``, ``k``, ``trials``,
        ``trials_other``, ``seed``, ``family``, ``claims``, ``d``, ``temperature``,
        ``model``, ``data``, ``data_dir``, ``count``); an option left out takes its default
        (``k``: None, the default sweep).

    Returns
    -------
    JLConfig
        The run's parameters, validated (:meth:`JLConfig.validate`).

    Raises
    ------
    InputError
        Naming the option and what is allowed, before any computation.
    """
    o = dict(options)
    unknown = set(o) - set(option_names(COMMAND))  # declared in attnspec.options.checks
    if unknown:
        raise InputError(f"jl-check has no option {', '.join(sorted(unknown))}")
    k = o.get("k")
    ks = parse_ks(k) if isinstance(k, str) else (None if k is None else parse_ks(",".join(str(int(x)) for x in k)))
    defaults = JLConfig()
    data_dir = o.get("data_dir")
    cfg = JLConfig(
        n=int(o.get("n", defaults.n)),
        eps=float(o.get("eps", defaults.eps)),
        ks=ks,
        trials=int(o.get("trials", defaults.trials)),
        trials_other=int(o.get("trials_other", defaults.trials_other)),
        seed=int(o.get("seed", 0)),
        families=parse_families(o.get("family", "all")),
        claims=parse_claims(o.get("claims", "all")),
        d=int(o.get("d", defaults.d)),
        temperature=float(o.get("temperature", defaults.temperature)),
        model=o.get("model"),
        data=o.get("data"),
        data_dir=str(data_dir) if data_dir is not None else None,
        count=int(o.get("count", defaults.count)),
    )
    cfg.validate()
    return cfg
