#!/usr/bin/env bash
# The GPU check in one command (see benchmarks/device_check.py for what it measures).
#
#   bash benchmarks/device_check.sh             # on a CUDA machine; JSON to $OUT, else benchmarks/
#   bash benchmarks/device_check.sh --dry-run   # the same code on the CPU at tiny sizes
#
# The GPU machine has no network and no copy of the data folder, so a small slice of real
# WikiText-103 text is copied first into .device-data/ (ignored by git), which travels with
# the repository; the BPE tokenizer is trained on it there. Any other argument goes to the
# Python script (--budget-s, --inputs, --long-layers, --long-n, --out).
set -euo pipefail
cd "$(dirname "$0")/.."
slice=.device-data/wiki.valid.slice.txt
if [ ! -s "$slice" ]; then
  src="${ATTNSPEC_DATA_DIR:-../shared/data}/wikitext103/wiki.valid.raw"
  if [ ! -f "$src" ]; then
    echo "device_check: $slice is missing and $src is not there to copy it from" >&2
    exit 2
  fi
  mkdir -p .device-data
  head -c 400000 "$src" > "$slice"  # about 70,000 words: enough to train the BPE and fill 8192 tokens
fi
# The package itself, without installing anything: the GPU machine's Python already has
# torch, transformers, pandas, pyarrow, scipy, seaborn, typer and rich.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec "$(command -v python3 || command -v python)" benchmarks/device_check.py "$@"
