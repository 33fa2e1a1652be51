#!/usr/bin/env bash
# Peak resident memory (VmHWM, as /usr/bin/time -v reports it) and CPU time of the coap tool downloading N bytes from the
# sample server's /large over UDP, to a file (-o) and to redirected standard output, for the tool at BASE (default main)
# and the tool in this tree, in interleaved rounds. Usage: download-rss.sh [BASE] [ROUNDS] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/../../../.."

base=${1:-main}
rounds=${2:-5}
shift $(( $# > 2 ? 2 : $# )) || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1048576 4194304 16777216)

work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "# machine: $(nproc) cores, kernel $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$work/base-src"
git archive "$base" | tar -x -C "$work/base-src"
(cd "$work/base-src" && dotnet build src/CoapNet.Cli -c Release -o "$work/base" -v q -nologo >/dev/null)
dotnet build src/CoapNet.Cli -c Release -o "$work/this" -v q -nologo >/dev/null
dotnet build samples/CoapNet.Samples.Server -c Release -o "$work/server" -v q -nologo >/dev/null

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dotnet "$work/server/CoapNet.Samples.Server.dll" --port "$port" --tcp-port 0 --dtls-port 0 --address 127.0.0.1 >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q "listening on coap://" "$work/server.log" && break; sleep 0.2; done

# One download: TOOL URI HOW (file: -o, stdout: redirected) -> "peak_rss_kib cpu_s wall_s bytes", the body left in $work/out.bin.
measure() {
    local out="$work/out.bin"
    rm -f "$out"
    if [ "$3" = file ]; then
        /usr/bin/time -f "%M %U %S %e" -o "$work/time" dotnet "$work/$1/coap.dll" get "$2" -o "$out" 2>/dev/null
    else
        /usr/bin/time -f "%M %U %S %e" -o "$work/time" dotnet "$work/$1/coap.dll" get "$2" >"$out" 2>/dev/null
    fi
    read -r rss user sys wall <"$work/time"
    echo "$rss $(echo "$user + $sys" | bc) $wall $(stat -c %s "$out")"
}

echo "# tool size how peak_rss_kib cpu_s wall_s bytes"
for size in "${sizes[@]}"; do
    for round in $(seq "$rounds"); do
        for tool in base this; do
            for how in file stdout; do
                echo "$tool $size $how $(measure "$tool" "coap://127.0.0.1:$port/large?size=$size" "$how")"
            done
        done
    done
done
# Past the sample's 16 MiB limit: a 64 MiB file from `coap serve` (this tree's; the tool at BASE assembles a body in
# memory and stops at the client's 16 MiB MaxBodySize), downloaded by this tree's tool only.
mkdir -p "$work/served"
head -c $((64 * 1024 * 1024)) /dev/urandom >"$work/served/64mib.bin"
serve_port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dotnet "$work/this/coap.dll" serve "$work/served" --port "$serve_port" --address 127.0.0.1 >"$work/serve.log" 2>&1 &
serving=$!
for _ in $(seq 50); do grep -q "Serving" "$work/serve.log" && break; sleep 0.2; done
for round in $(seq "$rounds"); do
    for how in file stdout; do
        line=$(measure this "coap://127.0.0.1:$serve_port/64mib.bin" "$how")
        cmp -s "$work/out.bin" "$work/served/64mib.bin" && same=identical || same=DIFFERENT
        echo "this 67108864 $how $line $same"
    done
done
kill "$serving" 2>/dev/null || true
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
