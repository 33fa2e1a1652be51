#!/usr/bin/env bash
# Is what a 16 MiB download adds over a 1 MiB one the body, or garbage not yet collected? The same download with the GC's
# gen0 budget capped at 2 MiB (DOTNET_GCgen0size); a tool that kept the body could not go below the body's size.
# Usage: gen0-side-run.sh TOOL_DIR SAMPLE_SERVER_DIR (Release builds of src/CoapNet.Cli and samples/CoapNet.Samples.Server)
set -euo pipefail
tool=$1 server_dir=$2
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log=$(mktemp)
dotnet "$server_dir/CoapNet.Samples.Server.dll" --port "$port" --tcp-port 0 --dtls-port 0 --address 127.0.0.1 >"$log" 2>&1 &
server=$!
trap 'kill $server; rm -f "$log" /tmp/gen0-side-run.bin' EXIT
for _ in $(seq 50); do grep -q "listening on coap://" "$log" && break; sleep 0.2; done
echo "# $(nproc) cores, kernel $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# gen0 size peak_rss_kib"
for gen0 in default 0x200000; do
    for size in 1048576 16777216; do
        for _ in 1 2 3; do
            if [ "$gen0" = default ]; then
                /usr/bin/time -f "%M" -o /tmp/gen0-side-run.time dotnet "$tool/coap.dll" get "coap://127.0.0.1:$port/large?size=$size" -o /tmp/gen0-side-run.bin
            else
                DOTNET_GCgen0size=$gen0 /usr/bin/time -f "%M" -o /tmp/gen0-side-run.time dotnet "$tool/coap.dll" get "coap://127.0.0.1:$port/large?size=$size" -o /tmp/gen0-side-run.bin
            fi 2>/dev/null
            echo "$gen0 $size $(cat /tmp/gen0-side-run.time)"
        done
    done
done
rm -f /tmp/gen0-side-run.time
