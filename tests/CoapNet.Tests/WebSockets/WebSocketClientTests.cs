using System.Security.Cryptography.X509Certificates;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Server;
using CoapNet.Tests.Tls;

namespace CoapNet.Tests.WebSockets;

/// <summary>
/// Our client over coap+ws and coaps+ws (RFC 8323 section 4) against our server on real Kestrel: GET, PUT, Observe and a
/// megabyte block-wise each way, over coaps+ws with a certificate the test CA issued and with a self-signed one.
/// </summary>
public sealed class WebSocketClientTests
{
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

        IReadOnlyList<string> seen = await SampleResourceExchanges.ObserveCounterAsync(client, server.Ws("/counter"));

        seen.Should().Equal("0", "1", "2");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task UploadsAndDownloadsAMegabyteBlockWise(bool secure)
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        await using CoapClient client = KestrelCoapServer.Client();

        await SampleResourceExchanges.MovesAMegabyteBlockWiseAsync(client, secure ? server.Wss : server.Ws);
    }

    [Fact]
    public async Task OverCoapsWsWithASelfSignedCertificateItGetsPutsObservesAndMovesAMegabyte()
    {
        using X509Certificate2 selfSigned = TestPki.SelfSigned("CN=coapnet-self-signed");
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(certificate: selfSigned);

        // No CA issued it: the client trusts that certificate itself, as a user who copied it from the server does.
        await using CoapClient client = KestrelCoapServer.Client([TestPki.WithoutKey(selfSigned)]);

        CoapResponse hello = await client.GetAsync(server.Wss("/hello"));
        CoapResponse put = await client.PutAsync(server.Wss("/store/x"), "42"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse got = await client.GetAsync(server.Wss("/store/x"));
        IReadOnlyList<string> notified = await SampleResourceExchanges.ObserveCounterAsync(client, server.Wss("/counter"));

        hello.GetPayloadString().Should().Be("Hello, CoAP!");
        put.Code.Should().Be(CoapCode.Created);
        got.GetPayloadString().Should().Be("42");
        notified.Should().Equal("0", "1", "2");
        await SampleResourceExchanges.MovesAMegabyteBlockWiseAsync(client, server.Wss);
    }

    [Fact]
    public async Task ASelfSignedCertificateTheClientDoesNotTrustFailsTheRequestSayingWhy()
    {
        using X509Certificate2 selfSigned = TestPki.SelfSigned("CN=coapnet-self-signed");
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(certificate: selfSigned);
        await using CoapClient client = KestrelCoapServer.Client();

        Func<Task> get = () => client.GetAsync(server.Wss("/hello"));

        (await get.Should().ThrowAsync<CoapConnectionException>()).Which.Message.Should().Contain("certificate", "the client trusts the test CA only, which did not issue the server's certificate");
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
