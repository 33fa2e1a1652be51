using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Samples.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample's /slow resource on the wire, in real time, from a raw socket that does not
/// acknowledge until told to: RFC 7252 section 5.2.2 separate response, then section 4.2
/// retransmission of the confirmable response until the client's empty ACK.
/// </summary>
public sealed class SeparateResponseWireTests
{
    [Fact]
    public async Task ASlowConfirmableRequestGetsAnEmptyAcknowledgementThenAConfirmableResponseRetransmittedUntilAcknowledged()
    {
        CoapTransmissionParameters transmission = new() { AckTimeout = TimeSpan.FromMilliseconds(100) };
        await using LoopbackServer server = LoopbackServer.Start(
            s => SampleResources.Map(s),
            LoopbackServer.Options(separateResponseDelay: TimeSpan.FromMilliseconds(200), transmission: transmission));
        using RawPeer peer = new(server.EndPoint);
        CoapMessage request = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/slow?ms=1500", token: 0xA1);

        await peer.SendAsync(request);
        RawPeer.Received acknowledgement = await peer.ReceiveAsync();
        RawPeer.Received response = await peer.ReceiveAsync();
        RawPeer.Received retransmission = await peer.ReceiveAsync();

        acknowledgement.Bytes.Should().Equal(
            [0x60, 0x00, (byte)(request.MessageId >> 8), (byte)request.MessageId],
            "first comes an empty ACK with the request's Message ID, while the handler still sleeps");
        response.Message.Type.Should().Be(CoapMessageType.Confirmable);
        response.Message.Code.Should().Be(CoapCode.Content);
        response.Message.Token.ToArray().Should().Equal(0xA1);
        response.Message.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
        response.Message.GetPayloadString().Should().Be("Slept 1500 ms.");
        retransmission.Bytes.Should().Equal(response.Bytes, "the unacknowledged CON is sent again, same Message ID and all");

        ushort id = response.Message.MessageId;
        await peer.SendAsync([0x60, 0x00, (byte)(id >> 8), (byte)id]);

        // Retransmissions sent before the server handled the ACK arrive before the ping's RST; none may follow.
        (await peer.PingBarrierAsync()).Where(m => m.MessageId != id || m.Type != CoapMessageType.Confirmable).Should().BeEmpty();
        RawPeer.Received? after = await peer.TryReceiveAsync(TimeSpan.FromSeconds(1));
        after.Should().BeNull("the empty ACK ends the retransmission, whose next copy would be due within 300 ms");
    }

    [Fact]
    public async Task AFastConfirmableRequestIsAnsweredPiggybackedInTheAcknowledgement()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => SampleResources.Map(s));
        using RawPeer peer = new(server.EndPoint);
        CoapMessage request = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/slow?ms=0", token: 0xA2);

        await peer.SendAsync(request);
        CoapMessage response = (await peer.ReceiveAsync()).Message;

        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(request.MessageId);
        response.Token.ToArray().Should().Equal(0xA2);
        response.GetPayloadString().Should().Be("Slept 0 ms.");
    }
}
