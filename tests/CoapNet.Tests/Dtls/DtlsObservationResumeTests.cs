using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Our client's observation over coaps outlives its DTLS session, over real loopback sockets: when the server restarts
/// on the same port (with close_notify, or silently, as after a crash), or either side ages the session out, the client
/// registers again in a new session (RFC 7641 section 3.3.1) and the same <c>await foreach</c> goes on; and a request
/// pending in a lost session fails saying so. The clocks that a test waits out (session ageing, the client's CoAP
/// timers) are manual.
/// </summary>
public sealed class DtlsObservationResumeTests
{
    [Fact]
    public async Task AnObservationResumesInANewSessionWhenTheServerRestartsOnTheSamePort()
    {
        Counter before = new();
        // Its port from below the ephemeral range: the restarted server binds it again, and a port the system handed out
        // could go to another test's socket in between.
        LoopbackServer first = DtlsLoopback.StartServer(before.Map, out _, port: FreePorts.UdpAndTcp());
        IPEndPoint server = first.EndPoint;
        await using CoapClient client = DtlsLoopback.Client();
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(DtlsLoopback.Uri(server, "/counter")).GetAsyncEnumerator();
        (await observation.NextAsync()).GetPayloadString().Should().Be("0");
        for (int i = 1; i <= 5; i++)
        {
            before.Increment();
            (await observation.NextAsync()).GetPayloadString().Should().Be(i.ToString(CultureInfo.InvariantCulture));
        }

        uint lastBefore = observation.Current.Observe!.Value;

        // Every session state goes with the server: its close_notify tells the client, which handshakes again.
        await first.DisposeAsync();
        Counter after = new();
        await using LoopbackServer second = DtlsLoopback.StartServer(after.Map, out DtlsServerTransport restarted, port: server.Port);

        (await observation.NextAsync()).GetPayloadString().Should().Be("0", "the registration went again, to the new server");
        observation.Current.Observe.Should().BeLessThan(lastBefore, "the new registration's sequence starts afresh (RFC 7641 section 3.4) and is not dropped as stale");
        restarted.SessionCount.Should().Be(1, "the client handshook with the new server");
        after.Sessions.Should().ContainSingle().Which.Identity!.ToString().Should().Contain(DtlsLoopback.Identity);
        for (int i = 1; i <= 3; i++)
        {
            after.Increment();
            (await observation.NextAsync()).GetPayloadString().Should().Be(i.ToString(CultureInfo.InvariantCulture), "each notification of the new server reaches the same loop");
        }

        await observation.DisposeAsync();
        await Wait.UntilAsync(() => second.Server.Observations == 0, "leaving the loop to deregister in the new session");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task AnObservationResumesWhenEitherSideAgesTheSessionOutWithCloseNotify(bool byClient)
    {
        // The side that ages the session out does it on a manual clock; the other keeps real time.
        ManualTimeProvider time = new();
        DtlsServerOptions options = DtlsLoopback.ServerOptions(byClient ? null : time);
        options.SessionIdleTimeout = TimeSpan.FromMinutes(10);
        Counter counter = new();
        await using LoopbackServer server = DtlsLoopback.StartServer(counter.Map, out DtlsServerTransport transport, options);
        await using CoapClient client = DtlsLoopback.Client(options: byClient ? new DtlsClientOptions { TimeProvider = time, SessionIdleTimeout = TimeSpan.FromMinutes(10) } : null);
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(DtlsLoopback.Uri(server.EndPoint, "/counter")).GetAsyncEnumerator();
        (await observation.NextAsync()).GetPayloadString().Should().Be("0");
        counter.Increment();
        (await observation.NextAsync()).GetPayloadString().Should().Be("1");

        // To the ageing and not past it: the sweep (every minute here) that finds the session 10 minutes idle is the last
        // timer this advance fires. The client handshakes again at once, and a longer advance would go on firing the
        // clock's timers meanwhile: on the server's side, the new handshake's HandshakeStallTimeout, which failed it
        // as stalled.
        time.Advance(TimeSpan.FromMinutes(10));

        (await observation.NextAsync()).GetPayloadString().Should().Be("1", "the client registered again, in a new session, and got the current state");
        counter.Sessions.Distinct().Should().HaveCount(2, "the registration came again in a second session");
        counter.Increment();
        (await observation.NextAsync()).GetPayloadString().Should().Be("2");
        server.Server.Observations.Should().Be(1, "the aged session's registration went with it, and only the new one is notified");
        transport.SessionCount.Should().Be(1);
    }

    [Fact]
    public async Task ARequestPendingInASessionTheServerClosedFailsWithTheSessionLostAndItsAlertNotATimeout()
    {
        ManualTimeProvider serverTime = new();
        DtlsServerOptions options = DtlsLoopback.ServerOptions(serverTime);
        options.SessionIdleTimeout = TimeSpan.FromMinutes(10);
        TaskCompletionSource release = new(TaskCreationOptions.RunContinuationsAsynchronously);
        TaskCompletionSource reached = new(TaskCreationOptions.RunContinuationsAsynchronously);
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s => s.MapGet("/slow", async (_, _) =>
            {
                reached.TrySetResult();
                await release.Task;
                return CoapResponse.Content("late");
            }),
            out _,
            options);
        await using CoapClient client = DtlsLoopback.Client();
        Task<CoapResponse> pending = client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/slow"));
        await reached.Task.WaitAsync(Wait.DefaultBound);

        serverTime.Advance(TimeSpan.FromMinutes(11));

        Func<Task> answer = () => pending.WaitAsync(Wait.DefaultBound);
        CoapConnectionException lost = (await answer.Should().ThrowAsync<CoapConnectionException>()).Which;
        lost.Message.Should().Contain("DTLS session").And.Contain("close_notify");
        lost.RemoteEndPoint.Should().Be(server.EndPoint);
        release.SetResult();
    }

