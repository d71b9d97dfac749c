#!/usr/bin/env bash
# npm test: the dist/ build that the process tests run, the type-check (tsc), ESLint, then every
# vitest test (this script's arguments go to `vitest run`). Fails if any of them fails.
#
# dist/ is transpiled by esbuild (scripts/build-dist.mjs, about a second), so the tests start at
# once; tsc --noEmit (~40 s of CPU) and ESLint (~20 s) run beside them at the lowest CPU priority
# (nice 19), in what the tests leave idle (they wait out leases and timers), and their reports are
# printed at the end: a type or lint error fails npm test after the tests, not before them.
set -u
cd "$(dirname "$0")/.."

tsc_out="$(mktemp)"
lint_out="$(mktemp)"
trap 'rm -f "$tsc_out" "$lint_out"' EXIT

node scripts/build-dist.mjs
build_status=$?
if [ "$build_status" -ne 0 ]; then
  echo "npm test: building dist/ failed (exit $build_status); the tests were not run" >&2
  exit "$build_status"
fi

nice -n 19 tsc -p tsconfig.json --noEmit > "$tsc_out" 2>&1 &
tsc_pid=$!
nice -n 19 eslint . > "$lint_out" 2>&1 &
lint_pid=$!

# Waits for a background check and prints its report; its exit status.
finish() {
  local pid="$1" out="$2" name="$3" status
  wait "$pid"
  status=$?
  cat "$out"
  [ "$status" -eq 0 ] || echo "npm test: $name failed (exit $status)" >&2
  return "$status"
}

vitest run "$@"
test_status=$?
finish "$tsc_pid" "$tsc_out" tsc
tsc_status=$?
finish "$lint_pid" "$lint_out" ESLint
lint_status=$?
[ "$test_status" -ne 0 ] && exit "$test_status"
[ "$tsc_status" -ne 0 ] && exit "$tsc_status"
exit "$lint_status"
