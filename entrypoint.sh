#!/bin/sh
# TIRA calls `exec /entrypoint.sh -i $inputDataset -o $outputDir`; all flags go straight to `touche run`.
# In the image `touche` is on PATH; in a checkout after `make setup` it is the project's .venv/bin/touche.
set -e
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
if ! command -v touche >/dev/null 2>&1; then
    PATH="$(cd "$(dirname "$(readlink -f "$0" || echo "$0")")" && pwd)/.venv/bin:$PATH"  # a link's target's checkout
fi
if ! command -v touche >/dev/null 2>&1; then
    echo "entrypoint: no touche command: run 'make setup' in the checkout, or install the package" >&2
    exit 127
fi
# `docker run IMAGE sh -c '...'` (a shell, env, python, or touche itself): that command, not a run with it as its
# first flag; `docker run IMAGE validate /out` (a touche command): that command ("unexpected extra arguments" before).
case "${1:-}" in
    sh|bash|env|python|python3|python3.*|touche|*/sh|*/bash|*/env|*/python|*/python3|*/python3.*|*/touche) exec "$@" ;;
    run|validate|evaluate|report|classify|train) exec touche "$@" ;;
esac
exec touche run "$@"
