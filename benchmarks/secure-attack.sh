#!/usr/bin/env bash
# Availability of the sample server's secure ports under the attacks of issue 34, on loopback: each attack shape runs
# against a fresh server from one source address (127.0.0.2) and from many (spread over 127.0.0.0/8), while a real
# client (benchmarks/tools/coap-attack.c's probe: OpenSSL's DTLS or TLS, or plain TCP) tries GET /hello once a second.
# Reports, per shape, what the attacker sent (datagrams or connections a second) and the real client's success rate and
# latency; and how long a wrong pre-shared key takes to be reported, by libcoap's coap-client-openssl and by our `coap`
# tool. Run it once against a build of main and once against this tree to compare.
#
#   benchmarks/secure-attack.sh [--dll PATH] [--label NAME] [--probes N] [--timeout MS] [--warmup S]
#                               [--refresh LIST] [--shapes LIST] [--tool PATH]
#
#   --dll PATH      a CoapNet.Samples.Server.dll; default: this tree's, built in Release
#   --label NAME    the name of the server in the output (default "this tree")
#   --probes N      the real client's tries per shape, one a second (default 12)
#   --timeout MS    how long one try may take before it counts as failed (default 10000: RFC 6347's retransmissions of a
#                   refused ClientHello, 1 + 2 + 4 s, fit in it)
#   --warmup S      how long each attack runs before the first try (default 8)
#   --refresh LIST  for dtls-stall: how often (seconds) each of the 70 sockets starts over, one run each (default
#                   25,2,0.5: the issue's ~130 datagrams per 30 s, then faster, to find what it takes to deny a client)
#   --shapes LIST   any of dtls-stall, tls-silent, tls-slowloris, tcp-silent, tcp-slowloris (default: all five)
#   --tool PATH     the `coap` tool (coap.dll) for the wrong-key timing; default: this tree's, built in Release
#
# Shapes (the issue's): dtls-stall, 70 sockets that complete the cookie exchange and go silent; tls-silent, 500
# connections to the coaps+tcp port that never speak, reopened as they are closed; tls-slowloris, 1,100 connections that
# finish TLS, send a CSM and two bytes and idle, reopened as they are closed; tcp-silent and tcp-slowloris, the same on
# the plain coap+tcp port. The server runs pinned to core 0 and the attacker and the probe to core 1 (taskset), as the
# other load scripts do; what is measured here is success, not fine timing, so a loaded machine shows in latencies only.
#
# Needs: cc, taskset, OpenSSL's headers (Debian: libssl-dev), dotnet; coap-client-openssl (libcoap3-bin) for the
# wrong-key line.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/benchmarks/tools"
# shellcheck source=load-common.sh
. "$repo/benchmarks/load-common.sh"
dll="" label="this tree" probes=12 timeout=10000 warmup=8 refresh=25,2,0.5 shapes=dtls-stall,tls-silent,tls-slowloris,tcp-silent,tcp-slowloris tool=""
identity=coapnet key=sample-secret

