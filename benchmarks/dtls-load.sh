#!/usr/bin/env bash
# coaps (CoAP over DTLS 1.2, PSK) server throughput, handshakes and memory per idle session: the CoapNet sample server
# against libcoap's coap-server-openssl with the same pre-shared key, both driven by benchmarks/tools/coap-dtls-load.c
# (OpenSSL on the client side, so the generator's record protection costs a few hundred nanoseconds in C and the
# server is what a round measures), and the sample server's plain coap port under benchmarks/tools/coap-udp-load.c
# in the same rotation, for "coaps against plain UDP".
#
#   benchmarks/dtls-load.sh [--dll PATH] [--rounds N] [--seconds S] [--sessions C[,C...]] [--window W]
#                           [--warmup N] [--handshakes N] [--idle A,B] [--cipher LIST] [--no-libcoap]
#
#   --dll PATH       a CoapNet.Samples.Server.dll (or its Native AOT executable); default: this tree's, built in Release
#   --rounds N       recorded rounds per server and session count (default 3), interleaved: each round measures every
#                    count and every server in turn, so a change in the machine's load falls on all alike
#   --seconds S      length of a round (default 8)
#   --sessions C,..  DTLS sessions (one UDP socket each, a full PSK handshake before the round), default 16,64
#   --window W       requests outstanding per session (default 2)
#   --warmup N       unrecorded 3-second runs per server before the rounds, each at the largest count with sessions of its
#                    own (default 5): every round sets its sessions up afresh, and the JIT's tiers for the handshake code
#                    settle only after a few hundred handshakes; with one warm-up run, the measured rounds carried 3-4 %
#                    of tier-1 compiling of that code on the server's core (issue 39)
#   --handshakes N   full PSK handshakes per round for the handshake rate, 8 at once, each session closed with
#                    close_notify when up (default 2000; 0 skips)
#   --idle A,B       memory per idle session: resident memory with A established sessions (one GET each, then quiet),
#                    then with B; the slope (RSS(B) - RSS(A)) / (B - A), each server fresh (default 1000,5000; "-" skips)
#   --cipher LIST    OpenSSL cipher list offered by the generator (default PSK-AES128-CCM8: TLS_PSK_WITH_AES_128_CCM_8,
#                    RFC 7252 section 9.1.3.1's mandatory suite)
#   --no-libcoap     only the CoapNet server
#
# Every server runs pinned to core 0 (taskset) and the generator to core 1, bound to 127.0.0.1; GET /hello on CoapNet,
# GET / on libcoap (the smallest resource each serves). Beside each round's rate, the server's CPU time per request
# (utime + stime of all its threads from /proc/PID/stat, the figure to compare on a loaded machine) and its resident
# memory. The CoapNet server runs with the environment docs/DEPLOYMENT.md recommends ("Memory": a 1 MiB gen0 budget
# and 1 MiB regions), as its `dotnet run` profile does.
#
# Needs: cc, taskset, OpenSSL's headers (Debian: libssl-dev), dotnet, coap-server-openssl (libcoap3-bin) unless
# --no-libcoap.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/benchmarks/tools"
# shellcheck source=load-common.sh
. "$repo/benchmarks/load-common.sh"
dll="" rounds=3 seconds=8 sessions_list=16,64 window=2 warmups=5 handshakes=2000 idle=1000,5000 cipher=PSK-AES128-CCM8 use_libcoap=1
identity=coapnet key=sample-secret

die() { echo "dtls-load: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --dll) dll=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --sessions) sessions_list=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --warmup) warmups=$2; shift 2 ;;
    --handshakes) handshakes=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --cipher) cipher=$2; shift 2 ;;
    --no-libcoap) use_libcoap=0; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
