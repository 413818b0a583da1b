#!/usr/bin/env bash
# On the H200 machine (16 cores): traced vs untraced throughput through a real
# Jaeger, and a stream's results for docs/timeline.svg. Binaries come built
# (CGO_ENABLED=0 zkpipe, jaeger from .ci/jaeger-e2e.sh, both -s -w), gzipped
# in .carry/tracing/. Writes to $OUT.
set -euo pipefail
o=${OUT:-/tmp/tracing-out}
mkdir -p "$o" /tmp/tb
gzip -dc .carry/tracing/zkpipe.gz >/tmp/tb/zkpipe
gzip -dc .carry/tracing/jaeger.gz >/tmp/tb/jaeger
chmod +x /tmp/tb/zkpipe /tmp/tb/jaeger
echo "cores: $(nproc)"
cat >/tmp/tb/jaeger.yaml <<'YAML'
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry: {metrics: {level: none}, logs: {level: warn}}
extensions:
  jaeger_storage: {backends: {mem: {memory: {max_traces: 100000}}}}
  jaeger_query: {storage: {traces: mem}, http: {endpoint: "127.0.0.1:16686"}, grpc: {endpoint: "127.0.0.1:16685"}}
receivers:
  otlp: {protocols: {grpc: {endpoint: "127.0.0.1:4317"}, http: {endpoint: "127.0.0.1:4318"}}}
processors: {batch: {}}
exporters: {jaeger_storage_exporter: {trace_storage: mem}}
YAML
/tmp/tb/jaeger --config /tmp/tb/jaeger.yaml >"$o/jaeger.log" 2>&1 &
jp=$!
trap 'kill $jp; wait $jp' EXIT
sleep 3
kill -0 $jp
shape=(--device cpu)
for s in parse synthesize transfer msm-h batch-add tail-msm b-g2 assemble; do shape+=(--$s-workers 2 --$s-queue 2); done
for spec in ${SPECS:-2000:64:5 65536:16:3}; do
	IFS=: read -r size jobs rounds <<<"$spec"
	/tmp/tb/zkpipe setup --builtin mulchain --constraints "$size" --dir /tmp/tb/mulchain-$size
	echo "== mulchain $size constraints, $jobs jobs, 2 workers per stage"
	bench/tracing.sh /tmp/tb/zkpipe /tmp/tb/mulchain-$size "$jobs" "$rounds" http://127.0.0.1:4317 "${shape[@]}"
done 2>&1 | tee "$o/bench.txt"
# The picture: 12 proofs of 2^16 constraints, traced as one group.
for i in $(seq 1 12); do echo "{\"id\":\"p$i\",\"generate\":{\"seed\":$i}}"; done >/tmp/tb/jobs
/tmp/tb/zkpipe prove --circuit /tmp/tb/mulchain-65536 --jobs /tmp/tb/jobs --out /tmp/tb/out \
	--results "$o/timeline-results.jsonl" --otlp-endpoint http://127.0.0.1:4317 --trace-group 12 "${shape[@]}"
/tmp/tb/zkpipe timeline "$o/timeline-results.jsonl" -o "$o/timeline.svg"
sleep 2 # Jaeger stores what it received after its batch timeout (200 ms)
# What Jaeger holds, read with bash's /dev/tcp (no curl there).
exec 3<>/dev/tcp/127.0.0.1/16686
printf 'GET /api/traces?service=zkpipe&limit=100000 HTTP/1.0\r\nHost: x\r\n\r\n' >&3
cat <&3 | gzip >"$o/jaeger-traces.json.gz"
ls -la "$o"
