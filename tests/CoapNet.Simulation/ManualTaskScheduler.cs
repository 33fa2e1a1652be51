namespace CoapNet.Simulation;

/// <summary>
/// A <see cref="TaskScheduler"/> that runs nothing by itself: tasks queue until the test calls <see cref="RunNext"/>
/// or <see cref="RunUntilIdle"/>, which run them on the calling thread, oldest first. Given to a server as
/// <c>CoapServerOptions.Scheduler</c>, it holds the dispatch block, the blocking lanes and the continuations of
/// awaited handlers, so with an <see cref="InMemoryNetwork"/> and a <see cref="ManualTimeProvider"/> a server test
/// runs on its own thread alone: send, <see cref="Settle"/>, assert; no wall-clock wait, no poll.
/// </summary>
/// <remarks>
/// A task never runs inline (inside the call that queued it or waits for it): only the pump runs work, so what a
/// test observes between two pumps is all there is. While it pumps, the thread's SynchronizationContext is cleared,
/// so an <c>await</c> inside a handler comes back to this scheduler, not to the test framework's context.
/// A handler under test awaits without ConfigureAwait(false), so it resumes here too: a continuation that may not
/// come back is run inline by whoever completes the awaited task, except on a thread with a context (the test's own,
/// under xUnit), which sends it to the thread pool, to run whenever. For the same reason a gate a handler awaits
/// through Task.WaitAsync is a TaskCompletionSource without RunContinuationsAsynchronously. A synchronous handler
/// that blocks would block the test's thread: such tests keep the server's real threads.
/// </remarks>
public sealed class ManualTaskScheduler : TaskScheduler
{
    // Running more than this in one pump means work that queues more work forever.
    private const int MaxTasksPerPump = 1_000_000;

    private readonly Queue<Task> _queue = new();

    /// <summary>How many tasks wait to run.</summary>
    public int QueuedCount
    {
        get
        {
            lock (_queue)
            {
                return _queue.Count;
            }
        }
    }

    /// <summary>One at a time: the pump runs them in turn.</summary>
    public override int MaximumConcurrencyLevel => 1;

    /// <summary>Runs the oldest queued task on this thread (which may queue more, behind the rest).</summary>
    /// <returns>False when nothing was queued.</returns>
    public bool RunNext()
    {
        Task? task;
        lock (_queue)
        {
            if (!_queue.TryDequeue(out task))
            {
                return false;
            }
        }

        SynchronizationContext? context = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(null);
        try
        {
            TryExecuteTask(task);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(context);
        }

        return true;
    }

    /// <summary>Runs queued tasks, and the ones they queue, until none is left.</summary>
    /// <returns>How many ran.</returns>
    public int RunUntilIdle()
    {
        int ran = 0;
        while (RunNext())
        {
            if (++ran > MaxTasksPerPump)
            {
                throw new InvalidOperationException("The scheduler never went idle: its work queues more work forever.");
            }
        }

        return ran;
    }

    /// <summary>
    /// Runs this scheduler and delivers <paramref name="network"/>'s queued datagrams in turn until neither has
    /// anything left: every request sent so far has been handled and every answer it caused has arrived.
    /// </summary>
    /// <param name="network">The network the server's transport is on.</param>
    public void Settle(InMemoryNetwork network)
    {
        ArgumentNullException.ThrowIfNull(network);
        for (int rounds = 0; RunUntilIdle() + network.DeliverAll() > 0; rounds++)
        {
            if (rounds > MaxTasksPerPump)
            {
                throw new InvalidOperationException("The server and the network never went quiet.");
            }
        }
    }

    /// <inheritdoc/>
    protected override void QueueTask(Task task)
    {
        lock (_queue)
        {
            _queue.Enqueue(task);
        }
    }

    /// <inheritdoc/>
    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) => false;

    /// <inheritdoc/>
    protected override IEnumerable<Task> GetScheduledTasks()
    {
        lock (_queue)
        {
            return _queue.ToArray();
        }
    }
}
