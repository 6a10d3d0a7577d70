"""The data of the OSA training comparison: scikit-learn's 8×8 digits as patch tokens,
split into fit, validation and test reproducibly (:func:`load_digits_split`).

The test split is held out first; the validation split, which the stopping rule reads
(:mod:`attnspec.theory.osa.train_stopping`), is carved from what remains; the optimiser sees
only the fit split, and the pixels are standardised by the fit split's statistics alone."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnspec.errors import InputError, check_range
from attnspec.errors import check_int as _check_int
from attnspec.theory.osa.train_models import NUM_CLASSES

#: The bundled digits data set: 1,797 images.
N_DIGITS = 1797
#: test_fraction range for which both stratified splits hold at least one image per class
#: (sklearn's train_test_split takes ceil(test_fraction · N) test images).
TEST_FRACTION_RANGE: tuple[float, float] = ((NUM_CLASSES - 1) / N_DIGITS, (N_DIGITS - NUM_CLASSES) / N_DIGITS)


def _check_float(name: str, value: Any, **kw: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InputError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite, got {value!r}")
    check_range(name, value, **kw)


def _check_test_fraction(value: Any) -> None:
    _check_float("test_fraction", value, low=0.0, high=1.0, low_open=True, high_open=True)
    low, high = TEST_FRACTION_RANGE
    if not low < float(value) <= high:
        raise InputError(
            f"test_fraction must be in ({low:.4g}, {high:.4g}] so that both stratified splits of the {N_DIGITS:,} "
            f"digits hold at least one image of each of the {NUM_CLASSES} classes, got {value!r}"
        )


def val_fraction_range(test_fraction: float) -> tuple[float, float]:
    """The val_fraction range for which the fit and validation splits of the training split
    (what ``test_fraction`` leaves) both hold at least one image per class (sklearn takes
    ceil(val_fraction · n_train) validation images).

    Parameters
    ----------
    test_fraction : float
        The share of the images held out for the test split.

    Returns
    -------
    low, high : float
        The allowed val_fraction range.
    """
    n_train = N_DIGITS - math.ceil(float(test_fraction) * N_DIGITS)
    return (NUM_CLASSES - 1) / n_train, (n_train - NUM_CLASSES) / n_train


def _check_val_fraction(value: Any, test_fraction: float) -> None:
    _check_float("val_fraction", value, low=0.0, high=1.0, low_open=True, high_open=True)
    low, high = val_fraction_range(test_fraction)
    if low >= high:  # fewer than 2 images per class left: no val_fraction can split them
        raise InputError(
            f"test_fraction {test_fraction:g} leaves too few training images to split into fit and validation "
            f"splits that hold every class; use test_fraction <= {(N_DIGITS - 2 * NUM_CLASSES) / N_DIGITS:.4g}"
        )
    if not low < float(value) <= high:
        raise InputError(
            f"val_fraction must be in ({low:.4g}, {high:.4g}] so that the fit and validation splits of the "
            f"training split (test_fraction {test_fraction:g}) hold at least one image of each of the "
            f"{NUM_CLASSES} classes, got {value!r}"
        )


@dataclass(frozen=True)
class DigitsSplit:
    """Digits as patch tokens, split into fit (``*_train``), validation (``*_val``) and test.

    ``x_*`` have shape (n, P, p²) with P = (8/p)² patches of p×p pixels, row-major;
    ``y_*`` have shape (n,) with labels 0..9; ``*_index`` are the rows of
    ``sklearn.datasets.load_digits()`` each split holds.
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    patch_size: int
    seed: int
    mean: float
    std: float
    train_index: np.ndarray
    test_index: np.ndarray
    x_val: torch.Tensor
    y_val: torch.Tensor
    val_index: np.ndarray

    @property
    def patch_dim(self) -> int:
        return self.patch_size**2


def patchify(images: np.ndarray | torch.Tensor, patch_size: int) -> torch.Tensor:
    """(n, H, W) images → (n, (H/p)(W/p), p²) non-overlapping patches, row-major.

    Parameters
    ----------
    images : ndarray or Tensor (n, H, W)
    patch_size : int
        p, dividing H and W.

    Returns
    -------
    Tensor (n, (H/p)(W/p), p²), float32
    """
    x = torch.as_tensor(images, dtype=torch.float32)
    if x.ndim != 3:
        raise InputError(f"images must have shape (n, H, W), got {tuple(x.shape)}")
    n, h, w = x.shape
    p = patch_size
    if p < 1 or h % p or w % p:
        raise InputError(f"patch_size must divide the image sides {h}x{w}, got {p}")
    x = x.reshape(n, h // p, p, w // p, p)  # (n, H/p, p, W/p, p)
    x = x.permute(0, 1, 3, 2, 4)  # (n, H/p, W/p, p, p)
    return x.reshape(n, (h // p) * (w // p), p * p)  # (n, P, p²)


def load_digits_split(
    patch_size: int = 2, test_fraction: float = 0.2, seed: int = 0, val_fraction: float = 0.15
) -> DigitsSplit:
    """scikit-learn's bundled digits as patch tokens, stratified splits seeded by ``seed``.

    ``test_fraction`` of the 1,797 images is held out as the test split; ``val_fraction`` of
    the rest is the validation split; the remainder is the fit split (``x_train``). Pixels
    (0..16) are standardised with the fit split's scalar mean and std, so neither held-out
    split informs the preprocessing.

    Parameters
    ----------
    patch_size : {1, 2, 4, 8}
    test_fraction : float
        In :data:`TEST_FRACTION_RANGE` (each split keeps an image of every class).
    seed : int
    val_fraction : float
        Share of the training split held out for validation, in :func:`val_fraction_range`.

    Returns
    -------
    DigitsSplit
        x_train (n_fit, P, p²), y_train (n_fit,), x_val, y_val, x_test, y_test likewise.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if patch_size not in (1, 2, 4, 8):
        raise InputError(f"patch_size must divide the 8x8 image (1, 2, 4 or 8), got {patch_size!r}")
    _check_test_fraction(test_fraction)
    _check_val_fraction(val_fraction, test_fraction)
    _check_int("seed", seed, 0)
    digits = load_digits()
    images = digits.images.astype(np.float32)  # (1797, 8, 8)
    labels = digits.target.astype(np.int64)  # (1797,)
    idx = np.arange(len(labels))
    tr, te = train_test_split(idx, test_size=test_fraction, stratify=labels, random_state=int(seed) % 2**32)
    # the validation split from the same seed: the test split above is the same for every val_fraction
    fit, va = train_test_split(tr, test_size=val_fraction, stratify=labels[tr], random_state=int(seed) % 2**32)
    mean = float(images[fit].mean())
    std = float(images[fit].std())
    images = (images - mean) / std
    x = patchify(images, patch_size)  # (1797, P, p²)
    y = torch.as_tensor(labels)
    fit_t, va_t, te_t = torch.as_tensor(fit), torch.as_tensor(va), torch.as_tensor(te)
    return DigitsSplit(
        x[fit_t], y[fit_t], x[te_t], y[te_t], patch_size, int(seed), mean, std, fit, te, x[va_t], y[va_t], va
    )
