using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Connections;

namespace CoapNet.Tests.Tcp;

/// <summary>RFC 8323 sections 5.4-5.6: Ping/Pong, Release and Abort.</summary>
public sealed class SignalingTests
{
    [Fact]
    public async Task AnswersPingWithPongEchoingTheTokenAndCustody()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        CoapMessage ping = new() { Code = CoapCode.Ping, Token = new byte[] { 0xAB } };
        ping.Options.AddEmpty(Signaling.Custody);
        await peer.SendAsync(ping);
        await peer.SendAsync(new CoapMessage { Code = CoapCode.Ping, Token = new byte[] { 0xCD } });

        CoapMessage first = await peer.ReceiveAsync();
        first.Code.Should().Be(CoapCode.Pong);
        first.Token.ToArray().Should().Equal(0xAB);
        first.Options.TryGet(Signaling.Custody, out _).Should().BeTrue();
        CoapMessage second = await peer.ReceiveAsync();
        second.Code.Should().Be(CoapCode.Pong);
        second.Token.ToArray().Should().Equal(0xCD);
        second.HasOptions.Should().BeFalse();
    }

    [Fact]
    public async Task PingMeasuresTheRoundTripToThePong()
    {
        await using TcpHarness client = TcpHarness.Client();
        Task<TimeSpan> rtt = client.Endpoint.PingAsync(TcpHarness.ServerPeer.EndPoint);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync();

        CoapMessage ping = await server.ReceiveAsync();
        ping.Code.Should().Be(CoapCode.Ping);
        client.Time.Advance(TimeSpan.FromMilliseconds(25));
        await server.SendAsync(new CoapMessage { Code = CoapCode.Pong, Token = ping.Token });

        (await rtt).Should().Be(TimeSpan.FromMilliseconds(25));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task DisposingTheEndpointSendsReleaseAndCloses(bool asynchronously)
    {
        TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        if (asynchronously)
        {
            await server.DisposeAsync();
        }
        else
        {
            // Starts the release and returns: a synchronous caller never blocks on the peer.
            server.Endpoint.Dispose();
        }

        List<CoapMessage> rest = await peer.ReceiveUntilClosedAsync();
        rest.Should().ContainSingle().Which.Code.Should().Be(CoapCode.Release);
    }

    [Fact]
    public async Task AfterThePeersReleaseInFlightRequestsFinishAndNewOnesGoOnANewConnection()
    {
        await using TcpHarness client = TcpHarness.Client();
        Task<CoapMessage> inFlight = client.Endpoint.SendRequestAsync(TcpHarness.Get("first", 1), TcpHarness.ServerPeer);
        RawStreamPeer oldServer = await client.AcceptAndHandshakeAsync();
        CoapMessage request = await oldServer.ReceiveAsync();

        await oldServer.SendAsync(new CoapMessage { Code = CoapCode.Release });

        // Frames are handled in order: the Pong proves the Release was seen before the next request is sent.
        await oldServer.SendAsync(new CoapMessage { Code = CoapCode.Ping });
        (await oldServer.ReceiveAsync()).Code.Should().Be(CoapCode.Pong);
        Task<CoapMessage> next = client.Endpoint.SendRequestAsync(TcpHarness.Get("second", 2), TcpHarness.ServerPeer);
        RawStreamPeer newServer = await client.AcceptAndHandshakeAsync();
        CoapMessage second = await newServer.ReceiveAsync();
        await newServer.SendAsync(new CoapMessage { Code = CoapCode.Content, Token = second.Token });
        (await next).Code.Should().Be(CoapCode.Content);

        // The request in flight on the released connection is still answered there; then that connection closes.
        inFlight.IsCompleted.Should().BeFalse();
        await oldServer.SendAsync(new CoapMessage { Code = CoapCode.Changed, Token = request.Token });
        (await inFlight).Code.Should().Be(CoapCode.Changed);
        (await oldServer.ReceiveUntilClosedAsync()).Should().BeEmpty();
        client.Connector!.Opened.Should().Be(2);
    }

    [Fact]
    public async Task ThePeersAbortFailsTheRequestsInFlightWithItsDiagnostic()
    {
        await using TcpHarness client = TcpHarness.Client();
        Task<CoapMessage> inFlight = client.Endpoint.SendRequestAsync(TcpHarness.Get("a", 1), TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync();
        await server.ReceiveAsync();

        CoapMessage abort = new() { Code = CoapCode.Abort };
        abort.SetPayload("shutting down");
        await server.SendAsync(abort);

        Func<Task> awaiting = () => inFlight;
        (await awaiting.Should().ThrowAsync<CoapConnectionException>()).Which.Message.Should().Contain("shutting down");
        (await server.ReceiveUntilClosedAsync()).Should().BeEmpty("an Abort is not answered");
    }

    [Fact]
    public async Task AMalformedFrameAbortsWithADiagnostic()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        await peer.SendBytesAsync(0x19, 0x01); // TKL 9 is reserved (RFC 8323 section 3.2)

        CoapMessage abort = (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Subject;
        abort.Code.Should().Be(CoapCode.Abort);
        abort.GetPayloadString().Should().Contain("InvalidTokenLength");
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain("InvalidTokenLength");
    }

    [Fact]
    public async Task IgnoresEmptyMessagesAndUnknownSignals()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        await peer.SendBytesAsync(0x00, 0x00); // 0.00 Empty: ignored on a stream (RFC 8323 section 4.4)
        await peer.SendBytesAsync(0x00, 0xE9); // 7.09: a signal code nobody registered
        await peer.SendAsync(TcpHarness.Get("after", 1));

        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/after");
        server.Log.Warnings.Should().BeEmpty();
    }

    [Fact]
    public async Task AServerSendsRequestsToAClientOverTheClientsConnection()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(clientPort: 40007);
        Channels.CoapPeer client = Channels.CoapPeer.Tcp(peer.End.LocalEndPoint);

        // RFC 8323 section 3.3: either side of a connection may send requests.
        Task<CoapMessage> response = server.Endpoint.SendRequestAsync(TcpHarness.Get("on/the/client", 1), client);
        CoapMessage request = await peer.ReceiveAsync();
        request.UriPath.Should().Be("/on/the/client");
        await peer.SendAsync(new CoapMessage { Code = CoapCode.Content, Token = request.Token });

        (await response).Code.Should().Be(CoapCode.Content);
    }
}
