#!/usr/bin/env bash
# Single-node Apache Kafka 4 (KRaft, broker+controller in one JVM) on 127.0.0.1,
# run from Maven Central jars because no Docker and no apache.org downloads.
#
#   infra/kafka.sh prepare  # only fetch the jars and compile the probe (no broker)
#   infra/kafka.sh start    # fetch jars if needed, start (or reuse), wait until ready;
#                           # prints `export KAFKA_BROKERS=127.0.0.1:PORT` on stdout
#   infra/kafka.sh stop     # stop the broker this script started (pid file)
#   infra/kafka.sh status   # exit 0 if our broker is running, 3 if not
#
# Environment (all optional):
#   KAFKA_PORT=39092 KAFKA_CONTROLLER_PORT=39093   listener ports on 127.0.0.1
#   KAFKA_HEAP_OPTS="-Xms128m -Xmx512m"             broker JVM heap
#   KAFKA_START_TIMEOUT=90                          seconds to wait for readiness
#   INFRA_KEEP_DATA=1                               keep topics/offsets across restarts
#                                                   (default: fresh, empty cluster per start)
# Files: .infra/kafka/{libs/,data/,server.properties,server.log,kafka.out,kafka.pid,...}
set -euo pipefail
# shellcheck source=infra/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_PORT="${KAFKA_PORT:-39092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-39093}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"

SRC="$INFRA_ROOT/infra/kafka"
DIR="$INFRA_STATE/kafka"
LIBS="$DIR/libs"
DATA="$DIR/data"
PROPS="$DIR/server.properties"
PIDFILE="$DIR/kafka.pid"
READY="$DIR/kafka.ready"  # pid of the broker once it passed the readiness probe
LOG="$DIR/server.log"    # log4j2 output (see infra/kafka/log4j2.xml)
OUT="$DIR/kafka.out"     # JVM stdout/stderr: crashes before log4j starts land here
PROBE="$DIR/probe"        # compiled KafkaReady.class
BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
# Short-lived helper JVMs (format, probe) start faster with C1 only.
QUICK_JVM=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC)

# java_logged LOGNAME ARGS...: every JVM we run logs through infra/kafka/log4j2.xml
# into .infra/kafka/LOGNAME.
java_logged() {
  local name=$1
  shift
  java -Dlog4j2.configurationFile="$SRC/log4j2.xml" -Dkafka.logs.dir="$DIR" -Dkafka.log.name="$name" "$@"
}

# Copy kafka_2.13 + runtime deps from Maven Central into .infra/kafka/libs.
# Skipped when libs/ was filled from the current pom (hash stamp), so a warm
# start costs nothing; Maven's ~/.m2 makes a re-fill offline-fast too.
ensure_libs() {
  local want have=""
  want=$(sha256sum "$SRC/pom.xml" | cut -d' ' -f1)
  [[ -f "$LIBS/.pom.sha256" ]] && have=$(<"$LIBS/.pom.sha256")
  [[ "$want" == "$have" ]] && return 0
  command -v mvn >/dev/null || die "mvn not found (Maven 3.8+ and Java 17+ are needed)"
  command -v java >/dev/null || die "java not found (Java 17+ is needed)"
  log "kafka: fetching jars with Maven into $LIBS (first run only; log: $DIR/mvn.log)"
  local t0; t0=$(now_s)
  # A changed pom means another Kafka version: never mix two on the classpath.
  rm -rf "$LIBS"
  mkdir -p "$LIBS"
  mvn -B -q -f "$SRC/pom.xml" dependency:copy-dependencies >"$DIR/mvn.log" 2>&1 ||
    die "kafka: Maven could not fetch the Kafka jars" "$DIR/mvn.log"
  echo "$want" >"$LIBS/.pom.sha256"
  log "kafka: jars ready in $(elapsed "$t0")s"
}

# Compile the readiness probe once (javac ~0.7s) instead of running it as a
# source file on every start; recompiled when KafkaReady.java changes.
ensure_probe() {
  local want
  want=$(sha256sum "$SRC/KafkaReady.java" | cut -d' ' -f1)
  [[ -f "$PROBE/KafkaReady.class" && "$(cat "$PROBE/.sha256" 2>/dev/null)" == "$want" ]] && return 0
  rm -rf "$PROBE"
  mkdir -p "$PROBE"
  javac -cp "$LIBS/*" -d "$PROBE" "$SRC/KafkaReady.java" >"$DIR/javac.log" 2>&1 ||
    die "kafka: could not compile infra/kafka/KafkaReady.java" "$DIR/javac.log"
  echo "$want" >"$PROBE/.sha256"
}

# A KRaft cluster id is 16 random bytes in URL-safe base64 (22 chars). One
# starting with '-' would look like a CLI flag, so draw again in that case.
new_cluster_id() {
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [[ "$id" != -* ]] && { echo "$id"; return; }
  done
}

render_config() {
  sed -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" \
      -e "s|@CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
      -e "s|@DATA_DIR@|$DATA|g" \
      "$SRC/server.properties.template" >"$PROPS"
}

