using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Messaging;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Freshness;

/// <summary>
/// RFC 9175 section 3 in virtual time: our client gives each block-wise upload a Request-Tag of its own, and our server
/// joins blocks by peer, method, URI and Request-Tag, so two uploads to one resource at once both arrive intact.
/// </summary>
public class EchoRequestTagTests
{
    [Fact]
    public async Task TwoConcurrentUploadsToOneResourceCarryDifferentTagsAndBothArriveIntact()
    {
        using MessagingHarness h = new();
        List<byte[]> bodies = [];
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange =>
        {
            bodies.Add(exchange.Request.Payload.ToArray());
            exchange.Respond(new CoapMessage { Code = CoapCode.Changed });
        });
        CoapEndpoint client = h.Endpoint(ClientAddress);
        byte[] one = EchoClientTests.Body(3000, 1);
        byte[] two = EchoClientTests.Body(3000, 2);

        // Both started before anything is delivered, so their blocks interleave on the wire.
        Task<CoapMessage> first = client.SendRequestAsync(EchoClientTests.Put("file", one), server.LocalEndPoint);
        Task<CoapMessage> second = client.SendRequestAsync(EchoClientTests.Put("file", two), server.LocalEndPoint);
        h.Network.DeliverAll();

        (await first).Code.Should().Be(CoapCode.Changed);
        (await second).Code.Should().Be(CoapCode.Changed);
        bodies.Should().HaveCount(2);
        bodies.Should().ContainEquivalentOf(one, o => o.WithStrictOrdering());
        bodies.Should().ContainEquivalentOf(two, o => o.WithStrictOrdering());

        List<CoapMessage> blocks = h.Between(client.LocalEndPoint, server.LocalEndPoint).Select(d => d.Parsed).ToList();
        blocks.Select(b => b.Block1!.Value.Number).Should().Equal([0, 0, 1, 1, 2, 2], "the uploads interleave");
        blocks.Should().OnlyContain(b => b.RequestTag != null, "RFC 9175 section 3.4: every block of an upload carries its tag");
        string tagOfOne = Tag(blocks[0]);
        string tagOfTwo = Tag(blocks[1]);
        tagOfOne.Should().NotBe(tagOfTwo);
        blocks.Where((_, i) => i % 2 == 0).Select(Tag).Should().AllBe(tagOfOne);
        blocks.Where((_, i) => i % 2 == 1).Select(Tag).Should().AllBe(tagOfTwo);
    }

    [Fact]
    public async Task ARequestInOneMessageCarriesNoTagAndACallersOwnTagIsKept()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, handler: exchange => exchange.Respond(new CoapMessage { Code = CoapCode.Changed }));
        CoapEndpoint client = h.Endpoint(ClientAddress);
        CoapMessage tagged = EchoClientTests.Put("file", EchoClientTests.Body(2000, 3));
        tagged.RequestTag = new byte[] { 0x7A };

        Task<CoapMessage> small = client.SendRequestAsync(EchoClientTests.Put("file", "small"), server.LocalEndPoint);
        h.Network.DeliverAll();
        Task<CoapMessage> own = client.SendRequestAsync(tagged, server.LocalEndPoint);
        h.Network.DeliverAll();

        (await small).Code.Should().Be(CoapCode.Changed);
        (await own).Code.Should().Be(CoapCode.Changed);
        List<CoapMessage> requests = h.Between(client.LocalEndPoint, server.LocalEndPoint).Select(d => d.Parsed).ToList();
        requests[0].RequestTag.Should().BeNull();
        requests.Skip(1).Select(Tag).Should().AllBe("7A");
    }

    private static string Tag(CoapMessage message) => message.RequestTag is { } tag ? Convert.ToHexString(tag.Span) : "none";
}
