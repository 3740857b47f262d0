#!/usr/bin/env bash
# Builds the Ollama server that the real-server integration suite
# (providers/internal/realollama) runs against, and prints the binary's path
# on stdout; progress goes to stderr.
#
#   AGENTLOOP_OLLAMA_BIN=$(bash .ci/ollama.sh) go test ./providers/internal/realollama
#
# The server is built from the Go module source of the version in go.mod, so
# the suite tests the server the providers' own request types come from and
# nothing is downloaded but Go modules and two Debian header packages:
#
#   - the module zip leaves out llama.cpp's vendor/ directory: Debian's
#     nlohmann-json3-dev and libstb-dev supply two of its header sets, and
#     .ci/ollama/miniaudio.h stands in for the third (audio decoding only);
#   - the ggml CPU backend is compiled in by cgo (no CMake);
#   - C and C++ are compiled without optimisation or debug info
#     (OLLAMA_CGO_FLAGS, default "-O0 -g0"): the suite's model is 1 MB, so
#     speed does not matter, and the compile takes a fraction of the time.
#
# The binary is cached by version under
# ${XDG_CACHE_HOME:-$HOME/.cache}/agentloop/ollama/<version>/, so a kept
# machine builds once; concurrent runs wait for each other on a lock file.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
log() { printf 'ollama.sh: %s\n' "$*" >&2; }

module=github.com/ollama/ollama
version=$(go list -m -f '{{.Version}}' "$module")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/agentloop/ollama/$version"
bin="$cache/ollama"

if [ -x "$bin" ]; then
  log "cached: $bin"
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ]; then # built by another run while this one waited
  log "cached: $bin"
  echo "$bin"
  exit 0
fi

# Headers from the omitted vendor/ directory that Debian packages.
if [ ! -e /usr/include/nlohmann/json_fwd.hpp ] || [ ! -e /usr/include/stb/stb_image.h ]; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  log "installing nlohmann-json3-dev and libstb-dev (apt)"
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq nlohmann-json3-dev libstb-dev >/dev/null
fi

start=$(date +%s)
log "building $module@$version (a cold build takes several minutes)"
go mod download "$module"
moddir=$(go list -m -f '{{.Dir}}' "$module")
src="$cache/src"
rm -rf "$src"
cp -R "$moddir" "$src"
chmod -R u+w "$src" # the module cache is read-only
mkdir -p "$src/llama/llama.cpp/vendor/miniaudio"
cp "$repo/.ci/ollama/miniaudio.h" "$src/llama/llama.cpp/vendor/miniaudio/miniaudio.h"

flags="${OLLAMA_CGO_FLAGS:--O0 -g0}"
(
  cd "$src"
  # The server is its own module: no workspace, no flags meant for agentloop.
  GOWORK=off GOFLAGS= CGO_ENABLED=1 CGO_CFLAGS="$flags" CGO_CXXFLAGS="$flags" \
    go build -trimpath -ldflags "-X $module/version.Version=${version#v}" -o "$bin.tmp" .
)
mv "$bin.tmp" "$bin"
rm -rf "$src"
log "built $bin in $(($(date +%s) - start))s"
echo "$bin"
