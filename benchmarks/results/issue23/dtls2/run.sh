#!/usr/bin/env bash
# The sample server's coaps figures, one build against another: server CPU per request (utime+stime from
# /proc/PID/stat) over coaps:// and coap://, full PSK handshakes per second, and resident memory per idle session
# (5,000 sessions, each after one CoAP ping, VmRSS read every 1,000). Server pinned to core 0, the load generator (CoapNet.Scenarios dtls)
# to core 1. Usage: run.sh SERVER_DLL SCENARIOS_DLL LABEL   (prints to stdout; the raw runs are kept beside it).
set -euo pipefail
server_dll=$1; scenarios=$2; label=$3
out=$(dirname "$0")/$label.txt
: > "$out"
say() { echo "$@" | tee -a "$out"; }
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
tck=$(getconf CLK_TCK)
say "# $label: $(date -u +%FT%TZ), nproc $(nproc), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 0 dotnet "$server_dll" --address 127.0.0.1 --port 25683 --tcp-port 0 --dtls-port 25684 > /dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 4
for uri in coaps://127.0.0.1:25684/hello coap://127.0.0.1:25683/hello; do
  c0=$(cpu $pid)
  taskset -c 1 dotnet "$scenarios" dtls --server $uri --handshakes 0 --requests 30000 --concurrency 16 --rounds 3 >> "$out" 2>&1
  c1=$(cpu $pid)
  say "server CPU for $uri: $(( (c1 - c0) * 1000000 / tck / 110000 )) us per request (110,000 requests: 20,000 warm-up + 3 x 30,000, 16 in flight; load $(cut -d' ' -f1-3 /proc/loadavg))"
done
taskset -c 1 dotnet "$scenarios" dtls --server coaps://127.0.0.1:25684/hello --handshakes 500 --requests 1 --concurrency 1 --rounds 1 >> "$out" 2>&1
say "load after handshakes: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 1 dotnet "$scenarios" dtls --server coaps://127.0.0.1:25684/hello --handshakes 0 --requests 1 --concurrency 1 --rounds 1 --idle-sessions 5000 --server-pid $pid >> "$out" 2>&1
grep -E "handshakes:|idle sessions:|coaps \| 16|coap \| 16" "$out" || true
