namespace CoapNet.Server;

/// <summary>
/// Runs the server's synchronous handlers on threads of their own, at most <see cref="MaximumConcurrencyLevel"/>,
/// started when work arrives and ended after <see cref="IdleExit"/> without any. On thread-pool threads, handlers
/// that block (a database call, Thread.Sleep) took the pool's minimum threads, which is the processor count, as is
/// the default MaxDegreeOfParallelism: receive loops and async handlers then waited up to a second for the pool to
/// inject more (issue 11, RESULTS.md). Needs no disposal: an idle server holds no thread here.
/// </summary>
internal sealed class BlockingHandlerScheduler(int maxThreads, TimeSpan? idleExit = null) : TaskScheduler
{
    private readonly Queue<Task> _queue = new();
    private int _threads;
    private int _waiting;

    /// <summary>How long a thread waits for work before it ends (default 10 s).</summary>
    public TimeSpan IdleExit { get; } = idleExit ?? TimeSpan.FromSeconds(10);

    /// <summary>The threads running now, waiting or working.</summary>
    public int ThreadCount
    {
        get
        {
            lock (_queue)
            {
                return _threads;
            }
        }
    }

    /// <inheritdoc/>
    public override int MaximumConcurrencyLevel => maxThreads;

    /// <inheritdoc/>
    protected override void QueueTask(Task task)
    {
        bool start = false;
        lock (_queue)
        {
            _queue.Enqueue(task);

            // Threads still counted as waiting have not taken a task yet: only more tasks than that need a new one.
            if (_waiting >= _queue.Count)
            {
                Monitor.Pulse(_queue);
            }
            else if (_threads < maxThreads)
            {
                _threads++;
                start = true;
            }
        }

        if (start)
        {
            new Thread(Work) { IsBackground = true, Name = "CoapNet blocking handlers" }.Start();
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

    private void Work()
    {
        while (true)
        {
            Task task;
            lock (_queue)
            {
                while (_queue.Count == 0)
                {
                    _waiting++;
                    bool pulsed = Monitor.Wait(_queue, IdleExit);
                    _waiting--;
                    if (!pulsed && _queue.Count == 0)
                    {
                        _threads--;
                        return;
                    }
                }

                task = _queue.Dequeue();
            }

            TryExecuteTask(task);
        }
    }
}
