// gc-pauses TRACE.nettrace: every garbage collection in a trace of the runtime's GC events, with its pause (from the
// suspension of managed threads to their restart), what it promoted by root kind (3 = from older generations, through
// the card table), the generations' sizes after it, then the pauses by generation and the sampled allocations by type.
//
// The trace (the server must allow EventSource: the sample server is built with PublishAot, which turns it off, so set
// "System.Diagnostics.Tracing.EventSource.IsSupported": true in its runtimeconfig.json for the run):
//   dotnet-trace collect -p PID --providers "Microsoft-Windows-DotNETRuntime:0x1:5" --duration 00:00:00:40 -o gc.nettrace
//   dotnet run -c Release --project benchmarks/tools/gc-pauses -- gc.nettrace
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

if (args.Length != 1 || !File.Exists(args[0]))
{
    Console.Error.WriteLine("usage: gc-pauses TRACE.nettrace (a dotnet-trace with Microsoft-Windows-DotNETRuntime:0x1:5)");
    return 2;
}

using EventPipeEventSource source = new(args[0]);
ClrTraceEventParser clr = new(source);
double suspendedAt = 0;
int generation = -1;
string reason = "";
Dictionary<int, long> promotedByRoot = [];
List<(int Generation, double Milliseconds)> pauses = [];
Dictionary<string, long> allocated = [];

clr.GCSuspendEEStart += e => suspendedAt = e.TimeStampRelativeMSec;
clr.GCStart += e =>
{
    generation = e.Depth;
    reason = $"{e.Reason}/{e.Type}";
    promotedByRoot.Clear();
};
clr.GCMarkWithType += e => promotedByRoot[e.Type] = promotedByRoot.GetValueOrDefault(e.Type) + e.Promoted;
clr.GCHeapStats += e => Console.WriteLine(
    $"          after: gen0 {e.GenerationSize0 >> 20} MB, gen1 {e.GenerationSize1 >> 20} MB, gen2 {e.GenerationSize2 >> 20} MB, LOH {e.GenerationSize3 >> 20} MB; " +
    $"promoted from gen0 {e.TotalPromotedSize0 >> 10} KB, gen1 {e.TotalPromotedSize1 >> 10} KB; GC handles {e.GCHandleCount}, sync blocks {e.SinkBlockCount}");
clr.GCRestartEEStop += e =>
{
    double milliseconds = e.TimeStampRelativeMSec - suspendedAt;
    pauses.Add((generation, milliseconds));
    string roots = string.Join(' ', promotedByRoot.OrderBy(p => p.Key).Select(p => $"{p.Key}={p.Value >> 10}K"));
    Console.WriteLine($"{suspendedAt / 1000,8:F2} s gen{generation} pause {milliseconds,7:F1} ms {reason}; promoted by root kind: {roots}");
};
clr.GCAllocationTick += e => allocated[e.TypeName ?? "?"] = allocated.GetValueOrDefault(e.TypeName ?? "?") + e.AllocationAmount64;
source.Process();

foreach (IGrouping<int, (int Generation, double Milliseconds)> group in pauses.GroupBy(p => p.Generation).OrderBy(g => g.Key))
{
    List<double> sorted = group.Select(p => p.Milliseconds).Order().ToList();
    Console.WriteLine($"gen{group.Key}: {sorted.Count} collections, pause p50 {sorted[sorted.Count / 2]:F1} ms, max {sorted[^1]:F1} ms, total {sorted.Sum():F0} ms");
}

long total = allocated.Values.Sum();
foreach ((string type, long bytes) in allocated.OrderByDescending(p => p.Value).Take(25))
{
    Console.WriteLine($"allocated {bytes * 100.0 / total,5:F1} % {type}");
}

return 0;
