using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// RFC 7252 section 5.4.1 on the client: a response carrying a critical option that nothing in the
/// stack processes is rejected (RST for a CON) and the caller gets an exception naming the option,
/// never a partial body reported as success. Unknown elective options are ignored.
/// </summary>
public class CriticalResponseOptionTests
{
    [Fact]
    public async Task APiggybackedResponseWithAnUnprocessedQBlock1IsRejectedWithAnExceptionNamingIt()
    {
        using MessagingHarness h = new();
        (CoapEndpoint client, TestPeer server, Task<CoapMessage> pending, CoapMessage request) = SendGet(h);

        // Q-Block1 (RFC 9177) answers a robust block-wise upload: nothing here processes it.
        CoapMessage odd = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Continue, MessageId = request.MessageId, Token = request.Token };
        odd.Options.Add(CoapOptionNumber.QBlock1, new CoapBlock(0, true, 6).Encoded);
        server.Send(odd, client.LocalEndPoint);
        h.Network.DeliverAll();

        CoapBadOptionException rejected = (await pending.Invoking(p => p).Should().ThrowAsync<CoapBadOptionException>()).Which;
        rejected.Option.Should().Be(CoapOptionNumber.QBlock1);
        rejected.Message.Should().Contain("Q-Block1 (19)").And.Contain("5.4.1");
    }

    [Fact]
    public async Task ASeparateConfirmableResponseWithAnUnknownCriticalOptionGetsResetAndFailsTheRequest()
    {
        using MessagingHarness h = new();
        (CoapEndpoint client, TestPeer server, Task<CoapMessage> pending, CoapMessage request) = SendGet(h);
        server.SendAck(request.MessageId, client.LocalEndPoint);

        CoapMessage separate = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Content, MessageId = 0x4242, Token = request.Token };
        separate.Options.Add((CoapOptionNumber)65001, "x"u8.ToArray());
        server.Send(separate, client.LocalEndPoint);
        h.Network.DeliverAll();

        server.Last.Bytes.Should().Equal(EmptyMessageBytes.Reset(0x4242), "a rejected CON is answered with RST (RFC 7252 section 4.2)");
        (await pending.Invoking(p => p).Should().ThrowAsync<CoapBadOptionException>()).Which.Option.Should().Be((CoapOptionNumber)65001);
    }

    [Fact]
    public async Task AnUnknownElectiveOptionIsIgnored()
    {
        using MessagingHarness h = new();
        (CoapEndpoint client, TestPeer server, Task<CoapMessage> pending, CoapMessage request) = SendGet(h);

        CoapMessage response = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = request.MessageId, Token = request.Token };
        response.Options.Add((CoapOptionNumber)65000, "x"u8.ToArray());
        response.SetPayload("fine");
        server.Send(response, client.LocalEndPoint);
        h.Network.DeliverAll();

        (await pending).GetPayloadString().Should().Be("fine");
    }

    /// <summary>A GET from a client endpoint to a scripted server, delivered: what the server answers is up to the test.</summary>
    private static (CoapEndpoint Client, TestPeer Server, Task<CoapMessage> Pending, CoapMessage Request) SendGet(MessagingHarness h)
    {
        CoapEndpoint client = h.Endpoint(ClientAddress);
        TestPeer server = h.Peer(ServerAddress);
        Task<CoapMessage> pending = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        return (client, server, pending, server.Last.Parsed);
    }
}
