#!/bin/sh
# TIRA calls `/entrypoint.sh -i $inputDataset -o $outputDir`; all flags go straight to `touche run`.
# In the image `touche` is on PATH; in a checkout after `make setup` it is the project's .venv/bin/touche.
set -e
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
if ! command -v touche >/dev/null 2>&1; then
    PATH="$(cd "$(dirname "$0")" && pwd)/.venv/bin:$PATH"
fi
if ! command -v touche >/dev/null 2>&1; then
    echo "entrypoint: no touche command: run 'make setup' in the checkout, or install the package" >&2
    exit 127
fi
# `docker run IMAGE sh -c '...'` (or bash): the shell, not a run with "sh" as its first flag.
case "${1:-}" in
    sh|bash|/bin/sh|/bin/bash) exec "$@" ;;
esac
exec touche run "$@"
