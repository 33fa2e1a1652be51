#!/usr/bin/env bash
# A fleet on one host (issue 41): N secure devices, each with its own PSK identity and key, reporting to the CoapNet
# sample server over coaps once a period, a tenth of them observed by dashboards, with the server's memory and CPU
# sampled throughout; optionally a reconnect storm, and the same fleet against libcoap's coap-server-openssl.
#
#   benchmarks/fleet.sh [--devices N] [--minutes D] [--period P] [--dashboards K] [--devices-each M] [--no-observers]
#                       [--storm-at S] [--storm-window W] [--in-flight A] [--rate R] [--servers LIST] [--dll PATH]
#                       [--server-env "K=V ..."] [--max-load L] [--max-wait S] [--label TEXT] [--quiet-core]
#
#   --devices N      devices (default 1000), dev-000001 ... in the key file this script writes (16-byte keys derived
#                    from the identities); 250 a source address from 127.1.0.1 upwards, a UDP socket each
#   --minutes D      minutes of reporting once every device is up (default 2)
#   --period P       seconds between a device's reports (default 60), with 10% jitter
#   --dashboards K, --devices-each M   K CoapClients (benchmarks/CoapNet.Scenarios fleet-observers), each over coaps
#                    under its own identity dash-NNN, observing M devices' /fleet/{identity} (defaults 100 and 100, so
#                    10,000 observations: the server's default total and per-peer limits); K is cut to N / M
#   --no-observers   no dashboards
#   --storm-at S     S seconds after every device is up, a reconnect storm: every device drops its session within
#                    --storm-window W seconds (default 60) and handshakes again (coap-fleet --storm-at)
#   --in-flight A, --rate R   handshakes at setup: at most A at once (default 64), at most R begun a second (default
#                    no bound)
#   --servers LIST   the servers to run the fleet against, one after the other, comma-separated (default coapnet):
#                    coapnet, the sample server; libcoap, coap-server-openssl (libcoap 4.3.1), fresh: it takes one pre-shared key
#                    for every identity (-k), so that run's key file gives every device and dashboard that one key, and
#                    it has no /fleet resource, so the devices PUT (it creates a resource per path with -d, and answers
#                    POST with 4.05); its command line has no bound on sessions to raise (the library's
#                    coap_context_set_max_idle_sessions is not exposed) and it forgets a session idle for 300 s
#   --dll PATH       a CoapNet.Samples.Server.dll; default: this tree's, built in Release
#   --server-env "K=V ..."   the CoapNet server's environment (default: none, the runtime's own GC sizing; "" the
#                    same); e.g. "DOTNET_GCgen0size=100000 DOTNET_GCRegionSize=100000", docs/DEPLOYMENT.md's 1 MiB gen0
#                    budget for small servers, which a fleet's heap of sessions makes pay a collection every few reports
#   --max-load L, --max-wait S   wait until the 1-minute load average is below L (default 1.0) before each run, at
#                    most S seconds (default 300); the load is recorded either way
#   --label TEXT     part of the results folder's name (default: the server and N)
#   --quiet-core     every other thread that may run on any core is moved off the server's core 0 for the run
#                    (load-common.sh quiet_core0; root), so the p99 measures the server, not a neighbour on its core
#
# The server runs on core 0 (taskset), the generator (benchmarks/tools/coap-fleet.c) and the dashboards on core 1. Every 10 s the
# server's RSS and CPU time and the generator's CPU time go to samples.csv in benchmarks/results/fleet/<UTC time>-<label>/,
# beside the generator's and the dashboards' own lines (generator.txt, observers.txt, and timeline.txt: responses a second,
# those slower than 5 and 10 ms at the device's socket, the slowest) and summary.txt:
#   - server RSS over the run (min / max), per device (after setup minus before the first handshake, over N), and its
#     drift over the last 20 minutes of the run (or the whole reporting phase when shorter): last sample against first
#   - server CPU per report: its CPU time over the reporting phase over the reports answered meanwhile (the dashboards'
#     notifications included, as they are part of what a report costs the server)
#   - p99 report latency (first transmission to response, CON retransmissions per RFC 7252 section 4.2 included)
#   - notification lag p99 (a notification's arrival minus the report's send time in its SenML reading)
#   - with --storm-at: the handshake rate over the storm (peak and mean per second), when every device was back, and the
#     server's RSS during it
#   - the generator's CPU and RSS per device, since it shares the machine
#
# Needs: cc, taskset, OpenSSL's headers (Debian: libssl-dev), dotnet; coap-server-openssl (libcoap3-bin) for --servers libcoap.
# 100,000 devices: the generator raises its open-file limit past the hard limit when it may (root with CAP_SYS_RESOURCE),
# and otherwise runs the fleet over as many processes as the limit requires.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/benchmarks/tools"
# shellcheck source=load-common.sh
. "$repo/benchmarks/load-common.sh"
devices=1000 minutes=2 period=60 dashboards=100 each=100 observers=1 storm_at="" storm_window=60 in_flight=64 rate=0
servers=coapnet dll="" server_env="" max_load=1.0 max_wait=300 label="" quiet=0
# libcoap's -k takes the key as text: these 16 bytes, in hex for the key file.
shared_text=fleet-shared-key shared_hex=666c6565742d7368617265642d6b6579

