"""The models of the OSA training comparison (Section 5, Appendix D): a pre-LN ViT, its
skipless / LayerNorm-less ablations, and the OSA-Transformer (eqs. (1)–(4)).

:func:`build_model` builds and initialises any of :data:`attnspec.theory.osa.train.MODELS`
from a seed, leaving the global RNG untouched.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from attnspec.errors import InputError

NUM_CLASSES = 10
#: Model names, in the order of the paper's Table 2 after the baseline.
MODELS: tuple[str, ...] = ("vit", "vit-noskip", "vit-noskip-noln", "osa-qr", "osa-ns")


def _trunc_normal_(t: torch.Tensor, std: float, gen: torch.Generator) -> None:
    nn.init.trunc_normal_(t, mean=0.0, std=std, a=-2 * std, b=2 * std, generator=gen)


def suo_(weight: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """SUO init (Martens et al. 2021, DKS): a uniform (Haar) orthogonal matrix scaled by
    ``max(1, sqrt(out/in))``, so the layer preserves q values (mean squared activation).

    Parameters
    ----------
    weight : Tensor (out, in)
        Filled in place.
    gen : torch.Generator

    Returns
    -------
    Tensor (out, in)
        ``weight``.
    """
    out_dim, in_dim = weight.shape
    with torch.no_grad():
        nn.init.orthogonal_(weight, gain=max(1.0, math.sqrt(out_dim / in_dim)), generator=gen)
    return weight


class PatchEmbedding(nn.Module):
    """(B, P, p²) patches → (B, P+1, d) tokens: linear projection, [cls] first, learnable 1-D positions.

    Parameters
    ----------
    patch_dim : int
        p², the values of one patch.
    n_patches : int
        P, the patches per image.
    dim : int
        Token width d.
    """

    def __init__(self, patch_dim: int, n_patches: int, dim: int) -> None:
        super().__init__()
        self.proj = nn.Linear(patch_dim, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, n_patches + 1, dim))

    def init_(self, gen: torch.Generator) -> None:
        """Xavier-uniform projection, zero bias, [cls] and positions from a truncated normal (std 0.02).

        Parameters
        ----------
        gen : torch.Generator
            The one generator every initialisation draws from.
        """
        nn.init.xavier_uniform_(self.proj.weight, generator=gen)
        nn.init.zeros_(self.proj.bias)
        _trunc_normal_(self.cls, 0.02, gen)
        _trunc_normal_(self.pos, 0.02, gen)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The tokens of a batch of patched images.

        Parameters
        ----------
        x : torch.Tensor, shape (B, P, p²)

        Returns
        -------
        torch.Tensor, shape (B, P + 1, d)
        """
        b = x.shape[0]
        x = self.proj(x)  # (B, P, d)
        x = torch.cat([self.cls.expand(b, -1, -1), x], dim=1)  # (B, N, d), N = P + 1
        return x + self.pos


