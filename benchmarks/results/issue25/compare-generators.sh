#!/usr/bin/env bash
# Issue 25 item 5: do the repository's own load tools (benchmarks/tools/coap-udp-load.c, udp-echo.c) measure what
# the tools they replace measured? Runs both generators against the same servers, interleaved: every round takes
# each client count, type and server in turn, and the two generators back to back on it, in alternating order
# (old first in odd rounds, new first in even ones), so a drift of the machine's load falls on both alike.
#
#   benchmarks/results/issue25/compare-generators.sh --old-load PATH/coap-load.c [--old-echo PATH/udp-echo.c]
#       [--servers sample,udp-echo,old-udp-echo] [--sockets 16,64,256,512] [--types CON,NON] [--rounds 5] [--seconds 5]
#
#   --old-load   the closed-loop generator the scripts used before (../shared/tools/coap-load.c on the session machine)
#   --old-echo   the echo server they used before; needed for the server old-udp-echo
#   --servers    sample: the sample server of this tree (Release build); udp-echo: benchmarks/tools/udp-echo.c;
#                old-udp-echo: --old-echo (default sample)
#
# Servers on core 0, generators on core 1, all on 127.0.0.1, window 2. Prints one TSV line per run, then per cell
# the median req/s and p50 of each generator and the median over rounds of new/old (each round's pair).
# Nothing from the old tools is copied here: they are built from the path given.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
old_load="" old_echo="" servers=sample sockets=16,64,256,512 types=CON,NON rounds=5 seconds=5
while (($#)); do
  case "$1" in
    --old-load) old_load=$2; shift 2 ;;
    --old-echo) old_echo=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --sockets) sockets=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "compare-generators: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -f "$old_load" ]] || { echo "compare-generators: --old-load PATH/coap-load.c is required" >&2; exit 2; }
IFS=, read -r -a server_list <<< "$servers"
IFS=, read -r -a socket_list <<< "$sockets"
IFS=, read -r -a type_list <<< "$types"

work=$(mktemp -d "${TMPDIR:-/tmp}/compare-generators.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -o "$work/new" "$repo/benchmarks/tools/coap-udp-load.c"
cc -O2 -o "$work/old" "$old_load"
cc -O2 -o "$work/udp-echo" "$repo/benchmarks/tools/udp-echo.c"
[[ -n "$old_echo" ]] && cc -O2 -o "$work/old-udp-echo" "$old_echo"

declare -A port path
start() { # name path command...
  local name=$1 p=$2
  shift 2
  local free
  free=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  taskset -c 0 "${@//@PORT@/$free}" > "$work/$name.log" 2>&1 &
  pids+=($!)
  port[$name]=$free path[$name]=$p
  for _ in $(seq 60); do
    taskset -c 1 "$work/new" -p "$free" -u "$p" -c 1 -w 1 -d 1 -t 500 > /dev/null 2>&1 && return
  done
  echo "compare-generators: $name did not answer" >&2
  exit 1
}
for s in "${server_list[@]}"; do
  case $s in
    sample)
      dotnet build -c Release --nologo -v q "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
      start sample /hello dotnet "$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll" --address 127.0.0.1 --port @PORT@ --tcp-port 0 ;;
    udp-echo) start udp-echo / "$work/udp-echo" @PORT@ ;;
    old-udp-echo) start old-udp-echo / "$work/old-udp-echo" @PORT@ ;;
    *) echo "compare-generators: unknown server '$s'" >&2; exit 2 ;;
  esac
  taskset -c 1 "$work/new" -p "${port[$s]}" -u "${path[$s]}" -c 512 -w 2 -d 3 > /dev/null # warm-up (JIT)
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "rounds=$rounds seconds=$seconds window=2 sockets=$sockets types=$types servers=$servers"
field() { tr ' ' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
results="$work/runs.tsv"
printf 'round\tsockets\ttype\tserver\tgenerator\trps\tp50_us\tp99_us\ttimeouts\tload1\n' | tee "$results"
for ((r = 1; r <= rounds; r++)); do
  order=(old new)
  ((r % 2 == 0)) && order=(new old)
  for c in "${socket_list[@]}"; do
    for t in "${type_list[@]}"; do
      flag=()
      [[ $t == NON ]] && flag=(-n)
      for s in "${server_list[@]}"; do
        for g in "${order[@]}"; do
          load=$(cut -d' ' -f1 /proc/loadavg)
          out=$(taskset -c 1 "$work/$g" -h 127.0.0.1 -p "${port[$s]}" -u "${path[$s]}" -c "$c" -w 2 -d "$seconds" "${flag[@]}" || true)
          printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$t" "$s" "$g" "$(field "$out" rps)" "$(field "$out" p50_us)" \
            "$(field "$out" p99_us)" "$(field "$out" timeouts)" "$load" | tee -a "$results"
        done
      done
    done
  done
done

echo
echo "| server | sockets | type | old req/s | new req/s | new / old (median of the rounds' pairs, range) | old p50 | new p50 | old p99 | new p99 |"
echo "|---|---:|---|---:|---:|---|---:|---:|---:|---:|"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for s in "${server_list[@]}"; do
  for c in "${socket_list[@]}"; do
    for t in "${type_list[@]}"; do
      sel() { awk -F'\t' -v s="$s" -v c="$c" -v t="$t" -v g="$1" -v k="$2" 'NR > 1 && $4 == s && $2 == c && $3 == t && $5 == g { print $k }' "$results"; }
      ratios=$(paste <(sel new 6) <(sel old 6) | awk '$2 > 0 { printf "%.3f\n", $1 / $2 }')
      printf '| %s | %s | %s | %.0f | %.0f | %.2f (%s-%s) | %.0f us | %.0f us | %.0f us | %.0f us |\n' "$s" "$c" "$t" \
        "$(sel old 6 | median)" "$(sel new 6 | median)" "$(median <<< "$ratios")" "$(sort -g <<< "$ratios" | head -1)" "$(sort -g <<< "$ratios" | tail -1)" \
        "$(sel old 7 | median)" "$(sel new 7 | median)" "$(sel old 8 | median)" "$(sel new 8 | median)"
    done
  done
done
if [[ " ${server_list[*]} " == *" udp-echo "* && " ${server_list[*]} " == *" old-udp-echo "* ]]; then
  echo
  echo "The two echo servers under the same generator: udp-echo / old-udp-echo, median of the rounds' pairs (range)"
  echo
  echo "| generator | sockets | type | udp-echo / old-udp-echo |"
  echo "|---|---:|---|---|"
  for g in old new; do
    for c in "${socket_list[@]}"; do
      for t in "${type_list[@]}"; do
        sel() { awk -F'\t' -v s="$1" -v c="$c" -v t="$t" -v g="$g" 'NR > 1 && $4 == s && $2 == c && $3 == t && $5 == g { print $6 }' "$results"; }
        ratios=$(paste <(sel udp-echo) <(sel old-udp-echo) | awk '$2 > 0 { printf "%.3f\n", $1 / $2 }')
        printf '| %s | %s | %s | %.2f (%s-%s) |\n' "$g" "$c" "$t" "$(median <<< "$ratios")" "$(sort -g <<< "$ratios" | head -1)" "$(sort -g <<< "$ratios" | tail -1)"
      done
    done
  done
fi
