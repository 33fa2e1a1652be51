using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Messages;

/// <summary>
/// A parsed message, and a response built with a Content-Format, keep their options as wire bytes and build the
/// collection only on demand (issue 11). Whatever is read, changed or written must be the same as with a collection.
/// </summary>
public class WireOptionsTests
{
    /// <summary>A request whose options use every encoding of RFC 7252 section 3.1: plain, 1-byte and 2-byte extended deltas and lengths, and repeats.</summary>
    private static CoapMessage Built()
    {
        CoapMessage message = new()
        {
            Type = CoapMessageType.Confirmable,
            Code = CoapCode.Get,
            MessageId = 0x1234,
            Token = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 },
            UriHost = "a-host-name-longer-than-twelve.example",
            ContentFormat = CoapContentFormat.Json,
            Observe = 0,
            Block2 = new CoapBlock(3, false, 6),
            Payload = new byte[] { 0xAA, 0xBB },
        };
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 2, 2 });
        message.UriPath = "/sensors/" + new string('t', 300) + "/x";
        message.UriQuery = "a=1&b";
        message.Options.Add((CoapOptionNumber)65000, new byte[] { 9 }); // an elective option far away: a 2-byte delta
        return message;
    }

    public static TheoryData<string> Framings => new() { "udp", "tcp" };

    private static CoapMessageSerializer Serializer(string framing) => framing == "udp" ? CoapMessageSerializer.Udp : CoapMessageSerializer.Tcp;

    [Theory]
    [MemberData(nameof(Framings))]
    public void EveryTypedAccessorReadsTheSameAsOnTheBuiltMessage(string framing)
    {
        CoapMessage built = Built();
        CoapMessage parsed = Serializer(framing).Deserialize(Serializer(framing).Serialize(built));

        parsed.HasOptions.Should().BeTrue();
        parsed.Token.ToArray().Should().Equal(built.Token.ToArray());
        parsed.UriHost.Should().Be(built.UriHost);
        parsed.UriPath.Should().Be(built.UriPath);
        parsed.GetUriPathSegments().Should().Equal(built.GetUriPathSegments());
        parsed.UriQuery.Should().Be("a=1&b");
        parsed.GetUriQueryArguments().Should().Equal("a=1", "b");
        parsed.ContentFormat.Should().Be(CoapContentFormat.Json);
        parsed.Observe.Should().Be(0u);
        parsed.Block2.Should().Be(new CoapBlock(3, false, 6));
        parsed.ETag!.Value.ToArray().Should().Equal(1);
        parsed.GetETags().Select(e => e.ToArray()).Should().BeEquivalentTo(new[] { new byte[] { 1 }, new byte[] { 2, 2 } }, o => o.WithStrictOrdering());
        parsed.MaxAge.Should().BeNull();
        parsed.Accept.Should().BeNull();
        string options = built.ToString()[built.ToString().IndexOf('[')..];
        parsed.ToString().Should().EndWith(options, "the options read from the wire are listed like the collection's (TCP has no Message ID)");
        parsed.Options.Select(o => (o.Number, o.Value.ToArray())).Should().BeEquivalentTo(
            built.Options.Select(o => (o.Number, o.Value.ToArray())), o => o.WithStrictOrdering());
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public void AParsedMessageWritesTheSameBytesBeforeAndAfterItsCollectionIsBuilt(string framing)
    {
        byte[] wire = Serializer(framing).Serialize(Built());
        CoapMessage parsed = Serializer(framing).Deserialize(wire);

        Serializer(framing).Serialize(parsed).Should().Equal(wire);
        Serializer(framing).GetSerializedLength(parsed).Should().Be(wire.Length);
        _ = parsed.Options.Count;
        Serializer(framing).Serialize(parsed).Should().Equal(wire);
    }

    [Fact]
    public void ChangesToAParsedMessageKeepItsOtherOptions()
    {
        CoapMessage parsed = CoapMessageSerializer.Udp.Deserialize(CoapMessageSerializer.Udp.Serialize(Built()));

        parsed.Token = new byte[] { 7 };
        parsed.UriPath.Should().Be(Built().UriPath, "the options sat right after the old token");
        parsed.MaxAge = 30;
        parsed.ContentFormat = null;
        parsed.UriQuery = "c=3";

        CoapMessage again = CoapMessageSerializer.Udp.Deserialize(CoapMessageSerializer.Udp.Serialize(parsed));
        again.Token.ToArray().Should().Equal(7);
        again.MaxAge.Should().Be(30u);
        again.ContentFormat.Should().BeNull();
        again.UriQuery.Should().Be("c=3");
        again.UriHost.Should().Be(Built().UriHost);
        again.Block2.Should().Be(new CoapBlock(3, false, 6));
    }

    [Fact]
    public void RemovingAnAbsentOptionChangesNothing()
    {
        byte[] wire = CoapMessageSerializer.Udp.Serialize(Built());
        CoapMessage parsed = CoapMessageSerializer.Udp.Deserialize(wire);

        parsed.MaxAge = null;
        parsed.Accept = null;

        CoapMessageSerializer.Udp.Serialize(parsed).Should().Equal(wire);
    }

    [Theory]
    [InlineData((ushort)0)]
    [InlineData((ushort)50)]
    [InlineData((ushort)255)]
    [InlineData((ushort)256)]
    [InlineData((ushort)11542)]
    public void AResponseCarriesItsContentFormatAndCanStillBeChanged(ushort format)
    {
        CoapResponse first = new(CoapCode.Content, new byte[] { 1 }, format);
        CoapResponse second = new(CoapCode.Content, new byte[] { 2 }, format);

        first.Message.ContentFormat.Should().Be(format);
        first.Options.Should().ContainSingle().Which.Number.Should().Be(CoapOptionNumber.ContentFormat);
        CoapMessage parsed = CoapMessageSerializer.Udp.Deserialize(CoapMessageSerializer.Udp.Serialize(first.Message));
        parsed.ContentFormat.Should().Be(format);

        first.Message.ContentFormat = CoapContentFormat.Cbor;
        first.Message.MaxAge = 5;
        first.Message.ContentFormat.Should().Be(CoapContentFormat.Cbor);
        second.Message.ContentFormat.Should().Be(format, "responses with the same format share its bytes, which a change must not touch");
        second.Message.MaxAge.Should().BeNull();
    }
}