class SoftmaxAttention(nn.Module):
    """Multi-head softmax self-attention (SSA), non-causal, no dropout.

    Parameters
    ----------
    dim : int
        Token width d (divisible by ``heads``).
    heads : int
        Number of heads.
    """

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def init_(self, gen: torch.Generator) -> None:
        """Xavier-uniform weights, zero biases.

        Parameters
        ----------
        gen : torch.Generator
            The one generator every initialisation draws from.
        """
        for lin in (self.q, self.k, self.v, self.o):
            nn.init.xavier_uniform_(lin.weight, generator=gen)
            nn.init.zeros_(lin.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attention over the tokens.

        Parameters
        ----------
        x : torch.Tensor, shape (B, N, d)

        Returns
        -------
        torch.Tensor, shape (B, N, d)
        """
        b, n, d = x.shape
        h = self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, h, d // h).transpose(1, 2)  # (B, h, N, d_v)

        y = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)))  # (B, h, N, d_v)
        y = y.transpose(1, 2).reshape(b, n, d)  # (B, N, d)
        return self.o(y)


class MLP(nn.Module):
    """Token-wise d → ratio·d → d with GELU.

    Parameters
    ----------
    dim : int
        Token width d.
    ratio : int
        Hidden width over d.
    """

    def __init__(self, dim: int, ratio: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, ratio * dim)
        self.fc2 = nn.Linear(ratio * dim, dim)

    def init_(self, gen: torch.Generator, scheme: str) -> None:
        """Weights by ``scheme``, zero biases.

        Parameters
        ----------
        gen : torch.Generator
            The one generator every initialisation draws from.
        scheme : {"xavier", "suo"}
            Xavier-uniform (the ViT baselines) or :func:`suo_` (the OSA models).
        """
        for lin in (self.fc1, self.fc2):
            if scheme == "xavier":
                nn.init.xavier_uniform_(lin.weight, generator=gen)
            else:  # "suo"
                suo_(lin.weight, gen)
            nn.init.zeros_(lin.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The MLP on each token.

        Parameters
        ----------
        x : torch.Tensor, shape (..., d)

        Returns
        -------
        torch.Tensor, shape (..., d)
        """
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """One transformer block; ``skip`` and ``norm`` switch the residuals and the pre-LNs.

    Parameters
    ----------
    attn : torch.nn.Module
        The attention layer (softmax or OSA).
    mlp : MLP
    dim : int
        Token width d.
    skip : bool
        Residual connections around the attention and the MLP.
    norm : bool
        A LayerNorm before each (else identity).
    """

    def __init__(self, attn: nn.Module, mlp: MLP, dim: int, *, skip: bool, norm: bool) -> None:
        super().__init__()
        self.skip = skip
        self.attn = attn
        self.mlp = mlp
        self.norm1: nn.Module = nn.LayerNorm(dim) if norm else nn.Identity()
        self.norm2: nn.Module = nn.LayerNorm(dim) if norm else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block on the tokens.

        Parameters
        ----------
        x : torch.Tensor, shape (B, N, d)

        Returns
        -------
        torch.Tensor, shape (B, N, d)
        """
        if self.skip:
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.attn(self.norm1(x))
        return self.mlp(self.norm2(x))


class Classifier(nn.Module):
    """Patch tokens (B, P, p²) → logits (B, 10) from the [cls] token.

    Parameters
    ----------
    embed : PatchEmbedding
    blocks : sequence of Block
    dim : int
        Token width d.
    final_norm : bool
        A LayerNorm before the head (else identity).
    """

    def __init__(self, embed: PatchEmbedding, blocks: Sequence[Block], dim: int, *, final_norm: bool) -> None:
        super().__init__()
        self.embed = embed
        self.blocks = nn.ModuleList(blocks)
        self.norm: nn.Module = nn.LayerNorm(dim) if final_norm else nn.Identity()
        self.head = nn.Linear(dim, NUM_CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The class logits of a batch of patched images.

        Parameters
        ----------
        x : torch.Tensor, shape (B, P, p²)

        Returns
        -------
        torch.Tensor, shape (B, 10)
        """
        x = self.embed(x)  # (B, N, d)
        for blk in self.blocks:
            x = blk(x)  # (B, N, d)
        return self.head(self.norm(x[:, 0]))  # (B, 10)


class ModelShape(Protocol):
    """The parameters a model is built from; a :class:`attnspec.theory.osa.train.TrainConfig`
    provides them (this module does not import it: the training imports the models)."""

    depth: int
    dim: int
    heads: int
    mlp_ratio: int
    patch_size: int
    image_side: int
    alpha_init: float
    ns_steps: int
    ns_coefficients: str


def _osa_class() -> type[nn.Module]:
    from attnspec.theory.osa.layer import OrthogonalSelfAttention

    return OrthogonalSelfAttention


def build_model(name: str, cfg: ModelShape, seed: int) -> Classifier:
    """Build and initialise model ``name`` for ``cfg`` from ``seed``.

    Every initialisation, including the OSA layer's own Stiefel sampling (its ``seed``
    argument), draws from one private generator seeded by ``seed``; the global RNG state
    is left as it was found.

    Parameters
    ----------
    name : str
        One of :data:`MODELS`.
    cfg : ModelShape
        Depth, width, heads, patch size and the OSA layer's parameters (a ``TrainConfig``).
    seed : int

    Returns
    -------
    Classifier
        Patch tokens (batch, P, p²) → logits (batch, 10).
    """
    if name not in MODELS:
        raise InputError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    # nn.Linear's constructor draws its default init from the global RNG; every such
    # value is overwritten below, and fork_rng gives the global state back untouched.
    with torch.random.fork_rng(devices=[]):
        return _build_model(name, cfg, torch.Generator().manual_seed(int(seed)))


def _build_model(name: str, cfg: ModelShape, gen: torch.Generator) -> Classifier:
    n_patches = (cfg.image_side // cfg.patch_size) ** 2  # square images, square patches
    embed = PatchEmbedding(cfg.patch_size**2, n_patches, cfg.dim)
    embed.init_(gen)
    blocks: list[Block] = []
    if name.startswith("vit"):
        skip = name == "vit"
        norm = name != "vit-noskip-noln"
        for _ in range(cfg.depth):
            attn = SoftmaxAttention(cfg.dim, cfg.heads)
            attn.init_(gen)
            mlp = MLP(cfg.dim, cfg.mlp_ratio)
            mlp.init_(gen, "xavier")
            blocks.append(Block(attn, mlp, cfg.dim, skip=skip, norm=norm))
        model = Classifier(embed, blocks, cfg.dim, final_norm=norm)
    else:
        osa_cls = _osa_class()
        basis = "qr" if name == "osa-qr" else "newton-schulz"
        attns = [
            osa_cls(
                cfg.dim,
                cfg.heads,
                basis=basis,
                ns_steps=cfg.ns_steps,
                ns_coefficients=cfg.ns_coefficients,
                alpha_init=cfg.alpha_init,
                seed=gen,
            )
            for _ in range(cfg.depth)
        ]
        for attn in attns:
            mlp = MLP(cfg.dim, cfg.mlp_ratio)
            mlp.init_(gen, "suo")
            blocks.append(Block(attn, mlp, cfg.dim, skip=False, norm=False))
        model = Classifier(embed, blocks, cfg.dim, final_norm=False)
    nn.init.xavier_uniform_(model.head.weight, generator=gen)
    nn.init.zeros_(model.head.bias)
    return model


def count_parameters(model: nn.Module) -> int:
    """The number of trainable parameters of ``model``.

    Parameters
    ----------
    model : torch.nn.Module

    Returns
    -------
    int
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
