#!/bin/bash
# The GPU check (docs/gpu.md): build here, run on a machine with a GPU.
#
#   scripts/gpu-check.sh prepare [BUNDLE] [--target cuda-sim] [--quick]
#                                           build the bundle (default
#                                           build/gpu-check) with --target cuda
#                                           (cuda-sim: to try the check here;
#                                           --quick: the benchmarked models only)
#   scripts/gpu-check.sh pack [BUNDLE] ARCHIVE
#                                           compress it (tar.xz, about 21 MiB)
#                                           for a machine that takes less
#   scripts/gpu-check.sh run [BUNDLE]       run it (on the GPU machine; needs
#                                           only the NVIDIA driver and python3)
#
# The bundle holds the programs, their data and references, and the shared
# libraries they need; scripts/gpu_check.py says what is checked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command=${1:-}
bundle=${2:-$here/../build/gpu-check}
case "$command" in
  prepare) shift $(( $# > 1 ? 2 : 1 ))
           exec /usr/bin/python3 "$here/gpu_check.py" prepare "$bundle" "$@" ;;
  pack) if [ $# -eq 2 ]; then bundle=$here/../build/gpu-check; archive=$2
        elif [ $# -eq 3 ]; then archive=$3
        else sed -n '2,16p' "$0" >&2; exit 2; fi
        exec tar cJf "$archive" --exclude="$(basename "$bundle")/work" -C "$(dirname "$bundle")" \
          "$(basename "$bundle")" ;;
  run) exec timeout 480 python3 "$bundle/gpu_check.py" run ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
