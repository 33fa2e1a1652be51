using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.NoResponse;
using CoapNet.Observe;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.NoResponse;

/// <summary>
/// RFC 7967 section 2 with Observe (RFC 7641) on a server, in virtual time on the in-memory network: the
/// No-Response option of a registration covers its notifications, so an observer that declines 2.xx is
/// registered (its CON gets an empty ACK), hears no success notification, and still hears the error. The server
/// runs on a <see cref="ManualTaskScheduler"/>: each step settles on the test's thread, with no wait.
/// </summary>
public sealed class NoResponseObserveTests : IAsyncLifetime
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private CoapServer? _server;
    private TestPeer? _observer;
    private int _calls;
    private volatile bool _gone;

    public NoResponseObserveTests() => _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

    public Task InitializeAsync()
    {
        _server = new CoapServer(new CoapServerOptions
        {
            Observe = new ObserveOptions(),
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = _time },
        }.Listen(_network.CreateTransport(ServerAddress)));
        _server.MapGet("/state", _ =>
        {
            CoapResponse response = _gone ? new CoapResponse(CoapCode.NotFound) : CoapResponse.Content("on");
            Interlocked.Increment(ref _calls);
            return response;
        }).Observable();
        _server.Start();
        _observer = new TestPeer(_network, "10.0.0.1");
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            _scheduler.Settle(_network);
            await _server.DisposeAsync();
        }

        _observer?.Dispose();
    }

    [Fact]
    public void AnObserverThatDeclinesSuccessIsRegisteredAndHearsOnlyTheErrorNotification()
    {
        CoapServer server = _server!;
        TestPeer observer = _observer!;
        CoapMessage registration = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 0x0700, Token = new byte[] { 0x0B } };
        registration.UriPath = "/state";
        registration.Observe = 0;
        registration.NoResponse = CoapNoResponse.Success;
        observer.Send(registration, ServerAddress);

        Settled(() => observer.Received.Count == 1 && Volatile.Read(ref _calls) == 1, "the registration is handled and acknowledged");
        CoapMessage ack = observer.Received[0].Parsed;
        ack.Type.Should().Be(CoapMessageType.Acknowledgement);
        ack.Code.Should().Be(CoapCode.Empty, "the 2.05 that registers is itself suppressed");
        server.Observations.Should().Be(1, "the registration's response succeeded, so the observer is registered (RFC 7641 section 4.1)");

        // A success notification: its 2.05 is made (the handler runs) and suppressed.
        server.NotifyObservers("/state").Should().Be(1);
        Settled(() => Volatile.Read(ref _calls) == 2, "the notification is made");

        // An error notification: not declined, so it is sent; and it ends the observation (RFC 7641 section 4.2).
        _gone = true;
        server.NotifyObservers("/state");
        Settled(() => observer.Received.Count >= 2, "the error notification arrives");

        CoapMessage first = observer.Received[1].Parsed;
        first.Code.Should().Be(CoapCode.NotFound, "the 2.05 notification before it was suppressed, so the 4.04 is the first notification heard");
        first.Token.ToArray().Should().Equal(0x0B);
        first.Observe.Should().BeNull();
        Settled(() => server.Observations == 0, "the error ends the observation");
    }

    [Fact]
    public void AnObserverWithoutTheOptionHearsTheSuccessNotification()
    {
        // The same sequence without No-Response: the 2.05 notification arrives, so the test above can fail.
        CoapServer server = _server!;
        TestPeer observer = _observer!;
        CoapMessage registration = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 0x0701, Token = new byte[] { 0x0C } };
        registration.UriPath = "/state";
        registration.Observe = 0;
        observer.Send(registration, ServerAddress);
        Settled(() => observer.Received.Count == 1, "the registration is answered");
        observer.Received[0].Parsed.Code.Should().Be(CoapCode.Content);

        server.NotifyObservers("/state").Should().Be(1);
        Settled(() => observer.Received.Count >= 2, "the notification arrives");
        observer.Received[1].Parsed.Code.Should().Be(CoapCode.Content);
        observer.Received[1].Parsed.Observe.Should().NotBeNull();
    }

    /// <summary>Runs the server until it is idle, then requires <paramref name="condition"/>.</summary>
    private void Settled(Func<bool> condition, string what)
    {
        _scheduler.Settle(_network);
        condition().Should().BeTrue(what);
    }
}
