"""attnspec.theory.osa.train: data pipeline, models, training loop, summaries, validation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from attnspec.errors import InputError
from attnspec.numerics.stats import mean_ci
from attnspec.theory.osa import OrthogonalSelfAttention
from attnspec.theory.osa import train as ot

TINY = dict(seeds=2, epochs=1, depth=2, dim=16, heads=2)


@pytest.fixture(scope="module")
def digits() -> ot.DigitsSplit:
    return ot.load_digits_split(patch_size=2, test_fraction=0.2, seed=7)


# ----------------------------------------------------------------------------- data


def test_patchify_takes_row_major_blocks() -> None:
    img = torch.arange(64, dtype=torch.float32).reshape(1, 8, 8)
    p = ot.patchify(img, 2)  # (1, 16, 4)
    assert p.shape == (1, 16, 4)
    assert p[0, 0].tolist() == [0, 1, 8, 9]  # top-left 2x2 block, row-major
    assert p[0, 1].tolist() == [2, 3, 10, 11]  # its right neighbour
    assert p[0, 4].tolist() == [16, 17, 24, 25]  # first block of the second block-row
    assert ot.patchify(img, 4).shape == (1, 4, 16)
    assert torch.equal(ot.patchify(img, 1).reshape(1, 8, 8), img)
    with pytest.raises(InputError, match="patch_size must divide"):
        ot.patchify(img, 3)


def test_digits_split_shapes_stratified_and_standardised(digits: ot.DigitsSplit) -> None:
    from sklearn.datasets import load_digits

    # 360 test images; of the 1,437 left, 216 (15 %) validate and 1,221 fit
    assert digits.x_train.shape == (1221, 16, 4) and digits.x_val.shape == (216, 16, 4)
    assert digits.x_test.shape == (360, 16, 4)
    assert digits.y_train.shape == (1221,) and digits.y_val.shape == (216,) and digits.y_test.shape == (360,)
    assert digits.x_train.dtype == torch.float32 and digits.y_train.dtype == torch.int64
    assert set(digits.train_index).isdisjoint(digits.test_index)
    assert len(set(digits.train_index) | set(digits.val_index) | set(digits.test_index)) == 1797
    # stratified: every class is about 20 % test
    counts = np.bincount(digits.y_test.numpy(), minlength=10)
    assert counts.min() >= 34 and counts.max() <= 38
    # standardised with the fit split's statistics only
    assert abs(float(digits.x_train.mean())) < 1e-4
    assert abs(float(digits.x_train.std(unbiased=False)) - 1) < 1e-4
    # the tokens are the real images: undo the scaling and the patching
    raw = load_digits()
    back = digits.x_test[:5].reshape(5, 4, 4, 2, 2).permute(0, 1, 3, 2, 4).reshape(5, 8, 8)
    back = back * digits.std + digits.mean
    np.testing.assert_allclose(back.numpy(), raw.images[digits.test_index[:5]], atol=1e-4)
    assert digits.y_test[:5].tolist() == raw.target[digits.test_index[:5]].tolist()


def test_digits_split_is_determined_by_seed(digits: ot.DigitsSplit) -> None:
    again = ot.load_digits_split(patch_size=2, test_fraction=0.2, seed=7)
    other = ot.load_digits_split(patch_size=2, test_fraction=0.2, seed=8)
    assert np.array_equal(digits.test_index, again.test_index)
    assert torch.equal(digits.x_train, again.x_train)
    assert not np.array_equal(np.sort(digits.test_index), np.sort(other.test_index))


# ----------------------------------------------------------------------------- models


@pytest.mark.parametrize("name", ot.MODELS)
def test_every_model_maps_patches_to_logits(name: str, digits: ot.DigitsSplit) -> None:
    cfg = ot.TrainConfig(**TINY)
    model = ot.build_model(name, cfg, seed=3)
    logits = model(digits.x_test[:5])
    assert logits.shape == (5, 10)
    assert torch.isfinite(logits).all()
    assert ot.count_parameters(model) > 0


def _layer_norms(model: nn.Module) -> int:
    return sum(isinstance(m, nn.LayerNorm) for m in model.modules())


def test_architectures_have_the_advertised_skips_and_norms() -> None:
    cfg = ot.TrainConfig(**TINY)
    vit, noskip, bare = (ot.build_model(m, cfg, 0) for m in ("vit", "vit-noskip", "vit-noskip-noln"))
    assert all(b.skip for b in vit.blocks) and _layer_norms(vit) == 2 * cfg.depth + 1
    assert not any(b.skip for b in noskip.blocks) and _layer_norms(noskip) == 2 * cfg.depth + 1
    assert not any(b.skip for b in bare.blocks) and _layer_norms(bare) == 0
    for name, basis in (("osa-qr", "qr"), ("osa-ns", "newton-schulz")):
        osa = ot.build_model(name, cfg, 0)
        assert _layer_norms(osa) == 0
        assert not any(b.skip for b in osa.blocks)
        attns = [b.attn for b in osa.blocks]
        assert all(isinstance(a, OrthogonalSelfAttention) and a.basis == basis for a in attns)
        assert not any(isinstance(m, ot.SoftmaxAttention) for m in osa.modules())


def test_osa_transformer_has_no_skip_path_behaviourally(digits: ot.DigitsSplit) -> None:
    """With the attention output zeroed in block 0, a skipless model forgets its input
    (every image gives the same logits); the ViT with skips does not."""
    cfg = ot.TrainConfig(**TINY)
    x = digits.x_test[:8]
    for name in ("osa-qr", "osa-ns", "vit-noskip", "vit"):
        model = ot.build_model(name, cfg, 1)
        with torch.no_grad():
            attn = model.blocks[0].attn
            (attn.w_o if name.startswith("osa") else attn.o.weight).zero_()
            if not name.startswith("osa"):
                attn.o.bias.zero_()
            logits = model(x)
        spread = float((logits - logits[:1]).abs().max())
        if name == "vit":
            assert spread > 1e-3
        else:
            assert spread < 1e-6, name


def test_osa_transformer_uses_the_paper_initialisation() -> None:
    cfg = ot.TrainConfig(**TINY)
    model = ot.build_model("osa-qr", cfg, 5)
    for blk in model.blocks:
        a = blk.attn
        assert torch.allclose(a.alpha, torch.full_like(a.alpha, cfg.alpha_init))
        u = torch.cat([a.w_q, a.w_k], dim=-1)  # (H, d, 2 d_v): orthonormal columns per head
        eye = torch.eye(u.shape[-1]).expand(u.shape[0], -1, -1)
        assert torch.allclose(u.mT @ u, eye, atol=1e-5)
        # SUO MLP: fc1 (4d x d) has orthogonal columns scaled by sqrt(4): W^T W = 4 I; fc2 orthonormal rows
        w1, w2 = blk.mlp.fc1.weight, blk.mlp.fc2.weight
        assert torch.allclose(w1.T @ w1, 4 * torch.eye(cfg.dim), atol=1e-4)
        assert torch.allclose(w2 @ w2.T, torch.eye(cfg.dim), atol=1e-5)
        assert torch.count_nonzero(blk.mlp.fc1.bias) == 0
    assert float(model.embed.pos.detach().abs().max()) <= 0.04 + 1e-7  # N(0, 0.02²) truncated at 2σ
    assert float(model.embed.cls.detach().abs().max()) <= 0.04 + 1e-7


def test_vit_uses_xavier_uniform_and_zero_bias() -> None:
    cfg = ot.TrainConfig(**TINY)
    model = ot.build_model("vit", cfg, 5)
    w = model.blocks[0].mlp.fc1.weight  # (4d, d)
    bound = math.sqrt(6 / (w.shape[0] + w.shape[1]))
    w = w.detach()
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.8 * bound
    assert torch.count_nonzero(model.blocks[0].attn.q.bias) == 0


def test_build_model_is_seeded_and_leaves_global_rng_alone() -> None:
    cfg = ot.TrainConfig(**TINY)
    state = torch.get_rng_state()
    a = ot.build_model("osa-ns", cfg, 11).state_dict()
    b = ot.build_model("osa-ns", cfg, 11).state_dict()
    c = ot.build_model("osa-ns", cfg, 12).state_dict()
    assert torch.equal(torch.get_rng_state(), state)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


# ----------------------------------------------------------------------------- training


@pytest.mark.parametrize("name", ["vit", "osa-qr"])
def test_signal_rms_follows_the_forward_pass(name: str, digits: ot.DigitsSplit) -> None:
    cfg = ot.TrainConfig(**TINY)
    model = ot.build_model(name, cfg, 2)
    x = digits.x_train[:32]
    rows = ot.signal_rms(model, x)
    assert [(r["stage"], r["block"]) for r in rows] == [
        ("embed", 0),
        ("attn", 1),
        ("mlp", 1),
        ("attn", 2),
        ("mlp", 2),
        ("logits", 2),
    ]
    with torch.no_grad():
        assert rows[0]["rms"] == pytest.approx(float(model.embed(x).pow(2).mean().sqrt()), rel=1e-5)
        assert rows[-1]["rms"] == pytest.approx(float(model(x).std()), rel=1e-5)


@pytest.mark.parametrize(("name", "min_drop", "min_acc"), [("vit", 0.5, 0.35), ("osa-qr", 0.2, 0.2)])
def test_training_decreases_the_loss(name: str, min_drop: float, min_acc: float, digits: ot.DigitsSplit) -> None:
    # lr 3e-3 (10x the paper's) so that 48 steps of a tiny model move measurably
    cfg = ot.TrainConfig(**{**TINY, "epochs": 4, "lr": 3e-3})
    res = ot.train_model(name, cfg, digits, init_seed=0, order_seed=1)
    curves = pd.DataFrame(res.curves)
    test = curves[curves["split"] == "test"].sort_values("step")
    train = curves[curves["split"] == "train"]
    assert list(test["epoch"]) == [0, 1, 2, 3, 4]
    assert len(train) == 4 * math.ceil(len(digits.y_train) / cfg.batch_size) == res.summary["steps"]
    assert test["loss"].iloc[-1] < test["loss"].iloc[0] - min_drop
    first, last = train.groupby("epoch")["loss"].mean().iloc[[0, -1]]
    assert last < first - min_drop / 2
    assert res.summary["test_accuracy"] > min_acc  # chance is 0.1
    assert res.summary["test_accuracy"] == test["accuracy"].iloc[-1]
    assert not res.summary["diverged"]


@pytest.mark.parametrize("name", ["osa-qr", "osa-ns"])
def test_gradients_reach_every_osa_parameter(name: str, digits: ot.DigitsSplit) -> None:
    model = ot.build_model(name, ot.TrainConfig(**TINY), 0)
    loss = nn.functional.cross_entropy(model(digits.x_train[:64]), digits.y_train[:64])
    loss.backward()
    for blk in model.blocks:
        a = blk.attn
        for p in (a.w_q, a.w_k, a.w_v, a.w_o, a.alpha):
            assert p.grad is not None and torch.isfinite(p.grad).all() and float(p.grad.abs().max()) > 0


def test_run_comparison_is_reproducible_and_paired() -> None:
    cfg = ot.TrainConfig(**{**TINY, "depth": 1, "models": ("vit", "osa-ns")})
    a = ot.run_comparison(cfg)
    b = ot.run_comparison(cfg)
    pd.testing.assert_frame_equal(a.curves, b.curves)
    assert a.replicate_seeds == ot.replicate_seeds(cfg) and len(set(a.replicate_seeds)) == 2
    assert list(a.curves.columns[:5]) == ["model", "replicate", "seed", "split", "step"]
    assert set(a.runs["model"]) == {"vit", "osa-ns"} and len(a.runs) == 4
    assert list(a.summary["model"]) == ["vit", "osa-ns"]
    # a different base seed gives different numbers
    c = ot.run_comparison(ot.with_overrides(cfg, seed=1, models=("vit",)))
    a_vit = a.curves[a.curves["model"] == "vit"].reset_index(drop=True)
    assert len(a_vit) == len(c.curves) and not np.allclose(a_vit["loss"], c.curves["loss"])
    # the same split, init and batch order for every model of a replicate: the vit rows
    # of a two-model run equal a vit-only run with the same seed
    d = ot.run_comparison(ot.with_overrides(cfg, models=("vit",)))
    pd.testing.assert_frame_equal(a_vit, d.curves)


def test_summary_reports_mean_sd_and_paired_difference() -> None:
    runs = pd.DataFrame(
        {
            "model": ["vit", "vit", "vit", "osa-qr", "osa-qr", "osa-qr"],
            "replicate": [0, 1, 2, 2, 1, 0],
            "test_accuracy": [0.90, 0.80, 0.70, 0.71, 0.85, 0.86],
            "test_loss": [0.3, 0.4, 0.5, 0.6, 0.5, 0.4],
            "train_loss": [0.1] * 6,
            "train_accuracy": [1.0] * 6,
            "diverged": [False] * 5 + [True],
            "steps": [10] * 6,
            "n_params": [100] * 3 + [90] * 3,
            "wall_seconds": [1.0] * 6,
        }
    )
    s = ot.summarise(runs, ["vit", "osa-qr"]).set_index("model")
    assert s.loc["vit", "test_accuracy_mean"] == pytest.approx(0.8)
    assert s.loc["vit", "test_accuracy_std"] == pytest.approx(0.1)
    assert s.loc["osa-qr", "diverged_runs"] == 1
    d = np.array([0.86 - 0.90, 0.85 - 0.80, 0.71 - 0.70])  # paired by replicate
    ci = mean_ci(d)
    assert s.loc["osa-qr", "diff_vs_vit_mean"] == pytest.approx(d.mean())
    assert s.loc["osa-qr", "diff_vs_vit_ci_low"] == pytest.approx(ci.low)
    assert s.loc["osa-qr", "diff_vs_vit_ci_high"] == pytest.approx(ci.high)
    assert math.isnan(s.loc["vit", "diff_vs_vit_mean"])
    assert s.loc["osa-qr", "test_accuracies"] == [0.86, 0.85, 0.71]


def test_a_diverging_run_is_stopped_and_reported(digits: ot.DigitsSplit) -> None:
    cfg = ot.TrainConfig(**{**TINY, "epochs": 2, "models": ("vit",)})
    data = dataclasses.replace(digits, x_train=digits.x_train.clone())
    data.x_train[0, 0, 0] = float("nan")  # poisons the batch that holds image 0
    res = ot.train_model("vit", cfg, data, init_seed=0, order_seed=0)
    assert res.summary["diverged"] and res.summary["stopped_by"] == "diverged"
    assert res.summary["steps"] <= 2 * math.ceil(len(data.y_train) / cfg.batch_size)
    assert not math.isfinite(res.curves[-3]["loss"])  # the last train row, before the final val and test rows
    assert [r["split"] for r in res.curves[-2:]] == ["val", "test"]


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"models": ("vit", "resnet")}, "unknown model 'resnet'"),
        ({"models": ()}, "at least one"),
        ({"epochs": 0}, r"epochs must be in \[1, inf\), got 0"),
        ({"seeds": 0}, "seeds must be"),
        ({"alpha_init": float("nan")}, "alpha_init must be finite, got nan"),
        ({"alpha_init": float("inf")}, "alpha_init must be finite"),
        ({"lr": 0.0}, r"lr must be in \(0, inf\)"),
        ({"lr": float("nan")}, "lr must be finite"),
        ({"dim": 30}, "dim must be a multiple of heads"),
        ({"heads": 1}, "2\\*d_v <= dim"),
        ({"patch_size": 3}, "patch_size must divide"),
        ({"test_fraction": 1.0}, r"test_fraction must be in \(0, 1\)"),
        ({"test_fraction": 0.999}, r"test_fraction must be in \(0.005008, 0.9944\]"),
        ({"ns_coefficients": "bogus"}, "schedule must be one of"),
        ({"ns_steps": -1}, "ns_steps must be"),
        ({"epochs": 2.5}, "epochs must be an integer"),
    ],
)
def test_bad_config_names_the_value(kw: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        ot.TrainConfig(**kw)


def test_single_head_is_fine_without_osa_models() -> None:
    cfg = ot.TrainConfig(models=("vit",), heads=1)
    assert cfg.heads == 1 and cfg.tokens == 17
