using System.Net;
using System.Net.WebSockets;
using System.Text;
using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Tests.WebSockets;

/// <summary>
/// The server side of CoAP over WebSockets (RFC 8323 section 4) on real Kestrel, with the test's own ClientWebSocket on
/// the wire: the handshake's checks, the framing (Len 0, one message per WebSocket message), signaling, and what a
/// malformed message does.
/// </summary>
public sealed class WebSocketServerTests
{
    [Fact]
    public async Task TheServersCsmComesFirstThenPingGetsPongAndGetGetsItsResponseInWebSocketFraming()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        using RawWebSocketPeer peer = await RawWebSocketPeer.ConnectAsync(server.Endpoint);
        peer.SubProtocol.Should().Be("coap", "the server agrees to the subprotocol the client offered (RFC 8323 section 4.1)");

        byte[] csm = await peer.ExchangeCsmAsync();
        await peer.SendAsync([0x00, 0xE2]);
        byte[]? pong = await peer.ReceiveAsync();
        await peer.SendAsync([0x01, 0x01, 0x42, 0xB5, .. "hello"u8]);
        byte[]? response = await peer.ReceiveAsync();

        (csm[0] >> 4).Should().Be(0, "over WebSockets the Len nibble is 0 (RFC 8323 section 4.2)");
        csm[1].Should().Be(0xE1, "the server's first message is its CSM, 7.01");
        pong.Should().Equal([0x00, 0xE3], "Ping 7.02 is answered with Pong 7.03");
        response![0].Should().Be(0x01, "Len 0, the request's one-byte token");
        response[1].Should().Be(0x45, "2.05 Content");
        response[2].Should().Be(0x42, "the request's token");
        Encoding.UTF8.GetString(response).Should().EndWith("Hello, CoAP!");
    }

    [Theory]
    [InlineData("len")]
    [InlineData("text")]
    public async Task AMalformedMessageAbortsThatConnectionWithADiagnosticAndTheServerGoesOn(string malformed)
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        using RawWebSocketPeer peer = await RawWebSocketPeer.ConnectAsync(server.Endpoint);
        await peer.ExchangeCsmAsync();

        if (malformed == "len")
        {
            await peer.SendAsync([0x50, 0x01, 0xB5, .. "hello"u8]);
        }
        else
        {
            await peer.SendAsync("GET /hello"u8.ToArray(), WebSocketMessageType.Text);
        }

        byte[]? abort = await peer.ReceiveAsync();
        byte[]? after = await peer.ReceiveAsync();
        await using CoapClient client = KestrelCoapServer.Client();
        CoapResponse hello = await client.GetAsync(server.Ws("/hello"));

        abort![1].Should().Be(0xE5, "a malformed message aborts the connection with 7.05 (RFC 8323 section 5.6)");
        Encoding.UTF8.GetString(abort).Should().Contain("InvalidFraming", "the Abort's diagnostic says what was wrong");
        after.Should().BeNull("the server closes the WebSocket after the Abort");
        hello.GetPayloadString().Should().Be("Hello, CoAP!", "only that connection ended");
    }

    [Fact]
    public async Task AMessageLargerThanTheMaximumMessageSizeAbortsTheConnection()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(coap: o => o.Connections.MaxMessageSize = 4096);
        using RawWebSocketPeer peer = await RawWebSocketPeer.ConnectAsync(server.Endpoint);
        await peer.ExchangeCsmAsync();
        byte[] large = new byte[8192];
        large[1] = 0x03; // PUT, no token, then zeros: options of number 0 would follow, but the size is what is refused

        await peer.SendAsync(large);
        byte[]? abort = await peer.ReceiveAsync();

        abort![1].Should().Be(0xE5);
        Encoding.UTF8.GetString(abort).Should().Contain("MessageTooLarge", "the limit our CSM announced is enforced before the message is buffered whole");
    }

    [Fact]
    public async Task PastTheConnectionLimitTheIdlestWebSocketIsReleasedForTheNewcomer()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(coap: o => o.Connections.MaxConnectionsPerAddress = 1);
        using RawWebSocketPeer first = await RawWebSocketPeer.ConnectAsync(server.Endpoint);
        await first.ExchangeCsmAsync();
        await first.SendAsync([0x00, 0xE2]);
        (await first.ReceiveAsync()).Should().Equal([0x00, 0xE3], "the first connection is established: both CSMs are through");

        using RawWebSocketPeer second = await RawWebSocketPeer.ConnectAsync(server.Endpoint);
        byte[] csm = await second.ExchangeCsmAsync();
        byte[]? release = await first.ReceiveAsync();

        csm[1].Should().Be(0xE1, "the newcomer is served");
        release.Should().Equal([0x00, 0xE4], "the server's limits apply to WebSockets as to TCP connections: the idlest gives its place, with Release 7.04");
    }

    [Fact]
    public async Task AWebSocketWithoutTheCoapSubprotocolIsRefused()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();

        using RawWebSocketPeer none = await RawWebSocketPeer.ConnectAsync(server.Endpoint, subProtocol: null);
        using RawWebSocketPeer other = await RawWebSocketPeer.ConnectAsync(server.Endpoint, subProtocol: "mqtt");

        none.IsOpen.Should().BeFalse();
        none.Status.Should().Be(HttpStatusCode.BadRequest);
        other.IsOpen.Should().BeFalse();
        other.Status.Should().Be(HttpStatusCode.BadRequest);
    }

    [Fact]
    public async Task APageOfAnotherOriginIsRefusedAndTheServersOwnAndConfiguredOnesAreAccepted()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync(o => o.AllowedOrigins.Add("https://app.example"));

        using RawWebSocketPeer elsewhere = await RawWebSocketPeer.ConnectAsync(server.Endpoint, origin: "http://evil.example");
        using RawWebSocketPeer own = await RawWebSocketPeer.ConnectAsync(server.Endpoint, origin: $"http://127.0.0.1:{server.HttpPort}");
        using RawWebSocketPeer configured = await RawWebSocketPeer.ConnectAsync(server.Endpoint, origin: "https://app.example");

        elsewhere.IsOpen.Should().BeFalse("a page elsewhere must not use the endpoint in its user's name");
        elsewhere.Status.Should().Be(HttpStatusCode.Forbidden);
        own.IsOpen.Should().BeTrue("the server's own pages may");
        configured.IsOpen.Should().BeTrue("and those of the origins configured");
    }

    [Fact]
    public async Task ByDefaultOnlyTheServersOwnOriginIsAllowed()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();

        using RawWebSocketPeer configuredElsewhere = await RawWebSocketPeer.ConnectAsync(server.Endpoint, origin: "https://app.example");

        configuredElsewhere.Status.Should().Be(HttpStatusCode.Forbidden);
    }

    [Fact]
    public async Task HandlersSeeTheSchemeThePeersAddressAndTheHttpUser()
    {
        await using KestrelCoapServer anonymous = await KestrelCoapServer.StartAsync();
        await using KestrelCoapServer authenticated = await KestrelCoapServer.StartAsync(user: "alice");
        await using CoapClient client = KestrelCoapServer.Client();

        string plain = (await client.GetAsync(anonymous.Ws("/whoami"))).GetPayloadString();
        string secure = (await client.GetAsync(anonymous.Wss("/whoami"))).GetPayloadString();
        string user = (await client.GetAsync(authenticated.Ws("/whoami"))).GetPayloadString();
        string udp = (await client.GetAsync(anonymous.Udp("/whoami"))).GetPayloadString();

        plain.Should().Be("coap+ws 127.0.0.1 anonymous");
        secure.Should().Be("coaps+ws 127.0.0.1 anonymous", "a WebSocket over HTTPS is coaps+ws");
        user.Should().Be("coap+ws 127.0.0.1 user:alice", "the HTTP request's authenticated user is the peer's identity");
        udp.Should().Be("coap 127.0.0.1 anonymous", "the same route serves the server's UDP endpoint");
    }

    [Fact]
    public async Task StoppingTheApplicationReleasesTheConnection()
    {
        await using KestrelCoapServer server = await KestrelCoapServer.StartAsync();
        using RawWebSocketPeer peer = await RawWebSocketPeer.ConnectAsync(server.Endpoint);
        await peer.ExchangeCsmAsync();

        Task stopping = server.StopAsync();
        byte[]? release = await peer.ReceiveAsync();
        byte[]? after = await peer.ReceiveAsync();
        await stopping;

        release.Should().Equal([0x00, 0xE4], "a server that stops sends Release 7.04 (RFC 8323 section 5.5)");
        after.Should().BeNull();
        peer.CloseStatus.Should().Be(WebSocketCloseStatus.NormalClosure);
    }
}
