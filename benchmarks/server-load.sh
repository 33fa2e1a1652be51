#!/usr/bin/env bash
# UDP server throughput: udp-echo (the limit), libcoap's coap-server-notls and one or more builds of
# the CoapNet sample server, under the same closed-loop load from coap-load, in rotation.
#
#   benchmarks/server-load.sh [--dll LABEL=PATH]... [--pre-tcp-dll LABEL=PATH]...
#                             [--rounds N] [--seconds S] [--warmup S] [--sockets C] [--window W]
#                             [--max-load L] [--max-wait S] [--no-libcoap] [--no-udp-echo]
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
#                  "behind" is how far the generator itself ever fell behind its schedule: the noise floor)
#   --rounds N     recorded rounds per server and message type (default 3)
#   --seconds S    length of a round (default 8)
#   --warmup S     one unrecorded CON round per server first, so .NET's tiered JIT has settled (default 3)
#   --sockets C    client sockets (default 512); see "Message IDs" below
#   --window W     requests outstanding per socket (default 2)
#   --max-load L   before each round, wait until the 1-minute load average is below L (default 1.0)
#   --max-wait S   ... but at most S seconds; the round then runs anyway and its load is recorded (default 300)
#   --tcp          also a TCP round per server that speaks coap+tcp (libcoap on the same port, the CoapNet
#                  builds on a --tcp-port of their own), driven by benchmarks/tools/coap-tcp-load.c: C
#                  connections (default 64), each with a CSM first and then W requests pipelined (default
#                  16), so as many requests are outstanding as in the UDP rounds by default
#
# Every server is pinned to core 0 and the generator to core 1 (taskset), all bound to 127.0.0.1.
# The servers run side by side and are measured in turn, round by round, so a change in the
# machine's background load falls on all of them alike instead of on whichever ran last.
#
# Message IDs: a server deduplicates by (peer, Message ID) for EXCHANGE_LIFETIME (247 s, RFC 7252
# 4.8.2). At R requests/s over C sockets each socket uses R/C IDs per second, and its 65,536 IDs
# must last 247 s: C >= R * 247 / 65536, about 380 sockets at 100k requests/s. The default 512
# leaves room; the script warns when a round went faster than the sockets allow.
#
# Needs: cc, taskset, dotnet (for CoapNet), coap-server-notls (libcoap3-bin) unless --no-libcoap.
# The load tools are ../shared/tools/coap-load.c and udp-echo.c relative to the repository root.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/../shared/tools"
rounds=3 seconds=8 warmup=3 sockets=512 window=2 max_load=1.0 max_wait=300
use_libcoap=1 use_echo=1 use_tcp=0 use_aot=0 tcp_connections=64 tcp_window=16 rates=()
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
    --sockets) sockets=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --max-load) max_load=$2; shift 2 ;;
    --max-wait) max_wait=$2; shift 2 ;;
    --no-libcoap) use_libcoap=0; shift ;;
    --no-udp-echo) use_echo=0; shift ;;
    --tcp) use_tcp=1; shift ;;
    --tcp-connections) tcp_connections=$2; shift 2 ;;
    --tcp-window) tcp_window=$2; shift 2 ;;
    --aot) use_aot=1; shift ;;
    --rate) IFS=, read -r -a rates <<< "$2"; shift 2 ;;
    -h | --help) sed -n '2,37p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done

for f in coap-load.c udp-echo.c; do
  [[ -f "$tools/$f" ]] || die "missing $tools/$f: the load tools must sit in ../shared/tools beside the repository root ($repo)."
