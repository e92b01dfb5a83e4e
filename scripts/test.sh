#!/usr/bin/env bash
# The whole test suite, with the services it needs: `npm test` (and .ci/run) call this.
#   build + type-check  ->  folder rules  ->  function size  ->  Python venv for interop checks  ->  Kafka + S3 on 127.0.0.1  ->  vitest
# Extra arguments go to vitest (e.g. `npm test -- test/jury`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== build and type-check"
npx tsc -p tsconfig.json
npx tsc -p tsconfig.test.json

echo "== folder rules (dependency-cruiser; .dependency-cruiser.cjs, docs/architecture.md)"
# Exits non-zero on any violation, which stops the suite here (set -e).
npm run --silent lint:deps

echo "== function size (biome: no function body over 80 lines in src/, connectors/, schemas/; biome.json)"
npm run --silent lint:size

echo "== python venv (pyarrow, duckdb) for shard interop tests"
PYENV_PYTHON="$(bash scripts/pyenv.sh)"
echo "   $PYENV_PYTHON"

echo "== local services (Kafka, S3)"
services_env="$(infra/services.sh start)"
eval "$services_env"
# Stop only what this run started (services.sh keeps pid files for its own processes).
trap 'infra/services.sh stop >/dev/null 2>&1 || true' EXIT
echo "   KAFKA_BROKERS=$KAFKA_BROKERS S3_ENDPOINT=$S3_ENDPOINT"

echo "== tests"
report="$(mktemp)"
status=0
RJ_SKIP_BUILD=1 npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
# One plain closing line that any CI reader understands.
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' "$report" || true
rm -f "$report"
exit "$status"
