"""The shared plumbing: child seeds, validators, the torch-threads context manager, the reading index."""

from __future__ import annotations

import pytest
import torch

from attnspec.errors import InputError, check_choice, check_int, check_range
from attnspec.numerics.stats import child_seed, spawn_seeds
from attnspec.runtime.threads import torch_threads
from attnspec.spectra.reading import default_at


def test_child_seed_is_stable_keyed_and_independent_of_other_keys() -> None:
    a = child_seed(0, "thm2", "setup")
    assert a == child_seed(0, "thm2", "setup") and 0 <= a < 2**63
    assert a != child_seed(1, "thm2", "setup") and a != child_seed(0, "thm2", "rows")
    assert len(set(spawn_seeds(0, 5))) == 5
    with pytest.raises(ValueError):
        child_seed(-1, "x")


def test_validators_name_the_value_and_the_allowed_range() -> None:
    with pytest.raises(InputError, match=r"^eps must be in \(0, 1\), got 1.5$"):
        check_range("eps", 1.5, low=0, high=1, low_open=True, high_open=True)
    assert check_int("trials", 3, low=1) == 3
    for bad, msg in (
        (0, r"trials must be in \[1, inf\), got 0"),
        (2.5, "trials must be an integer, got 2.5"),
        (True, "trials must be an integer, got True"),
    ):
        with pytest.raises(InputError, match=msg):
            check_int("trials", bad, low=1)
    assert check_choice("family", "sparse", ("gaussian", "sparse")) == "sparse"
    with pytest.raises(InputError, match="family must be one of gaussian, sparse, got 'cauchy'"):
        check_choice("family", "cauchy", ("gaussian", "sparse"))


def test_torch_threads_restores_the_count_also_on_error() -> None:
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    with pytest.raises(RuntimeError), torch_threads(1):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with pytest.raises(InputError, match="threads must be in"):
        with torch_threads(0):
            pass


def test_reading_index_lives_beside_the_computation() -> None:
    assert default_at(512) == 128 and default_at(128) == 32 and default_at(2) == 1
