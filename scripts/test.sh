#!/usr/bin/env bash
# The whole test suite, with the services it needs: `npm test` (and .ci/run) call this.
#   (Kafka + S3 and the Python venv start in the background)  type-check + build, bundle  ->  folder rules  ->  function size  ->  vitest
# Extra arguments go to vitest (e.g. `npm test -- test/jury`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The services and the venv need none of the build: they start in the background while the
# compiler runs. Their output is kept in files and printed in order, so the log reads as if
# they ran one after the other.
work="$(mktemp -d)"
services_env="$work/services.env"
( infra/services.sh start >"$services_env" 2>"$work/services.log" ) &
services_pid=$!
( bash scripts/pyenv.sh >"$work/pyenv.out" 2>"$work/pyenv.log" ) &
pyenv_pid=$!
# Stop only what this run started; also when the build fails while the services are still
# coming up. A broker or S3 server named by KAFKA_BROKERS / S3_ENDPOINT was reused, not
# started, and belongs to someone else (another checkout's suite, a developer's shell): the
# pid files under .infra/ would still point at it when it was started from the same tree.
kafka_preset=${KAFKA_BROKERS:+yes}
s3_preset=${S3_ENDPOINT:+yes}
stop_ours() {
  [ -n "$kafka_preset" ] || infra/kafka.sh stop >/dev/null 2>&1 || true
  [ -n "$s3_preset" ] || infra/s3.sh stop >/dev/null 2>&1 || true
}
trap 'wait "$services_pid" 2>/dev/null || true; stop_ours; rm -rf "$work"' EXIT

echo "== type-check and build"
# One compiler pass over the product and the tests: it checks both and writes dist/ as
# `npm run build` does (same tsconfig.json options). The tests' own output (dist/test,
# dist/vitest.config.js) is removed at once: nothing runs it from there, and the package must
# not carry it. Two passes side by side (build, then check of the tests) spent ~7 CPU-seconds
# more, on the two cores the Kafka broker is starting on.
npx tsc -p tsconfig.test.json --noEmit false --outDir dist
rm -rf dist/test dist/vitest.config.js dist/vitest.config.js.map
node scripts/bundle.mjs
# The library's declarations (dist/types), which the package ships and test/api checks.
node scripts/api-types.mjs

echo "== folder rules (dependency-cruiser; .dependency-cruiser.cjs, docs/architecture.md)"
# Exits non-zero on any violation, which stops the suite here (set -e).
npm run --silent lint:deps

echo "== function size (biome: no function body over 80 lines in src/, connectors/, schemas/; biome.json)"
npm run --silent lint:size

echo "== python venv (pyarrow, duckdb) for shard interop tests"
status=0
wait "$pyenv_pid" || status=$?
cat "$work/pyenv.log" >&2
[ "$status" = 0 ] || { echo "scripts/pyenv.sh failed (exit $status)" >&2; exit "$status"; }
echo "   $(cat "$work/pyenv.out")"

echo "== local services (Kafka, S3)"
wait "$services_pid" || status=$?
cat "$work/services.log" >&2
[ "$status" = 0 ] || { echo "infra/services.sh start failed (exit $status)" >&2; exit "$status"; }
eval "$(cat "$services_env")"
echo "   KAFKA_BROKERS=$KAFKA_BROKERS S3_ENDPOINT=$S3_ENDPOINT"

echo "== tests"
report="$work/vitest.json"
summary="$work/summary.json"
# One plain closing line that any CI reader understands, written by the last reporter
# (test/helpers/closing-line.ts) and printed below: tests by outcome plus what fails a run
# without failing a test (a file that does not load, a beforeAll/afterAll that throws, an error
# no test caught).
RJ_SKIP_BUILD=1 RJ_TEST_SUMMARY="$summary" npx vitest run --reporter=default --reporter=json --outputFile.json="$report" \
  --reporter=./test/helpers/closing-line.ts "$@" || status=$?
# Kept for scripts/test-durations.mjs (the order the suite's sequencer starts files in).
mkdir -p .cache && cp "$report" .cache/vitest-report.json 2>/dev/null || true
if [ ! -s "$summary" ]; then
  echo "tests: no result (vitest ended before reporting, exit $status) — FAILED"
  [ "$status" != 0 ] || status=1
else
  node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).line)' "$summary"
  # A failure the line counts that vitest's exit code did not: the line wins.
  if [ "$status" = 0 ] && ! node -e 'process.exit(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).failures > 0 ? 1 : 0)' "$summary"; then
    status=1
  fi
fi
exit "$status"