# Format the metadata log. Kafka 4's dynamic quorum needs --standalone for the
# single controller (the config sets controller.quorum.bootstrap.servers).
format_storage() {
  if [[ "${INFRA_KEEP_DATA:-0}" == 1 && -f "$DATA/meta.properties" ]]; then
    return 0
  fi
  rm -rf "$DATA"
  mkdir -p "$DATA"
  rotate_logs "$DIR/format.log"
  java_logged format.log -Xmx256m "${QUICK_JVM[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format \
    --cluster-id "$(new_cluster_id)" --config "$PROPS" --standalone \
    >"$DIR/format.out" 2>&1 || die "kafka: storage format failed" "$DIR/format.out" "$DIR/format.log"
}

# Ready = the broker answers Metadata with a live node + controller and its
# group coordinator answers (see infra/kafka/KafkaReady.java). A bare port
# check is not enough: the socket opens before the controller has a leader.
wait_ready() {
  local timeout=$1 t0 pid deadline left
  t0=$(now_s)
  pid=$(<"$PIDFILE")
  deadline=$((SECONDS + timeout))
  until port_open "$KAFKA_PORT"; do
    kill -0 "$pid" 2>/dev/null || die "kafka: broker exited during start-up" "$OUT" "$LOG"
    ((SECONDS < deadline)) || die "kafka: port $KAFKA_PORT not open after ${timeout}s" "$OUT" "$LOG"
    sleep 0.2
  done
  left=$((deadline - SECONDS))
  ((left > 0)) || left=1
  java_logged ready-check.log -Xmx128m "${QUICK_JVM[@]}" -Dkafka.log.level=WARN \
    -cp "$PROBE:$LIBS/*" KafkaReady "$BOOTSTRAP" "$left" >>"$DIR/ready-check.out" 2>&1 ||
    die "kafka: broker on $BOOTSTRAP did not become ready within ${timeout}s" "$DIR/ready-check.out" "$OUT" "$LOG"
  kill -0 "$pid" 2>/dev/null || die "kafka: broker exited during start-up" "$OUT" "$LOG"
  echo "$pid" >"$READY"
  log "kafka: ready on $BOOTSTRAP (pid $pid, $(elapsed "$t0")s)"
}

start() {
  with_lock "$DIR/.lock"
  if pid_matches "$PIDFILE" "$PROPS"; then
    log "kafka: already running (pid $(<"$PIDFILE")), reusing it"
    # Already probed ready once (marker holds this pid) and still listening:
    # skip the ~1.5s JVM probe so a warm start is instant.
    if [[ "$(cat "$READY" 2>/dev/null)" != "$(<"$PIDFILE")" ]] || ! port_open "$KAFKA_PORT"; then
      wait_ready "$KAFKA_START_TIMEOUT"
    fi
    export_line KAFKA_BROKERS "$BOOTSTRAP"
    return 0
  fi
  rm -f "$PIDFILE" "$READY"
  # Something else holds our ports: refuse instead of silently talking to it.
  for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
    port_open "$p" && die "kafka: port $p on 127.0.0.1 is already in use by another process; set KAFKA_PORT/KAFKA_CONTROLLER_PORT, or KAFKA_BROKERS to reuse a running broker"
  done
  mkdir -p "$DIR"
  ensure_libs
  ensure_probe
  render_config
  format_storage
  rotate_logs "$OUT" "$LOG" "$DIR/ready-check.out" "$DIR/ready-check.log"
  log "kafka: starting broker on $BOOTSTRAP (log: $LOG)"
  # setsid: own session, so a Ctrl-C in the calling terminal does not kill it;
  # stdin/stdout/stderr redirected so `$(infra/kafka.sh start)` returns at once.
  # SerialGC: the smallest footprint on a 2-core box; the test load is tiny.
  # 9>&-: don't hand our lock fd to the broker, or it would hold the lock forever.
  local heap
  read -ra heap <<<"$KAFKA_HEAP_OPTS" # a flag list: split on spaces on purpose
  setsid java "${heap[@]}" -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$SRC/log4j2.xml" -Dkafka.logs.dir="$DIR" -Dkafka.log.name=server.log \
    -cp "$LIBS/*" kafka.Kafka "$PROPS" \
    </dev/null >>"$OUT" 2>&1 9>&- &
  echo $! >"$PIDFILE"
  # If it never gets ready, don't leave a half-started server behind.
  trap 'rc=$?; ((rc == 0)) || stop_pid "$PIDFILE" "$PROPS" kafka 30' EXIT
  wait_ready "$KAFKA_START_TIMEOUT"
  export_line KAFKA_BROKERS "$BOOTSTRAP"
}

# What start needs on disk, without starting anything (CI runs it while npm installs).
prepare() {
  with_lock "$DIR/.lock"
  mkdir -p "$DIR"
  ensure_libs
  ensure_probe
}

stop() {
  with_lock "$DIR/.lock"
  # Kafka shuts down cleanly on SIGTERM in ~2s; allow 30s before SIGKILL.
  stop_pid "$PIDFILE" "$PROPS" kafka 30
  rm -f "$READY"
}

status() {
  if pid_matches "$PIDFILE" "$PROPS"; then
    log "kafka: running (pid $(<"$PIDFILE")) on $BOOTSTRAP"
  else
    log "kafka: not running"
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
