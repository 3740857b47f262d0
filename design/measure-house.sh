#!/bin/sh
# measure-house.sh prints the figures issue 29 asks for, before and after its redesign:
# per package the `go doc -all` lines, the exported names and the lines of non-test Go code;
# the outside modules in the root package's build; and, with TESTTIME=1, the wall time of one
# `go test ./...` (no -race). Run it from the module root: sh design/measure-house.sh
set -eu

echo "## Per package (go doc -all lines, exported names, non-test code lines)"
echo
printf '| %-52s | %8s | %8s | %8s |\n' package "doc" exported code
printf '|%s|%s|%s|%s|\n' "------------------------------------------------------" "----------" "----------" "----------"
total_doc=0; total_names=0; total_code=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	doc=$(go doc -all "$pkg" 2>/dev/null | wc -l)
	# exported names: top-level funcs, types, methods, vars and consts that go doc lists
	# (grouped var/const blocks counted per name).
	names=$(go doc -all "$pkg" 2>/dev/null | awk '
		/^(func|type) [A-Z]/ {n++; next}
		/^func \([^)]*\) [A-Z]/ {n++; next}
		/^(var|const) [A-Z]/ {n++; next}
		/^(var|const) \($/ {inblk=1; next}
		inblk && /^\)/ {inblk=0; next}
		inblk && /^\t[A-Z][A-Za-z0-9_]*( |$|,)/ {n++}
		END {print n+0}')
	code=$(go list -f '{{range .GoFiles}}{{$.Dir}}/{{.}} {{end}}' "$pkg" | xargs cat 2>/dev/null | wc -l)
	rel=${pkg#github.com/agentloop/agentloop}
	printf '| %-52s | %8s | %8s | %8s |\n' "${rel:-/ (root)}" "$doc" "$names" "$code"
	total_doc=$((total_doc + doc)); total_names=$((total_names + names)); total_code=$((total_code + code))
done
printf '| %-52s | %8s | %8s | %8s |\n' total "$total_doc" "$total_names" "$total_code"
echo

echo "## Outside modules in the root package's build (go list -deps, non-std, non-agentloop)"
echo
mods=$(go list -deps -f '{{if and (not .Standard) .Module}}{{.Module.Path}}@{{.Module.Version}}{{end}}' . |
	grep -v '^github.com/agentloop/agentloop@' | sort -u || true)
echo "count: $(printf '%s\n' "$mods" | grep -c . || true)"
printf '%s\n' "$mods" | sed 's/^/- /'
echo

if [ "${TESTTIME:-0}" = 1 ]; then
	echo "## go test ./... (one run, no -race, cache off)"
	start=$(date +%s)
	if go test -count=1 ./... >/tmp/measure-house-test.log 2>&1; then st=ok; else st=FAILED; fi
	end=$(date +%s)
	echo "wall: $((end - start)) s ($st); see /tmp/measure-house-test.log"
fi
