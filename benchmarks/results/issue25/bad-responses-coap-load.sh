#!/usr/bin/env bash
# One-off: the lead's generator (../shared/tools/coap-load.c, counts an empty ACK as bad) against two builds, interleaved.
set -euo pipefail
load=$1; shift
pids=() ports=() labels=()
trap 'for p in "${pids[@]}"; do kill "$p"; done' EXIT
for spec in "$@"; do
  label=${spec%%=*} dll=${spec#*=}
  port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  taskset -c 0 dotnet "$dll" --address 127.0.0.1 --port "$port" --tcp-port 0 --dtls-port 0 > /dev/null 2>&1 &
  pids+=($!) ports+=("$port") labels+=("$label")
  sleep 3
  taskset -c 1 "$load" -p "$port" -u /hello -c 512 -w 2 -d 3 > /dev/null
done
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); coap-load -c 512 -w 2 -d 5 (CON), server on core 0, generator on core 1"
for r in 1 2 3 4; do
  for i in "${!labels[@]}"; do
    echo "round $r ${labels[i]} load1=$(cut -d' ' -f1 /proc/loadavg) $(taskset -c 1 "$load" -p "${ports[i]}" -u /hello -c 512 -w 2 -d 5)"
  done
done
