#!/usr/bin/env bash
# Fleet throughput: N jobs of a small circuit through `zkpipe serve
# --worker=false` and 1, 2, 3 worker processes on this machine, against
# a local `zkpipe prove` of the same jobs. Prints jobs/s, the queue's cost
# per job (fleet seconds per job minus prove's, one worker), and the CPU
# seconds of each process (server, workers together, the results collector).
#
#   bench/fleet/run.sh [JOBS] [CONSTRAINTS]      (defaults 400, 200)
set -euo pipefail
jobs=${1:-400}
size=${2:-200}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
CGO_ENABLED=0 go build -C "$root" -o "$work/zkpipe" .
z=$work/zkpipe
$z setup --builtin mulchain --constraints "$size" --dir chain >/dev/null
for i in $(seq 1 "$jobs"); do echo "{\"id\":\"j$i\",\"circuit\":\"chain\",\"generate\":{\"seed\":$i}}"; done > jobs.jsonl

now() { date +%s.%N; }

# cpu PID: user+system seconds of a running process
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14+$15)/hz}' "/proc/$1/stat"; }

t0=$(now)
/usr/bin/time -f '%U %S' -o prove.cpu $z prove --circuit chain --jobs jobs.jsonl --out prove-out --results prove.jsonl --mem-status 0 2>/dev/null
t1=$(now)
prove_s=$(echo "$t1 - $t0" | bc -l)
printf 'prove     %4d jobs in %6.2fs  %6.1f jobs/s  cpu %.2fs\n' "$jobs" "$prove_s" "$(echo "$jobs / $prove_s" | bc -l)" \
	"$(awk '{print $1+$2}' prove.cpu)"

for n in 1 2 3; do
	port=$((24222 + n))
	url=nats://127.0.0.1:$port
	$z serve --worker=false --nats-listen 127.0.0.1:$port --store "store$n" 2>/dev/null &
	srv=$!
	sleep 1
	$z circuit push --nats "$url" chain 2>/dev/null
	pids=()
	for w in $(seq 1 "$n"); do
		$z worker --nats "$url" --cache "cache$n-$w" --mem-status 0 2>/dev/null &
		pids+=($!)
	done
	sleep 2 # workers connected; the circuit is fetched with the first job
	t0=$(now)
	$z results --nats "$url" --out "out$n" --results "results$n.jsonl" --follow 2>/dev/null &
	res=$!
	$z submit --nats "$url" jobs.jsonl 2>/dev/null
	until [ "$(cat "results$n.jsonl" 2>/dev/null | wc -l)" -ge "$jobs" ]; do sleep 0.05; done
	t1=$(now)
	s=$(echo "$t1 - $t0" | bc -l)
	wcpu=0
	for p in "${pids[@]}"; do wcpu=$(echo "$wcpu + $(cpu "$p")" | bc -l); done
	printf 'fleet %d   %4d jobs in %6.2fs  %6.1f jobs/s  cpu: server %.2fs, workers %.2fs, results %.2fs' \
		"$n" "$jobs" "$s" "$(echo "$jobs / $s" | bc -l)" "$(cpu "$srv")" "$wcpu" "$(cpu "$res")"
	if [ "$n" = 1 ]; then
		printf '  queue overhead %.2f ms/job over prove' "$(echo "($s - $prove_s) * 1000 / $jobs" | bc -l)"
	fi
	echo
	kill "$res" "${pids[@]}"
	wait "$res" "${pids[@]}" 2>/dev/null || true
	kill "$srv"
	wait "$srv" 2>/dev/null || true
done