IFS=, read -r -a session_counts <<< "$sessions_list"
for c in "${session_counts[@]}"; do [[ "$c" =~ ^[1-9][0-9]*$ ]] && ((c <= 8192)) || die "--sessions takes counts from 1 to 8192"; done
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$seconds" =~ ^[1-9][0-9]*$ && "$handshakes" =~ ^[0-9]+$ && "$warmups" =~ ^[0-9]+$ ]] || die "--rounds, --seconds, --warmup and --handshakes take whole numbers"
if [[ "$idle" != "-" ]]; then
  IFS=, read -r idle_a idle_b <<< "$idle"
  [[ "$idle_a" =~ ^[1-9][0-9]*$ && "$idle_b" =~ ^[1-9][0-9]*$ ]] && ((idle_a < idle_b && idle_b <= 8192)) || die "--idle takes A,B with A < B <= 8192, or -"
fi
command -v taskset > /dev/null || die "taskset is missing (util-linux)"
command -v cc > /dev/null || die "cc is missing: the load tools are C"
(($(nproc) >= 2)) || die "needs 2 cores: one for the servers, one for the generator"
((use_libcoap)) && ! command -v coap-server-openssl > /dev/null && die "coap-server-openssl is missing: sudo apt-get install -y libcoap3-bin, or pass --no-libcoap"

make_work dtls-load

cc -O2 -o "$work/coap-dtls-load" "$tools/coap-dtls-load.c" -lssl -lcrypto || die "coap-dtls-load did not build (Debian: sudo apt-get install -y libssl-dev)"
cc -O2 -o "$work/coap-udp-load" "$tools/coap-udp-load.c"
if [[ -z "$dll" ]]; then
  echo "Building the sample server of $repo in Release..."
  dotnet build -c Release --nologo -v q "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "the Release build failed"; }
  dll="$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll"
fi
[[ -f "$dll" ]] || die "no such server: $dll"
coapnet=("$dll")
[[ "$dll" == *.dll ]] && coapnet=(dotnet "$dll")
# coap+ws and the explorer (Kestrel on 8683, since issue 37) off where the build has them: not measured here.
takes_option "$dll" http-port && coapnet+=(--http-port 0)

# Starts server NAME; sets $spid, $sport (coaps), $pport (plain coap, CoapNet only).
start() {
  local name=$1
  free_udp_pair
  if [[ $name == coapnet ]]; then
    pport=$port sport=$((port + 1))
    DOTNET_GCgen0size=100000 DOTNET_GCRegionSize=100000 taskset -c 0 "${coapnet[@]}" --address 127.0.0.1 --port "$pport" \
      --tcp-port 0 --tls-port 0 --dtls-port "$sport" --psk-identity "$identity" --psk-key "$key" > "$work/$name.log" 2>&1 &
  else
    # libcoap serves coaps on the port after its coap port; -k the key, any identity (libcoap 4.3.1).
    pport=$port sport=$((port + 1))
    taskset -c 0 coap-server-openssl -A 127.0.0.1 -p "$pport" -k "$key" -v 0 > "$work/$name.log" 2>&1 &
  fi
  spid=$!
  pids+=("$spid")
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$spid" 2> /dev/null || { cat "$work/$name.log" >&2; die "$name exited at start"; }
    taskset -c 1 "$work/coap-dtls-load" -p "$sport" -u "$(path "$name")" -i "$identity" -k "$key" -c 1 -d 1 > /dev/null 2>&1 && return
    sleep 0.5
  done
  die "$name did not answer coaps on 127.0.0.1:$sport"
}
stop() { kill "$1" 2> /dev/null || true; wait "$1" 2> /dev/null || true; }
path() { [[ $1 == coapnet ]] && echo /hello || echo /; }
hz=$(getconf CLK_TCK)

servers=(coapnet)
((use_libcoap)) && servers+=(libcoap)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr); $(openssl version 2> /dev/null || echo 'openssl ?')"
echo "coap-dtls-load -c C -w $window -d $seconds -C $cipher at C = ${session_counts[*]}; $warmups warm-up runs per server, then $rounds rounds; servers on core 0, generator on core 1"
echo "CoapNet: ${coapnet[*]} (DOTNET_GCgen0size=100000 DOTNET_GCRegionSize=100000); libcoap: $(command -v coap-server-openssl || echo none)"

