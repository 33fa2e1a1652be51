using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.WebSockets;

/// <summary>Our client over coap+ws and coaps+ws (RFC 8323 section 4) against our server on real Kestrel.</summary>
public sealed class WebSocketClientTests
{
    private const int Megabyte = 1 << 20;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task GetsPutsAndDeletes(bool secure)
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        await using CoapClient client = KestrelCoapServer.Client();
        Func<string, Uri> uri = secure ? server.Wss : server.Ws;

        CoapResponse hello = await client.GetAsync(uri("/hello"));
        CoapResponse put = await client.PutAsync(uri("/store/lamp"), "on"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse got = await client.GetAsync(uri("/store/lamp"));
        CoapResponse deleted = await client.DeleteAsync(uri("/store/lamp"));

        hello.GetPayloadString().Should().Be("Hello, CoAP!");
        put.Code.Should().Be(CoapCode.Created);
        got.GetPayloadString().Should().Be("on");
        deleted.Code.Should().Be(CoapCode.Deleted);
    }

    [Fact]
    public async Task PingsWithCoapPing()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        await using CoapClient client = KestrelCoapServer.Client();

        TimeSpan roundTrip = await client.PingAsync(server.Ws("/"));

        roundTrip.Should().BeGreaterThan(TimeSpan.Zero);
    }

    [Fact]
    public async Task Observes()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        await using CoapClient client = KestrelCoapServer.Client();
        Uri counter = server.Ws("/counter");
        using CancellationTokenSource stop = new(Wait.DefaultBound);
        List<string> seen = [];

        await foreach (CoapResponse response in client.ObserveAsync(counter, stop.Token))
        {
            seen.Add(response.GetPayloadString());
            if (seen.Count == 3)
            {
                break;
            }

            // Each POST increments the counter and notifies its observers over the same WebSocket.
            await client.PostAsync(counter, default);
        }

        seen.Should().Equal("0", "1", "2");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task UploadsAndDownloadsAMegabyteBlockWise(bool secure)
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        await using CoapClient client = KestrelCoapServer.Client();
        Func<string, Uri> uri = secure ? server.Wss : server.Ws;
        byte[] body = new byte[Megabyte];
        new Random(7).NextBytes(body);

        CoapResponse uploaded = await client.PutAsync(uri("/upload"), body);
        CoapResponse downloaded = await client.GetAsync(uri($"/large?size={Megabyte}"));

        uploaded.GetPayloadString().Should().Be(Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant(), "/upload answers the SHA-256 of the whole body it received");
        downloaded.Payload.Length.Should().Be(Megabyte);
        downloaded.Payload.ToArray().Should().Equal(Enumerable.Range(0, Megabyte).Select(i => (byte)(i % 251)));
    }

    [Fact]
    public async Task ARefusedHandshakeFailsTheRequestSayingWhy()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        await server.Coap.StopAsync();
        await using CoapClient client = KestrelCoapServer.Client();

        Func<Task> get = () => client.GetAsync(server.Ws("/hello"));

        (await get.Should().ThrowAsync<Exception>()).Which.ToString().Should().Contain("HTTP 503", "the server is not running, and the handshake's answer says so");
    }
}
