using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.NoResponse;
using CoapNet.Tests.Tcp;

namespace CoapNet.Tests.NoResponse;

/// <summary>
/// Over TCP (RFC 8323) a response of a class the request declines (RFC 7967 section 2.1) is not written either, and
/// the request stops counting as in flight as a written response would make it: a peer that declines every answer
/// cannot use up the connection's MaxRequestsInFlight, and the connection goes on serving.
/// </summary>
public sealed class NoResponseTcpTests
{
    [Fact]
    public async Task ASuppressedResponseIsNotWrittenAndFreesItsSlotOnTheConnection()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxRequestsInFlight = 2 });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        // Three requests that decline every class, more than MaxRequestsInFlight, then one that declines nothing.
        for (byte token = 1; token <= 3; token++)
        {
            CoapMessage declined = TcpHarness.Get("quiet", token);
            declined.NoResponse = CoapNoResponse.All;
            await peer.SendAsync(declined);
        }

        await peer.SendAsync(TcpHarness.Get("loud", 4));
        CoapMessage first = await peer.ReceiveAsync();

        // Had the suppressed requests kept their slots, the fourth would get 5.03; had they been answered, the first
        // frame back would carry token 1.
        first.Token.ToArray().Should().Equal([4], "the three declined requests got no frame");
        first.Code.Should().Be(CoapCode.Content, "the declined requests no longer count as in flight");
        first.GetPayloadString().Should().Be("/loud");
    }
}
