#!/bin/sh
# Instructions one 1-element call through the C ABI costs (validation,
# dispatch and the kernel), counted by callgrind: the difference between
# runs of 2N and N calls, divided by N, so start-up cancels out. Needs
# valgrind and a build of the library (default build/; BUILD=dir to choose).
#   bench/abi_call_cost.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
command -v valgrind >/dev/null || { echo "abi_call_cost.sh: valgrind is not installed (apt-get install valgrind)"; exit 1; }
[ -e "$build/src/libctensor.so" ] || { echo "abi_call_cost.sh: no $build/src/libctensor.so: build the library first"; exit 1; }
exe=$(mktemp -d)/abi_call_cost
cc -O2 -std=c99 "$root/bench/abi_call_cost.c" -I"$root/include" -L"$build/src" -lctensor \
   -Wl,-rpath,"$build/src" -o "$exe"
count() {  # instructions of a run of $1 calls, kind $2, strides $3
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$1" "$2" "$3" 2>&1 |
    awk '/refs:/ { gsub(",", "", $4); print $4 }'
}
n=20000
for kind in 0 1; do
  for strided in 0 1; do
    a=$(count $n $kind $strided)
    b=$(count $((2 * n)) $kind $strided)
    name=$([ $kind = 0 ] && echo "ct_unary relu" || echo "ct_binary add")
    layout=$([ $strided = 0 ] && echo "NULL strides" || echo "compact strides")
    echo "$name, 1 float32 element, $layout: $(( (b - a) / n )) instructions per call"
  done
done
