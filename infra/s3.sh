#!/usr/bin/env bash
# S3-compatible server on 127.0.0.1: Versity S3 Gateway (versitygw) with its
# posix backend, built from the Go module proxy with `go install` (no Docker,
# no release-binary downloads here). Serves Put/Get(+Range)/Head/Delete,
# ListObjectsV2, multipart uploads and conditional writes (If-None-Match: *,
# If-Match) with 412 PreconditionFailed, path-style addressing.
#
#   infra/s3.sh prepare  # only build versitygw (no server)
#   infra/s3.sh start    # build if needed, start (or reuse), wait until a signed
#                        # ListBuckets succeeds; prints export lines on stdout
#   infra/s3.sh stop     # stop the server this script started (pid file)
#   infra/s3.sh status   # exit 0 if our server is running, 3 if not
#
# Environment (all optional):
#   S3_PORT=39000                 listen port on 127.0.0.1
#   S3_ACCESS_KEY=rjtest          root access key (test value, not a secret)
#   S3_SECRET_KEY=rjtestsecret    root secret key (test value, not a secret)
#   S3_REGION=us-east-1
#   S3_START_TIMEOUT=30           seconds to wait for readiness
#   VERSITYGW_VERSION=v1.8.0      module version to build
#   INFRA_KEEP_DATA=1             keep buckets across restarts (default: fresh per start)
# Files: .infra/bin/versitygw, .infra/s3/{data/,versitygw.log,versitygw.pid,build.log}
set -euo pipefail
# shellcheck source=infra/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S3_PORT="${S3_PORT:-39000}"
S3_ACCESS_KEY="${S3_ACCESS_KEY:-rjtest}"
S3_SECRET_KEY="${S3_SECRET_KEY:-rjtestsecret}"
S3_REGION="${S3_REGION:-us-east-1}"
S3_START_TIMEOUT="${S3_START_TIMEOUT:-30}"
VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"

BIN_DIR="$INFRA_STATE/bin"
BIN="$BIN_DIR/versitygw"
DIR="$INFRA_STATE/s3"
DATA="$DIR/data"
PIDFILE="$DIR/versitygw.pid"
LOG="$DIR/versitygw.log"
ENDPOINT="http://127.0.0.1:$S3_PORT"

# Build versitygw into .infra/bin once per version. `go install` reuses the Go
# module and build caches (~/go/pkg/mod, ~/.cache/go-build), so a rebuild on the
# same machine takes seconds; the first one ~1-2 min on 2 cores.
ensure_binary() {
  if [[ -x "$BIN" && "$(cat "$BIN.version" 2>/dev/null)" == "$VERSITYGW_VERSION" ]]; then
    return 0
  fi
  command -v go >/dev/null || die "go not found (Go 1.25+ is needed to build versitygw)"
  log "s3: building versitygw $VERSITYGW_VERSION with go install (first run only; log: $DIR/build.log)"
  local t0; t0=$(now_s)
  mkdir -p "$BIN_DIR"
  # -ldflags: stamp the version the way versitygw's Makefile does (`versitygw -v`).
  GOBIN="$BIN_DIR" go install -ldflags "-X=main.Version=$VERSITYGW_VERSION" \
    "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >"$DIR/build.log" 2>&1 ||
    die "s3: go install of versitygw $VERSITYGW_VERSION failed" "$DIR/build.log"
  echo "$VERSITYGW_VERSION" >"$BIN.version"
  log "s3: versitygw built in $(elapsed "$t0")s"
}

# One signed S3 request (ListBuckets, SigV4 via curl) proves the server is up
# AND accepts our credentials, not just that the port is open.
s3_answers() {
  local empty_sha=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 \
        --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
        -H "x-amz-content-sha256: $empty_sha" "$ENDPOINT/")" == 200 ]]
}

wait_ready() {
  local timeout=$1 t0 pid deadline
  t0=$(now_s)
  pid=$(<"$PIDFILE")
  deadline=$((SECONDS + timeout))
  until s3_answers; do
    kill -0 "$pid" 2>/dev/null || die "s3: versitygw exited during start-up" "$LOG"
    ((SECONDS < deadline)) || die "s3: $ENDPOINT did not answer a signed ListBuckets within ${timeout}s (wrong S3_ACCESS_KEY/S3_SECRET_KEY for a running server?)" "$LOG"
    sleep 0.2
  done
  log "s3: ready on $ENDPOINT (pid $pid, $(elapsed "$t0")s)"
}

print_exports() {
  export_line S3_ENDPOINT "$ENDPOINT"
  export_line AWS_ACCESS_KEY_ID "$S3_ACCESS_KEY"
  export_line AWS_SECRET_ACCESS_KEY "$S3_SECRET_KEY"
  export_line AWS_REGION "$S3_REGION"
}

start() {
  with_lock "$DIR/.lock"
  if pid_matches "$PIDFILE" "$DATA"; then
    log "s3: already running (pid $(<"$PIDFILE")), reusing it"
    wait_ready "$S3_START_TIMEOUT"
    print_exports
    return 0
  fi
  rm -f "$PIDFILE"
  port_open "$S3_PORT" && die "s3: port $S3_PORT on 127.0.0.1 is already in use by another process; set S3_PORT, or S3_ENDPOINT to reuse a running server"
  command -v curl >/dev/null || die "curl (7.75+) is needed for the S3 readiness check"
  mkdir -p "$DIR"
  ensure_binary
  [[ "${INFRA_KEEP_DATA:-0}" == 1 ]] || rm -rf "$DATA"
  mkdir -p "$DATA"
  rotate_logs "$LOG"
  log "s3: starting versitygw on $ENDPOINT (log: $LOG)"
  # Credentials go through the environment, not argv, so `ps` does not show them.
  # --quiet drops per-request stdout lines; --health gives a cheap GET /health.
  # setsid + redirections + 9>&- as in kafka.sh: detached, no inherited pipes or lock.
  ROOT_ACCESS_KEY="$S3_ACCESS_KEY" ROOT_SECRET_KEY="$S3_SECRET_KEY" VGW_REGION="$S3_REGION" \
    setsid "$BIN" --port "127.0.0.1:$S3_PORT" --quiet --health /health posix "$DATA" \
    </dev/null >>"$LOG" 2>&1 9>&- &
  echo $! >"$PIDFILE"
  # If it never gets ready, don't leave a half-started server behind.
  trap 'rc=$?; ((rc == 0)) || stop_pid "$PIDFILE" "$DATA" s3 15' EXIT
  wait_ready "$S3_START_TIMEOUT"
  print_exports
}

# What start needs on disk, without starting anything (CI runs it while npm installs).
prepare() {
  with_lock "$DIR/.lock"
  mkdir -p "$DIR"
  ensure_binary
}

stop() {
  with_lock "$DIR/.lock"
  # versitygw drains connections on SIGTERM; a couple of seconds at most.
  stop_pid "$PIDFILE" "$DATA" s3 15
}

status() {
  if pid_matches "$PIDFILE" "$DATA"; then
    log "s3: running (pid $(<"$PIDFILE")) on $ENDPOINT"
  else
    log "s3: not running"
    return 3
  fi
}

case "${1:-}" in
  prepare) prepare ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 prepare|start|stop|status" >&2; exit 2 ;;
esac
