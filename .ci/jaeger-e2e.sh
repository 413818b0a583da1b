#!/usr/bin/env bash
# End-to-end tracing test (issue 6): builds Jaeger all-in-one from the Go
# module proxy (cached), builds zkpipe, and runs tracing's TestJaegerEndToEnd,
# which starts Jaeger on free local ports, proves two small streams with
# --otlp-endpoint pointing at it (gRPC per job, HTTP grouped), checks the
# spans through Jaeger's query API, and stops Jaeger, pass or fail.
#
#   bash .ci/jaeger-e2e.sh
#
# The first build downloads ~300 modules and compiles for ~8 min on one core;
# later runs, from any clone of the repository, reuse the binary (the cache is
# the user's, as Go's module and build caches and the npm tools' are). Jaeger
# is built in its own throwaway module so that zkpipe's go.mod never depends
# on it. ZKPIPE_JAEGER_CACHE overrides the cache (default
# ${XDG_CACHE_HOME:-~/.cache}/zkpipe-jaeger).
set -euo pipefail
JAEGER=v1.76.0
cd "$(dirname "$0")/.."
root="$PWD"
dir="${ZKPIPE_JAEGER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zkpipe-jaeger}"
if [[ ! -x "$dir/jaeger" || "$(cat "$dir/version" 2>/dev/null)" != "$JAEGER" ]]; then
	echo "jaeger-e2e: building jaeger $JAEGER in $dir" >&2
	mkdir -p "$dir"
	(
		cd "$dir"
		[[ -f go.mod ]] || go mod init jaegerbuild >&2
		go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER" >&2
		# a name of its own: two clones' scripts/test may build at once
		go build -o "jaeger.new.$$" github.com/jaegertracing/jaeger/cmd/jaeger
		mv -f "jaeger.new.$$" jaeger
		echo "$JAEGER" >version
	)
fi
[[ "${1:-}" == --build-only ]] && exit 0
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/zkpipe" .
ZKPIPE_JAEGER="$dir/jaeger" ZKPIPE_BIN="$bin/zkpipe" \
	go test -count=1 -timeout 300s -run '^TestJaegerEndToEnd$' -v ./tracing/
