#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the GPU tests, then the launch-overhead benchmark.
# Usage: tests/gpu/run.sh   (from the repository root, with warp_lab installed)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
"$PY" -m pytest tests/gpu tests/analysis -q -rs
"$PY" benchmarks/launch_overhead.py
