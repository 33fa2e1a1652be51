using System.Collections.Concurrent;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// GET /block?n=N: a handler that signals when it starts, then waits until the test releases it
/// (or the server aborts it), and answers "done N". Lets a test hold the pipeline full for exactly
/// as long as it needs, without timing.
/// </summary>
internal sealed class BlockingRoute : IDisposable
{
    private readonly TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _canceled = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly SemaphoreSlim _entered = new(0);
    private readonly ConcurrentQueue<string?> _reached = new();
    private int _waiting;
    private int _mostWaiting;

    /// <summary>Completes when a handler sees its cancellation token fire.</summary>
    public Task Canceled => _canceled.Task;

    /// <summary>The n of every request that reached the handler, in the order they reached it.</summary>
    public IReadOnlyList<string?> Reached => [.. _reached];

    /// <summary>The most handlers that were ever waiting for the release at the same time.</summary>
    public int MostWaiting => Volatile.Read(ref _mostWaiting);

    public void Map(CoapServer server) => server.MapGet("/block", async (request, cancellationToken) =>
    {
        _reached.Enqueue(request.GetQueryValue("n"));
        int waiting = Interlocked.Increment(ref _waiting);
        for (int most = Volatile.Read(ref _mostWaiting); waiting > most; most = Volatile.Read(ref _mostWaiting))
        {
            if (Interlocked.CompareExchange(ref _mostWaiting, waiting, most) == most)
            {
                break;
            }
        }

        _entered.Release();
        try
        {
            await _release.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            _canceled.TrySetResult();
            throw;
        }
        finally
        {
            Interlocked.Decrement(ref _waiting);
        }

        return CoapResponse.Content("done " + request.GetQueryValue("n"));
    });

    /// <summary>Waits until a handler has started (fails the test after 10 s).</summary>
    public async Task WaitUntilEnteredAsync()
    {
        bool entered = await _entered.WaitAsync(TimeSpan.FromSeconds(10));
        entered.Should().BeTrue("the handler was expected to start");
    }

    /// <summary>Lets every waiting and future handler answer.</summary>
    public void Release() => _release.TrySetResult();

    public void Dispose()
    {
        Release();
        _entered.Dispose();
    }
}
