#!/usr/bin/env bash
# UDP server throughput: udp-echo (the limit), libcoap's coap-server-notls and one or more builds of
# the CoapNet sample server, under the same closed-loop load from coap-udp-load, in rotation, at
# each client count of a sweep; with --tcp, the same over TCP, with tcp-echo as the limit.
#
#   benchmarks/server-load.sh [--dll LABEL=PATH]... [--pre-tcp-dll LABEL=PATH]...
#                             [--rounds N] [--seconds S] [--warmup S] [--sockets C[,C...]] [--window W]
#                             [--max-load L] [--max-wait S] [--no-libcoap] [--no-libcoap-fresh] [--no-udp-echo]
#                             [--tcp] [--tcp-connections C] [--tcp-window W] [--aot] [--rate R[,R...]]
#
#   --dll LABEL=PATH          a CoapNet.Samples.Server.dll that takes --address, --port and --tcp-port, or the
#                             native executable `dotnet publish -r linux-x64` makes of it (Native AOT)
#   --pre-tcp-dll LABEL=PATH  one from before TCP support (d3ef726 and older): only --address and --port
#   Without either, the sample server of this tree is built in Release and measured as "this-tree".
#   --aot          also publish this tree's sample server with Native AOT and measure it as "this-tree-aot"
#   --rate R,...   also a paced CON round per server at each rate R (requests/s, the same for every server),
#                  driven by benchmarks/tools/coap-rate-load.c: open loop, latency from when each request
#                  was due, so servers are compared at the same offered load (type "CON@R" in the tables;
#                  "behind" is how far the generator itself ever fell behind its schedule: the noise floor);
#                  with --tcp, also a paced coap+tcp round at each R over the --tcp-connections ("TCP@R")
#   --rounds N     recorded rounds per server and message type (default 3)
#   --seconds S    length of a round (default 8)
#   --warmup S     one unrecorded CON round per server first, so .NET's tiered JIT has settled (default 15: on a
#                  saturated core 3 s left part of the request path unoptimized, 7.7 % of a profile 9-17 s after start)
#   --sockets C,...  client sockets, one count or a sweep (default 16,64,256,512): each round measures every
#                  count in turn, so the counts are interleaved like the servers; see "Message IDs" below
#   --window W     requests outstanding per socket (default 2)
#   --max-load L   before each round, wait until the 1-minute load average is below L (default 1.0)
#   --max-wait S   ... but at most S seconds; the round then runs anyway and its load is recorded (default 300)
#   --no-libcoap-fresh  leave out the second libcoap, the one restarted before each of its rounds (see "libcoap")
#   --tcp          also a TCP round per server that speaks coap+tcp (libcoap on the same port, the CoapNet
#                  builds on a --tcp-port of their own), driven by benchmarks/tools/coap-tcp-load.c: C
#                  connections (default 64), each with a CSM first and then W requests pipelined (default
#                  16), so as many requests are outstanding as in the UDP rounds by default; each connection from
#                  a loopback address of its own (127.1.0.1, ...), as devices come, so a server's bound on
#                  connections per address (CoapNet's MaxConnectionsPerAddress, 100) does not refuse them;
#                  beside udp-echo, tcp-echo (benchmarks/tools/tcp-echo.c: a recv and a send per ready
#                  connection, nothing else) is the TCP rounds' limit, left out with --no-udp-echo as well
#
# Every server is pinned to core 0 and the generator to core 1 (taskset), all bound to 127.0.0.1.
# Beside each round's rate, what the round cost the server, from /proc rather than the wall clock (the figures
# to compare on a loaded machine): CPU time per request (utime + stime of all its threads, /proc/PID/stat) and
# sleeps per 1,000 requests (voluntary context switches of its threads, /proc/PID/task/*/status, counted per
# thread id so a thread started during the round counts from zero: each is a thread that found nothing to do,
# so each is a later wake-up); and what it answered besides 2.xx: empty ACKs before a separate response and
# 5.03 (load shedding) among the bad answers (UDP closed-loop rounds only).
# The servers run side by side and are measured in turn, round by round (within a round: each
# client count, each type, each server), so a change in the machine's background load falls on all
# of them alike instead of on whichever ran last. The TCP and paced rounds do not depend on the
# client count: they run once per round, after the sweep.
#
# Message IDs: a server deduplicates by (peer, Message ID) for EXCHANGE_LIFETIME (247 s, RFC 7252
# 4.8.2), and a socket has 65,536 IDs: at R requests/s over C sockets one would come back to an ID
# within that time once R/C exceeds 265 requests/s, and be answered from the cache. coap-udp-load
# moves such a client to a new socket (a new peer) first; the "renewed" column counts the moves.
#
# libcoap: coap-server-notls keeps a session for every peer it has heard from until the session has been idle for
# 300 s (libcoap 4.3's COAP_DEFAULT_SESSION_TIMEOUT) and looks a datagram's peer up in them, so its rate falls as peers
# accumulate: measured here, 122k req/s at 16 client sockets when fresh, 44k after six 16 + 512 socket runs. A sweep
# shows it at every stage of that, so two libcoaps are measured side by side: "libcoap", which runs through the whole
# sweep like a server that has been up for a while (every client socket of the sweep is a peer to it), and
# "libcoap-fresh", restarted before each of its rounds so it knows only that round's peers (its best case). CoapNet
# is compared with both; the fresh one is the conservative comparison.
#
# Needs: cc, taskset, dotnet (for CoapNet), coap-server-notls (libcoap3-bin) unless --no-libcoap.
# The load tools are the C programs in benchmarks/tools (coap-udp-load.c, udp-echo.c, coap-tcp-load.c,
# coap-rate-load.c), built by this script into a temporary directory.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/benchmarks/tools"
# shellcheck source=load-common.sh
. "$repo/benchmarks/load-common.sh"
rounds=3 seconds=8 warmup=15 sockets_list=16,64,256,512 window=2 max_load=1.0 max_wait=300
use_libcoap=1 use_fresh=1 use_echo=1 use_tcp=0 use_aot=0 tcp_connections=64 tcp_window=16 rates=()
labels=() dlls=() pre_tcp=()

