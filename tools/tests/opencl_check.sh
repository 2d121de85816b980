#!/usr/bin/env bash
# ctensor check --device opencl:0 twice, each in a new process, with a
# program cache that starts empty: the first run compiles the programs it
# needs and stores them; the second must compile none (it loads them all).
#   opencl_check.sh <ctensor tool> <cache folder> [--quick]
# Exits 77 (ctest: skipped) when no OpenCL device loaded.
set -uo pipefail
tool=$1 cache=$2 quick=${3:-}
if ! "$tool" info 2>/dev/null | grep -q "opencl:0"; then
  echo "opencl_check: no OpenCL device loaded (no ICD platform such as PoCL): skipped"
  exit 77
fi
rm -rf "$cache"
export CT_OPENCL_CACHE_DIR="$cache" CT_OPENCL_VERBOSE=1
for run in first second; do
  "$tool" check --device opencl:0 $quick >"$cache.out" 2>"$cache.err"
  rc=$?
  compiled=$(grep -c "compiled program" "$cache.err")
  loaded=$(grep -c "loaded program" "$cache.err")
  echo "opencl_check $run process: $(grep '^checked' "$cache.out"); $compiled programs compiled, $loaded loaded from $cache"
  if [ $rc -ne 0 ]; then
    echo "ctensor check --device opencl:0 failed ($rc):"; cat "$cache.out" "$cache.err"; exit 1
  fi
  if [ $run = first ] && [ "$compiled" -eq 0 ]; then
    echo "the first process compiled no program: the cache was not empty?"; exit 1
  fi
  if [ $run = second ] && [ "$compiled" -ne 0 ]; then
    echo "the second process compiled $compiled programs; the disk cache should have held them all:"
    grep "compiled program" "$cache.err"; exit 1
  fi
done
