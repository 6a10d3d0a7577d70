"""The spectrum study's options are checked by their declarations (attnspec.options.spectrum):
the bounds and choices declared there are what SpectrumConfig.validate, the Python API and
the library's lists of choices read, so a declaration changed is a check changed."""

from __future__ import annotations

import dataclasses
import math

import pytest

from attnspec.errors import InputError, OptionError
from attnspec.options import spectrum as declared
from attnspec.options.spectrum import SPECTRUM, spectrum_choices, spectrum_option
from attnspec.spectra.config import SpectrumConfig

#: option name → SpectrumConfig field, where they differ
FIELD = {"num_inputs": "num_sentences"}
CONFIG_FIELDS = {f.name for f in dataclasses.fields(SpectrumConfig)}


def _checked_by_validate():
    """The declarations with a bound or choices whose value SpectrumConfig holds."""
    return [
        o
        for o in SPECTRUM
        if FIELD.get(o.name, o.name) in CONFIG_FIELDS and (o.choices or o.low is not None or o.high is not None)
    ]


def _outside(opt):  # noqa: ANN001, ANN202
    """A value just outside the declaration's bounds or choices."""
    if opt.choices:
        return "no-such-choice"
    if opt.low is not None:
        return (opt.low if opt.low_open else opt.low - 1) if opt.kind == "float" else int(opt.low) - 1
    return opt.high if opt.high_open else opt.high + 1


@pytest.mark.parametrize("opt", _checked_by_validate(), ids=lambda o: o.name)
def test_validate_refuses_every_declared_bound_naming_the_flag(opt) -> None:  # noqa: ANN001
    cfg = dataclasses.replace(SpectrumConfig(), **{FIELD.get(opt.name, opt.name): _outside(opt)})
    with pytest.raises(InputError, match=f"^{opt.label} must be "):
        cfg.validate()


def test_the_checked_bounds_cover_what_validate_held() -> None:
    names = {o.name for o in _checked_by_validate()}
    assert names >= {
        "seq_len",
        "num_inputs",
        "short_policy",
        "selection",
        "batch_size",
        "svd_method",
        "max_time",
        "checkpoint_every",
        "rank_tol",
    }


def test_a_changed_declaration_changes_what_every_surface_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    batch = spectrum_option("batch_size")
    stricter = dataclasses.replace(batch, low=3)
    monkeypatch.setattr(declared, "SPECTRUM", tuple(stricter if o is batch else o for o in SPECTRUM))
    SpectrumConfig(batch_size=3).validate()
    with pytest.raises(InputError, match=r"^--batch-size must be in \[3, inf\), got 2$"):
        SpectrumConfig(batch_size=2).validate()
    from attnspec.spectrum_arguments import check_arguments

    kw = dict(num_inputs=None, seed=0, resume=False, overwrite=False, progress=False, out=None, short_policy=None)
    with pytest.raises(InputError, match=r"^--batch-size must be in \[3, inf\), got 2$"):
        check_arguments(None, ["a text"], batch_size=2, **kw)


def test_the_librarys_lists_of_choices_are_the_declarations() -> None:
    from attnspec.spectra.data.selection import SELECTIONS
    from attnspec.spectra.data.windows import SHORT_POLICIES
    from attnspec.spectra.engine import METHODS

    assert SHORT_POLICIES == spectrum_choices("short_policy") == ("skip", "keep", "pack")
    assert SELECTIONS == spectrum_choices("selection") == ("pool", "documents")
    assert METHODS == spectrum_choices("svd_method")
    with pytest.raises(KeyError, match="declares no choices"):
        spectrum_choices("seed")


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"num_sentences": 2.5}, OptionError, "--num-inputs must be an integer >= 1 or 'all', got 2.5"),
        ({"num_sentences": 0}, InputError, "--num-inputs must be an integer >= 1 or 'all', got 0"),
        ({"seed": "3"}, OptionError, "Invalid value for '--seed': '3' is not a valid integer."),
        ({"batch_size": "4"}, OptionError, "Invalid value for '--batch-size': '4' is not a valid integer or None."),
        ({"max_time": math.inf}, InputError, "--max-time must be in (0, inf), got inf"),
        ({"rank_tol": math.nan}, InputError, "--rank-tol must be in (0, 1), got nan"),
    ],
)
def test_a_value_of_another_kind_is_a_usage_error_and_one_out_of_range_is_not(changes, error, message) -> None:  # noqa: ANN001
    with pytest.raises(error) as info:
        SpectrumConfig(**changes).validate()
    assert str(info.value) == message
    assert (type(info.value) is OptionError) == (error is OptionError)
