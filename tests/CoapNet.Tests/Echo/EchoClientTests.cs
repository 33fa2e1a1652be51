using CoapNet.Freshness;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Messaging;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Freshness;

/// <summary>
/// RFC 9175 section 2.3 on a client, in virtual time: a 4.01 with an Echo option is answered by repeating the request
/// once with that value under a new token, and the caller sees only the answer to the repetition; a second challenge
/// reaches the caller instead of a third request; and against our own server the whole exchange, an upload whose first
/// block is challenged included, ends in the handler's answer.
/// </summary>
public class EchoClientTests
{
    private static readonly byte[] EchoValue = [0xEC, 0x40, 0x01, 0x02];

    [Fact]
    public async Task AChallengedRequestIsRepeatedOnceWithTheEchoAndTheCallerSeesTheFinalAnswer()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Put("lamp", "on"), server.EndPoint);
        h.Network.DeliverAll();
        CoapMessage first = server.Last.Parsed;
        first.Echo.Should().BeNull();
        Challenge(server, first, client);
        h.Network.DeliverAll();

        call.IsCompleted.Should().BeFalse("the 4.01 goes no further than the Echo stage");
        server.Received.Should().HaveCount(2);
        CoapMessage second = server.Last.Parsed;
        second.Echo!.Value.ToArray().Should().Equal(EchoValue, "RFC 9175 section 2.3: the request again, with the value received");
        second.Code.Should().Be(CoapCode.Put);
        second.UriPath.Should().Be(first.UriPath);
        second.GetPayloadString().Should().Be("on");
        second.Token.ToArray().Should().NotEqual(first.Token.ToArray(), "a new token; the challenged one may still be in use");

        server.SendPiggybacked(second, client.LocalEndPoint, CoapCode.Changed);
        h.Network.DeliverAll();
        call.IsCompletedSuccessfully.Should().BeTrue();
        (await call).Code.Should().Be(CoapCode.Changed);
        client.Exchanges.OutstandingCount.Should().Be(0);
    }

    [Fact]
    public async Task ASecondChallengeReachesTheCallerWithoutAThirdRequest()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Put("lamp", "on"), server.EndPoint);
        h.Network.DeliverAll();
        Challenge(server, server.Last.Parsed, client);
        h.Network.DeliverAll();
        Challenge(server, server.Last.Parsed, client);
        h.Advance(TimeSpan.FromMinutes(5));

        call.IsCompletedSuccessfully.Should().BeTrue();
        CoapMessage result = await call;
        result.Code.Should().Be(CoapCode.Unauthorized);
        server.Received.Should().HaveCount(2, "one repetition per request, never a loop");
    }

    [Fact]
    public async Task AFourOhOneWithoutEchoIsNotRepeated()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Put("lamp", "on"), server.EndPoint);
        h.Network.DeliverAll();
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Unauthorized);
        h.Network.DeliverAll();

        (await call).Code.Should().Be(CoapCode.Unauthorized);
        server.Received.Should().ContainSingle();
    }

    [Fact]
    public async Task OurClientAndServerEndInTheHandlersAnswerAndTheWireShowsTheChallenge()
    {
        using MessagingHarness h = new();
        int handled = 0;
        CoapEndpoint server = h.Endpoint(ServerAddress, EchoServerTests.Options(h, new EchoOptions { RequireFreshness = true }), exchange =>
        {
            handled++;
            exchange.Respond(new CoapMessage { Code = CoapCode.Changed });
        });
        CoapEndpoint client = h.Endpoint(ClientAddress);

        Task<CoapMessage> call = client.SendRequestAsync(Put("lamp", "on"), server.LocalEndPoint);
        h.Network.DeliverAll();

        (await call).Code.Should().Be(CoapCode.Changed);
        handled.Should().Be(1);
        h.Between(server.LocalEndPoint, client.LocalEndPoint).Select(d => d.Parsed.Code).Should().Equal(CoapCode.Unauthorized, CoapCode.Changed);
        List<CoapMessage> requests = h.Between(client.LocalEndPoint, server.LocalEndPoint).Select(d => d.Parsed).ToList();
        requests.Should().HaveCount(2);
        requests[0].Echo.Should().BeNull();
        requests[1].Echo!.Value.ToArray().Should().Equal(h.Between(server.LocalEndPoint, client.LocalEndPoint)[0].Parsed.Echo!.Value.ToArray());
    }

    [Fact]
    public async Task AnUploadWhoseFirstBlockIsChallengedRestartsCleanlyAndArrivesWhole()
    {
        using MessagingHarness h = new();
        List<byte[]> bodies = [];
        CoapEndpoint server = h.Endpoint(ServerAddress, EchoServerTests.Options(h, new EchoOptions { RequireFreshness = true }), exchange =>
        {
            bodies.Add(exchange.Request.Payload.ToArray());
            exchange.Respond(new CoapMessage { Code = CoapCode.Changed });
        });
        CoapEndpoint client = h.Endpoint(ClientAddress);
        byte[] body = Body(3000, 1);

        Task<CoapMessage> call = client.SendRequestAsync(Put("file", body), server.LocalEndPoint);
        h.Network.DeliverAll();

        (await call).Code.Should().Be(CoapCode.Changed);
        bodies.Should().ContainSingle().Which.Should().Equal(body);
        List<CoapMessage> requests = h.Between(client.LocalEndPoint, server.LocalEndPoint).Select(d => d.Parsed).ToList();
        requests.Select(r => r.Block1!.Value.Number).Should().Equal(0, 0, 1, 2);
        requests.Select(r => r.Echo is not null).Should().Equal(false, true, false, false);
        h.Between(server.LocalEndPoint, client.LocalEndPoint).Select(d => d.Parsed.Code)
            .Should().Equal(CoapCode.Unauthorized, CoapCode.Continue, CoapCode.Continue, CoapCode.Changed);
    }

    internal static CoapMessage Put(string path, string payload) => Put(path, System.Text.Encoding.UTF8.GetBytes(payload));

    internal static CoapMessage Put(string path, byte[] payload)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, Payload = payload };
        request.UriPath = path;
        return request;
    }

    internal static byte[] Body(int size, int seed)
    {
        byte[] body = new byte[size];
        new Random(seed).NextBytes(body);
        return body;
    }

    private static void Challenge(TestPeer server, CoapMessage request, CoapEndpoint client)
    {
        CoapMessage challenge = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Unauthorized, MessageId = request.MessageId, Token = request.Token };
        challenge.Echo = EchoValue;
        server.Send(challenge, client.LocalEndPoint);
    }
}