done
command -v taskset > /dev/null || die "taskset is missing (util-linux): servers and generator are pinned to separate cores."
command -v cc > /dev/null || die "cc is missing: the load tools are C."
(($(nproc) >= 2)) || die "needs 2 cores: one for the servers, one for the generator."
if ((use_libcoap)) && ! command -v coap-server-notls > /dev/null; then
  die "coap-server-notls is missing: sudo apt-get install -y libcoap3-bin, or pass --no-libcoap."
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/server-load.XXXXXX")
pids=()
cleanup() {
  # Only the servers this script started, by their process ids.
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -O2 -o "$work/coap-load" "$tools/coap-load.c"
cc -O2 -o "$work/udp-echo" "$tools/udp-echo.c"
((use_tcp)) && cc -O2 -o "$work/coap-tcp-load" "$repo/benchmarks/tools/coap-tcp-load.c"
((${#rates[@]})) && cc -O2 -o "$work/coap-rate-load" "$repo/benchmarks/tools/coap-rate-load.c"
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

names=() ports=() tports=() paths=() spids=()
start_server() { # name path tcp command... (tcp: "same" for the UDP port, "own" for @TPORT@, "none")
  local name=$1 path=$2 tcp=$3 port tport=
  shift 3
  free_port
  if [[ $tcp == same ]]; then
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
  # Ready when it answers: coap-load exits 0 once any response came back.
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2> /dev/null || { cat "$work/$name.log" >&2; die "$name exited at start"; }
    if taskset -c 1 "$work/coap-load" -h 127.0.0.1 -p "$port" -u "$path" -c 1 -w 1 -d 1 -t 500 > /dev/null 2>&1; then
      names+=("$name") ports+=("$port") tports+=("$tport") paths+=("$path") spids+=("$pid")
      return
    fi
  done
  die "$name did not answer on 127.0.0.1:$port within 60 s"
}

if ((use_echo)); then start_server udp-echo / none "$work/udp-echo" @PORT@; fi
if ((use_libcoap)); then start_server libcoap / same coap-server-notls -A 127.0.0.1 -p @PORT@ -v 0; fi
for i in "${!dlls[@]}"; do
  run=("${dlls[i]}") # a native executable runs as it is
  [[ "${dlls[i]}" == *.dll ]] && run=(dotnet "${dlls[i]}")
  if ((pre_tcp[i])); then
    start_server "${labels[i]}" /hello none "${run[@]}" --address 127.0.0.1 --port @PORT@
  elif ((use_tcp)); then
    start_server "${labels[i]}" /hello own "${run[@]}" --address 127.0.0.1 --port @PORT@ --tcp-port @TPORT@
  else
    start_server "${labels[i]}" /hello none "${run[@]}" --address 127.0.0.1 --port @PORT@ --tcp-port 0
  fi
done

load1() { cut -d' ' -f1 /proc/loadavg; }
wait_for_quiet() {
  local waited=0
  while awk -v l="$(load1)" -v m="$max_load" 'BEGIN { exit !(l >= m) }' && ((waited < max_wait)); do
    sleep 5
    waited=$((waited + 5))
  done
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2> /dev/null || echo 0; }
field() { tr ' ' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "coap-load -c $sockets -w $window -d $seconds; $rounds rounds per server and type; servers on core 0, generator on core 1"
((use_tcp)) && echo "TCP: coap-tcp-load -c $tcp_connections -w $tcp_window -d $seconds against the servers that speak coap+tcp"
((${#rates[@]})) && echo "paced: coap-rate-load -r R -d $seconds at R = ${rates[*]} requests/s, CON, on enough sockets for the Message IDs"
echo "servers: $(for i in "${!names[@]}"; do printf '%s (pid %s, port %s, %s) ' "${names[i]}" "${spids[i]}" "${ports[i]}" "${paths[i]}"; done)"

for i in "${!names[@]}"; do
  ((warmup > 0)) && taskset -c 1 "$work/coap-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -c "$sockets" -w "$window" -d "$warmup" > /dev/null || true
done

results="$work/results.tsv"
printf 'round\ttype\tserver\trps\tp50_us\tp99_us\ttimeouts\trss_kb\tload1_start\tload1_end\tbehind_us\n' | tee "$results"
types=(CON NON)
((use_tcp)) && types+=(TCP)
for rate in "${rates[@]}"; do types+=("CON@$rate"); done
for ((r = 1; r <= rounds; r++)); do
  for type in "${types[@]}"; do
    flag=()
    [[ $type == NON ]] && flag=(-n)
    for i in "${!names[@]}"; do
      [[ $type == TCP && -z "${tports[i]}" ]] && continue
      wait_for_quiet
      before=$(load1)
      if [[ $type == TCP ]]; then
        out=$(taskset -c 1 "$work/coap-tcp-load" -h 127.0.0.1 -p "${tports[i]}" -u "${paths[i]}" -c "$tcp_connections" -w "$tcp_window" -d "$seconds" || true)
      elif [[ $type == CON@* ]]; then
        rate=${type#CON@}
        out=$(taskset -c 1 "$work/coap-rate-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -r "$rate" -c $((rate * 247 / 65536 + 128)) -d "$seconds" || true)
      else
        out=$(taskset -c 1 "$work/coap-load" -h 127.0.0.1 -p "${ports[i]}" -u "${paths[i]}" -c "$sockets" -w "$window" -d "$seconds" "${flag[@]}" || true)
      fi
      after=$(load1)
      rps=$(field "$out" rps)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$type" "${names[i]}" "${rps:-0}" "$(field "$out" p50_us)" "$(field "$out" p99_us)" \
        "$(field "$out" timeouts)" "$(rss_kb "${spids[i]}")" "$before" "$after" "$(field "$out" behind_us)" | tee -a "$results"
      if [[ $type == CON || $type == NON ]] && [[ -n "$rps" ]] && awk -v r="$rps" -v c="$sockets" 'BEGIN { exit !(r * 247 / 65536 > c) }'; then
        echo "  warning: $rps req/s over $sockets sockets reuses Message IDs within EXCHANGE_LIFETIME; raise --sockets" >&2
      fi
    done
  done
done

# Medians over the rounds, then each server against udp-echo and libcoap, and each CoapNet build against the first.
echo
echo "Medians over $rounds rounds (RSS: the largest sampled):"
echo
echo "| server | type | req/s | p50 | p99 | timeouts | RSS | generator behind (paced) | 1-min load at round starts |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A med med99
for type in "${types[@]}"; do
  for name in "${names[@]}"; do
    [[ $type == TCP ]] && ! awk -F'\t' -v s="$name" 'NR > 1 && $2 == "TCP" && $3 == s { found = 1 } END { exit !found }' "$results" && continue
    sel() { awk -F'\t' -v t="$type" -v s="$name" -v c="$1" 'NR > 1 && $2 == t && $3 == s { print $c }' "$results"; }
    rps=$(sel 4 | median) p50=$(sel 5 | median) p99=$(sel 6 | median) to=$(sel 7 | median)
    rss=$(sel 8 | sort -g | tail -1) loads=$(sel 9 | paste -sd' ')
    behind=-
    [[ $type == CON@* ]] && behind="$(awk -v v="$(sel 11 | median)" 'BEGIN { printf "%.2f ms", v / 1000 }')"
    med[$type,$name]=$rps med99[$type,$name]=$p99
    printf '| %s | %s | %.0f | %.2f ms | %.2f ms | %.0f | %.0f MB | %s | %s |\n' "$name" "$type" "$rps" "$(awk -v v="$p50" 'BEGIN { print v / 1000 }')" \
      "$(awk -v v="$p99" 'BEGIN { print v / 1000 }')" "$to" "$(awk -v v="$rss" 'BEGIN { print v / 1024 }')" "$behind" "$loads"
  done
done
echo
echo "Ratios of median req/s:"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
for type in "${types[@]}"; do
  [[ $type == CON@* ]] && continue # the same offered load for all: compared by p99 below
  for i in "${!labels[@]}"; do
    [[ -n "${med[$type,${labels[i]}]:-}" ]] || continue
    line="  $type ${labels[i]}:"
    ((use_echo)) && [[ $type != TCP ]] && line+=" $(ratio "${med[$type,${labels[i]}]}" "${med[$type,udp-echo]}")x udp-echo,"
    ((use_libcoap)) && line+=" $(ratio "${med[$type,${labels[i]}]}" "${med[$type,libcoap]}")x libcoap,"
    ((i > 0)) && line+=" $(ratio "${med[$type,${labels[i]}]}" "${med[$type,${labels[0]}]}")x ${labels[0]}"
    echo "${line%,}"
  done
done
if ((${#rates[@]})); then
  echo
  echo "Paced rounds, the same offered load for every server: median p99 against libcoap's and udp-echo's"
  for type in "${types[@]}"; do
    [[ $type == CON@* ]] || continue
    for i in "${!labels[@]}"; do
      line="  $type ${labels[i]}:"
      ((use_libcoap)) && line+=" $(ratio "${med99[$type,${labels[i]}]}" "${med99[$type,libcoap]}")x libcoap's p99,"
      ((use_echo)) && line+=" $(ratio "${med99[$type,${labels[i]}]}" "${med99[$type,udp-echo]}")x udp-echo's p99,"
      echo "${line%,}"
    done
  done
fi