    [Fact]
    public async Task AnObservationWhoseServerLostTheSessionSilentlyResumesOnceItsReregistrationGoesUnacknowledged()
    {
        ManualTimeProvider time = new();
        Counter before = new();
        SilenceableUdpTransport network = new(FreePorts.UdpAndTcp());
        LoopbackServer first = LoopbackServer.Start(before.Map, new CoapServerOptions().Listen(new DtlsServerTransport(network, DtlsLoopback.ServerOptions())));
        IPEndPoint server = first.EndPoint;
        ClientHellos hellos = new();
        await using CoapClient client = ClientOnClock(time, hellos.Network);
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(DtlsLoopback.Uri(server, "/counter")).GetAsyncEnumerator();
        (await observation.NextAsync()).GetPayloadString().Should().Be("0");
        before.Increment();
        (await observation.NextAsync()).GetPayloadString().Should().Be("1");
        int handshaken = hellos.Count;

        // A crash: not even close_notify leaves, and the server that takes the port knows nothing of the session.
        network.Silent = true;
        await first.DisposeAsync();
        Counter after = new();
        await using LoopbackServer second = DtlsLoopback.StartServer(after.Map, out DtlsServerTransport restarted, port: server.Port);
        await AdvanceUntilAsync(time, () => hellos.Count > handshaken, "the client to give the lost session up and handshake again");

        (await observation.NextAsync()).GetPayloadString().Should().Be("0", "the registration went again, in a new session with the new server");
        restarted.SessionCount.Should().Be(1);
        after.Increment();
        (await observation.NextAsync()).GetPayloadString().Should().Be("1");

        await observation.DisposeAsync();
        await Wait.UntilAsync(() => second.Server.Observations == 0, "leaving the loop to deregister in the new session");
    }

    [Fact]
    public async Task ARequestInASessionTheServerLostSilentlyFailsWithTheSessionLostAndTheNextOneHandshakesAgain()
    {
        ManualTimeProvider time = new();
        SilenceableUdpTransport network = new(FreePorts.UdpAndTcp());
        LoopbackServer first = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("first")), new CoapServerOptions().Listen(new DtlsServerTransport(network, DtlsLoopback.ServerOptions())));
        IPEndPoint server = first.EndPoint;
        await using CoapClient client = ClientOnClock(time, new SilenceableUdpTransport());
        Uri uri = DtlsLoopback.Uri(server, "/x");
        (await client.GetAsync(uri)).GetPayloadString().Should().Be("first");
        network.Silent = true;
        await first.DisposeAsync();
        await using LoopbackServer second = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("second")), out _, port: server.Port);

        Task<CoapResponse> pending = client.GetAsync(uri);
        await AdvanceUntilAsync(time, () => pending.IsCompleted, "the request to fail");

        Func<Task> answer = () => pending.WaitAsync(Wait.DefaultBound);
        (await answer.Should().ThrowAsync<CoapConnectionException>()).Which.Message.Should().Contain("DTLS session").And.Contain("acknowledged no confirmable message");
        (await client.GetAsync(uri).WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("second", "the next request made a new session with the new server");
    }

    /// <summary>
    /// A coaps client over <paramref name="network"/> whose CoAP timers (retransmission, Max-Age silence) run on
    /// <paramref name="time"/>; handshakes keep real time.
    /// </summary>
    internal static CoapClient ClientOnClock(ManualTimeProvider time, IDatagramTransport network)
        => new(
            new DtlsClientTransport(network, new DtlsClientOptions { PskIdentity = DtlsLoopback.Identity, PskKey = DtlsLoopback.Key }),
            new CoapClientOptions { Endpoint = new CoapEndpointOptions { TimeProvider = time } });

    /// <summary>
    /// Moves the client's clock a second at a time until <paramref name="done"/>: its Max-Age silence, then the
    /// retransmissions of a confirmable message that goes unacknowledged, until the client gives the session up. Then
    /// the clock stops, so what follows in the new session waits in real time and no retransmission of it falls due.
    /// </summary>
    internal static Task AdvanceUntilAsync(ManualTimeProvider time, Func<bool> done, string what)
        => Wait.UntilAsync(
            () =>
            {
                if (done())
                {
                    return true;
                }

                time.Advance(TimeSpan.FromSeconds(1));
                return false;
            },
            what);

    /// <summary>Counts the ClientHellos sent through <see cref="Network"/>: each handshake sends one, and one more with the server's cookie.</summary>
    internal sealed class ClientHellos
    {
        private int _count;

        public ClientHellos() => Network = new SilenceableUdpTransport { OnSending = (datagram, _) => Note(datagram) };

        public SilenceableUdpTransport Network { get; }

        public int Count => Volatile.Read(ref _count);

        private void Note(ReadOnlySpan<byte> datagram)
        {
            if (CoapNet.Dtls.Sessions.DtlsRecords.IsClientHello(datagram))
            {
                Interlocked.Increment(ref _count);
            }
        }
    }

    /// <summary>An observable GET /counter that records the session of every request its handler answers (notifications too).</summary>
    private sealed class Counter
    {
        private long _value;
        private CoapRouteBuilder? _route;

        public ConcurrentQueue<CoapSecurityContext> Sessions { get; } = new();

        public void Map(CoapServer server)
            => _route = server.MapGet("/counter", request =>
            {
                Sessions.Enqueue(request.Peer.SecurityContext!);
                return CoapResponse.Content(Interlocked.Read(ref _value).ToString(CultureInfo.InvariantCulture));
            }).Observable();

        public void Increment()
        {
            Interlocked.Increment(ref _value);
            _route!.NotifyObservers();
        }
    }
}