declare -A spids sports pports
for s in "${servers[@]}"; do
  start "$s"
  spids[$s]=$spid sports[$s]=$sport pports[$s]=$pport
  # Warm-up (the JIT's tiers settle, the handshake code's too): unrecorded runs at the largest count, each with new sessions.
  for ((w = 0; w < warmups; w++)); do
    taskset -c 1 "$work/coap-dtls-load" -p "$sport" -u "$(path "$s")" -i "$identity" -k "$key" -C "$cipher" -c "${session_counts[-1]}" -w "$window" -d 3 > /dev/null || true
  done
done
taskset -c 1 "$work/coap-udp-load" -p "${pports[coapnet]}" -u /hello -c "${session_counts[-1]}" -w "$window" -d 3 > /dev/null || true

results="$work/results.tsv"
printf 'round\tsessions\tkind\tserver\trps\tp50_us\tp99_us\ttimeouts\tcpu_us\trss_kb\tload1\tcipher\n' | tee "$results"
measure() { # round sessions kind(coaps|coap) server
  local r=$1 c=$2 kind=$3 s=$4 pid=${spids[$4]} out t0 t1 ok
  t0=$(cpu_ticks "$pid")
  if [[ $kind == coaps ]]; then
    out=$(taskset -c 1 "$work/coap-dtls-load" -p "${sports[$s]}" -u "$(path "$s")" -i "$identity" -k "$key" -C "$cipher" -c "$c" -w "$window" -d "$seconds" || true)
  else
    out=$(taskset -c 1 "$work/coap-udp-load" -p "${pports[$s]}" -u "$(path "$s")" -c "$c" -w "$window" -d "$seconds" || true)
  fi
  t1=$(cpu_ticks "$pid")
  ok=$(field "$out" ok)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$kind" "$s" "$(field "$out" rps)" "$(field "$out" p50_us)" "$(field "$out" p99_us)" \
    "$(field "$out" timeouts)" "$(awk -v d=$((t1 - t0)) -v hz="$hz" -v ok="${ok:-0}" 'BEGIN { printf "%.2f", (ok > 0 ? d * 1e6 / hz / ok : 0) }')" \
    "$(rss_kb "$pid")" "$(load1)" "$(field "$out" cipher)" | tee -a "$results"
}
for ((r = 1; r <= rounds; r++)); do
  for c in "${session_counts[@]}"; do
    for s in "${servers[@]}"; do measure "$r" "$c" coaps "$s"; done
    measure "$r" "$c" coap coapnet
  done
done

# Handshakes: each server's rate of full PSK handshakes (cookie exchange included), 8 at once, after the load rounds.
hs_results="$work/handshakes.tsv"
if ((handshakes > 0)); then
  echo
  printf 'round\tserver\thandshakes\tfailed\thps\tp50_us\tp99_us\tcpu_us_per_handshake\n' | tee "$hs_results"
  for ((r = 1; r <= rounds; r++)); do
    for s in "${servers[@]}"; do
      pid=${spids[$s]}
      t0=$(cpu_ticks "$pid")
      out=$(taskset -c 1 "$work/coap-dtls-load" -p "${sports[$s]}" -i "$identity" -k "$key" -C "$cipher" -H "$handshakes" -a 8 || true)
      t1=$(cpu_ticks "$pid")
      done_=$(field "$out" handshakes)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$done_" "$(field "$out" failed)" "$(field "$out" hps)" "$(field "$out" p50_us)" "$(field "$out" p99_us)" \
        "$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="${done_:-0}" 'BEGIN { printf "%.0f", (n > 0 ? d * 1e6 / hz / n : 0) }')" | tee -a "$hs_results"
    done
  done
fi

