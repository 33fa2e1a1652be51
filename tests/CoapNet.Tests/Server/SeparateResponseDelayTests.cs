using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The server's default separate-response delay, in virtual time: a client that sends one confirmable request at a
/// time (NSTART = 1, RFC 7252 section 4.7) moves on to its next request when the previous one is acknowledged, so
/// each request to a slow handler holds it for the delay (chosen from the separate-ack scenario, benchmarks/RESULTS.md).
/// The server's handlers run on a <see cref="ManualTaskScheduler"/>, on the test's thread when it settles them.
/// </summary>
public sealed class SeparateResponseDelayTests : IAsyncDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    // Without RunContinuationsAsynchronously: with it, the handler's WaitAsync would resume it on the thread pool.
    private readonly TaskCompletionSource _release = new();
    private int _entered;
    private readonly CoapServer _server;
    private readonly CoapEndpoint _client;

    public SeparateResponseDelayTests()
    {
        _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

        // The server's defaults, but for the clock and the transport.
        _server = new CoapServer(new CoapServerOptions { Scheduler = _scheduler, Endpoint = new CoapEndpointOptions { TimeProvider = _time } }.Listen(_network.CreateTransport(ServerAddress)));
        _server.MapGet("/slow", async (_, cancellationToken) =>
        {
            _entered++;

            // No ConfigureAwait(false): the handler resumes on the test's scheduler (ManualTaskScheduler).
            await _release.Task.WaitAsync(cancellationToken);
            return CoapResponse.Content("done");
        });
        _server.Start();
        _client = new CoapEndpoint(_network.CreateTransport("10.0.0.1"), new CoapEndpointOptions { TimeProvider = _time, Random = new Random(3) });
        _client.Start();
    }

    [Fact]
    public async Task ByDefaultAnNStartOneClientReachesASlowHandlerAgainAfterATenthOfASecond()
    {
        new CoapServerOptions().Endpoint.SeparateResponseDelay.Should().Be(TimeSpan.FromMilliseconds(100));
        _client.TransmissionParameters.NStart.Should().Be(1);
        Task<CoapMessage>[] requests = new Task<CoapMessage>[10];
        for (int i = 0; i < requests.Length; i++)
        {
            CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, UriPath = "/slow" };
            requests[i] = _client.SendRequestAsync(request, ServerAddress);
        }

        for (int i = 0; i < requests.Length; i++)
        {
            // Request i is in the handler; the delay acknowledges it (each request arrives on a tick of the server's watch
            // here, so exactly 100 ms later), which frees the client's one slot for request i + 1. With the former 1 s
            // default the next request never came.
            _scheduler.Settle(_network);
            _entered.Should().Be(i + 1, $"request {i + 1} reaches the handler once the one before it is acknowledged, and NSTART = 1: one request at a time until the previous one is acknowledged");
            _time.Advance(TimeSpan.FromMilliseconds(100));
        }

        _release.SetResult();
        _scheduler.Settle(_network);
        foreach (Task<CoapMessage> request in requests)
        {
            request.IsCompleted.Should().BeTrue("every handler answered once released");
            (await request).GetPayloadString().Should().Be("done");
        }

        _time.Elapsed.Should().Be(TimeSpan.FromSeconds(1), "ten requests, a tenth of a second each");
    }

    public async ValueTask DisposeAsync()
    {
        _release.TrySetResult();
        _scheduler.Settle(_network);
        _client.Dispose();
        await _server.DisposeAsync();
    }
}