die() { echo "fleet: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --devices) devices=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --period) period=$2; shift 2 ;;
    --dashboards) dashboards=$2; shift 2 ;;
    --devices-each) each=$2; shift 2 ;;
    --no-observers) observers=0; shift ;;
    --storm-at) storm_at=$2; shift 2 ;;
    --storm-window) storm_window=$2; shift 2 ;;
    --in-flight) in_flight=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --dll) dll=$2; shift 2 ;;
    --server-env) server_env=$2; shift 2 ;;
    --max-load) max_load=$2; shift 2 ;;
    --max-wait) max_wait=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --quiet-core) quiet=1; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
for v in devices minutes period dashboards each storm_window in_flight; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "--${v//_/-} takes a whole number from 1 up"
done
[[ -z "$storm_at" || "$storm_at" =~ ^[0-9]+$ ]] || die "--storm-at takes whole seconds"
[[ "$rate" =~ ^[0-9]+$ ]] || die "--rate takes whole handshakes a second"
((devices <= 999999)) || die "--devices takes at most 999,999 (dev-NNNNNN)"
((dashboards * each <= devices)) || dashboards=$((devices / each))
((dashboards >= 1)) || observers=0
((dashboards <= 250)) || die "--dashboards takes at most 250 (a source address 127.2.0.k each)"
command -v taskset > /dev/null || die "taskset is missing (util-linux)"
command -v cc > /dev/null || die "cc is missing: the generator is C"
(($(nproc) >= 2)) || die "needs 2 cores: one for the server, one for the generator and the dashboards"
IFS=, read -r -a server_list <<< "$servers"
((${#server_list[@]})) || die "--servers takes coapnet, libcoap or both, comma-separated"
with_coapnet=0
for s in "${server_list[@]}"; do
  case "$s" in
    coapnet) with_coapnet=1 ;;
    libcoap) command -v coap-server-openssl > /dev/null || die "coap-server-openssl is missing: sudo apt-get install -y libcoap3-bin" ;;
    *) die "--servers takes coapnet and libcoap, comma-separated, not '$s'" ;;
  esac
done

make_work fleet
cc -O2 -Wall -Wextra -o "$work/coap-fleet" "$tools/coap-fleet.c" -lssl -lcrypto || die "coap-fleet did not build (Debian: sudo apt-get install -y libssl-dev)"
cc -O2 -o "$work/coap-dtls-load" "$tools/coap-dtls-load.c" -lssl -lcrypto
if ((with_coapnet)); then
  if [[ -z "$dll" ]]; then
    echo "Building the sample server of $repo in Release..."
    dotnet build -c Release --nologo -v q "$repo/samples/CoapNet.Samples.Server" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "the Release build failed"; }
    dll="$repo/samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll"
  fi
  [[ -f "$dll" ]] || die "no such server: $dll"
