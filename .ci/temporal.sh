#!/usr/bin/env bash
# Builds the Temporal server that durable/temporalrun's real-server tests run
# against, and prints the directory it is cached in on stdout (the binary is
# <dir>/temporal-server, the module's config/ folder <dir>/config); progress
# goes to stderr. .ci/temporal-start.sh starts it.
#
#   dir=$(bash .ci/temporal.sh)
#
# The `temporal` CLI's dev server cannot be built from the module proxy (its
# go.mod replaces ./cliext, which the module zip lacks); the server module
# builds offline with `go install` and runs from a copy of its config/ folder
# with in-memory SQLite. v1.32.0 is the newest release that builds with Go
# 1.26.8 (v1.32.2 needs a newer Go).
#
# A cold build is about 10 CPU-minutes (a 211 MB binary), so the binary and
# config are cached by version under
# ${XDG_CACHE_HOME:-$HOME/.cache}/agentloop/temporal/<version>/ and a kept
# machine builds once; concurrent runs wait for each other on a lock file.
set -euo pipefail
log() { printf 'temporal.sh: %s\n' "$*" >&2; }

module=go.temporal.io/server
version=${AGENTLOOP_TEMPORAL_VERSION:-v1.32.0}
cache="${XDG_CACHE_HOME:-$HOME/.cache}/agentloop/temporal/$version"
bin="$cache/temporal-server"

done_() {
  log "cached: $bin"
  echo "$cache"
  exit 0
}
[ -x "$bin" ] && [ -d "$cache/config" ] && done_
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
[ -x "$bin" ] && [ -d "$cache/config" ] && done_ # built by another run while this one waited

start=$(date +%s)
log "building $module/cmd/server@$version (a cold build takes about 10 CPU-minutes)"
# The server is its own module: no workspace, no flags meant for agentloop.
# go install with a version builds outside any module; GOBIN receives the
# binary as "server".
tmpbin=$(mktemp -d "$cache/.bin.XXXXXX")
trap 'rm -rf "$tmpbin"' EXIT
GOWORK=off GOFLAGS= GOBIN="$tmpbin" go install -trimpath "$module/cmd/server@$version"
moddir=$(GOWORK=off GOFLAGS= go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$moddir/config" ] || { log "no config/ folder in $moddir"; exit 1; }
rm -rf "$cache/config"
cp -R "$moddir/config" "$cache/config"
chmod -R u+w "$cache/config" # the module cache is read-only
mv "$tmpbin/server" "$bin"
log "built $bin in $(($(date +%s) - start))s"
echo "$cache"
