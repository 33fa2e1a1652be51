using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// The router matches a request's Uri-Path options on their UTF-8 bytes; it must find exactly the route and
/// values that matching the decoded strings finds, for literals, parameters, catch-alls, backtracking,
/// non-ASCII and empty segments, and for paths that are not valid UTF-8.
/// </summary>
public sealed class RouterByteMatchTests
{
    private static readonly string[] Templates =
    [
        "/hello", "/größe", "/store/{name}", "/store/special", "/a/{x}/c", "/a/b/{*rest}", "/files/{*path}", "/", "/\uFFFD",
    ];

    public static TheoryData<string, byte[][]> Paths { get; } = new()
    {
        { "hello", [Utf8("hello")] },
        { "non-ASCII literal", [Utf8("größe")] },
        { "literal beats parameter", [Utf8("store"), Utf8("special")] },
        { "parameter", [Utf8("store"), Utf8("lamp")] },
        { "empty segment is no parameter", [Utf8("store"), []] },
        { "backtracking to a parameter", [Utf8("a"), Utf8("b"), Utf8("c")] },
        { "catch-all", [Utf8("a"), Utf8("b"), Utf8("d"), Utf8("e")] },
        { "catch-all of nothing", [Utf8("files")] },
        { "root", [] },
        { "unknown", [Utf8("nothing"), Utf8("here")] },
        { "case matters", [Utf8("Hello")] },
        { "invalid UTF-8 decodes to U+FFFD", [[0xFF]] },
        { "invalid UTF-8 as a parameter", [Utf8("store"), [0xC3]] },
        { "invalid UTF-8 under a catch-all", [Utf8("files"), Utf8("x"), [0xFF]] },
        { "deeper than 16 segments", [Utf8("files"), .. Enumerable.Range(0, 20).Select(i => Utf8("s" + i))] },
        { "deeper than the tree", [Utf8("hello"), .. Enumerable.Range(0, 20).Select(i => Utf8("s" + i))] },
    };

    [Theory]
    [MemberData(nameof(Paths))]
    public void MatchingTheOptionBytesFindsWhatMatchingTheDecodedSegmentsFinds(string name, byte[][] segments)
    {
        CoapRouter router = new();
        foreach (string template in Templates)
        {
            router.GetOrAdd(template);
        }

        CoapMessage request = new() { Code = CoapCode.Get };
        foreach (byte[] segment in segments)
        {
            request.Options.Add(CoapOptionNumber.UriPath, segment);
        }

        CoapRoute? byBytes = router.Match(request, out Dictionary<string, string>? bytesValues);
        CoapRoute? byStrings = router.Match(request.GetUriPathSegments(), out Dictionary<string, string>? stringValues);

        byBytes.Should().BeSameAs(byStrings, name);
        bytesValues.Should().BeEquivalentTo(stringValues, name);

        // The same request as received: the walk reads the option bytes where they arrived.
        CoapMessage received = CoapNet.Serialization.CoapMessageSerializer.Udp.Deserialize(CoapNet.Serialization.CoapMessageSerializer.Udp.Serialize(request));
        CoapRoute? byWire = router.Match(received, out Dictionary<string, string>? wireValues);
        byWire.Should().BeSameAs(byStrings, name);
        wireValues.Should().BeEquivalentTo(stringValues, name);
    }

    /// <summary>
    /// A level with few literals is scanned, a wide one searched by halving (its literals kept shorter first, then in byte
    /// order): the boundary between the two is crossed here, and each way finds what the string walk finds.
    /// </summary>
    [Theory]
    [InlineData(3)]
    [InlineData(16)]
    [InlineData(17)]
    [InlineData(40)]
    public void ALevelOfAnyWidthFindsEachLiteralAsTheStringWalkDoes(int width)
    {
        CoapRouter router = new();
        for (int i = 0; i < width; i++)
        {
            router.GetOrAdd($"/item{i}");
        }

        router.GetOrAdd("/{n}/more");
        foreach (string path in (string[])[$"item{width - 1}", "item0", $"item{width}", "item", "ITEM0", "item00"])
        {
            CoapRoute? byWire = router.Match(Received(path), out _);
            CoapRoute? byStrings = router.Match([path], out _);
            byWire.Should().BeSameAs(byStrings, path);
        }

        router.Match(Received("item0"), out _)!.Template.Should().Be("/item0");
        router.Match(Received($"item{width - 1}"), out _)!.Template.Should().Be($"/item{width - 1}");
        router.Match(Received($"item{width}"), out _).Should().BeNull();
    }

    /// <summary>
    /// A wide level's literals mapped in no particular order, of different lengths and with non-ASCII ones among them, are
    /// each found on .NET 8 as on later runtimes, and nothing between them is.
    /// </summary>
    [Fact]
    public void AWideLevelMappedInAnyOrderFindsEachOfItsLiterals()
    {
        List<string> literals = [];
        for (int i = 0; i < 60; i++)
        {
            literals.Add(i % 3 == 0 ? $"größe{i}" : i % 3 == 1 ? new string('z', i % 7 + 1) + i : $"a{i * 7919 % 1000}");
        }

        CoapRouter router = new();
        foreach (string literal in literals.OrderBy(l => l.GetHashCode(StringComparison.Ordinal)))
        {
            router.GetOrAdd("/" + literal);
        }

        foreach (string literal in literals)
        {
            router.Match(Received(literal), out _)!.Template.Should().Be("/" + literal);
        }

        foreach (string missing in (string[])["", "a", "größe", "zz", "a1000", "größe1", "ÿ"])
        {
            router.Match(Received(missing), out _).Should().BeNull(missing);
        }
    }

    private static CoapMessage Received(string segment)
    {
        CoapMessage request = new() { Code = CoapCode.Get };
        request.Options.Add(CoapOptionNumber.UriPath, Utf8(segment));
        return CoapNet.Serialization.CoapMessageSerializer.Udp.Deserialize(CoapNet.Serialization.CoapMessageSerializer.Udp.Serialize(request));
    }

    private static byte[] Utf8(string text) => System.Text.Encoding.UTF8.GetBytes(text);
}
