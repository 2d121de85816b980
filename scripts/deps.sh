#!/usr/bin/env bash
# Installs what building, testing and benchmarking ctensor needs, if missing.
# Debian/Ubuntu packages plus NumPy from PyPI (the benchmark's baseline).
set -euo pipefail
pkgs=(cmake ninja-build g++ make ccache pkg-config libhwy-dev catch2 libdlpack-dev libbenchmark-dev libdnnl-dev libomp-dev python3 python3-pip python3-dev
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev clang libclang-rt-14-dev)
# ^ the OpenCL backend: the ICD loader and headers, PoCL (OpenCL on this CPU,
#   so the module's kernels run in every test run) and CLBlast (its matmul);
#   clang and its runtime (libFuzzer, sanitizers): scripts/fuzz.sh.
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Python: NumPy (the benchmarks' baseline), nanobind and scikit-build-core (the
# bindings), pytest, hypothesis and onnx (the tests: hypothesis for test_fuzz.py, ONNX's node test data), matplotlib (the bench plot),
# and the frameworks the adapters plug into (ctensor.torch, ctensor.jax, ctensor.dask; their tests
# need them): torch, jax, dask and distributed. CT_FRAMEWORKS=0 leaves the frameworks out (then
# configure with -DCT_FRAMEWORK_TESTS=OFF).
py_mods="numpy:numpy nanobind:nanobind scikit_build_core:scikit-build-core pytest:pytest hypothesis:hypothesis onnx:onnx matplotlib:matplotlib"
if [ "${CT_FRAMEWORKS:-1}" != "0" ]; then
  py_mods="$py_mods torch:torch jax:jax dask:dask[array] distributed:distributed"
fi
py_missing=()
for m in $py_mods; do
  python3 -c "import ${m%%:*}" 2>/dev/null || py_missing+=("${m#*:}")
done
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "deps: installing ${py_missing[*]} (PyPI)"
  python3 -m pip install -q "${py_missing[@]}" || python3 -m pip install -q --break-system-packages "${py_missing[@]}"
fi
