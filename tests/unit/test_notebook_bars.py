"""In Jupyter without ipywidgets, the first call of the Python API warns nothing about progress
bars: tqdm.auto, which the model and data libraries import, falls back to its text bar quietly.

The kernel is simulated in a fresh interpreter the way tqdm recognises one (``ipykernel.zmqshell``
imported, a shell from ``IPython.get_ipython``) with ipywidgets made unimportable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_KERNEL = r"""
import json, sys, types, warnings
for name in ("ipykernel", "ipykernel.zmqshell"):
    sys.modules[name] = types.ModuleType(name)
class ZMQInteractiveShell:
    pass
ipython = types.ModuleType("IPython")
ipython.get_ipython = lambda: ZMQInteractiveShell()
sys.modules["IPython"] = ipython
sys.modules["ipywidgets"] = None  # not installed
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    FIRST_CALL
    import tqdm.auto, tqdm.autonotebook, tqdm.std  # what transformers, datasets and huggingface_hub import
print(json.dumps({"warnings": [str(w.message) for w in caught], "text_bar": tqdm.autonotebook.tqdm is tqdm.std.tqdm}))
"""


def _kernel(first_call: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = _KERNEL.replace("FIRST_CALL", first_call)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_first_api_call_in_a_notebook_without_ipywidgets_warns_nothing() -> None:
    got = _kernel("import attnspec; attnspec.spectrum")
    assert not any("IProgress" in w for w in got["warnings"]), got["warnings"]
    assert got["text_bar"]  # the plain text bar, which needs no widgets


def test_the_simulated_kernel_is_one_tqdm_warns_in() -> None:
    # the check can fail: the same kernel without attnspec's first call gets tqdm's warning
    got = _kernel("pass")
    assert any("IProgress not found" in w for w in got["warnings"]), got["warnings"]
