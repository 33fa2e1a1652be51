using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// One exchange that carries many responses, as Observe notifications will (RFC 7641 section 3):
/// the exchange layer keeps it registered under its token after the first response, hands later
/// ones on, acknowledges each CON one, and rejects what arrives after it ended.
/// </summary>
public class ManyResponseExchangeTests
{
    [Fact]
    public async Task LaterResponsesWithTheSameTokenReachTheExchangeAndEachConfirmableOneIsAcknowledged()
    {
        using MessagingHarness h = new();
        CoapEndpoint client = h.Endpoint(ClientAddress);
        TestPeer server = h.Peer(ServerAddress);
        List<string> later = [];

        Task<CoapMessage> first = client.Exchanges.SendForManyResponsesAsync(Get(), CoapPeer.Udp(server.EndPoint), r => later.Add(r.GetPayloadString()), CancellationToken.None);
        h.Network.DeliverAll();
        CoapMessage request = server.Last.Parsed;
        server.SendPiggybacked(request, client.LocalEndPoint, CoapCode.Content, "1");
        h.Network.DeliverAll();
        (await first).GetPayloadString().Should().Be("1");

        server.SendSeparate(request.Token, 0x2000, client.LocalEndPoint, CoapCode.Content, "2");
        server.SendSeparate(request.Token, 0x2001, client.LocalEndPoint, CoapCode.Content, "3");
        h.Network.DeliverAll();

        later.Should().Equal("2", "3");
        server.Received.Skip(1).Select(d => Convert.ToHexString(d.Bytes)).Should().Equal(
            Convert.ToHexString(EmptyMessageBytes.EmptyAck(0x2000)), Convert.ToHexString(EmptyMessageBytes.EmptyAck(0x2001)));
    }

    [Fact]
    public async Task AResponseAfterTheExchangeWasCanceledIsRejectedWithReset()
    {
        using MessagingHarness h = new();
        CoapEndpoint client = h.Endpoint(ClientAddress);
        TestPeer server = h.Peer(ServerAddress);
        using CancellationTokenSource stop = new();
        List<string> later = [];

        Task<CoapMessage> first = client.Exchanges.SendForManyResponsesAsync(Get(), CoapPeer.Udp(server.EndPoint), r => later.Add(r.GetPayloadString()), stop.Token);
        h.Network.DeliverAll();
        CoapMessage request = server.Last.Parsed;
        server.SendPiggybacked(request, client.LocalEndPoint, CoapCode.Content, "1");
        h.Network.DeliverAll();
        await first;

        await stop.CancelAsync();
        server.SendSeparate(request.Token, 0x3000, client.LocalEndPoint, CoapCode.Content, "late");
        h.Network.DeliverAll();

        later.Should().BeEmpty();
        server.Last.Bytes.Should().Equal(EmptyMessageBytes.Reset(0x3000), "RFC 7252 section 5.3.2: a CON response that matches no request is rejected");
    }

    [Fact]
    public async Task TheFirstResponseFreesTheNStartSlotWhileTheExchangeStaysOpen()
    {
        using MessagingHarness h = new();
        CoapEndpoint client = h.Endpoint(ClientAddress);
        TestPeer server = h.Peer(ServerAddress);

        Task<CoapMessage> first = client.Exchanges.SendForManyResponsesAsync(Get("observed"), CoapPeer.Udp(server.EndPoint), _ => { }, CancellationToken.None);
        h.Network.DeliverAll();
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "1");
        h.Network.DeliverAll();
        await first;

        // NSTART is 1: a second request to the same server goes out at once only if the first freed its slot.
        Task<CoapMessage> second = client.SendRequestAsync(Get("other"), server.EndPoint);
        h.Network.DeliverAll();

        server.Last.Parsed.UriPath.Should().Be("/other");
        client.Exchanges.OutstandingCount.Should().Be(2, "the first exchange stays registered for its later responses");
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "other");
        h.Network.DeliverAll();
        (await second).GetPayloadString().Should().Be("other");
    }
}
