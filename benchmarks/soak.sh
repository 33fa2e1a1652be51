#!/usr/bin/env bash
# Soak (issue 11): the CoapNet sample server under steady load for minutes, its RSS sampled every
# 10 s, then a flood of distinct (source address, port, Message ID) triples across 127.0.0.0/8 to see
# that the deduplication cache and the peer table stay bounded. Measures; asserts nothing.
#
#   benchmarks/soak.sh [--minutes 10] [--sockets 1000] [--window 2] [--flood 200000] [--sources 1000] [--nice N] [--aot]
#
#   --minutes   length of the steady phase: one coap-udp-load run with --sockets sockets (default 10)
#   --sockets   client sockets (default 1000; at most 8192); none reuses a Message ID within
#               EXCHANGE_LIFETIME below about 265k requests/s (above, coap-udp-load moves a client to a
#               new socket first and counts it as renewed)
#   --window    requests outstanding per socket (default 2)
#   --flood     datagrams in the flood (default 200000): CON GET /hello, each a new (address, port, MID)
#   --sources   distinct 127.x.y.z source addresses in the flood (default 1000)
#   --nice      run server and generator at this niceness (default 0), when other work shares the machine
#   --aot       soak the sample server published with Native AOT (one native executable) instead of the JIT build
#
# The server is pinned to core 0 and the generator to core 1. Prints one line per sample:
# seconds since start, phase, RSS in MB; then coap-udp-load's summary. The load generator is
# benchmarks/tools/coap-udp-load.c, built by this script into a temporary directory.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/benchmarks/tools"
minutes=10 sockets=1000 window=2 flood=200000 sources=1000 niceness=0 aot=0
while (($#)); do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --sockets) sockets=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --flood) flood=$2; shift 2 ;;
    --sources) sources=$2; shift 2 ;;
    --nice) niceness=$2; shift 2 ;;
    --aot) aot=1; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "soak: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

[[ -f "$tools/coap-udp-load.c" ]] || { echo "soak: missing $tools/coap-udp-load.c" >&2; exit 2; }
command -v cc > /dev/null || { echo "soak: cc is needed to build the load generator" >&2; exit 2; }
command -v python3 > /dev/null || { echo "soak: python3 is needed for the flood" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -o "$work/coap-udp-load" "$tools/coap-udp-load.c"
if ((aot)); then
  dotnet publish -c Release -r linux-x64 -o "$work/aot" "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
  server=("$work/aot/CoapNet.Samples.Server")
else
  dotnet build -c Release "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
  server=(dotnet "$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll")
fi
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Only plain coap is soaked: the other transports' ports (and Kestrel's, for coap+ws and the explorer) stay closed.
nice -n "$niceness" taskset -c 0 "${server[@]}" --address 127.0.0.1 --port "$port" --tcp-port 0 --dtls-port 0 --tls-port 0 --http-port 0 > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do grep -q listening "$work/server.log" && break; sleep 0.1; done

start=$(date +%s)
rss() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$server_pid/status"; }
sample() { echo "$(($(date +%s) - start)) $1 $(rss)"; }

echo "seconds phase rss_mb"
sample idle
nice -n "$niceness" taskset -c 1 "$work/coap-udp-load" -h 127.0.0.1 -p "$port" -u /hello -c "$sockets" -w "$window" -d $((minutes * 60)) > "$work/load.txt" &
load_pid=$!
while kill -0 "$load_pid" 2> /dev/null; do
  sleep 10
  sample steady
done
wait "$load_pid" || true

# The flood: each datagram a CON GET /hello from a new (address, port, Message ID); answers are not read.
nice -n "$niceness" taskset -c 1 python3 - "$port" "$flood" "$sources" > "$work/flood.txt" <<'PY' &
import socket, struct, sys
port, total, sources = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
socks = []
for i in range(sources):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((f"127.{1 + i // 65025}.{(i // 255) % 255}.{1 + i % 255}", 0))
    s.setblocking(False)
    socks.append(s)
path = b"\xb5hello"
sent = 0
for n in range(total):
    s = socks[n % sources]
    mid = (n // sources) & 0xFFFF
    datagram = struct.pack("!BBH", 0x41, 0x01, mid) + bytes([n & 0xFF]) + path
    try:
        s.sendto(datagram, ("127.0.0.1", port))
        sent += 1
    except BlockingIOError:
        pass
print(f"flood sent={sent} sources={sources}")
PY
flood_pid=$!
while kill -0 "$flood_pid" 2> /dev/null; do
  sleep 2
  sample flood
done
for _ in 1 2 3 4 5 6; do
  sleep 10
  sample after
done

echo "load: $(cat "$work/load.txt")"
echo "$(cat "$work/flood.txt")"
