#!/bin/sh
# check-dist.sh: fail if the committed build (dist/) is not what the
# sources and package-lock.json build. Run from anywhere; needs Node and npm.
#   examples/webchat/web/check-dist.sh
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# npm ci installs exactly the locked versions, and fails if package-lock.json
# is out of sync with package.json.
npm ci --no-audit --no-fund
npx vite build --logLevel warn --outDir "$tmp/dist" --emptyOutDir
if ! diff -r dist "$tmp/dist"; then
	echo "check-dist: examples/webchat/web/dist is stale; run 'npm ci && npm run build' in examples/webchat/web and commit dist/" >&2
	exit 1
fi
echo "check-dist: dist/ is up to date"
