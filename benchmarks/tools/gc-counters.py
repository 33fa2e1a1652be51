#!/usr/bin/env python3
# gc-counters.py COUNTERS.csv [STEP]: a server's garbage collector over a run, one line every STEP samples (default 6:
# a minute at dotnet-counters' 10 s), from a dotnet-counters CSV of its System.Runtime meter:
#   dotnet-counters collect -p PID --counters System.Runtime --refresh-interval 10 --format csv -o counters.csv
# (the sample server is built with PublishAot, which turns EventSource off: set
# "System.Diagnostics.Tracing.EventSource.IsSupported": true in its runtimeconfig.json for the run).
# Columns, in MB: the working set, the GC's committed memory, each generation's size after the last collection (gen2's
# includes its fragmentation, frag2), the large and pinned object heaps; then the gen2 collections and the lock
# contentions since the line before.
import csv, sys, collections
rows = collections.OrderedDict()
want = {
 'dotnet.process.memory.working_set (By)': 'ws',
 'dotnet.gc.last_collection.memory.committed_size (By)': 'commit',
 'dotnet.gc.last_collection.heap.size (By)[gc.heap.generation=gen0]': 'g0',
 'dotnet.gc.last_collection.heap.size (By)[gc.heap.generation=gen1]': 'g1',
 'dotnet.gc.last_collection.heap.size (By)[gc.heap.generation=gen2]': 'g2',
 'dotnet.gc.last_collection.heap.size (By)[gc.heap.generation=loh]': 'loh',
 'dotnet.gc.last_collection.heap.size (By)[gc.heap.generation=poh]': 'poh',
 'dotnet.gc.last_collection.heap.fragmentation.size (By)[gc.heap.generation=gen2]': 'f2',
 'dotnet.gc.collections ({collection} / 10 sec)[gc.heap.generation=gen2]': 'c2',
 'dotnet.gc.collections ({collection} / 10 sec)[gc.heap.generation=gen1]': 'c1',
 'dotnet.monitor.lock_contentions ({contention} / 10 sec)': 'lock',
}
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 5 or r[2] not in want: continue
    rows.setdefault(r[0], {})[want[r[2]]] = float(r[4])
step = int(sys.argv[2]) if len(sys.argv) > 2 else 6
keys = list(rows)
c2 = lock = 0
print('time      ws MB commit g0 g1 g2 frag2 loh poh | gen2 GCs, lock contentions since the last line')
for i, k in enumerate(keys):
    v = rows[k]; c2 += v.get('c2', 0); lock += v.get('lock', 0)
    if i % step == 0:
        M = lambda n: v.get(n, 0) / 2**20
        print(f"{k[11:19]} {M('ws'):6.0f} {M('commit'):6.0f} {M('g0'):4.0f} {M('g1'):4.0f} {M('g2'):5.0f} {M('f2'):5.0f} {M('loh'):4.0f} {M('poh'):4.0f} | {c2:3.0f} {lock:7.0f}")
        c2 = lock = 0
