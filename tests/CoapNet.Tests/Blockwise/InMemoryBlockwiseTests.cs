using System.Net;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Blockwise;

/// <summary>What the block-wise tests share: a client and a server address on an in-memory network in virtual time, the deterministic body, and a GET.</summary>
public abstract class InMemoryBlockwiseTests : IDisposable
{
    protected static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");

    protected static readonly IPEndPoint ClientAddress = InMemoryNetwork.EndPoint("10.0.0.1");

    private protected InMemoryBlockwiseTests(bool deliversImmediately) => Network = new InMemoryNetwork(Time) { DeliversImmediately = deliversImmediately };

    private protected ManualTimeProvider Time { get; } = new();

    private protected InMemoryNetwork Network { get; }

    /// <summary>Runs a server's handlers when the test pumps it (given as CoapServerOptions.Scheduler), on the test's thread.</summary>
    private protected ManualTaskScheduler Scheduler { get; } = new();

    /// <summary>Disposed in reverse order at the end of the test.</summary>
    private protected List<IDisposable> Owned { get; } = [];

    public void Dispose()
    {
        // What a server under the scheduler still holds is answered first: stopping waits for it.
        Scheduler.RunUntilIdle();
        for (int i = Owned.Count - 1; i >= 0; i--)
        {
            Owned[i].Dispose();
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>Settles the server (on <see cref="Scheduler"/>) and the network; <paramref name="pending"/> is then answered.</summary>
    private protected async Task<T> Served<T>(Task<T> pending)
    {
        Scheduler.Settle(Network);
        pending.IsCompleted.Should().BeTrue("the server has answered once it and the network are quiet");
        return await pending;
    }

    /// <summary>
    /// Pumps the network and the server's scheduler on this thread until <paramref name="pending"/> completes; time moves
    /// on, half a second at a time, only when both are quiet and the transfer still waits (a retransmission, a pause).
    /// </summary>
    private protected async Task<T> RunInVirtualTime<T>(Task<T> pending)
    {
        for (int step = 0; step < 200_000 && !pending.IsCompleted; step++)
        {
            if (Scheduler.RunUntilIdle() + Network.DeliverAll() == 0)
            {
                Time.Advance(TimeSpan.FromMilliseconds(500));
            }
        }

        pending.IsCompleted.Should().BeTrue("the transfer ends in virtual time");
        return await pending;
    }

    /// <summary>The byte at offset i is i mod 251, as the sample's /large serves.</summary>
    private protected static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }

    private protected static CoapMessage Get(string pathAndQuery)
    {
        int query = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get };
        request.UriPath = query < 0 ? pathAndQuery : pathAndQuery[..query];
        if (query >= 0)
        {
            request.UriQuery = pathAndQuery[(query + 1)..];
        }

        return request;
    }
}
