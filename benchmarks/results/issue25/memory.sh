#!/usr/bin/env bash
# Issue 25 item 4: the sample server's resident memory under the 512-socket load, and what each MB is.
# For each configuration (a build and runtime settings), one server process pinned to core 0 gets a warm-up and then
# coap-udp-load -c 512 -w 2 (CON GET /hello) on core 1 for --seconds, rounds interleaved over the configurations, each
# round in a fresh process (RSS depends on the process's history). Per run: the highest VmRSS sampled every 0.2 s
# during the load, the rate and CPU time per request (so a setting that saves memory is seen to cost nothing), and at
# the end of the load /proc/PID/smaps summed by what each mapping is:
#   gc-heap       the GC's reservation (one anonymous mapping of 1 GiB or more; only what it committed and touched)
#   jit-code      code the JIT wrote (memfd:doublemapper, the runtime's W^X double mapping)
#   <file>        a mapped file: the runtime (libcoreclr.so, libclrjit.so), CoreLib and the other assemblies, libc...
#   native-heap   malloc's [heap]
#   other-anon    every other anonymous mapping: thread stacks, malloc arenas, the runtime's own heaps
#
#   benchmarks/results/issue25/memory.sh --config LABEL=PATH[@VAR=VALUE,VAR=VALUE] [--config ...]... [--rounds 3]
#       [--seconds 10] [--sockets 512] [--window 2] [--non] [--all-endpoints]
#
#   PATH is CoapNet.Samples.Server.dll (run with dotnet) or its Native AOT executable; VAR=VALUE pairs are environment
#   variables for that process only (DOTNET_GCgen0size=400000, say: hexadecimal, and Native AOT reads no 0x prefix).
#   The server serves UDP only (--tcp-port 0, --dtls-port 0, and --tls-port 0 in builds that have coaps+tcp), as in
#   the load; --all-endpoints leaves TCP, DTLS and TLS on, each on a free port of its own, to show what they hold
#   (their libraries and keys) while only UDP is loaded. Needs cc, taskset and python3 (for free ports).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
rounds=3 seconds=10 sockets=512 window=2 non=() all_endpoints=0
labels=() paths=() envs=()
while (($#)); do
  case "$1" in
    --config)
      spec=${2#*=} labels+=("${2%%=*}")
      paths+=("${spec%%@*}")
      if [[ "$spec" == *@* ]]; then envs+=("${spec#*@}"); else envs+=(""); fi
      shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --sockets) sockets=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --non) non=(-n); shift ;;
    --all-endpoints) all_endpoints=1; shift ;;
    *) echo "memory: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
((${#labels[@]})) || { echo "memory: at least one --config LABEL=PATH[@VAR=VALUE,...]" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/memory.XXXXXX")
server=""
finish() {
  # Only the server this script started, by its process id.
  [[ -n "$server" ]] && kill "$server" 2> /dev/null && wait "$server" 2> /dev/null
  rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT TERM
cc -O2 -o "$work/load" "$repo/benchmarks/tools/coap-udp-load.c"
hz=$(getconf CLK_TCK)
field() { tr ' ' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# smaps to "category kB" lines, largest first. The GC reserves one large range and commits parts of it, which
# splits it into several mappings: a run of adjacent anonymous mappings spanning 1 GiB or more is the GC's.
breakdown() {
  awk '
    function close_run() { if (run_size > 0) kb[run_size >= 1048576 ? "gc-heap" : "other-anon"] += run_rss; run_size = 0; run_rss = 0 }
    /^[0-9a-f]+-[0-9a-f]+ / {
      split($1, r, "-")
      name = $6; for (i = 7; i <= NF; i++) name = name " " $i
      anon = name == ""
      if (!anon || r[1] != last_end) close_run()
      last_end = anon ? r[2] : ""
      if (name ~ /doublemapper/) cat = "jit-code"
      else if (name == "[heap]") cat = "native-heap"
      else if (name ~ /^\//) { n = split(name, p, "/"); cat = p[n] }
      else if (anon) cat = ""
      else cat = "other-anon"
      next
    }
    /^Size:/ { if (anon) run_size += $2 }
    /^Rss:/ { if (anon) run_rss += $2; else kb[cat] += $2 }
    END { close_run(); for (c in kb) if (kb[c] >= 100) printf "%s %d\n", c, kb[c] }' "/proc/$1/smaps" | sort -k2 -nr
}

echo "machine: $(nproc) cores, $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC'); coap-udp-load -c $sockets -w $window -d $seconds ${non[*]:-(CON)} GET /hello"
for i in "${!labels[@]}"; do echo "config ${labels[i]}: ${paths[i]} ${envs[i]:-(no settings)}"; done
printf 'round\tconfig\trps\tcpu_us\trss_max_kb\trss_end_kb\tload1\n'
for ((r = 1; r <= rounds; r++)); do
  for i in "${!labels[@]}"; do
    port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    run=("${paths[i]}")
    [[ "${paths[i]}" == *.dll ]] && run=(dotnet "${paths[i]}")
    # --tls-port exists only in builds with coaps+tcp: found as the UTF-16 string the argument parser compares with.
    has_tls=0
    LC_ALL=C grep -qaP -- '-\x00-\x00t\x00l\x00s\x00-\x00p\x00o\x00r\x00t' "${paths[i]}" && has_tls=1
    if ((all_endpoints)); then
      free=($(python3 -c 'import socket
ss = [socket.socket(socket.AF_INET, t) for t in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_STREAM)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'))
      run+=(--tcp-port "${free[0]}" --dtls-port "${free[1]}")
      ((has_tls)) && run+=(--tls-port "${free[2]}")
    else
      run+=(--tcp-port 0 --dtls-port 0)
      ((has_tls)) && run+=(--tls-port 0)
    fi
    IFS=, read -r -a vars <<< "${envs[i]}"
    env "${vars[@]}" taskset -c 0 "${run[@]}" --address 127.0.0.1 --port "$port" > "$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 60); do taskset -c 1 "$work/load" -p "$port" -u /hello -c 1 -w 1 -d 1 -t 500 > /dev/null 2>&1 && break; done
    taskset -c 1 "$work/load" -p "$port" -u /hello -c "$sockets" -w "$window" -d 3 "${non[@]}" > /dev/null # warm-up (tiered JIT)
    load=$(cut -d' ' -f1 /proc/loadavg) t0=$(ticks "$server")
    taskset -c 1 "$work/load" -p "$port" -u /hello -c "$sockets" -w "$window" -d "$seconds" "${non[@]}" > "$work/out" &
    gen=$! peak=0
    while kill -0 "$gen" 2> /dev/null; do
      kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server/status")
      ((kb > peak)) && peak=$kb
      sleep 0.2
    done
    wait "$gen" || true
    out=$(cat "$work/out") t1=$(ticks "$server")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "${labels[i]}" "$(field "$out" rps)" \
      "$(awk -v d=$((t1 - t0)) -v hz="$hz" -v ok="$(field "$out" ok)" 'BEGIN { printf "%.2f", (ok > 0 ? d * 1e6 / hz / ok : 0) }')" \
      "$peak" "$(awk '/^VmRSS:/ { print $2 }' "/proc/$server/status")" "$load"
    breakdown "$server" | awk -v r="$r" -v c="${labels[i]}" '{ printf "  smaps\t%s\t%s\t%s\t%d kB\n", r, c, $1, $2 }'
    kill "$server"
    wait "$server" 2> /dev/null || true
    server=""
  done
done
