# Sourced by the load scripts (server-load.sh, dtls-load.sh, fleet.sh): the work directory and the servers' clean-up, and the
# readings every script takes the same way, so a fix to one is a fix to all. Not a script of its own.

# make_work NAME: a temporary directory in $work and an empty $pids; at exit (or Ctrl-C) every process whose id the
# script added to $pids is killed and reaped (only those: the servers it started), then the directory goes.
make_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  pids=() moved=()
  trap cleanup_work EXIT
  trap 'exit 130' INT TERM
}

cleanup_work() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  for tid in "${moved[@]}"; do taskset -p -c "$all_cores" "$tid" > /dev/null 2>&1 || true; done
  rm -rf "$work"
}

# quiet_core0: every thread of the machine that may run on every core moves off core 0 until the script exits (then
# back), so the server pinned there shares it only with what the run started and with per-CPU kernel threads (those
# stay: they are bound to their core). On the sandbox these runs were made in, the sandbox agent's threads (nice -10)
# and the kernel's DAMON thread took core 0 for 20-60 ms at a time, which a fleet's report latency showed as bursts
# (benchmarks/RESULTS.md, "Who takes the server's core"). Needs root for other users' threads; one that refuses stays.
# Every core (nproc --all: this script's own thread is among those moved, and nproc would then count one) is where a
# moved thread was free to run, so it is where cleanup_work puts it back.
quiet_core0() {
  local n rest status tid
  n=$(nproc --all) all_cores="0-$((n - 1))"
  rest="1-$((n - 1))"
  ((n == 2)) && rest=1
  for status in /proc/[0-9]*/task/[0-9]*/status; do
    [[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "$status" 2> /dev/null)" == "$all_cores" ]] || continue
    tid=${status%/status} tid=${tid##*/}
    taskset -p -c "$rest" "$tid" > /dev/null 2>&1 && moved+=("$tid")
  done
  echo "quiet core 0: ${#moved[@]} threads moved to cores $rest for the run"
}

# The CPU time (utime + stime, clock ticks, all threads) and resident memory (KB, 0 once it is gone) of process $1.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2> /dev/null || echo 0; }

# field LINE KEY: the value of KEY in a generator's line of key=value pairs.
field() { tr ' ' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# The median of the numbers on standard input, one a line (0 for none).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# takes_option FILE NAME: whether the sample server build FILE (a .dll or a Native AOT executable) takes --NAME; its
# option names are UTF-16 strings in the file. Newer builds open more ports by default (--http-port, since issue 37,
# starts Kestrel on 8683), and a script turns off what its rounds do not use only where the build has the option.
takes_option() {
  local pattern
  pattern=$(sed 's/./&\\x00/g; s/^/-\\x00-\\x00/' <<< "$2")
  LC_ALL=C grep -qaP -- "$pattern" "$1"
}

# The 1-minute load average; wait_for_quiet waits until it is below $max_load, but at most $max_wait seconds (a run then
# goes ahead and records the load it had), so a run on a shared machine starts when the others' work has settled.
load1() { cut -d' ' -f1 /proc/loadavg; }
wait_for_quiet() {
  local waited=0
  while awk -v l="$(load1)" -v m="$max_load" 'BEGIN { exit !(l >= m) }' && ((waited < max_wait)); do
    sleep 5
    waited=$((waited + 5))
  done
}

# Sets $port to a UDP port free on this machine, with the port after it free too (a coap port and its coaps port, as
# libcoap takes them), below the ephemeral range the kernel hands out.
free_udp_pair() {
  while :; do
    port=$((20000 + RANDOM % 12000))
    ss -Hlnu "sport = :$port" 2> /dev/null | grep -q . && continue
    ss -Hlnu "sport = :$((port + 1))" 2> /dev/null | grep -q . && continue
    return 0
  done
}
