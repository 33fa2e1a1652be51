using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// A server in virtual time, wired as CONTRIBUTING's "Tests" describes: an <see cref="InMemoryNetwork"/> transport at
/// <see cref="Address"/>, a <see cref="ManualTimeProvider"/> and a <see cref="ManualTaskScheduler"/> (which runs the
/// dispatch block, the blocking lanes and awaited handlers), and a <see cref="TestPeer"/> at 10.0.0.1 to talk to it.
/// </summary>
public sealed class VirtualTimeServer : IDisposable
{
    /// <summary>Where the server listens.</summary>
    public static readonly IPEndPoint Address = InMemoryNetwork.EndPoint("10.0.0.2");

    /// <summary>Maps routes with <paramref name="map"/>, then starts the server and binds the peer.</summary>
    /// <param name="map">Maps the server's routes.</param>
    /// <param name="maxPendingRequests">The server's <see cref="CoapServerOptions.MaxPendingRequests"/>; null for the default.</param>
    /// <param name="deliversImmediately">The network's <see cref="InMemoryNetwork.DeliversImmediately"/>.</param>
    /// <param name="configure">Adjusts the server's options (limits) before it is made; its transport, scheduler and clock stay the test's.</param>
    public VirtualTimeServer(Action<CoapServer> map, int? maxPendingRequests = null, bool deliversImmediately = false, Action<CoapServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(map);
        Network = new InMemoryNetwork(Time) { DeliversImmediately = deliversImmediately };
        CoapServerOptions options = new CoapServerOptions()
        {
            Scheduler = Scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = Time },
        }.Listen(Network.CreateTransport(Address));
        if (maxPendingRequests is int max)
        {
            options.MaxPendingRequests = max;
        }

        configure?.Invoke(options);

        Server = new CoapServer(options);
        map(Server);
        Server.Start();
        Peer = new TestPeer(Network, "10.0.0.1");
    }

    /// <summary>The clock of the server and the network.</summary>
    public ManualTimeProvider Time { get; } = new();

    /// <summary>Where the server's work runs when the test settles it.</summary>
    public ManualTaskScheduler Scheduler { get; } = new();

    /// <summary>The network between the peer and the server.</summary>
    public InMemoryNetwork Network { get; }

    /// <summary>The server, started.</summary>
    public CoapServer Server { get; }

    /// <summary>The test's side of the conversation.</summary>
    public TestPeer Peer { get; }

    /// <summary>Runs the server and delivers datagrams until both are quiet (<see cref="ManualTaskScheduler.Settle"/>).</summary>
    public void Settle() => Scheduler.Settle(Network);

    /// <summary>Sends <paramref name="message"/> from the peer to the server; returns its bytes.</summary>
    public byte[] Send(CoapMessage message) => Peer.Send(message, Address);

    /// <summary>Settles, stops the server (bounded by <see cref="Wait.DefaultBound"/>) and unbinds the peer.</summary>
    public void Dispose()
    {
        Settle();
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        Server.Stop(bound.Token);
        Peer.Dispose();
    }
}
