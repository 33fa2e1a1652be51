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
/// </summary>
public sealed class SeparateResponseDelayTests : IAsyncDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNetwork _network;
    private readonly TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly SemaphoreSlim _entered = new(0);
    private readonly CoapServer _server;
    private readonly CoapEndpoint _client;

    public SeparateResponseDelayTests()
    {
        _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

        // The server's defaults, but for the clock and the transport.
        _server = new CoapServer(new CoapServerOptions { DatagramTransports = [_network.CreateTransport(ServerAddress)], TimeProvider = _time });
        _server.MapGet("/slow", async (_, cancellationToken) =>
        {
            _entered.Release();
            await _release.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            return CoapResponse.Content("done");
        });
        _server.Start();
        _client = new CoapEndpoint(_network.CreateTransport("10.0.0.1"), new CoapEndpointOptions { TimeProvider = _time, Random = new Random(3) });
        _client.Start();
    }

    [Fact]
    public async Task ByDefaultAnNStartOneClientReachesASlowHandlerAgainAfterATenthOfASecond()
    {
        new CoapServerOptions().SeparateResponseDelay.Should().Be(TimeSpan.FromMilliseconds(100));
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
            (await _entered.WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue($"request {i + 1} reaches the handler once the one before it is acknowledged");
            _entered.CurrentCount.Should().Be(0, "NSTART = 1: one request at a time until the previous one is acknowledged");
            _time.Advance(TimeSpan.FromMilliseconds(100));
        }

        _release.SetResult();
        foreach (Task<CoapMessage> request in requests)
        {
            (await request.WaitAsync(TimeSpan.FromSeconds(30))).GetPayloadString().Should().Be("done");
        }

        _time.Elapsed.Should().Be(TimeSpan.FromSeconds(1), "ten requests, a tenth of a second each");
    }

    public async ValueTask DisposeAsync()
    {
        _release.TrySetResult();
        _client.Dispose();
        await _server.DisposeAsync();
        _entered.Dispose();
    }
}
