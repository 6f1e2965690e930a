#!/usr/bin/env bash
# Launch script: CUDA_VISIBLE_DEVICES in a comment is not reported
set -euo pipefail
export CUDA_VISIBLE_DEVICES=0,1 # expect: XPT101
nvidia-smi --query-gpu=name,memory.used --format=csv # expect: XPT102
echo "${#CUDA_VISIBLE_DEVICES}" # expect: XPT101
docker run --gpus all --rm trainer:latest # expect: XPT103
python train.py --device xpu
