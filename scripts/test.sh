#!/usr/bin/env bash
# npm test: tsc (the type-check, and the dist/ build that the process tests run), ESLint, then
# every vitest test (this script's arguments go to `vitest run`). Fails if any of them fails.
#
# ESLint runs beside tsc and, when not done by then, beside the first tests, at the lowest CPU
# priority (nice 19): tsc is on the path to the tests (they need dist/) and keeps about 1.5 of the
# two cores busy, so ESLint (~21 s of CPU) takes what tsc leaves instead of slowing it down; its
# report is printed at the end. tsc failing still stops npm test before the tests.
set -u
cd "$(dirname "$0")/.."

lint_out="$(mktemp)"
trap 'rm -f "$lint_out"' EXIT
nice -n 19 eslint . > "$lint_out" 2>&1 &
lint_pid=$!

finish_lint() {
  wait "$lint_pid"
  local status=$?
  cat "$lint_out"
  [ "$status" -eq 0 ] || echo "npm test: ESLint failed (exit $status)" >&2
  return "$status"
}

tsc -p tsconfig.json
tsc_status=$?
if [ "$tsc_status" -ne 0 ]; then
  finish_lint
  echo "npm test: tsc failed (exit $tsc_status); the tests were not run" >&2
  exit "$tsc_status"
fi

vitest run "$@"
test_status=$?
finish_lint
lint_status=$?
[ "$test_status" -ne 0 ] && exit "$test_status"
exit "$lint_status"
