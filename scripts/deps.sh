#!/usr/bin/env bash
# Installs what building, testing and benchmarking ctensor needs, if missing.
# Debian/Ubuntu packages plus NumPy from PyPI (the benchmark's baseline).
set -euo pipefail
pkgs=(cmake ninja-build g++ make ccache pkg-config libhwy-dev catch2 libdlpack-dev libbenchmark-dev libdnnl-dev libomp-dev python3 python3-pip)
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
if ! python3 -c "import numpy" 2>/dev/null; then
  echo "deps: installing numpy"
  python3 -m pip install -q numpy || python3 -m pip install -q --break-system-packages numpy
fi
