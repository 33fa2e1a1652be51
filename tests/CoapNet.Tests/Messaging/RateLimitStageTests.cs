using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Samples.Stage;
using CoapNet.Server;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The stage sample (samples/CoapNet.Samples.Stage, compiled in from its source) end to end, in virtual time: a server
/// that limits each peer's request rate answers the excess 4.29 Too Many Requests with Max-Age (RFC 8516 section 3), and
/// a client told so holds its requests back until Max-Age has passed, without sending them.
/// </summary>
public sealed class RateLimitStageTests : IDisposable
{
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private readonly CoapServer _server;
    private readonly List<IDisposable> _owned = [];
    private int _handled;

    public RateLimitStageTests()
    {
        _network = new InMemoryNetwork(_time);
        _server = new CoapServer(new CoapServerOptions
        {
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = _time }
                .UseStage("RateLimit", context => new RateLimitStage(context, perSecond: 2, burst: 2), CoapStagePosition.BelowAll),
        }.Listen(_network.CreateTransport("10.0.0.2")));
        _server.MapGet("/hello", _ =>
        {
            Interlocked.Increment(ref _handled);
            return CoapResponse.Content("hello");
        });
        _server.Start();
    }

    public void Dispose()
    {
        _scheduler.RunUntilIdle();
        foreach (IDisposable owned in _owned)
        {
            owned.Dispose();
        }

        _server.Dispose();
    }

    [Fact]
    public async Task APeerPastItsRateGets429WithMaxAgeAndItsClientWaitsThatLongBeforeSendingAgain()
    {
        CoapClient client = Client("10.0.0.1");
        Uri hello = new("coap://10.0.0.2/hello");

        (await Served(client.GetAsync(hello))).Code.Should().Be(CoapCode.Content);
        (await Served(client.GetAsync(hello))).Code.Should().Be(CoapCode.Content);
        CoapResponse refused = await Served(client.GetAsync(hello));
        refused.Code.Should().Be(CoapCode.TooManyRequests);
        refused.Message.MaxAge.Should().Be(1u, "a request's worth comes back in half a second, rounded up to whole seconds");
        _handled.Should().Be(2, "the refused request never reached the handler");

        // The server asked for quiet: the client answers at once, and nothing goes on the wire.
        int sent = _network.Sent.Count;
        CoapResponse heldBack = await client.GetAsync(hello).WaitAsync(Infrastructure.Wait.DefaultBound);
        heldBack.Code.Should().Be(CoapCode.TooManyRequests);
        heldBack.Message.MaxAge.Should().Be(1u);
        _network.Sent.Count.Should().Be(sent);

        // Another peer has a rate of its own.
        (await Served(Client("10.0.0.3").GetAsync(hello))).Code.Should().Be(CoapCode.Content);

        _time.Advance(TimeSpan.FromSeconds(1));
        (await Served(client.GetAsync(hello))).Code.Should().Be(CoapCode.Content);
        _handled.Should().Be(4);
    }

    private CoapClient Client(string address)
    {
        CoapClient client = new(_network.CreateTransport(address), new CoapClientOptions
        {
            Endpoint = new CoapEndpointOptions { TimeProvider = _time, Random = new Random(7) }
                .UseStage("RateLimit", context => new RateLimitStage(context, perSecond: 100, burst: 100), CoapStagePosition.BelowAll),
        });
        _owned.Add(client);
        return client;
    }

    /// <summary>
    /// Settles the server and the network, then awaits <paramref name="pending"/>: the client completes a call off the
    /// thread that received its response (its continuations run asynchronously), so a liveness bound, not a duration.
    /// </summary>
    private async Task<T> Served<T>(Task<T> pending)
    {
        _scheduler.Settle(_network);
        return await pending.WaitAsync(Infrastructure.Wait.DefaultBound);
    }
}
