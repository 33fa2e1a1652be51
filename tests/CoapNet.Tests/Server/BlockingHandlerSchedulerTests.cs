using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// Synchronous handlers run on threads of their own, at most MaxDegreeOfParallelism per route, so handlers that
/// block never hold the thread pool's threads or another route's; the threads end when idle.
/// </summary>
public sealed class BlockingHandlerSchedulerTests
{
    [Fact]
    public async Task ASynchronousHandlerRunsOffTheThreadPool()
    {
        bool? onPool = null;
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/where", _ =>
        {
            onPool = Thread.CurrentThread.IsThreadPoolThread;
            return CoapResponse.Content("here");
        }));
        using RawPeer peer = new(server.EndPoint);

        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/where", token: 1));

        (await peer.ReceiveAsync()).Message.GetPayloadString().Should().Be("here");
        onPool.Should().BeFalse();
    }

    [Fact]
    public async Task AtMostTheLimitRunsAtOnceAndIdleThreadsEnd()
    {
        BlockingHandlerScheduler scheduler = new(maxThreads: 2, idleExit: TimeSpan.FromMilliseconds(200));
        TaskFactory factory = new(scheduler);
        using SemaphoreSlim release = new(0);
        int running = 0;
        int most = 0;

        Task[] blocked = new Task[5];
        for (int i = 0; i < blocked.Length; i++)
        {
            blocked[i] = factory.StartNew(() =>
            {
                int now = Interlocked.Increment(ref running);
                InterlockedMax(ref most, now);
                release.Wait();
                Interlocked.Decrement(ref running);
            });
        }

        await Wait.UntilAsync(() => Volatile.Read(ref running) == 2);
        scheduler.ThreadCount.Should().Be(2);
        release.Release(blocked.Length);
        await Task.WhenAll(blocked);

        most.Should().Be(2, "five blocking tasks share the two threads");
        await Wait.UntilAsync(() => scheduler.ThreadCount == 0);
        await factory.StartNew(() => { });
        scheduler.ThreadCount.Should().BeInRange(0, 1, "work after an idle spell starts a thread again");
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int current;
        while ((current = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }
}
