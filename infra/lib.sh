# shellcheck shell=bash
# Shared helpers for infra/kafka.sh, infra/s3.sh and infra/services.sh.
# Sourced, not executed. Conventions:
#   - stdout is reserved for `export NAME=value` lines (callers `eval` it);
#     every message goes to stderr, every service log to a file under .infra/.
#   - a service is "ours" only if its pid file points at a live process whose
#     command line still matches what we started (pids get reused).

INFRA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INFRA_STATE="${INFRA_STATE:-$INFRA_ROOT/.infra}"

log() { printf '[infra] %s\n' "$*" >&2; }

# die MESSAGE [LOGFILE...]: print the error and the tail of each non-empty log.
die() {
  local f
  printf '[infra] ERROR: %s\n' "$1" >&2
  shift
  for f in "$@"; do
    [[ -s "$f" ]] || continue
    printf '[infra] ---- last 30 lines of %s ----\n' "$f" >&2
    tail -n 30 "$f" >&2
  done
  (($# == 0)) || printf '[infra] ----\n' >&2
  exit 1
}

# rotate_logs FILE...: keep one previous copy, so the tail shown on failure is
# from this start only and logs don't grow without bound.
rotate_logs() {
  local f
  for f in "$@"; do
    [[ -f "$f" ]] && mv -f "$f" "$f.1"
  done
  return 0
}

# port_open PORT [HOST]: true if something accepts TCP connections there.
# Uses bash's /dev/tcp so no nc/ss is needed.
port_open() {
  (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# pid_matches PIDFILE PATTERN: true if the pid file names a live process whose
# command line contains PATTERN (guards against a recycled pid).
pid_matches() {
  local pidfile=$1 pattern=$2 pid
  [[ -f "$pidfile" ]] || return 1
  pid=$(<"$pidfile")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$pattern"
}

# stop_pid PIDFILE PATTERN NAME [GRACE_SECONDS]: SIGTERM, wait, then SIGKILL.
# Only touches the process if pid_matches; always removes the pid file.
stop_pid() {
  local pidfile=$1 pattern=$2 name=$3 grace=${4:-30} pid i
  if ! pid_matches "$pidfile" "$pattern"; then
    [[ -f "$pidfile" ]] && log "$name: stale pid file removed (its process is gone or is not ours)"
    rm -f "$pidfile"
    return 0
  fi
  pid=$(<"$pidfile")
  log "$name: stopping pid $pid"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name: still alive after ${grace}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$pidfile"
  log "$name: stopped"
}

# with_lock FILE: serialise start/stop of one service across concurrent callers
# (e.g. two test runs started at once). Holds fd 9 until the script exits.
with_lock() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1"
  flock -w 900 9 || die "could not lock $1 within 900s"
}

# export_line NAME VALUE: the only thing the scripts print on stdout.
export_line() { printf 'export %s=%q\n' "$1" "$2"; }

# now_s: seconds since epoch with decimals, for elapsed-time messages.
now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }'; }
