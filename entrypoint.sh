#!/bin/sh
# TIRA calls `/entrypoint.sh -i $inputDataset -o $outputDir`; all flags go straight to `touche run`.
set -e
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec touche run "$@"
