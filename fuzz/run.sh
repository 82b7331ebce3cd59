#!/usr/bin/env bash
# Usage: fuzz/run.sh [BUILD_DIR [TARGET...]]
# Run every libFuzzer target (or the named ones) built in BUILD_DIR (default build-fuzz) for
# FUZZ_SECONDS (default 30) each, starting from the seed corpus committed in
# fuzz/corpus/<target>/. New inputs go to a scratch folder, so the committed
# corpus stays small; a crash leaves its input as <build>/crash-* and fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-fuzz}
shift || true
only=" $* "
secs=${FUZZ_SECONDS:-30}
status=0
# Allocation failures are errors voxa reports (ENOMEM), not crashes.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || continue
  seeds="$here/corpus/$name"
  work=$(mktemp -d)
  echo "== $name: ${secs}s, seeds $(ls "$seeds" 2>/dev/null | wc -l)"
  art="$build/artifacts/$name/"
  mkdir -p "$art"
  if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$art" "$work" "$seeds" \
        > "$build/$name.log" 2>&1; then
    status=1
    tail -n 40 "$build/$name.log"
    echo "!! $name found a problem: $(ls "$art")"
  else
    grep -E "stat::number_of_executed_units|cov:" "$build/$name.log" | tail -n 2
  fi
  rm -rf "$work"
done
exit $status