fi
scenarios="$repo/benchmarks/CoapNet.Scenarios/bin/Release/net10.0/CoapNet.Scenarios.dll"
if ((observers)); then
  echo "Building the scenarios in Release (the dashboards)..."
  dotnet build -c Release --nologo -v q "$repo/benchmarks/CoapNet.Scenarios" > "$work/build-scenarios.log" 2>&1 || { cat "$work/build-scenarios.log" >&2; die "the scenarios' Release build failed"; }
fi

"$work/coap-fleet" --write-keys "$work/keys.txt" "$devices" --dashboards "$dashboards"
"$work/coap-fleet" --write-keys "$work/shared-keys.txt" "$devices" --dashboards "$dashboards" --shared-key "$shared_hex"
key_of() { awk -v id="$2" '$1 == id { print $2 }' "$1"; }
# The generator's CPU ticks and RSS: its own and its worker processes' (it splits the fleet over processes when one
# process may not hold a socket per device).
tree() { echo "$1 $(cat "/proc/$1/task/$1/children" 2> /dev/null)"; }
# A worker that has just exited reads as nothing: counted as 0.
tree_cpu_ticks() { local t=0 p c; for p in $(tree "$1"); do c=$(cpu_ticks "$p" 2> /dev/null); t=$((t + ${c:-0})); done; echo "$t"; }
tree_rss_kb() { local t=0 p; for p in $(tree "$1"); do t=$((t + $(rss_kb "$p"))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
stamp=$(date -u +%Y%m%dT%H%MZ)
((quiet)) && quiet_core0

# Starts server NAME with key file KEYS; sets $spid and $sport (coaps). Ready once a device's GET is answered over coaps.
start_server() {
  local name=$1 keys=$2 path=/fleet/dev-000001 i
  free_udp_pair
  if [[ $name == coapnet ]]; then
    sport=$port
    local run=("$dll")
    [[ "$dll" == *.dll ]] && run=(dotnet "$dll")
    # coap+ws and the explorer (--http-port, since issue 37) off: Kestrel would take port 8683 and a share of the core.
    takes_option "$dll" http-port && run+=(--http-port 0)
    local env_args=()
    read -r -a env_args <<< "$server_env"
    env "${env_args[@]}" taskset -c 0 "${run[@]}" --address 127.0.0.1 --port 0 --tcp-port 0 --tls-port 0 \
      --dtls-port "$sport" --psk-file "$keys" > "$out/server.log" 2>&1 &
  else
    # libcoap serves coaps on the port after its coap port; -k the one key for every identity; -d: a resource per PUT path.
    sport=$((port + 1)) path=/
    taskset -c 0 coap-server-openssl -A 127.0.0.1 -p "$port" -k "$shared_text" -d $((devices + 16)) -v 0 > "$out/server.log" 2>&1 &
  fi
  spid=$!
  pids+=("$spid")
  for ((i = 0; i < 120; i++)); do
    kill -0 "$spid" 2> /dev/null || { cat "$out/server.log" >&2; die "$name exited at start"; }
    taskset -c 1 "$work/coap-dtls-load" -p "$sport" -u "$path" -i dev-000001 -x "$(key_of "$keys" dev-000001)" -c 1 -d 1 > /dev/null 2>&1 && return
    sleep 0.5
  done
  die "$name did not answer coaps on 127.0.0.1:$sport"
}

# One fleet against server NAME: the generator, the dashboards once every device is up, the sampler; then the summary.
run_fleet() {
  local name=$1 keys=$2 extra=() gpid opid t0 base setup_line t_setup cpu_setup ok_setup summary storm
  out="$repo/benchmarks/results/fleet/$stamp-${label:-$name-$devices}"
  [[ $name == libcoap && -n "$label" ]] && out+="-libcoap"
  mkdir -p "$out"
  wait_for_quiet
  echo "== $name: $devices devices, a report each ${period}s, ${minutes} min; load $(load1) at $(date -u +%H:%M:%S) UTC; results in ${out#"$repo"/}"
  start_server "$name" "$keys"
  sleep 2
  base=$(rss_kb "$spid")
  [[ -n "$storm_at" ]] && extra+=(--storm-at "$storm_at" --storm-window "$storm_window")
  [[ $name == libcoap ]] && extra+=(--put)
  ((rate > 0)) && extra+=(-r "$rate")
  t0=$(date +%s)
  taskset -c 1 "$work/coap-fleet" -p "$sport" -K "$keys" -n "$devices" -d $((minutes * 60)) -P "$period" -a "$in_flight" "${extra[@]}" --timeline "$out/timeline.txt" > "$out/generator.txt" 2> "$out/generator.err" &
  gpid=$!
  pids+=("$gpid")

  printf 't_s\tphase\tserver_rss_kb\tserver_cpu_ticks\tgenerator_cpu_ticks\tgenerator_rss_kb\tload1\n' > "$out/samples.csv"
  local phase=setup opid=""
  while kill -0 "$gpid" 2> /dev/null; do
    if [[ $phase == setup ]] && grep -q '^setup ' "$out/generator.txt"; then
      phase=report
      setup_line=$(grep '^setup ' "$out/generator.txt")
      t_setup=$(($(date +%s) - t0)) cpu_setup=$(cpu_ticks "$spid") ok_setup=$(field "$setup_line" ok)
      echo "   up: $setup_line"
      if ((observers)); then
        taskset -c 1 dotnet "$scenarios" fleet-observers --server "coaps://127.0.0.1:$sport" --keys "$keys" --dashboards "$dashboards" \
          --devices-each "$each" --seconds $((minutes * 60 - 20)) > "$out/observers.txt" 2> "$out/observers.err" &
        opid=$!
        pids+=("$opid")
      fi
    fi
    grep -q '^storm_begins' "$out/generator.txt" && [[ $phase == report ]] && phase=storm
    grep -q '^storm ' "$out/generator.txt" && [[ $phase == storm ]] && phase=after-storm
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $(($(date +%s) - t0)) "$phase" "$(rss_kb "$spid")" "$(cpu_ticks "$spid" 2> /dev/null || echo 0)" \
      "$(tree_cpu_ticks "$gpid")" "$(tree_rss_kb "$gpid")" "$(load1)" >> "$out/samples.csv"
    sleep 10 & wait $! || true
  done
  wait "$gpid" || true
  local cpu_end
  cpu_end=$(cpu_ticks "$spid")
  [[ -n "$opid" ]] && { wait "$opid" || true; }
  cp "$out/server.log" "$out/server.log.txt" 2> /dev/null && rm -f "$out/server.log"
  kill "$spid" 2> /dev/null || true
  wait "$spid" 2> /dev/null || true

  summary=$(grep '^summary ' "$out/generator.txt" || true)
  storm=$(grep '^storm ' "$out/generator.txt" || true)
  [[ -n "$summary" ]] || { tail -5 "$out/generator.err" >&2; echo "fleet: the generator printed no summary" >&2; return; }
  local obs="" csv="$out/samples.csv" run_s=$((minutes * 60))
  [[ -f "$out/observers.txt" ]] && obs=$(grep '^summary ' "$out/observers.txt" || true)
  {
    echo "$name, $devices devices, period ${period}s, ${minutes} min of reports$([[ -n "$storm_at" ]] && echo ", storm at ${storm_at}s over ${storm_window}s"); server environment: ${server_env:-the runtime defaults}; core 0 $( ((quiet)) && echo "quieted (${#moved[@]} threads moved off)" || echo "shared as it was"); started $(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ), load at start $(awk -F'\t' 'NR == 2 { print $7 }' "$csv")"
    echo "generator: $setup_line"
    echo "generator: $summary"
    [[ -n "$storm" ]] && echo "generator: $storm" && grep '^storm_hps=' "$out/generator.txt"
    [[ -n "$obs" ]] && echo "dashboards: $(grep '^registered ' "$out/observers.txt")" && echo "dashboards: $obs"
    awk -F'\t' -v base="$base" -v n="$devices" -v t_setup="$t_setup" -v window=1200 -v run_s="$run_s" -v hz="$hz" '
      NR == 1 { next }
      { rss = $3 / 1024; if (min == "" || rss < min) min = rss; if (rss > max) max = rss }
      $2 == "report" && setup_rss == "" { setup_rss = $3 }
      $2 == "storm" && $3 / 1024 > storm_max { storm_max = $3 / 1024 }
      $1 >= t_setup { t[++k] = $1; r[k] = $3 / 1024 }
      END {
        printf "server RSS: %.0f MB before the fleet, min %.0f MB, max %.0f MB; %.2f KB a device after setup ((RSS at setup - before) / N)\n", base / 1024, min, max, (setup_rss - base) / n
        if (k > 1) {
          first = 1; while (first < k && t[k] - t[first] > window) first++
          printf "server RSS drift over the last %.0f min: %.0f MB -> %.0f MB (%+.1f%%)\n", (t[k] - t[first]) / 60, r[first], r[k], (r[k] - r[first]) * 100 / r[first]
        }
        if (storm_max > 0) printf "server RSS during the storm: max %.0f MB\n", storm_max
      }' "$csv"
    local ok_end reports
    ok_end=$(field "$summary" ok)
    reports=$((ok_end - ok_setup))
    awk -v d=$((cpu_end - cpu_setup)) -v hz="$hz" -v n="$reports" 'BEGIN { if (n > 0) printf "server CPU per report: %.0f us (%.1f s over %d reports answered after setup, notifications included)\n", d * 1e6 / hz / n, d / hz, n }'
    echo "p99 report latency: $(awk -v v="$(field "$summary" p99_us)" 'BEGIN { printf "%.2f ms", v / 1000 }') (p50 $(awk -v v="$(field "$summary" p50_us)" 'BEGIN { printf "%.2f ms", v / 1000 }'), p99.9 $(awk -v v="$(field "$summary" p999_us)" 'BEGIN { printf "%.2f ms", v / 1000 }')); timeouts $(field "$summary" timeouts), sessions lost $(field "$summary" lost)"
    echo "p99 report latency at the device's socket (the kernel's arrival stamp, without the generator's wait for its core): $(awk -v v="$(field "$summary" wire_p99_us)" 'BEGIN { printf "%.2f ms", v / 1000 }') (p50 $(awk -v v="$(field "$summary" wire_p50_us)" 'BEGIN { printf "%.2f ms", v / 1000 }'), p99.9 $(awk -v v="$(field "$summary" wire_p999_us)" 'BEGIN { printf "%.2f ms", v / 1000 }'))"
    # The 10-second intervals of the reporting phase: how often a p99 stays under 10 ms, and the worst.
    awk '/^setup / { on = 1; next } on && /^status / && /up=/ {
        for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "p99_us") p = kv[2]; if (kv[1] == "wire_p99_us") w = kv[2] }
        n++; if (p < 10000) under++; if (w < 10000) wunder++; if (p > pmax) pmax = p; if (w > wmax) wmax = w }
      END { if (n) printf "10 s intervals while reporting: %d; p99 under 10 ms in %d (at the socket: %d); worst p99 %.1f ms (at the socket %.1f ms)\n", n, under, wunder, pmax / 1000, wmax / 1000 }' "$out/generator.txt"
    [[ -n "$obs" ]] && echo "notification lag p99: $(field "$obs" lag_p99_ms) ms (p50 $(field "$obs" lag_p50_ms) ms, $(field "$obs" notifications) notifications)"
    [[ -n "$storm" ]] && echo "storm: $(field "$storm" hs_peak_per_s) handshakes/s at the peak, $(field "$storm" hs_mean_per_s)/s on average; every device back after $(field "$storm" all_back_s) s (-1: not all)"
    echo "generator: $(field "$summary" cpu_s) s of CPU ($(field "$summary" cpu_us_per_report) us a report), $(field "$summary" rss_per_device_b) B of RSS a device"
  } | tee "$out/summary.txt"
}

echo "machine: $(nproc --all) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr); $(openssl version 2> /dev/null || echo 'openssl ?')"
for s in "${server_list[@]}"; do
  if [[ $s == coapnet ]]; then run_fleet coapnet "$work/keys.txt"; else run_fleet libcoap "$work/shared-keys.txt"; fi
done
exit 0
