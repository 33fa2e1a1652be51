using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The server given a transport of the in-memory network, in virtual time: no socket, no wall
/// clock, every datagram on record. The same server, routes and pipeline as over UDP, its handlers run by a
/// <see cref="ManualTaskScheduler"/> on the test's thread when the test settles it.
/// </summary>
public sealed class InMemoryServerTests : IAsyncLifetime
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    // Without RunContinuationsAsynchronously: with it, the handler's WaitAsync would resume it on the thread pool.
    private readonly TaskCompletionSource _gate = new();
    private int _entered;
    private CoapServer? _server;
    private CoapEndpoint? _client;

    public InMemoryServerTests() => _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

    public Task InitializeAsync()
    {
        _server = new CoapServer(new CoapServerOptions
        {
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = _time, SeparateResponseDelay = TimeSpan.FromSeconds(1) },
        }.Listen(_network.CreateTransport(ServerAddress)));
        _server.MapGet("/hello", request => CoapResponse.Content("hello " + request.RemoteEndPoint));
        _server.MapGet("/slow", async (request, cancellationToken) =>
        {
            _entered++;

            // No ConfigureAwait(false): the handler resumes on the test's scheduler (ManualTaskScheduler).
            await _gate.Task.WaitAsync(cancellationToken);
            return CoapResponse.Content("slow");
        });
        _server.Start();
        _client = new CoapEndpoint(_network.CreateTransport("10.0.0.1"), new CoapEndpointOptions { TimeProvider = _time, Random = new Random(7) });
        _client.Start();
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        _gate.TrySetResult();
        _scheduler.Settle(_network);
        _client?.Dispose();
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }

    [Fact]
    public async Task ServesARouteOverAnInjectedTransport()
    {
        Task<CoapMessage> pending = _client!.SendRequestAsync(Get("hello"), ServerAddress);
        _scheduler.Settle(_network);

        pending.IsCompleted.Should().BeTrue("the server answered while the test settled it");
        CoapMessage response = await pending;

        response.Type.Should().Be(CoapMessageType.Acknowledgement, "the answer is piggybacked");
        response.GetPayloadString().Should().Be("hello 10.0.0.1:5683");
        _server!.LocalEndPoints.Should().Equal(ServerAddress);
    }

    [Fact]
    public async Task ASlowHandlerIsAcknowledgedAfterTheSeparateResponseDelayInVirtualTime()
    {
        Task<CoapMessage> pending = _client!.SendRequestAsync(Get("slow"), ServerAddress);
        _scheduler.Settle(_network);
        _entered.Should().Be(1);
        FromServer().Should().BeEmpty("nothing is sent before the delay");

        _time.Advance(TimeSpan.FromSeconds(1));

        CoapMessage ack = FromServer().Should().ContainSingle().Subject;
        ack.Type.Should().Be(CoapMessageType.Acknowledgement);
        ack.Code.Should().Be(CoapCode.Empty, "RFC 7252 section 5.2.2: an empty ACK first");

        _gate.SetResult();
        _scheduler.Settle(_network);
        pending.IsCompleted.Should().BeTrue("the handler answered once its gate opened");
        CoapMessage response = await pending;

        response.Type.Should().Be(CoapMessageType.Confirmable, "the response follows separately, as CON");
        response.GetPayloadString().Should().Be("slow");
        FromServer().Should().HaveCount(2);
    }

    private static CoapMessage Get(string path)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get };
        request.UriPath = path;
        return request;
    }

    private List<CoapMessage> FromServer() => _network.SentBetween(ServerAddress, InMemoryNetwork.EndPoint("10.0.0.1")).Select(d => d.Parsed).ToList();
}