die() { echo "secure-attack: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --dll) dll=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --probes) probes=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --refresh) refresh=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --tool) tool=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
[[ "$probes" =~ ^[1-9][0-9]*$ && "$timeout" =~ ^[1-9][0-9]*$ && "$warmup" =~ ^[0-9]+$ ]] || die "--probes, --timeout and --warmup take whole numbers"
command -v taskset > /dev/null || die "taskset is missing (util-linux)"
command -v cc > /dev/null || die "cc is missing: the attack tool is C"
(($(nproc) >= 2)) || die "needs 2 cores: one for the server, one for the attacker and the client"
# 1,100 connections on each side, and the server's accepted ones.
ulimit -n "$(ulimit -Hn)"

make_work secure-attack
cc -O2 -o "$work/coap-attack" "$tools/coap-attack.c" -lssl -lcrypto || die "coap-attack did not build (Debian: sudo apt-get install -y libssl-dev)"
if [[ -z "$dll" ]]; then
  echo "Building the sample server of $repo in Release..."
  dotnet build -c Release --nologo -v q "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "the Release build failed"; }
  dll="$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll"
fi
[[ -f "$dll" ]] || die "no such server: $dll"
if [[ -z "$tool" ]]; then
  dotnet build -c Release --nologo -v q "$repo/src/CoapNet.Cli" > "$work/build-cli.log" 2>&1 || { cat "$work/build-cli.log" >&2; die "the tool's Release build failed"; }
  tool="$repo/src/CoapNet.Cli/bin/Release/net10.0/coap.dll"
fi
attack=("taskset" "-c" "1" "$work/coap-attack")

free_ports() {
  while :; do
    base=$((20000 + RANDOM % 12000))
    local p busy=0
    for p in $base $((base + 1)) $((base + 2)) $((base + 3)); do
      ss -Hln "sport = :$p" 2> /dev/null | grep -q . && busy=1
    done
    ((busy == 0)) && return 0
  done
}

# Starts the server fresh; sets $spid and the ports: $udp (coap), $dtls (coaps), $tcp (coap+tcp), $tls (coaps+tcp).
start() {
  free_ports
  udp=$base dtls=$((base + 1)) tcp=$((base + 2)) tls=$((base + 3))
  # coap+ws and the explorer (Kestrel on 8683, since issue 37) off where the build has them: not attacked here.
  local http=()
  takes_option "$dll" http-port && http=(--http-port 0)
  DOTNET_GCgen0size=100000 DOTNET_GCRegionSize=100000 taskset -c 0 dotnet "$dll" --address 127.0.0.1 --port "$udp" --dtls-port "$dtls" \
    --tcp-port "$tcp" --tls-port "$tls" "${http[@]}" --psk-identity "$identity" --psk-key "$key" > "$work/server.log" 2>&1 &
  spid=$!
  pids+=("$spid")
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$spid" 2> /dev/null || { cat "$work/server.log" >&2; die "the server exited at start"; }
    "${attack[@]}" probe -p "$tcp" -m tcp -P 1 -t 1000 > /dev/null 2>&1 && return
    sleep 0.5
  done
  die "the server did not answer coap+tcp on 127.0.0.1:$tcp"
}
stop() { kill "$1" 2> /dev/null || true; wait "$1" 2> /dev/null || true; }

results="$work/results.tsv"
printf 'server\tshape\tsources\tattack\tattacker_rate\tunit\ttries\tok\tp50_ms\tp95_ms\tmax_ms\tserver_log_lines\n' > "$results"

# run SHAPE SOURCES PROBE_MODE PORT_VAR ATTACK_ARGS...: one shape against a fresh server.
run() {
  local shape=$1 sources=$2 mode=$3 port_var=$4
  shift 4
  start
  local port=${!port_var} seconds=$((warmup + probes * (timeout / 1000 + 1) + 30))
  "${attack[@]}" "$@" -p "$port" -s "$sources" -d "$seconds" > "$work/attack.txt" 2>&1 &
  local apid=$!
  pids+=("$apid")
  sleep "$warmup"
  local out
  out=$("${attack[@]}" probe -p "$port" -m "$mode" -P "$probes" -I 1000 -t "$timeout" -i "$identity" -k "$key" | tee "$work/probe.txt" | tail -1 || true)
  stop "$apid"
  stop "$spid"
  local summary rate unit
  summary=$(tail -1 "$work/attack.txt")
  if [[ $shape == dtls-stall ]]; then rate=$(field "$summary" sent_per_s) unit="datagrams/s"; else rate=$(field "$summary" connects_per_s) unit="connections/s"; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$shape" "$sources" "$*" "$rate" "$unit" "$(field "$out" tries)" "$(field "$out" ok)" \
    "$(field "$out" p50_ms)" "$(field "$out" p95_ms)" "$(field "$out" max_ms)" "$(grep -c . "$work/server.log" || true)" | tee -a "$results"
  { echo "== $shape sources=$sources $*"; cat "$work/attack.txt" "$work/probe.txt"; echo "-- server log (first 40 lines of $(grep -c . "$work/server.log" || true))"; head -40 "$work/server.log"; } >> "$work/raw.txt"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr); load $(cut -d' ' -f1-3 /proc/loadavg); $(openssl version 2> /dev/null || echo 'openssl ?')"
echo "server: $label ($dll); $probes tries a shape, one a second, each within $timeout ms; attacks run $warmup s before the first try"
printf 'server\tshape\tsources\tattack\tattacker_rate\tunit\ttries\tok\tp50_ms\tp95_ms\tmax_ms\tserver_log_lines\n'
IFS=, read -r -a shape_list <<< "$shapes"
IFS=, read -r -a refresh_list <<< "$refresh"
for shape in "${shape_list[@]}"; do
  for sources in one many; do
    case "$shape" in
      dtls-stall)
        for r in "${refresh_list[@]}"; do
          run dtls-stall "$([[ $sources == one ]] && echo 1 || echo 70)" dtls dtls dtls-stall -n 70 -r "$r"
        done ;;
      tls-silent) run tls-silent "$([[ $sources == one ]] && echo 1 || echo 500)" tls tls tcp-silent -n 500 ;;
      tls-slowloris) run tls-slowloris "$([[ $sources == one ]] && echo 1 || echo 1100)" tls tls slowloris -T -n 1100 ;;
      tcp-silent) run tcp-silent "$([[ $sources == one ]] && echo 1 || echo 500)" tcp tcp tcp-silent -n 500 ;;
      tcp-slowloris) run tcp-slowloris "$([[ $sources == one ]] && echo 1 || echo 1100)" tcp tcp slowloris -n 1100 ;;
      *) die "unknown shape '$shape'" ;;
    esac
  done
