#!/usr/bin/env python3
"""Which thread had the server's core while a fleet's reports were slow.

    fleet-bursts.py SLOW_PREFIX [SCHED_TRACE]

SLOW_PREFIX: what `coap-fleet --slow-log SLOW_PREFIX` wrote (SLOW_PREFIX.0, .1, ...: a line for each response slower than
10 ms at the device's socket). The slow responses are grouped into bursts (sends less than 50 ms apart), one line each:
its start (CLOCK_MONOTONIC seconds), how many, over how long, the slowest, how many took over 1 ms to send, and from
which generator workers (a burst in every worker is the server's or its core's; one in a single worker, the generator's).

SCHED_TRACE: `perf script` output of a system-wide trace taken with the same clock during the run, e.g.
    perf record -e sched:sched_switch -a -k CLOCK_MONOTONIC -o sched.data -- sleep 25
    perf script -i sched.data > sched.txt
With it, each burst of 5 or more inside the trace gets, for core 0 (the server's) and core 1 (the generator's), how
many milliseconds each command ran from the burst's first send to its last response.
"""
import collections
import glob
import re
import sys


def read_slow(prefix):
    slow = []
    for path in glob.glob(prefix + '.*'):
        worker = path.rsplit('.', 1)[1]
        for line in open(path):
            parts = line.split()
            if len(parts) == 5:
                sent, send, wire, _, device = (int(p) for p in parts)
                slow.append((sent / 1e6, send / 1e3, wire / 1e3, device, worker))
    return sorted(slow)


def read_runs(path):
    """Per core, the (start, end, command) of every stretch a thread ran, from sched_switch events."""
    line_rx = re.compile(r'^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$')
    switch_rx = re.compile(r'next_comm=(.+?) next_pid=\d+')
    runs, current = collections.defaultdict(list), {}
    for line in open(path):
        match = line_rx.match(line)
        if not match or not match.group(5).startswith('sched:sched_switch'):
            continue
        cpu, time = int(match.group(3)), float(match.group(4))
        following = switch_rx.search(match.group(6))
        if not following:
            continue
        if cpu in current:
            runs[cpu].append((current[cpu][0], time, current[cpu][1]))
        current[cpu] = (time, following.group(1))
    return runs


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    slow = read_slow(sys.argv[1])
    runs = read_runs(sys.argv[2]) if len(sys.argv) == 3 else {}
    first = min((r[0] for r in runs.get(0, [])), default=0)
    last = max((r[1] for r in runs.get(0, [])), default=0)
    bursts, current = [], []
    for answer in slow:
        if current and answer[0] - current[-1][0] > 0.05:
            bursts.append(current)
            current = []
        current.append(answer)
    if current:
        bursts.append(current)
    print(f'{len(slow)} responses over 10 ms in {len(bursts)} bursts' + (f'; trace {first:.3f}-{last:.3f}' if runs else ''))
    for burst in bursts:
        start = burst[0][0]
        end = max(a[0] + a[2] / 1e3 for a in burst)
        workers = collections.Counter(a[4] for a in burst)
        print(f'{start:.3f} n={len(burst)} span={1e3 * (burst[-1][0] - start):.0f}ms slowest={max(a[2] for a in burst):.1f}ms '
              f'send>1ms={sum(1 for a in burst if a[1] > 1)} workers={dict(sorted(workers.items()))}')
        if runs and len(burst) >= 5 and first <= start <= last:
            for cpu in (0, 1):
                ran = collections.Counter()
                for (s, e, command) in runs.get(cpu, []):
                    if e >= start and s <= end:
                        ran[command] += min(e, end) - max(s, start)
                print(f'    core {cpu}, {1e3 * (end - start):.0f} ms: ' + ', '.join(f'{c} {1e3 * t:.1f}' for c, t in ran.most_common(6)))


if __name__ == '__main__':
    main()