# Memory per idle session, each server fresh: RSS with A sessions held idle, then with B.
idle_lines=()
if [[ "$idle" != "-" ]]; then
  for s in "${servers[@]}"; do stop "${spids[$s]}"; done
  echo
  for s in "${servers[@]}"; do
    start "$s"
    base=$(rss_kb "$spid")
    taskset -c 1 "$work/coap-dtls-load" -p "$sport" -u "$(path "$s")" -i "$identity" -k "$key" -C "$cipher" -I -c "$idle_a" -a 8 -d 600 > "$work/idle-a.txt" 2>&1 &
    a=$!
    for ((i = 0; i < 600; i++)); do grep -q '^idle' "$work/idle-a.txt" && break; sleep 0.5; done
    sleep 5
    rss_a=$(rss_kb "$spid")
    taskset -c 1 "$work/coap-dtls-load" -p "$sport" -u "$(path "$s")" -i "$identity" -k "$key" -C "$cipher" -I -c $((idle_b - idle_a)) -a 8 -d 600 > "$work/idle-b.txt" 2>&1 &
    b=$!
    for ((i = 0; i < 600; i++)); do grep -q '^idle' "$work/idle-b.txt" && break; sleep 0.5; done
    sleep 5
    rss_b=$(rss_kb "$spid")
    kill "$a" "$b" 2> /dev/null || true
    wait "$a" "$b" 2> /dev/null || true
    line="$s: RSS $((base / 1024)) MB at start, $((rss_a / 1024)) MB with $(sed -n 's/^idle sessions=\([0-9]*\).*/\1/p' "$work/idle-a.txt") idle sessions, $((rss_b / 1024)) MB with $(sed -n 's/^idle sessions=\([0-9]*\).*/\1/p' "$work/idle-b.txt") more: $(awk -v a="$rss_a" -v b="$rss_b" -v n=$((idle_b - idle_a)) 'BEGIN { printf "%.2f", (b - a) / n }') KB per idle session"
    echo "$line"
    idle_lines+=("$line")
    stop "$spid"
  done
fi

echo
echo "Medians over $rounds rounds:"
echo
echo "| sessions | server | coaps req/s | p50 | p99 | CPU µs / request | coap (plain UDP) req/s | coaps / coap | timeouts |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
sel() { awk -F'\t' -v c="$1" -v k="$2" -v s="$3" -v f="$4" 'NR > 1 && $2 == c && $3 == k && $4 == s { print $f }' "$results"; }
declare -A med
for c in "${session_counts[@]}"; do
  plain=$(sel "$c" coap coapnet 5 | median)
  for s in "${servers[@]}"; do
    rps=$(sel "$c" coaps "$s" 5 | median)
    med[$c,$s]=$rps
    ratio=-
    [[ $s == coapnet ]] && ratio=$(awk -v a="$rps" -v b="$plain" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }')
    printf '| %s | %s | %.0f | %.2f ms | %.2f ms | %.2f | %s | %s | %s |\n' "$c" "$s" "$rps" "$(awk -v v="$(sel "$c" coaps "$s" 6 | median)" 'BEGIN { print v / 1000 }')" \
      "$(awk -v v="$(sel "$c" coaps "$s" 7 | median)" 'BEGIN { print v / 1000 }')" "$(sel "$c" coaps "$s" 9 | median)" \
      "$([[ $s == coapnet ]] && printf '%.0f' "$plain" || echo -)" "$ratio" "$(sel "$c" coaps "$s" 8 | median)"
  done
  if ((use_libcoap)); then
    echo "|  | CoapNet / libcoap | $(awk -v a="${med[$c,coapnet]}" -v b="${med[$c,libcoap]}" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }') | | | | | | |"
  fi
done
if ((handshakes > 0)); then
  echo
  for s in "${servers[@]}"; do
    echo "$s: $(awk -F'\t' -v s="$s" 'NR > 1 && $2 == s { print $5 }' "$hs_results" | median) full PSK handshakes/s (median of $rounds rounds of $handshakes, 8 at once), $(awk -F'\t' -v s="$s" 'NR > 1 && $2 == s { print $8 }' "$hs_results" | median) µs of server CPU each, failed: $(awk -F'\t' -v s="$s" 'NR > 1 && $2 == s { n += $4 } END { print n + 0 }' "$hs_results")"
  done
fi
for line in "${idle_lines[@]}"; do echo "$line"; done
