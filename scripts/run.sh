#!/usr/bin/env bash
# The main job: build ctensor (Release) and its Python module, run the examples, then the
# benchmarks (elementwise; broadcast/reduce; NN against oneDNN) with NumPy
# measured in the same run, then the Python bindings against NumPy and the C benchmark.
#   scripts/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"  # cache hits across checkouts in different folders
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCT_BUILD_PYTHON=ON \
      -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build -j"$(nproc)"
echo "== examples"
build/examples/ctensor_example_c
build/examples/ctensor_example_cpp
echo "== elementwise benchmark"
python3 bench/run.py build/bench/ct_bench_elementwise "$@"
echo "== broadcast / reduce benchmark"
python3 bench/run.py --suite broadcast_reduce build/bench/ct_bench_broadcast_reduce "$@"
echo "== NN benchmark (conv, matmul vs oneDNN and NumPy)"
python3 bench/run.py --suite nn build/bench/ct_bench_nn "$@"
echo "== Python bindings: per-call overhead vs NumPy, large-array cost vs the C benchmark"
PYTHONPATH=build/python python3 bench/bench_python.py "$@"
