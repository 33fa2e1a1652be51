#!/usr/bin/env bash
# Issue 25 item 5: why the sample server answers the old and the new load generator at different rates. For each
# generator, interleaved over rounds, one sample server (pinned to core 0, generator on core 1) is measured from
# /proc, not from the generator: its CPU time (utime + stime of all its threads, in clock ticks) and its threads'
# voluntary context switches (each a thread that found nothing to do and slept, so each a later wake-up), per 1,000
# requests answered; and the generator's own CPU time per request (GNU time).
#
#   benchmarks/results/issue25/server-cost-by-generator.sh --old-load PATH/coap-load.c [--rounds 4] [--seconds 4] [--sockets 16,512]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
old_load="" rounds=4 seconds=4 sockets=16,512
while (($#)); do
  case "$1" in
    --old-load) old_load=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --sockets) sockets=$2; shift 2 ;;
    *) echo "server-cost-by-generator: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -f "$old_load" ]] || { echo "server-cost-by-generator: --old-load PATH/coap-load.c is required" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "server-cost-by-generator: needs GNU time (/usr/bin/time)" >&2; exit 2; }
IFS=, read -r -a socket_list <<< "$sockets"
work=$(mktemp -d "${TMPDIR:-/tmp}/server-cost.XXXXXX")
spid=""
cleanup() { [[ -n "$spid" ]] && kill "$spid" 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
cc -O2 -o "$work/new" "$repo/benchmarks/tools/coap-udp-load.c"
cc -O2 -o "$work/old" "$old_load"
dotnet build -c Release --nologo -v q "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c 0 dotnet "$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll" --address 127.0.0.1 --port "$port" --tcp-port 0 > "$work/server.log" 2>&1 &
spid=$!
for _ in $(seq 60); do taskset -c 1 "$work/new" -p "$port" -u /hello -c 1 -w 1 -d 1 -t 500 > /dev/null 2>&1 && break; done
taskset -c 1 "$work/new" -p "$port" -u /hello -c 512 -w 2 -d 3 > /dev/null # warm-up (JIT)

# /proc/PID/stat holds the whole process's times; the fields are counted after the command name, which is in parentheses.
ticks() { sed 's/.*) //' /proc/"$spid"/stat | awk '{ print $12 + $13 }'; }
switches() { awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s }' /proc/"$spid"/task/*/status 2> /dev/null; }
echo "machine: $(nproc) cores, $(uname -sr), CLK_TCK $(getconf CLK_TCK); $(date -u '+%Y-%m-%d %H:%M UTC'); CON GET /hello, window 2, $seconds s per run"
printf 'round\tsockets\tgenerator\trps\tp50_us\tp99_us\tserver_cpu_us_per_request\tserver_sleeps_per_1000\tgenerator_cpu_us_per_request\tload1\n'
field() { tr ' ' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
for ((r = 1; r <= rounds; r++)); do
  order=(old new)
  ((r % 2 == 0)) && order=(new old)
  for c in "${socket_list[@]}"; do
    for g in "${order[@]}"; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      t0=$(ticks) v0=$(switches)
      out=$( { /usr/bin/time -f 'gen_cpu=%U+%S' taskset -c 1 "$work/$g" -h 127.0.0.1 -p "$port" -u /hello -c "$c" -w 2 -d "$seconds"; } 2>&1 | tr '\n' ' ')
      t1=$(ticks) v1=$(switches)
      ok=$(field "$out" ok) gen=$(field "$out" gen_cpu)
      awk -v r="$r" -v c="$c" -v g="$g" -v rps="$(field "$out" rps)" -v p50="$(field "$out" p50_us)" -v p99="$(field "$out" p99_us)" \
        -v ok="$ok" -v dt=$((t1 - t0)) -v dv=$((v1 - v0)) -v gen="$gen" -v hz="$(getconf CLK_TCK)" -v load="$load" \
        'BEGIN { split(gen, u, "+"); printf "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t%.2f\t%s\n", r, c, g, rps, p50, p99, dt * 1e6 / hz / ok, dv * 1000 / ok, (u[1] + u[2]) * 1e6 / ok, load }'
    done
  done
done
