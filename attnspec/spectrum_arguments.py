"""The arguments of ``attnspec.spectrum`` (:func:`attnspec.api.spectrum`), checked and read
before anything is computed.

Each check raises :class:`attnspec.errors.InputError` naming the argument as the API spells
it (``seq_len``, not the CLI's ``--seq-len``), before the model loads. The model argument,
a name or an already-loaded model, and ``texts=`` become what the run's config records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnspec.errors import InputError

__all__ = ["check_arguments", "check_lengths", "model_of", "texts_label"]


def check_lengths(seq_len: Any) -> list[int]:
    """``seq_len`` checked: one integer >= 2, or several strictly increasing ones.

    Parameters
    ----------
    seq_len : int or sequence of int
        One length n, or several (a scaling study).

    Returns
    -------
    list of int
        The lengths, shortest first (one element for a single run).

    Raises
    ------
    InputError
        Not an integer >= 2, nor a strictly increasing list of them.
    """
    import numbers

    from attnspec.options.spectrum import spectrum_option

    low = spectrum_option("seq_len").low
    if isinstance(seq_len, numbers.Integral) and not isinstance(seq_len, bool):
        if seq_len < low:
            raise InputError(f"seq_len must be an integer >= {low:g}, got {seq_len!r}")
        return [int(seq_len)]
    if isinstance(seq_len, (str, bytes)) or not isinstance(seq_len, Sequence):
        raise InputError(f"seq_len must be an integer >= {low:g} or a list of them (a scaling study), got {seq_len!r}")
    from attnspec.spectra.scaling import parse_lengths

    try:
        return parse_lengths(list(seq_len))
    except InputError as e:  # the library names the CLI's option; this is the API's argument
        raise InputError(str(e).replace("--seq-len", "seq_len")) from None


def check_arguments(
    data: Any,
    texts: Any,
    *,
    num_inputs: Any,
    seed: Any,
    batch_size: Any,
    resume: Any,
    overwrite: Any,
    progress: Any,
    out: Any,
    short_policy: str | None,
) -> tuple[list[str] | None, int, Path | None, str]:
    """:func:`attnspec.api.spectrum`'s arguments checked before anything is computed, with
    their defaults filled in.

    Parameters
    ----------
    data : str or Path or None
        The corpus name or path; exactly one of ``data`` and ``texts`` is given.
    texts : list of str or None
        The inputs as strings.
    num_inputs : int or None
        How many inputs; default all of ``texts``, else 1000.
    seed : int
        The seed of the input draw.
    batch_size : int or None
        Inputs per forward pass (None: the config's default).
    resume : bool
        Continue the run saved in ``out``.
    overwrite : bool
        Replace the run saved in ``out``.
    progress : bool
        Show a progress line.
    out : str or Path or None
        The results directory, or None for a temporary one.
    short_policy : str or None
        What to do with inputs shorter than ``seq_len``; default ``"keep"`` for ``texts``,
        else ``"skip"``.

    Returns
    -------
    tuple
        (texts, num_inputs, out, short_policy): the texts checked, the number of inputs,
        ``out`` as a Path (or None) and the short-input policy.

    Raises
    ------
    InputError
        Both or neither of ``data`` and ``texts``, or an argument of the wrong type or range
        (named in the message).
    """
    if (data is None) == (texts is None):
        raise InputError("give exactly one of data= (a corpus name or path) and texts= (a list of strings)")
    import numbers

    from attnspec.errors import check_bool, check_texts
    from attnspec.options.spectrum import check_spectrum_values, spectrum_option

    if texts is not None:
        texts = check_texts("texts", texts)
    if num_inputs is None:
        num_inputs = len(texts) if texts is not None else 1000
    # the API's num_inputs is an integer only (the command line's also 'all'), its bound the declared one
    low = spectrum_option("num_inputs").low
    if isinstance(num_inputs, bool) or not isinstance(num_inputs, numbers.Integral) or num_inputs < low:
        raise InputError(f"num_inputs must be an integer >= {low:g}, got {num_inputs!r}")
    # by the declarations, worded as on the command line and in a TOML
    check_spectrum_values({"seed": seed, "batch_size": batch_size})
    for label, value in (("resume", resume), ("overwrite", overwrite), ("progress", progress)):
        check_bool(label, value)
    if data is not None and not isinstance(data, (str, Path)):
        raise InputError(f"data must be a corpus name or a path, got {data!r}")
    if data is not None:
        from attnspec.spectra.data.corpus import check_data_name

        check_data_name(data, "data")  # before the model loads
    if out is not None:
        from attnspec.errors import check_path

        out = check_path("out", out)
    if short_policy is None:
        short_policy = "keep" if texts is not None else "skip"
    return texts, num_inputs, out, short_policy


def model_of(model: Any, tokenizer: Any) -> tuple[Any, str]:
    """The model argument read: the loaded model, or None when it is to be loaded by name,
    and the name the run records.

    Parameters
    ----------
    model : str or Path or LoadedModel or torch.nn.Module
        A model name or directory, an :class:`attnspec.spectra.models.LoadedModel`, or a
        ``transformers`` model.
    tokenizer : Any
        The tokenizer of a ``transformers`` model (required for one); ignored otherwise.

    Returns
    -------
    tuple
        (the LoadedModel or None, the model's name as the run records it).

    Raises
    ------
    InputError
        A model object without its tokenizer, or a model of another type.
    """
    import torch

    from attnspec.spectra.models import LoadedModel, wrap_model

    if isinstance(model, LoadedModel):
        return model, model.name
    if isinstance(model, torch.nn.Module):
        if tokenizer is None:
            raise InputError(f"a model object ({type(model).__name__}) needs its tokenizer: pass tokenizer=")
        loaded = wrap_model(model, tokenizer)
        return loaded, loaded.name
    if isinstance(model, (str, Path)):
        return None, str(model)
    raise InputError(f"model must be a name, a path or a transformers model, got {type(model).__name__}")


def texts_label(texts: list[str]) -> str:
    """The corpus name a run on ``texts=`` records: their count and a digest of their contents.

    Parameters
    ----------
    texts : list of str
        The inputs.

    Returns
    -------
    str
        ``texts:<count>:<first 16 hex digits of a SHA-256 over the texts>``.
    """
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8", "replace"))
        digest.update(b"\xff")
    return f"texts:{len(texts)}:{digest.hexdigest()[:16]}"
