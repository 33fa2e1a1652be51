#!/usr/bin/env bash
# Server CPU per coaps request, two sample-server builds interleaved ROUNDS times (same load generator, server on
# core 0, generator on core 1): usage cpu-ab.sh BEFORE_DLL AFTER_DLL SCENARIOS_DLL ROUNDS
set -euo pipefail
before=$1; after=$2; scenarios=$3; rounds=${4:-3}
tck=$(getconf CLK_TCK)
for round in $(seq 1 "$rounds"); do
  for label in before after; do
    dll=$before; [ $label = after ] && dll=$after
    taskset -c 0 dotnet "$dll" --address 127.0.0.1 --port 25683 --tcp-port 0 --dtls-port 25684 > /dev/null &
    pid=$!
    sleep 4
    c0=$(awk '{print $14+$15}' /proc/$pid/stat)
    taskset -c 1 dotnet "$scenarios" dtls --server coaps://127.0.0.1:25684/hello --handshakes 0 --requests 30000 --concurrency 16 --rounds 3 > /dev/null 2>&1
    c1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill $pid; wait $pid 2>/dev/null || true
    echo "round $round $label: $(( (c1 - c0) * 1000000 / tck / 110000 )) us server CPU per coaps request (load $(cut -d' ' -f1-3 /proc/loadavg))"
  done
done
