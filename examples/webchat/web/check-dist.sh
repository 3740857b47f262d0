#!/bin/sh
# check-dist.sh: fail if the committed build (dist/) is not what the
# sources and package-lock.json build. Run from anywhere; needs Node and npm.
#   examples/webchat/web/check-dist.sh
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Not `npm ci`: the registry here lacks rollup's binaries for other
# platforms, so the lock file has no entries for them and `npm ci` refuses
# it. `npm install` installs the locked versions; the lock must not change.
cp package-lock.json "$tmp/package-lock.json"
npm install --no-audit --no-fund
if ! cmp -s package-lock.json "$tmp/package-lock.json"; then
	echo "check-dist: npm install changed package-lock.json: it is out of sync with package.json" >&2
	exit 1
fi
npx vite build --logLevel warn --outDir "$tmp/dist" --emptyOutDir
if ! diff -r dist "$tmp/dist"; then
	echo "check-dist: examples/webchat/web/dist is stale; run 'npm install && npm run build' in examples/webchat/web and commit dist/" >&2
	exit 1
fi
echo "check-dist: dist/ is up to date"
