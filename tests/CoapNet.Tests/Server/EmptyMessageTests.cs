using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// Empty messages (RFC 7252 sections 4.1-4.3) never enter the request pipeline: the endpoints answer
/// a ping with RST even while the pipeline is full, an ACK or RST ends the retransmission of the
/// server's separate response, and anything else empty is ignored without disturbing the server.
/// </summary>
public sealed class EmptyMessageTests
{
    [Fact]
    public async Task APingIsAnsweredWithAResetCarryingItsMessageId()
    {
        await using LoopbackServer server = LoopbackServer.Start(_ => { });
        using RawPeer peer = new(server.EndPoint);

        await peer.SendAsync([0x40, 0x00, 0x12, 0x34]);

        (await peer.ReceiveAsync()).Bytes.Should().Equal(0x70, 0x00, 0x12, 0x34);
    }

    [Fact]
    public async Task APingIsAnsweredWhileThePipelineIsFull()
    {
        using BlockingRoute block = new();
        await using LoopbackServer server = LoopbackServer.Start(block.Map, LoopbackServer.Options(maxPendingRequests: 1, maxDegreeOfParallelism: 1, separateResponseDelay: TimeSpan.FromMinutes(5)));
        using RawPeer peer = new(server.EndPoint);
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block", token: 1));
        await block.WaitUntilEnteredAsync();
        CoapMessage excess = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block", token: 2);
        await peer.SendAsync(excess);
        (await peer.ReceiveAsync()).Message.Code.Should().Be(CoapCode.ServiceUnavailable, "the pipeline is full");

        await peer.SendAsync([0x40, 0x00, 0xBE, 0xEF]);

        (await peer.ReceiveAsync()).Bytes.Should().Equal(0x70, 0x00, 0xBE, 0xEF);
        server.Server.PendingRequests.Should().Be(1, "the ping did not take a place in the pipeline");
        block.Release();
    }

    [Theory]
    [InlineData(new byte[] { 0x50, 0x00, 0x22, 0x22 })] // empty NON
    [InlineData(new byte[] { 0x60, 0x00, 0x33, 0x33 })] // empty ACK matching nothing
    [InlineData(new byte[] { 0x70, 0x00, 0x44, 0x44 })] // RST matching nothing
    public async Task AnEmptyMessageThatMatchesNothingIsIgnoredAndTheServerKeepsServing(byte[] datagram)
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("x")));
        using RawPeer peer = new(server.EndPoint);

        await peer.SendAsync(datagram);

        (await peer.PingBarrierAsync()).Should().BeEmpty("RFC 7252 section 4.2 and 4.3: silently ignored");
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/x", token: 5));
        CoapMessage response = (await peer.ReceiveAsync()).Message;
        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("x");
    }

    [Theory]
    [InlineData(CoapMessageType.Acknowledgement)]
    [InlineData(CoapMessageType.Reset)]
    public async Task AnEmptyAcknowledgementOrResetStopsTheRetransmissionOfASeparateResponse(CoapMessageType answer)
    {
        // Virtual time over real sockets: every server timer fires inside Advance, on this thread, and
        // sends synchronously, so a retransmission either is in the socket when Advance returns or never comes.
        ManualTimeProvider time = new();
        using BlockingRoute block = new();
        CoapTransmissionParameters transmission = new() { AckTimeout = TimeSpan.FromSeconds(2), AckRandomFactor = 1.0 };
        await using LoopbackServer server = LoopbackServer.Start(block.Map, LoopbackServer.Options(separateResponseDelay: TimeSpan.FromSeconds(1), transmission: transmission, time: time));
        using RawPeer peer = new(server.EndPoint);
        CoapMessage request = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block?n=1", token: 0x5E);
        await peer.SendAsync(request);
        await block.WaitUntilEnteredAsync();

        time.Advance(TimeSpan.FromSeconds(1));
        (await peer.ReceiveAsync()).Bytes.Should().Equal(0x60, 0x00, (byte)(request.MessageId >> 8), (byte)request.MessageId);
        block.Release();
        RawPeer.Received response = await peer.ReceiveAsync();
        response.Message.Type.Should().Be(CoapMessageType.Confirmable);
        response.Message.Token.ToArray().Should().Equal(0x5E);
        time.Advance(TimeSpan.FromSeconds(2));
        (await peer.ReceiveAsync()).Bytes.Should().Equal(response.Bytes, "unacknowledged, the CON is retransmitted after ACK_TIMEOUT");

        ushort id = response.Message.MessageId;
        await peer.SendAsync([(byte)(answer == CoapMessageType.Acknowledgement ? 0x60 : 0x70), 0x00, (byte)(id >> 8), (byte)id]);
        (await peer.PingBarrierAsync()).Should().BeEmpty();
        time.Advance(TimeSpan.FromMinutes(10));

        (await peer.PingBarrierAsync()).Should().BeEmpty("no retransmission follows the client's answer");
    }
}