die() { echo "server-load: $*" >&2; exit 2; }

while (($#)); do
  case "$1" in
    --dll | --pre-tcp-dll)
      [[ $# -ge 2 && "$2" == *=* ]] || die "$1 takes LABEL=PATH"
      labels+=("${2%%=*}") dlls+=("${2#*=}")
      if [[ "$1" == --pre-tcp-dll ]]; then pre_tcp+=(1); else pre_tcp+=(0); fi
      shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --sockets) sockets_list=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --max-load) max_load=$2; shift 2 ;;
    --max-wait) max_wait=$2; shift 2 ;;
    --no-libcoap) use_libcoap=0 use_fresh=0; shift ;;
    --no-libcoap-fresh) use_fresh=0; shift ;;
    --no-udp-echo) use_echo=0; shift ;;
    --tcp) use_tcp=1; shift ;;
    --tcp-connections) tcp_connections=$2; shift 2 ;;
    --tcp-window) tcp_window=$2; shift 2 ;;
    --aot) use_aot=1; shift ;;
    --rate) IFS=, read -r -a rates <<< "$2"; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done

IFS=, read -r -a sockets_counts <<< "$sockets_list"
((${#sockets_counts[@]})) || die "--sockets takes one count or a list such as 16,64,256,512"
for c in "${sockets_counts[@]}"; do [[ "$c" =~ ^[1-9][0-9]*$ ]] && ((c <= 8192)) || die "--sockets takes counts from 1 to 8192, such as 16,64,256,512"; done
max_sockets=$(printf '%s\n' "${sockets_counts[@]}" | sort -n | tail -1)
for f in coap-udp-load.c udp-echo.c coap-tcp-load.c tcp-echo.c coap-rate-load.c load-common.h; do
  [[ -f "$tools/$f" ]] || die "missing $tools/$f"
done
command -v taskset > /dev/null || die "taskset is missing (util-linux): servers and generator are pinned to separate cores."
command -v cc > /dev/null || die "cc is missing: the load tools are C."
(($(nproc) >= 2)) || die "needs 2 cores: one for the servers, one for the generator."
if ((use_libcoap)) && ! command -v coap-server-notls > /dev/null; then
  die "coap-server-notls is missing: sudo apt-get install -y libcoap3-bin, or pass --no-libcoap."
fi

make_work server-load

cc -O2 -o "$work/coap-udp-load" "$tools/coap-udp-load.c"
cc -O2 -o "$work/udp-echo" "$tools/udp-echo.c"
((use_tcp)) && cc -O2 -o "$work/coap-tcp-load" "$tools/coap-tcp-load.c"
((use_tcp && use_echo)) && cc -O2 -o "$work/tcp-echo" "$tools/tcp-echo.c"
((${#rates[@]})) && cc -O2 -o "$work/coap-rate-load" "$tools/coap-rate-load.c"
for rate in "${rates[@]}"; do [[ "$rate" =~ ^[1-9][0-9]*$ ]] || die "--rate takes whole requests per second, such as 20000 or 5000,20000"; done

if ((${#dlls[@]} == 0)); then
  echo "Building the sample server of $repo in Release..."
  dotnet build -c Release --nologo -v q "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "the Release build failed"; }
  labels=(this-tree) dlls=("$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll") pre_tcp=(0)
fi
if ((use_aot)); then
  echo "Publishing the sample server of $repo with Native AOT..."
  dotnet publish -c Release -r linux-x64 --nologo -v q -o "$work/aot" "$repo/samples/CoapNet.Samples.Server" > "$work/publish.log" 2>&1 \
    || { cat "$work/publish.log" >&2; die "the Native AOT publish failed (it needs clang, or -p:CppCompilerAndLinker=gcc)"; }
  labels+=(this-tree-aot) dlls+=("$work/aot/CoapNet.Samples.Server") pre_tcp+=(0)
fi
for dll in "${dlls[@]}"; do [[ -f "$dll" ]] || die "no such server DLL or executable: $dll"; done

# A port free for UDP and TCP on 127.0.0.1: ephemeral-range ports are what the kernel hands out, so stay below it.
# Sets $port (not echoed: a command substitution's subshell would lose the list of ports taken).
used_ports=" "
free_port() {
  while :; do
    port=$((20000 + RANDOM % 12000))
    [[ "$used_ports" == *" $port "* ]] && continue
    ss -Hlnut "sport = :$port" 2> /dev/null | grep -q . && continue
    used_ports+="$port "
    return
  done
}

names=() ports=() tports=() paths=() spids=() cmds=()
start_server() { # name path tcp command... (tcp: "same" for the UDP port, "own" for @TPORT@, "none", "only": no UDP)
  local name=$1 path=$2 tcp=$3 port tport=
  shift 3
  free_port
  if [[ $tcp == only ]]; then
    tport=$port port=
  elif [[ $tcp == same ]]; then
    tport=$port
  elif [[ $tcp == own ]]; then
    local udp=$port
    free_port # sets $port: take it as the TCP port and restore the UDP one
    tport=$port port=$udp
  fi
  local args=("${@//@PORT@/$port}")
  args=("${args[@]//@TPORT@/${tport:-0}}")
  taskset -c 0 "${args[@]}" > "$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  wait_answering "$name" "$pid" "${port:-tcp:$tport}" "$path"
  names+=("$name") ports+=("$port") tports+=("$tport") paths+=("$path") spids+=("$pid") cmds+=("$(printf '%q ' "${args[@]}")")
}
# Ready when it answers: coap-udp-load (coap-tcp-load for a port given as tcp:PORT) exits 0 once any response came back.
wait_answering() { # name pid port path
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$2" 2> /dev/null || { cat "$work/$1.log" >&2; die "$1 exited at start"; }
    if [[ $3 == tcp:* ]]; then
      sleep 0.5
      taskset -c 1 "$work/coap-tcp-load" -h 127.0.0.1 -p "${3#tcp:}" -u "$4" -c 1 -w 1 -d 1 > /dev/null 2>&1 && return
    else
      taskset -c 1 "$work/coap-udp-load" -h 127.0.0.1 -p "$3" -u "$4" -c 1 -w 1 -d 1 -t 500 > /dev/null 2>&1 && return
    fi
  done
  die "$1 did not answer on 127.0.0.1:$3 within 60 s"
}
# Server i stopped and started again with the same command and port (libcoap-fresh, before each of its rounds).
restart_server() {
  local i=$1 pid=${spids[$1]}
  kill "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  eval "exec taskset -c 0 ${cmds[i]}" >> "$work/${names[i]}.log" 2>&1 &
  pid=$!
  pids+=("$pid") spids[i]=$pid
  wait_answering "${names[i]}" "$pid" "${ports[i]:-tcp:${tports[i]}}" "${paths[i]}"
}

if ((use_echo)); then start_server udp-echo / none "$work/udp-echo" @PORT@; fi
if ((use_echo && use_tcp)); then start_server tcp-echo / only "$work/tcp-echo" @TPORT@; fi
if ((use_libcoap)); then start_server libcoap / same coap-server-notls -A 127.0.0.1 -p @PORT@ -v 0; fi
if ((use_fresh)); then start_server libcoap-fresh / same coap-server-notls -A 127.0.0.1 -p @PORT@ -v 0; fi
for i in "${!dlls[@]}"; do
  run=("${dlls[i]}") # a native executable runs as it is
  [[ "${dlls[i]}" == *.dll ]] && run=(dotnet "${dlls[i]}")
  # coaps, coaps+tcp, coap+ws and the explorer off in the builds that have them: several builds side by side would all
  # ask for ports 5684 and 8683 (Kestrel would take a share of the core too), and the rounds do not use them.
  for option in dtls-port tls-port http-port; do takes_option "${dlls[i]}" "$option" && run+=("--$option" 0); done
  if ((pre_tcp[i])); then
    start_server "${labels[i]}" /hello none "${run[@]}" --address 127.0.0.1 --port @PORT@
  elif ((use_tcp)); then
    start_server "${labels[i]}" /hello own "${run[@]}" --address 127.0.0.1 --port @PORT@ --tcp-port @TPORT@
  else
    start_server "${labels[i]}" /hello none "${run[@]}" --address 127.0.0.1 --port @PORT@ --tcp-port 0
  fi
done

# "tid switches" for every thread of the process (a thread that ends meanwhile is skipped, not an error).
switches() { for f in /proc/"$1"/task/*/status; do awk -v t="${f%/status}" '/^voluntary_ctxt_switches/ { n = split(t, p, "/"); print p[n], $2 }' "$f" 2> /dev/null || true; done; }
hz=$(getconf CLK_TCK)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "coap-udp-load -c C -w $window -d $seconds at C = ${sockets_counts[*]}; $rounds rounds per server, type and C; servers on core 0, generator on core 1"
((use_tcp)) && echo "TCP: coap-tcp-load -c $tcp_connections -w $tcp_window -d $seconds against the servers that speak coap+tcp"
((${#rates[@]})) && echo "paced: coap-rate-load -r R -d $seconds at R = ${rates[*]} requests/s, CON, on enough sockets for the Message IDs"
((${#rates[@]} && use_tcp)) && echo "paced TCP: coap-rate-load -T -r R -c $tcp_connections -d $seconds at R = ${rates[*]} requests/s"
echo "servers: $(for i in "${!names[@]}"; do printf '%s (pid %s, port %s, %s) ' "${names[i]}" "${spids[i]}" "${ports[i]}" "${paths[i]}"; done)"

for i in "${!names[@]}"; do
  [[ -z "${ports[i]}" ]] && continue # TCP only
  ((warmup > 0)) && taskset -c 1 "$work/coap-udp-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -c "$max_sockets" -w "$window" -d "$warmup" > /dev/null || true
done

results="$work/results.tsv"
printf 'round\tsockets\ttype\tserver\trps\tp50_us\tp99_us\ttimeouts\trss_kb\tload1_start\tload1_end\tbehind_us\trenewed\tcpu_us\tsleeps_per_1000\tbad\tunavailable\tempty_acks\n' | tee "$results"

# One recorded round: round, client sockets (connections for TCP), type, server index.
measure() {
  local r=$1 c=$2 type=$3 i=$4 out before after rps t0 t1 dv pid
  [[ ${names[i]} == libcoap-fresh ]] && restart_server "$i"
  pid=${spids[i]}
  wait_for_quiet
  kill -0 "$pid" 2> /dev/null || die "${names[i]} (pid $pid) is gone before round $r, $c sockets, $type: $(tail -3 "$work/${names[i]}.log")"
  before=$(load1)
  t0=$(cpu_ticks "$pid")
  switches "$pid" > "$work/switches0"
  case $type in
    TCP) out=$(taskset -c 1 "$work/coap-tcp-load" -h 127.0.0.1 -p "${tports[i]}" -u "${paths[i]}" -c "$c" -w "$tcp_window" -d "$seconds" -s || true) ;;
    CON@*) out=$(taskset -c 1 "$work/coap-rate-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -r "${type#CON@}" -c "$c" -d "$seconds" || true) ;;
    TCP@*) out=$(taskset -c 1 "$work/coap-rate-load" -T -h 127.0.0.1 -p "${tports[i]}" -u "${paths[i]}" -r "${type#TCP@}" -c "$c" -d "$seconds" || true) ;;
    NON) out=$(taskset -c 1 "$work/coap-udp-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -c "$c" -w "$window" -d "$seconds" -n || true) ;;
    *) out=$(taskset -c 1 "$work/coap-udp-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -c "$c" -w "$window" -d "$seconds" || true) ;;
  esac
  t1=$(cpu_ticks "$pid")
  switches "$pid" > "$work/switches1"
  after=$(load1)
  rps=$(field "$out" rps)
  dv=$(awk 'NR == FNR { before[$1] = $2; next } { s += $2 - before[$1] } END { print s + 0 }' "$work/switches0" "$work/switches1")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$type" "${names[i]}" "${rps:-0}" "$(field "$out" p50_us)" "$(field "$out" p99_us)" \
    "$(field "$out" timeouts)" "$(rss_kb "$pid")" "$before" "$after" "$(field "$out" behind_us)" "$(field "$out" renewed)" \
    "$(awk -v d=$((t1 - t0)) -v hz="$hz" -v ok="$(field "$out" ok)" 'BEGIN { printf "%.2f", (ok > 0 ? d * 1e6 / hz / ok : 0) }')" \
    "$(awk -v d="$dv" -v ok="$(field "$out" ok)" 'BEGIN { printf "%.1f", (ok > 0 ? d * 1000 / ok : 0) }')" \
    "$(field "$out" bad)" "$(field "$out" unavailable)" "$(field "$out" empty_acks)" | tee -a "$results"
}

# The series, in the order of the tables: "type sockets".
series=()
for c in "${sockets_counts[@]}"; do series+=("CON $c" "NON $c"); done
((use_tcp)) && series+=("TCP $tcp_connections")
for rate in "${rates[@]}"; do series+=("CON@$rate $((rate * 247 / 65536 + 128))"); done
if ((use_tcp)); then for rate in "${rates[@]}"; do series+=("TCP@$rate $tcp_connections"); done; fi

for ((r = 1; r <= rounds; r++)); do
  for s in "${series[@]}"; do
    read -r type c <<< "$s"
    for i in "${!names[@]}"; do
      [[ $type == TCP* && -z "${tports[i]}" ]] && continue
      [[ $type != TCP* && -z "${ports[i]}" ]] && continue
      measure "$r" "$c" "$type" "$i"
    done
  done
done

# Medians over the rounds, then each server against udp-echo and libcoap, and each CoapNet build against the first.
echo
echo "Medians over $rounds rounds (RSS: the largest sampled; renewed: client sockets coap-udp-load replaced to keep Message IDs fresh):"
echo
echo "| sockets | type | server | req/s | p50 | p99 | timeouts | renewed | RSS | generator behind (paced) | 1-min load at round starts | CPU µs / request | sleeps / 1,000 | bad (5.03) | empty ACKs |"
echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"
sel() { awk -F'\t' -v t="$type" -v c="$c" -v s="$name" -v k="$1" 'NR > 1 && $3 == t && $2 == c && $4 == s { print $k }' "$results"; }
declare -A med med99
for s in "${series[@]}"; do
  read -r type c <<< "$s"
  for name in "${names[@]}"; do
    [[ -n "$(sel 5)" ]] || continue
    rps=$(sel 5 | median) p50=$(sel 6 | median) p99=$(sel 7 | median) to=$(sel 8 | median) renewed=$(sel 13 | median)
    rss=$(sel 9 | sort -g | tail -1) loads=$(sel 10 | paste -sd' ')
    behind=-
    [[ $type == *@* ]] && behind="$(awk -v v="$(sel 12 | median)" 'BEGIN { printf "%.2f ms", v / 1000 }')"
    [[ $type == TCP* || $type == CON@* ]] && renewed=-
    med[$s,$name]=$rps med99[$s,$name]=$p99
    cpu=$(sel 14 | median) sleeps=$(sel 15 | median) bad="$(sel 16 | median) ($(sel 17 | median))" acks=$(sel 18 | median)
    [[ $type == TCP* || $type == CON@* ]] && bad=- acks=-
    printf '| %s | %s | %s | %.0f | %.2f ms | %.2f ms | %.0f | %s | %.0f MB | %s | %s | %.2f | %.1f | %s | %s |\n' "$c" "$type" "$name" "$rps" "$(awk -v v="$p50" 'BEGIN { print v / 1000 }')" \
      "$(awk -v v="$p99" 'BEGIN { print v / 1000 }')" "$to" "$renewed" "$(awk -v v="$rss" 'BEGIN { print v / 1024 }')" "$behind" "$loads" "$cpu" "$sleeps" "$bad" "$acks"
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "Median req/s side by side, and each CoapNet build against libcoap, the limit (udp-echo, tcp-echo for TCP) and the first build:"
echo
header="| sockets | type |" rule="|---:|---|"
for name in "${names[@]}"; do header+=" $name |" rule+="---:|"; done
for i in "${!labels[@]}"; do
  ((use_libcoap)) && header+=" ${labels[i]} / libcoap |" rule+="---:|"
  ((use_fresh)) && header+=" ${labels[i]} / libcoap-fresh |" rule+="---:|"
  ((use_echo)) && header+=" ${labels[i]} / echo |" rule+="---:|"
  ((i > 0)) && header+=" ${labels[i]} / ${labels[0]} |" rule+="---:|"
done
echo "$header"
echo "$rule"
for s in "${series[@]}"; do
  read -r type c <<< "$s"
  [[ $type == *@* ]] && continue # the same offered load for all: compared by p99 below
  line="| $c | $type |"
  for name in "${names[@]}"; do
    if [[ -n "${med[$s,$name]:-}" ]]; then line+=" $(printf '%.0f' "${med[$s,$name]}") |"; else line+=" - |"; fi
  done
  for i in "${!labels[@]}"; do
    own=${med[$s,${labels[i]}]:-0}
    if ((use_libcoap)); then line+=" $(ratio "$own" "${med[$s,libcoap]:-0}")x |"; fi
    if ((use_fresh)); then line+=" $(ratio "$own" "${med[$s,libcoap-fresh]:-0}")x |"; fi
    if ((use_echo)); then if [[ $type == TCP ]]; then line+=" $(ratio "$own" "${med[$s,tcp-echo]:-0}")x |"; else line+=" $(ratio "$own" "${med[$s,udp-echo]:-0}")x |"; fi; fi
    if ((i > 0)); then line+=" $(ratio "$own" "${med[$s,${labels[0]}]:-0}")x |"; fi
  done
  echo "$line"
done
if ((${#rates[@]})); then
  echo
  echo "Paced rounds, the same offered load for every server: median p99 against libcoap's and udp-echo's"
  for s in "${series[@]}"; do
    read -r type c <<< "$s"
    [[ $type == *@* ]] || continue
    for i in "${!labels[@]}"; do
      line="  $type ${labels[i]}:"
      ((use_libcoap)) && line+=" $(ratio "${med99[$s,${labels[i]}]}" "${med99[$s,libcoap]}")x libcoap's p99,"
      ((use_fresh)) && line+=" $(ratio "${med99[$s,${labels[i]}]}" "${med99[$s,libcoap-fresh]}")x libcoap-fresh's p99,"
      ((use_echo)) && [[ $type == CON@* ]] && line+=" $(ratio "${med99[$s,${labels[i]}]}" "${med99[$s,udp-echo]}")x udp-echo's p99,"
      echo "${line%,}"
    done
  done
fi