done

# A wrong pre-shared key: how long until each client reports the handshake failed (no attack running).
echo
start
wrong_libcoap=-
if command -v coap-client-openssl > /dev/null; then
  t0=$(date +%s%N)
  libcoap_out=$(timeout 60 coap-client-openssl -u "$identity" -k wrong-key -B 30 "coaps://127.0.0.1:$dtls/hello" 2>&1 || true)
  wrong_libcoap="$((($(date +%s%N) - t0) / 1000000)) ms ($(grep -o 'alert read:fatal:[a-z ]*' <<< "$libcoap_out" | head -1 || echo 'no alert'))"
fi
t0=$(date +%s%N)
tool_out=$(timeout 60 dotnet "$tool" get "coaps://127.0.0.1:$dtls/hello" -u "$identity" -k wrong-key --timeout 30 2>&1 || true)
wrong_tool="$((($(date +%s%N) - t0) / 1000000)) ms including the tool's start ($(head -c 160 <<< "$tool_out" | tr '\n' ' '))"
stop "$spid"
echo "wrong key, coap-client-openssl: $wrong_libcoap"
echo "wrong key, coap tool: $wrong_tool"
echo "wrong key server log: $(grep -m1 'DTLS handshake' "$work/server.log" || echo none)"
cat "$work/raw.txt" > "${TMPDIR:-/tmp}/secure-attack-raw-$$.txt"
echo "raw output (attack and probe lines, server logs): ${TMPDIR:-/tmp}/secure-attack-raw-$$.txt"

echo
echo "| shape | sources | attacker | real client ok | p50 | p95 | max |"
echo "|---|---|---:|---:|---:|---:|---:|"
awk -F'\t' 'NR > 1 { printf "| %s %s | %s | %s %s | %s/%s | %s ms | %s ms | %s ms |\n", $2, ($2 == "dtls-stall" ? "(" $4 ")" : ""), $3, $5, $6, $8, $7, $9, $10, $11 }' "$results"
