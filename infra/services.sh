#!/usr/bin/env bash
# Local Kafka + S3 for integration tests, both on 127.0.0.1, no Docker.
#
#   eval "$(infra/services.sh start)"   # start (or reuse) both; sets KAFKA_BROKERS,
#                                       # S3_ENDPOINT, AWS_ACCESS_KEY_ID,
#                                       # AWS_SECRET_ACCESS_KEY, AWS_REGION
#   infra/services.sh prepare           # only fetch/build what start needs (the
#                                       # Kafka jars, versitygw), both in parallel
#   infra/services.sh stop              # stop what infra/kafka.sh / infra/s3.sh started
#   infra/services.sh status
#
# Already-set KAFKA_BROKERS / S3_ENDPOINT are reused as they are: nothing is
# started for them (they are only checked to accept TCP connections), so a
# developer or CI with its own broker/bucket server can point the tests at it.
# stdout carries only `export` lines; progress and errors go to stderr, service
# logs to .infra/kafka/server.log and .infra/s3/versitygw.log.
# Ports and knobs: see the headers of infra/kafka.sh and infra/s3.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=infra/lib.sh
source "$HERE/lib.sh"

# host_port_open "host:port": TCP check of the first entry of a broker list/URL.
host_port_open() {
  local hp=$1
  port_open "${hp##*:}" "${hp%:*}"
}

# host:port of an http(s) URL, with the scheme's default port.
url_host_port() {
  local url=$1 rest host port
  rest=${url#*://}
  rest=${rest%%/*}
  host=${rest%:*}
  port=${rest##*:}
  if [[ "$rest" != *:* ]]; then
    host=$rest
    [[ "$url" == https://* ]] && port=443 || port=80
  fi
  echo "$host:$port"
}

start() {
  local t0 kpid="" spid="" failed=0
  t0=$(now_s)
  tmp=$(mktemp -d) # global: the EXIT trap runs after this function returned
  trap 'rm -rf "$tmp"' EXIT

  # Kafka and S3 start in parallel: cold, Maven's download overlaps Go's build;
  # warm, the JVM start overlaps versitygw's.
  if [[ -n "${KAFKA_BROKERS:-}" ]]; then
    local first=${KAFKA_BROKERS%%,*}
    host_port_open "$first" ||
      die "KAFKA_BROKERS=$KAFKA_BROKERS is set but $first does not accept connections (unset KAFKA_BROKERS to start a local broker)"
    log "kafka: KAFKA_BROKERS is set, reusing $KAFKA_BROKERS (nothing started)"
    export_line KAFKA_BROKERS "$KAFKA_BROKERS" >"$tmp/kafka"
  else
    "$HERE/kafka.sh" start >"$tmp/kafka" &
    kpid=$!
  fi

  if [[ -n "${S3_ENDPOINT:-}" ]]; then
    local hp
    hp=$(url_host_port "$S3_ENDPOINT")
    host_port_open "$hp" ||
      die "S3_ENDPOINT=$S3_ENDPOINT is set but $hp does not accept connections (unset S3_ENDPOINT to start a local S3 server)"
    log "s3: S3_ENDPOINT is set, reusing $S3_ENDPOINT (nothing started)"
    {
      export_line S3_ENDPOINT "$S3_ENDPOINT"
      # Credentials already in the environment are left alone (and not echoed);
      # only missing ones get the local test defaults.
      [[ -n "${AWS_ACCESS_KEY_ID:-}" ]] || export_line AWS_ACCESS_KEY_ID "${S3_ACCESS_KEY:-rjtest}"
      [[ -n "${AWS_SECRET_ACCESS_KEY:-}" ]] || export_line AWS_SECRET_ACCESS_KEY "${S3_SECRET_KEY:-rjtestsecret}"
      [[ -n "${AWS_REGION:-}" ]] || export_line AWS_REGION "${S3_REGION:-us-east-1}"
    } >"$tmp/s3"
  else
    "$HERE/s3.sh" start >"$tmp/s3" &
    spid=$!
  fi

  if [[ -n "$kpid" ]]; then wait "$kpid" || failed=1; fi
  if [[ -n "$spid" ]]; then wait "$spid" || failed=1; fi
  ((failed == 0)) || die "start failed (see above); 'infra/services.sh stop' stops whatever did start"

  cat "$tmp/kafka" "$tmp/s3"
  log "services ready in $(elapsed "$t0")s"
}

# both CMD: infra/kafka.sh CMD and infra/s3.sh CMD side by side; fails if either does.
both() {
  local rc=0 kpid spid
  "$HERE/kafka.sh" "$1" & kpid=$!
  "$HERE/s3.sh" "$1" & spid=$!
  wait "$kpid" || rc=1
  wait "$spid" || rc=1
  return "$rc"
}

# Downloads and builds only, nothing started: .ci/run overlaps them with npm ci.
prepare() {
  local t0
  t0=$(now_s)
  both prepare || die "prepare failed (see above)"
  log "services prepared in $(elapsed "$t0")s"
}

stop() {
  # Pid files decide, not KAFKA_BROKERS/S3_ENDPOINT: after `eval "$(... start)"`
  # those are set in the caller's shell but the services are still ours to stop.
  # Both in parallel: Kafka's clean shutdown takes ~2s, versitygw's ~1s.
  both stop
}

status() {
  local rc=0
  "$HERE/kafka.sh" status || rc=3
  "$HERE/s3.sh" status || rc=3
  return "$rc"
}

case "${1:-}" in
  prepare) prepare ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 prepare|start|stop|status" >&2; exit 2 ;;
esac
