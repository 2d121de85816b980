#!/usr/bin/env bash
# ctensor check --device <backend>:0 twice, each in a new process, with a
# program cache that starts empty: the first run compiles the programs it
# needs and stores them; the second must compile none (it loads them all).
# For the GPU modules, which compile generated kernels at run time (opencl,
# cuda: CT_<BACKEND>_CACHE_DIR and CT_<BACKEND>_VERBOSE).
#   gpu_check.sh <ctensor tool> <backend> <cache folder> [--quick]
# Exits 77 (ctest: skipped) when no device of the backend loaded.
set -uo pipefail
tool=$1 backend=$2 cache=$3 quick=${4:-}
dev="$backend:0" var=$(echo "$backend" | tr a-z A-Z)
if ! "$tool" info 2>/dev/null | grep -q "$dev"; then
  echo "${backend}_check: no $backend device loaded ($("$tool" info 2>&1 | grep "libctensor_$backend" || echo "module not built")): skipped"
  exit 77
fi
rm -rf "$cache"
export "CT_${var}_CACHE_DIR=$cache" "CT_${var}_VERBOSE=1"
for run in first second; do
  "$tool" check --device "$dev" $quick >"$cache.out" 2>"$cache.err"
  rc=$?
  compiled=$(grep -c "compiled program" "$cache.err")
  loaded=$(grep -c "loaded program" "$cache.err")
  echo "${backend}_check $run process: $(grep '^checked' "$cache.out"); $compiled programs compiled, $loaded loaded from $cache"
  if [ $rc -ne 0 ]; then
    # What failed first (a CI log keeps only the tail), then the whole report.
    echo "ctensor check --device $dev failed ($rc); the rows that did not pass:"
    grep -v -E ' (PASS|SKIP)$' "$cache.out"
    echo "its messages (program compilations left out):"
    grep -v -E 'compiled program|its source is|warning generated' "$cache.err" | tail -n 60
    echo "the whole report: $cache.out"; exit 1
  fi
  if [ $run = first ] && [ "$compiled" -eq 0 ]; then
    echo "the first process compiled no program: the cache was not empty?"; exit 1
  fi
  if [ $run = second ] && [ "$compiled" -ne 0 ]; then
    echo "the second process compiled $compiled programs; the disk cache should have held them all:"
    grep "compiled program" "$cache.err"; exit 1
  fi
done
