#!/bin/bash
# Which reads compute-sanitizer's initcheck reports, one case a process:
# global memory cudaMalloc left unwritten and written by a memset, shared
# memory (static and dynamic) that no thread wrote, a __device__ array
# never written, and memory a kernel's malloc returned. Run on the GPU
# machine, from anywhere: bash bench/probes/initcheck-probe.sh
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
compute-sanitizer --version | tail -1
nvcc -arch=sm_90 -o /tmp/initcheck-probe initcheck_probe.cu || exit 1
for c in global_unwritten global_written shared_static shared_dynamic device_var heap; do
  echo "== $c"
  compute-sanitizer --tool initcheck /tmp/initcheck-probe "$c" 2>&1 |
    grep -E "Uninitialized|ERROR SUMMARY|: no error" | head -4
done
