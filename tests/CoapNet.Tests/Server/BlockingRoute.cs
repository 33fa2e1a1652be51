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

    /// <summary>Completes when a handler sees its cancellation token fire.</summary>
    public Task Canceled => _canceled.Task;

    public void Map(CoapServer server) => server.MapGet("/block", async (request, cancellationToken) =>
    {
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
