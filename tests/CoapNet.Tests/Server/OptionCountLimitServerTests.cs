using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// <see cref="CoapServerOptions.MaxOptionCount"/> on the wire: a datagram with too many options is malformed
/// like any other (RFC 7252 sections 4.2 and 4.3: RST for a CON, silence for a NON) and the server goes on serving.
/// </summary>
public sealed class OptionCountLimitServerTests
{
    [Fact]
    public async Task ADatagramOverTheServersLimitIsResetWhenConfirmableIgnoredOtherwiseAndTheServerKeepsServing()
    {
        // The answer is read as the first datagram back: a separate-response delay far past any scheduling delay keeps
        // it piggybacked on a loaded machine (the default 100 ms once sent an empty ACK first under a busy suite).
        CoapServerOptions options = new CoapServerOptions() { Endpoint = new CoapEndpointOptions { MaxOptionCount = 4, SeparateResponseDelay = TimeSpan.FromSeconds(10) } }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0));
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/a/b/c/d", _ => CoapResponse.Content("four")), options);
        using RawPeer peer = new(server.EndPoint);

        CoapMessage tooManyCon = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/a/b/c/d/e", token: 1);
        await peer.SendAsync(tooManyCon);
        RawPeer.Received reset = await peer.ReceiveAsync();
        await peer.SendAsync(peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, "/a/b/c/d/e", token: 2));
        IReadOnlyList<CoapMessage> afterNon = await peer.PingBarrierAsync();
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/a/b/c/d", token: 3));
        RawPeer.Received served = await peer.ReceiveAsync();

        reset.Bytes.Should().Equal(0x70, 0x00, (byte)(tooManyCon.MessageId >> 8), (byte)tooManyCon.MessageId);
        afterNon.Should().BeEmpty("a malformed NON is dropped without a word");
        served.Message.Code.Should().Be(CoapCode.Content);
        served.Message.GetPayloadString().Should().Be("four", "four options are within the limit");
    }

    [Fact]
    public void TheDefaultIs1024AndALimitBelowOneIsRefused()
    {
        new CoapServerOptions().Endpoint.MaxOptionCount.Should().Be(1024);
        ((Action)(() => new CoapServer(new CoapServerOptions { Endpoint = new CoapEndpointOptions { MaxOptionCount = 0 } }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0))).Start()))
            .Should().Throw<ArgumentException>().WithMessage("*MaxOptionCount*");
    }
}
