#!/usr/bin/env bash
# Install a built ctensor into a scratch prefix, then build examples/ against
# the installed package only (find_package, then pkg-config) and run them.
# Usage: bash install_test.sh <build_dir> <examples_src_dir>
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 <build_dir> <examples_src_dir>" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
examples_dir=$(cd "$2" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctensor-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

step() { printf '\n== %s\n' "$*"; }

step "install $build_dir into $prefix"
cmake --install "$build_dir" --prefix "$prefix"

config=$(find "$prefix" -name ctensorConfig.cmake -print -quit)
pcfile=$(find "$prefix" -name ctensor.pc -print -quit)
[ -n "$config" ] || { echo "FAIL: no ctensorConfig.cmake under $prefix" >&2; exit 1; }
[ -n "$pcfile" ] || { echo "FAIL: no ctensor.pc under $prefix" >&2; exit 1; }
for h in ctensor.h ctensor_nn.h plugin.h ctensor.hpp; do
  [ -f "$prefix/include/ctensor/$h" ] || { echo "FAIL: $h not installed" >&2; exit 1; }
done
# ctensor.hpp includes its pieces (ctensor/cpp/*.hpp) by relative path: every
# quoted include of an installed header must resolve next to it.
n_pieces=0
while IFS= read -r hdr; do
  while IFS= read -r inc; do
    [ -f "$(dirname "$hdr")/$inc" ] || { echo "FAIL: $hdr includes \"$inc\", not installed" >&2; exit 1; }
    n_pieces=$((n_pieces + 1))
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$hdr")
done < <(find "$prefix/include/ctensor" -name '*.hpp')
[ "$n_pieces" -gt 0 ] || { echo "FAIL: no quoted includes found under $prefix/include/ctensor" >&2; exit 1; }
echo "$n_pieces relative includes of the installed C++ headers resolve"
lib=$(find "$prefix" -name 'libctensor.so*' -print -quit)
libdir=${lib:+$(dirname "$lib")}

step "build examples/ standalone with find_package(ctensor)"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# Only the scratch prefix: no package registry, no in-tree targets.
cmake -S "$examples_dir" -B "$tmp/build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
found=$(sed -n 's/^ctensor_DIR:PATH=//p' "$tmp/build/CMakeCache.txt")
case "$found" in
  "$prefix"/*) echo "found ctensor in $found" ;;
  *) echo "FAIL: find_package(ctensor) found '$found', not the scratch prefix" >&2; exit 1 ;;
esac
cmake --build "$tmp/build"

step "run the examples (build-tree RPATH, no LD_LIBRARY_PATH)"
"$tmp/build/ctensor_example_c"
"$tmp/build/ctensor_example_cpp"

step "run the plugin example (a C99 plugin built against the installed headers, loaded at run time)"
"$tmp/build/plugin_custom_op/run_custom_ops" "$tmp/build/plugin_custom_op/libcustom_ops.so"

step "build example.c with pkg-config"
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "FAILED: pkg-config not found (scripts/deps.sh installs it)"
  exit 1
fi
export PKG_CONFIG_PATH=$(dirname "$pcfile")
# ctensor.pc finds its prefix relative to itself (${pcfiledir}): no override.
flags=$(pkg-config --cflags --libs ctensor)
case "$flags" in *"$prefix"*) ;; *) echo "FAILED: pkg-config flags do not point into $prefix"; exit 1;; esac
echo "pkg-config --cflags --libs ctensor: $flags"
# shellcheck disable=SC2086  # flags are meant to split
"${CC:-cc}" -std=c99 -pedantic -Wall -Wextra -Werror "$examples_dir/example.c" $flags \
  -o "$tmp/example_c_pkgconfig"
LD_LIBRARY_PATH="${libdir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/example_c_pkgconfig"

step "install test passed"
