"""The data sets of the OSA training comparison, by name: ``digits`` (scikit-learn's 8×8
digits, the fast default) and ``mnist`` (the paper's data, :mod:`attnspec.theory.osa.train_mnist`).

:func:`load_split` gives either as a :class:`~attnspec.theory.osa.train_data.DigitsSplit`
of patch tokens, so the training loop does not depend on which one it reads."""

from __future__ import annotations

from typing import Any

from attnspec.errors import InputError
from attnspec.theory.osa.train_data import DigitsSplit, load_digits_split
from attnspec.theory.osa.train_mnist import MNIST_SIDE, MNIST_SIZES, check_image_count, load_mnist_split

#: Data set name → image side in pixels.
IMAGE_SIDES: dict[str, int] = {"digits": 8, "mnist": MNIST_SIDE}
DATASETS: tuple[str, ...] = tuple(IMAGE_SIDES)
#: How each data set is described in tables, figures and the report.
DATA_LABELS: dict[str, str] = {"digits": "8×8 digits", "mnist": "MNIST"}


def patch_sizes(data: str) -> tuple[int, ...]:
    """The patch sides that divide the images of ``data``.

    Parameters
    ----------
    data : {"digits", "mnist"}

    Returns
    -------
    tuple of int
    """
    side = IMAGE_SIDES[data]
    return tuple(p for p in range(1, side + 1) if side % p == 0)


def check_data(cfg: Any) -> None:
    """Raise :class:`InputError` when the data options of ``cfg`` do not fit its data set.

    Parameters
    ----------
    cfg : TrainConfig
        ``data``, ``patch_size``, ``train_images`` and ``val_images`` are read.
    """
    if cfg.data not in IMAGE_SIDES:
        raise InputError(f"data must be one of {', '.join(DATASETS)}, got {cfg.data!r}")
    side, allowed = IMAGE_SIDES[cfg.data], patch_sizes(cfg.data)
    if cfg.patch_size not in allowed:
        raise InputError(
            f"patch_size must divide the {side}x{side} image of --data {cfg.data} ({', '.join(map(str, allowed))}), "
            f"got {cfg.patch_size!r}"
        )
    if cfg.data == "mnist":
        check_image_count("train_images", cfg.train_images, MNIST_SIZES["train"])
        check_image_count("val_images", cfg.val_images, MNIST_SIZES["val"])
    elif cfg.train_images or cfg.val_images:
        raise InputError(
            "train_images and val_images apply to --data mnist only (the digits are split by "
            f"test_fraction and val_fraction), got train_images={cfg.train_images}, val_images={cfg.val_images}"
        )


def load_split(cfg: Any, seed: int) -> DigitsSplit:
    """The fit, validation and test splits of ``cfg.data`` for one replicate.

    Parameters
    ----------
    cfg : TrainConfig
    seed : int
        The replicate's split seed.

    Returns
    -------
    DigitsSplit
    """
    if cfg.data == "mnist":
        return load_mnist_split(cfg.patch_size, seed, cfg.train_images, cfg.val_images)
    return load_digits_split(cfg.patch_size, cfg.test_fraction, seed, cfg.val_fraction)


def fit_size(cfg: Any) -> int:
    """Images in the fit split of ``cfg`` (what one epoch passes over).

    Parameters
    ----------
    cfg : TrainConfig

    Returns
    -------
    int
    """
    import math

    from attnspec.theory.osa.train_data import N_DIGITS

    if cfg.data == "mnist":
        return cfg.train_images or MNIST_SIZES["train"]
    n_train = N_DIGITS - math.ceil(cfg.test_fraction * N_DIGITS)
    return n_train - math.ceil(cfg.val_fraction * n_train)  # sklearn's split sizes
