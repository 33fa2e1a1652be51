using System.Threading.Tasks.Dataflow;

namespace CoapNet.Server;

/// <summary>
/// One lane per route handler for the server's synchronous handlers: each lane runs its handler on at most
/// <c>parallelism</c> threads of its own (a <see cref="BlockingHandlerScheduler"/>, started as work comes and
/// ended when idle), so a route whose handler blocks (a database call, Thread.Sleep) queues only its own
/// requests. With one lane for all, a synchronous GET /hello waited behind every sleeping handler: 25 s at 500
/// of them in flight (issue 11, RESULTS.md). Lanes exist only for handlers that were called, and their number is
/// bounded by the routes the owner maps, never by what a peer sends. A <c>scheduler</c> given (tests only) replaces
/// every lane's threads.
/// </summary>
internal sealed class SynchronousLanes(Action<CoapServer.SyncWork> run, int parallelism, TaskScheduler? scheduler = null)
{
    private readonly List<ActionBlock<CoapServer.SyncWork>> _lanes = [];
    private bool _completed;

    /// <summary>Queues <paramref name="work"/> on its handler's lane; false once the lanes are completed (the server is stopping).</summary>
    public bool Post(RouteHandler handler, CoapServer.SyncWork work)
        => (handler.Lane ?? Open(handler)) is { } lane && lane.Post(work);

    /// <summary>Ends every lane: work already queued still runs, new work is refused.</summary>
    public void Complete()
    {
        lock (_lanes)
        {
            _completed = true;
            foreach (ActionBlock<CoapServer.SyncWork> lane in _lanes)
            {
                lane.Complete();
            }
        }
    }

    private ActionBlock<CoapServer.SyncWork>? Open(RouteHandler handler)
    {
        lock (_lanes)
        {
            if (handler.Lane is null && !_completed)
            {
                ActionBlock<CoapServer.SyncWork> lane = new(
                    run,
                    new ExecutionDataflowBlockOptions
                    {
                        MaxDegreeOfParallelism = parallelism,
                        EnsureOrdered = false,
                        TaskScheduler = scheduler ?? new BlockingHandlerScheduler(parallelism),
                    });
                _lanes.Add(lane);
                handler.Lane = lane;
            }

            return handler.Lane;
        }
    }
}
