#!/usr/bin/env bash
# Issue 25 items 1, 3 and 4: what a request costs the sample server, from /proc rather than from wall time, build
# against build. Each build runs pinned to core 0 (the generator, benchmarks/tools/coap-udp-load.c, on core 1), all
# side by side on 127.0.0.1, measured in turn within each round (the order alternates from round to round), so a
# change of the machine's load falls on every build alike. Per run:
#   rps, p50, p99        from the generator (wall clock: read them beside load1)
#   cpu_us               the server's CPU time (utime + stime of all its threads, /proc/PID/stat) per request answered
#   sleeps_per_1000      voluntary context switches of its threads (/proc/PID/task/*/status, per thread id, so a
#                        thread started during the run counts from zero) per 1,000 requests: each is a thread that
#                        found nothing to do and slept, so each is a later wake-up
#   empty_acks, separate empty ACKs before a separate response and separate CON responses (RFC 7252 section 5.2.2)
#   unavailable, bad     5.03 answers (load shedding) and every answer that was not 2.xx
#   rss_kb               VmRSS at the end of the run
#
#   benchmarks/results/issue25/server-cost.sh --dll LABEL=PATH [--dll LABEL=PATH]... [--rounds 3] [--seconds 5]
#       [--sockets 16,64,512] [--types CON,NON] [--window 2] [--env LABEL=VAR=VALUE]...
#
#   --dll LABEL=PATH  a CoapNet.Samples.Server.dll (run with dotnet) or its Native AOT executable
#   --env LABEL=VAR=VALUE  an environment variable for that build's process only (DOTNET_GCgen0size=..., say)
#
# Needs cc, taskset; prints a header, one TSV line per run, then the medians per build, sockets and type.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
rounds=3 seconds=5 sockets=16,64,512 types=CON,NON window=2
labels=() dlls=() envs=()
while (($#)); do
  case "$1" in
    --dll) [[ "$2" == *=* ]] || { echo "server-cost: --dll takes LABEL=PATH" >&2; exit 2; }
      labels+=("${2%%=*}") dlls+=("${2#*=}") envs+=(""); shift 2 ;;
    --env) envs_pending+=("$2"); shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --sockets) sockets=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    *) echo "server-cost: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
((${#dlls[@]})) || { echo "server-cost: at least one --dll LABEL=PATH" >&2; exit 2; }
for e in "${envs_pending[@]:-}"; do
  [[ -z "$e" ]] && continue
  for i in "${!labels[@]}"; do
    [[ "${e%%=*}" == "${labels[i]}" ]] && envs[i]+="${e#*=} "
  done
done
IFS=, read -r -a socket_list <<< "$sockets"
IFS=, read -r -a type_list <<< "$types"

work=$(mktemp -d "${TMPDIR:-/tmp}/server-cost.XXXXXX")
spids=()
cleanup() {
  # Only the servers this script started, by their process ids.
  for pid in "${spids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${spids[@]}"; do wait "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cc -O2 -o "$work/load" "$repo/benchmarks/tools/coap-udp-load.c"

ports=()
for i in "${!dlls[@]}"; do
  port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  run=("${dlls[i]}")
  [[ "${dlls[i]}" == *.dll ]] && run=(dotnet "${dlls[i]}")
  # shellcheck disable=SC2086 # the variables are words of their own
  env ${envs[i]} taskset -c 0 "${run[@]}" --address 127.0.0.1 --port "$port" --tcp-port 0 --dtls-port 0 > "$work/server-$i.log" 2>&1 &
  spids+=($!) ports+=("$port")
  for _ in $(seq 60); do taskset -c 1 "$work/load" -p "$port" -u /hello -c 1 -w 1 -d 1 -t 500 > /dev/null 2>&1 && break; done
  taskset -c 1 "$work/load" -p "$port" -u /hello -c 512 -w "$window" -d 3 > /dev/null # warm-up (tiered JIT)
done

ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
# "tid switches" for every thread of the process.
switches() { for f in /proc/"$1"/task/*/status; do awk -v t="${f%/status}" '/^voluntary_ctxt_switches/ { n = split(t, p, "/"); print p[n], $2 }' "$f" 2> /dev/null; done; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
field() { tr ' ' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
hz=$(getconf CLK_TCK)
echo "machine: $(nproc) cores, $(uname -sr), CLK_TCK $hz; $(date -u '+%Y-%m-%d %H:%M UTC'); GET /hello, window $window, $seconds s per run"
echo "builds: $(for i in "${!labels[@]}"; do printf '%s=%s %s; ' "${labels[i]}" "${dlls[i]}" "${envs[i]}"; done)"
results="$work/results.tsv"
printf 'round\tsockets\ttype\tbuild\trps\tp50_us\tp99_us\tcpu_us\tsleeps_per_1000\tbad\tunavailable\tempty_acks\tseparate\ttimeouts\trss_kb\tload1\n' | tee "$results"
for ((r = 1; r <= rounds; r++)); do
  order=("${!labels[@]}")
  ((r % 2 == 0)) && order=($(printf '%s\n' "${!labels[@]}" | sort -rn))
  for c in "${socket_list[@]}"; do
    for t in "${type_list[@]}"; do
      for i in "${order[@]}"; do
        pid=${spids[i]} load=$(cut -d' ' -f1 /proc/loadavg)
        flag=()
        [[ $t == NON ]] && flag=(-n)
        t0=$(ticks "$pid")
        switches "$pid" > "$work/v0"
        out=$(taskset -c 1 "$work/load" -p "${ports[i]}" -u /hello -c "$c" -w "$window" -d "$seconds" "${flag[@]}" || true)
        t1=$(ticks "$pid")
        switches "$pid" > "$work/v1"
        dv=$(awk 'NR == FNR { before[$1] = $2; next } { s += $2 - before[$1] } END { print s + 0 }' "$work/v0" "$work/v1")
        ok=$(field "$out" ok)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$t" "${labels[i]}" "$(field "$out" rps)" \
          "$(field "$out" p50_us)" "$(field "$out" p99_us)" \
          "$(awk -v d=$((t1 - t0)) -v hz="$hz" -v ok="$ok" 'BEGIN { printf "%.2f", (ok > 0 ? d * 1e6 / hz / ok : 0) }')" \
          "$(awk -v d="$dv" -v ok="$ok" 'BEGIN { printf "%.1f", (ok > 0 ? d * 1000 / ok : 0) }')" \
          "$(field "$out" bad)" "$(field "$out" unavailable)" "$(field "$out" empty_acks)" "$(field "$out" separate)" "$(field "$out" timeouts)" \
          "$(rss_kb "$pid")" "$load" | tee -a "$results"
      done
    done
  done
done

echo
echo "Medians over $rounds rounds:"
printf 'sockets\ttype\tbuild\trps\tp50_us\tp99_us\tcpu_us\tsleeps_per_1000\tbad\tempty_acks\trss_kb_max\n'
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for c in "${socket_list[@]}"; do
  for t in "${type_list[@]}"; do
    for name in "${labels[@]}"; do
      sel() { awk -F'\t' -v t="$t" -v c="$c" -v s="$name" -v k="$1" 'NR > 1 && $3 == t && $2 == c && $4 == s { print $k }' "$results"; }
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$t" "$name" "$(sel 5 | median)" "$(sel 6 | median)" "$(sel 7 | median)" \
        "$(sel 8 | median)" "$(sel 9 | median)" "$(sel 10 | median)" "$(sel 12 | median)" "$(sel 15 | sort -g | tail -1)"
    done
  done
done
