#!/usr/bin/env bash
# What `go get` costs a user: a tiny consumer module (go 1.25) that imports
# the given packages of this checkout (through replace directives) runs
# `go mod tidy` against an empty module cache; this prints the size of that
# cache and the number of module zips downloaded, and fails when the cache
# is over the limit, a forbidden module's zip was fetched, or tidy changed
# the consumer's go line.
#
#   .ci/consumer-size.sh [-max MB] [-forbid REGEX] PKG...
#
# PKG is an import path of this repository (github.com/agentloop/agentloop/...).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
max_mb=0 forbid=
while [ $# -gt 0 ]; do
  case $1 in
  -max) max_mb=$2; shift 2 ;;
  -forbid) forbid=$2; shift 2 ;;
  *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [-max MB] [-forbid REGEX] PKG..." >&2; exit 2; }

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/app" "$tmp/modcache"
cd "$tmp/app"
{
  echo "module example.com/consumer"
  echo
  echo "go 1.25"
  echo
  # Every module of this repository, replaced by the checkout: a consumer
  # requires the ones it imports, and go ignores the other replacements.
  for gomod in $(cd "$repo" && git ls-files -co --exclude-standard '*go.mod' | grep -v node_modules); do
    dir=$(dirname "$gomod")
    path=$(sed -n 's/^module //p' "$repo/$gomod")
    echo "replace $path => $repo/$dir"
  done
} >go.mod
{
  echo "package main"
  echo
  echo "import ("
  for p in "$@"; do echo "	_ \"$p\""; done
  echo ")"
  echo
  echo "func main() {}"
} >main.go
# require each of our modules the packages live in, at a placeholder version
# the replace directives stand in for.
for gomod in $(cd "$repo" && git ls-files -co --exclude-standard '*go.mod' | grep -v node_modules); do
  path=$(sed -n 's/^module //p' "$repo/$gomod")
  for p in "$@"; do
    # the longest module path that prefixes p wins; requiring a shorter one
    # as well is harmless (tidy drops what is unused)
    case "$p/" in "$path"/*) echo "require $path v0.0.0-00010101000000-000000000000" >>go.mod; break ;; esac
  done
done

GOMODCACHE="$tmp/modcache" GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off go mod tidy >"$tmp/tidy.log" 2>&1 ||
  { cat "$tmp/tidy.log"; exit 1; }
GOMODCACHE="$tmp/modcache" GOFLAGS= GOTOOLCHAIN=local GOWORK=off go build ./... || exit 1

kb=$(du -sk "$tmp/modcache" | cut -f1)
zips=$(cd "$tmp/modcache/cache/download" && find . -name '*.zip' | sed 's|^\./||; s|/@v/| |; s|\.zip$||' | sort)
nzips=$(grep -c . <<<"$zips" || true)
zip_kb=$(find "$tmp/modcache/cache/download" -name '*.zip' -print0 | du -ck --files0-from=- | tail -n 1 | cut -f1)
goline=$(sed -n 's/^go //p' go.mod)
printf '%s\n  module cache %d MB (zips %d MB), %d module zips, consumer keeps go %s\n' \
  "$*" $((kb / 1024)) $((zip_kb / 1024)) "$nzips" "$goline"
[ -n "${VERBOSE:-}" ] && sed 's/^/    /' <<<"$zips"

fail=0
# 1.25.0 is the same Go as 1.25 (tidy writes the release form when a
# dependency declares it); anything newer shuts Go 1.25 out.
case $goline in 1.25 | 1.25.0) ;; *) echo "  FAIL: go mod tidy raised the consumer's go line to $goline"; fail=1 ;; esac
if [ "$max_mb" -gt 0 ] && [ "$kb" -gt $((max_mb * 1024)) ]; then
  echo "  FAIL: over the limit of $max_mb MB"; fail=1
fi
if [ -n "$forbid" ] && bad=$(grep -E "$forbid" <<<"$zips"); then
  echo "  FAIL: these module zips must not be downloaded:"; sed 's/^/    /' <<<"$bad"; fail=1
fi
exit $fail
