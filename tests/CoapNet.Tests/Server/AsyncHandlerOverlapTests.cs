using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// An async handler that awaits holds no worker: a thousand of them in flight, far more than the
/// cores and than MaxDegreeOfParallelism, do not stop a fast route from answering, and every one of
/// them is answered once it completes.
/// </summary>
public sealed class AsyncHandlerOverlapTests
{
    private const int Awaiting = 1000;

    /// <summary>A thousand handlers on a loaded machine: a longer liveness bound than the suite's default.</summary>
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task AFastRouteAnswersWhileAThousandAsyncHandlersAwait()
    {
        TaskCompletionSource gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
        int entered = 0;
        CoapServerOptions options = LoopbackServer.Options(maxPendingRequests: 4 * Awaiting, maxDegreeOfParallelism: 1, separateResponseDelay: TimeSpan.FromMinutes(5));
        await using LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapGet("/slow", async (request, cancellationToken) =>
                {
                    Interlocked.Increment(ref entered);
                    await gate.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
                    return CoapResponse.Content("slow " + request.GetQueryValue("n"));
                });
                s.MapGet("/hello", request => CoapResponse.Content("hello"));
            },
            options);
        using RawPeer peer = new(server.EndPoint);

        // In batches, so the kernel's socket buffer never drops one; every handler starts, though only one
        // synchronous handler may run at a time: an awaiting one holds no worker.
        for (int i = 0; i < Awaiting; i++)
        {
            await peer.SendAsync(peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, $"/slow?n={i}", (byte)i));
            if (i % 50 == 49)
            {
                int sent = i + 1;
                await Wait.UntilAsync(() => Volatile.Read(ref entered) == sent, within: Liveness);
            }
        }

        server.Server.PendingRequests.Should().Be(Awaiting);

        await using CoapClient client = new();
        CoapResponse hello = await client.GetAsync(server.Uri("/hello")).WaitAsync(TimeSpan.FromSeconds(30));

        hello.GetPayloadString().Should().Be("hello");
        gate.Task.IsCompleted.Should().BeFalse("the fast route was answered while every slow handler still awaited");

        // Released, every one is answered (a burst of a thousand answers may overflow the test socket's
        // kernel buffer, so the server's own count is what says all were answered).
        gate.SetResult();
        await Wait.UntilAsync(() => server.Server.PendingRequests == 0, within: Liveness);
        (await peer.ReceiveAsync()).Message.GetPayloadString().Should().StartWith("slow ");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ABlockedSynchronousHandlerDelaysNoOtherRoute(bool otherIsSynchronous)
    {
        // One call at a time per route: /blocking holds its only thread, with two more requests queued behind it.
        using ManualResetEventSlim release = new();
        using SemaphoreSlim entered = new(0);
        await using LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapGet("/blocking", request =>
                {
                    entered.Release();
                    release.Wait(TimeSpan.FromSeconds(30));
                    return CoapResponse.Content("unblocked");
                });
                if (otherIsSynchronous)
                {
                    s.MapGet("/other", _ => CoapResponse.Content("other"));
                }
                else
                {
                    s.MapGet("/other", async (request, cancellationToken) =>
                    {
                        await Task.Yield();
                        return CoapResponse.Content("other");
                    });
                }
            },
            LoopbackServer.Options(maxDegreeOfParallelism: 1, separateResponseDelay: TimeSpan.FromMinutes(5)));
        using RawPeer peer = new(server.EndPoint);
        try
        {
            for (byte token = 1; token <= 3; token++)
            {
                await peer.SendAsync(peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, "/blocking", token));
            }

            (await entered.WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();

            await using CoapClient client = new();
            CoapResponse answer = await client.GetAsync(server.Uri("/other")).WaitAsync(TimeSpan.FromSeconds(30));
            answer.GetPayloadString().Should().Be("other");
        }
        finally
        {
            release.Set();
        }

        // The blocked route then serves its own queue in turn.
        for (int i = 0; i < 3; i++)
        {
            (await peer.ReceiveAsync()).Message.GetPayloadString().Should().Be("unblocked");
        }
    }
}
