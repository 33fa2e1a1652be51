using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

// CoapRequestBuilder splits a URI into options once (RFC 7252 section 6.4) without System.Uri; it must give the
// options SetUri gives for the same URI, and name the problem when the text is not a CoAP URI.
public class CoapRequestBuilderTests
{
    public static TheoryData<string> AgreeingUris { get; } = new()
    {
        "coap://example.com:5683/~sensors/temp.xml",
        "coap://EXAMPLE.com/%7Esensors/temp.xml",
        "coap://EXAMPLE.com:/%7esensors/temp.xml",
        "coap://sensor.local:5690/sensors/temperature/latest?unit=C",
        "coap://sensor.local",
        "coap://sensor.local/",
        "coap://sensor.local//a//",
        "coap://sensor.local/a%2Fb/c?x=1&&y=%26&z",
        "coap://sensor.local/%FF%00?%FE",
        "coap://sensor.local/a?",
        "coap://192.0.2.1/status",
        "coap://192.0.2.1:61616/status",
        "coap://[2001:db8::1]/status?q",
        "coap://[2001:db8::1]:5684/status",
        "coaps://sensor.local:5684/secure",
        "coaps://sensor.local:5683/secure",
        "coap+tcp://sensor.local/t",
        "coaps+tcp://sensor.local:5684/t",
        "coap+ws://sensor.local/t",
        "coaps+ws://sensor.local:443/t",
        "COAP://Sensor.Local/Path/Keeps/Case",
        "coap://sensor.local/sensors/t\u00e9mp\u00e9rature",
        "coap://b\u00fccher.example/books",
        "coap://sensor.local/a/b/../c/./d",
    };

    [Theory]
    [MemberData(nameof(AgreeingUris))]
    public void GivesTheOptionsSetUriGives(string uri)
    {
        CoapMessage expected = CoapMessage.CreateRequest(CoapCode.Get, new Uri(uri));

        CoapMessage built = new CoapRequestBuilder(uri).Build(CoapCode.Get);

        built.Options.Should().Equal(expected.Options);
        built.Code.Should().Be(CoapCode.Get);
        built.Type.Should().Be(CoapMessageType.Confirmable);
    }

    [Fact]
    public void ExposesTheDestinationHostAndPort()
    {
        CoapRequestBuilder name = new("coap://Sensor.Local/t");
        CoapRequestBuilder v6 = new("coaps://[2001:DB8::1]:7000/t");
        CoapRequestBuilder v4 = new("coap+ws://192.0.2.1");

        (name.Scheme, name.Host, name.Port).Should().Be(("coap", "sensor.local", 5683));
        (v6.Scheme, v6.Host, v6.Port).Should().Be(("coaps", "2001:DB8::1", 7000));
        (v4.Scheme, v4.Host, v4.Port).Should().Be(("coap+ws", "192.0.2.1", 80));
    }

    [Fact]
    public void PercentDecodesToTheEncodedBytesEvenWhenTheyAreNotUtf8()
    {
        CoapMessage built = new CoapRequestBuilder("coap://h/%FFa%2fb?k=%26%3D&%00").Build(CoapCode.Get);

        built.Options.GetAll(CoapOptionNumber.UriPath).ToArray().Select(e => Convert.ToHexString(e.Value.Span)).Should().Equal("FF612F62");
        built.Options.GetAll(CoapOptionNumber.UriQuery).ToArray().Select(e => Convert.ToHexString(e.Value.Span)).Should().Equal("6B3D263D", "00");
    }

    [Theory]
    [InlineData("coap://h/a/b/c/./../../g", "a", "g")]
    [InlineData("coap://h/a/b/.", "a", "b", "")]
    [InlineData("coap://h/a/b/..", "a", "")]
    [InlineData("coap://h/..", new string[0])]
    [InlineData("coap://h/./a", "a")]
    public void RemovesDotSegmentsAsRfc3986Section524Does(string uri, params string[] segments)
    {
        new CoapRequestBuilder(uri).Build(CoapCode.Get).GetUriPathSegments().Should().Equal(segments);
    }

    [Fact]
    public void EveryBuiltRequestIsIndependentOfTheBuilderAndOfTheOthers()
    {
        CoapRequestBuilder builder = new("coap://h/a/b?q=1");
        CoapMessage first = builder.Build(CoapCode.Put, CoapMessageType.NonConfirmable);
        first.Options.Add(CoapOptionNumber.UriPath, "changed");
        first.UriHost = "other";

        CoapMessage second = builder.Build(CoapCode.Get);

        second.UriHost.Should().Be("h");
        second.GetUriPathSegments().Should().Equal("a", "b");
        second.MessageId.Should().Be(0);
        second.Token.IsEmpty.Should().BeTrue();
        second.Payload.IsEmpty.Should().BeTrue();
        first.Type.Should().Be(CoapMessageType.NonConfirmable);
        first.Code.Should().Be(CoapCode.Put);
    }

    [Fact]
    public void AnIpLiteralAtTheDefaultPortWithoutPathGivesNoOptions()
    {
        CoapMessage built = new CoapRequestBuilder("coap://127.0.0.1:5683/").Build(CoapCode.Get);

        built.HasOptions.Should().BeFalse();
    }

    [Theory]
    [InlineData("coap://h", "a/b", "coap://h/a/b")]
    [InlineData("coap://h/", "a/b", "coap://h/a/b")]
    [InlineData("coap://h/base", "a/b", "coap://h/base/a/b")]
    [InlineData("coap://h/base/", "a", "coap://h/base/a")]
    [InlineData("coap://h/base?x=1", "a?y=2&z", "coap://h/base/a?x=1&y=2&z")]
    [InlineData("coap://h:7000/base", "%7Ea/", "coap://h:7000/base/~a/")]
    [InlineData("coap://h/base", "", "coap://h/base")]
    [InlineData("coap://h/base", "?only=query", "coap://h/base?only=query")]
    public void WithPathAppendsSegmentsAndArguments(string baseUri, string relativePath, string expected)
    {
        CoapRequestBuilder parent = new(baseUri);

        CoapMessage built = parent.WithPath(relativePath).Build(CoapCode.Get);

        built.Options.Should().Equal(CoapMessage.CreateRequest(CoapCode.Get, new Uri(expected)).Options);
        parent.Build(CoapCode.Get).Options.Should().Equal(CoapMessage.CreateRequest(CoapCode.Get, new Uri(baseUri)).Options, "the parent is unchanged");
    }

    [Fact]
    public void ApplyToReplacesOnlyTheUriOptions()
    {
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Post, new Uri("coap://old:7000/x/y?z"));
        message.ContentFormat = CoapContentFormat.Json;
        message.Accept = CoapContentFormat.Cbor;

        new CoapRequestBuilder("coap://new/a").ApplyTo(message);

        message.UriHost.Should().Be("new");
        message.UriPort.Should().BeNull();
        message.GetUriPathSegments().Should().Equal("a");
        message.Options.Contains(CoapOptionNumber.UriQuery).Should().BeFalse();
        message.ContentFormat.Should().Be(CoapContentFormat.Json);
        message.Accept.Should().Be(CoapContentFormat.Cbor);
    }

    [Theory]
    [InlineData("sensor.local/t", "scheme")]
    [InlineData("/relative/path", "scheme")]
    [InlineData("http://sensor.local/t", "'http'")]
    [InlineData("coap:sensor.local/t", "no authority")]
    [InlineData("coap://sensor.local/t#frag", "fragment at index 21")]
    [InlineData("coap://user@sensor.local/t", "user information")]
    [InlineData("coap:///t", "no host")]
    [InlineData("coap://:5683/t", "no host")]
    [InlineData("coap://sensor.local:99999/t", "'99999'")]
    [InlineData("coap://sensor.local:80a/t", "'80a'")]
    [InlineData("coap://[2001:db8::1/t", "does not close")]
    [InlineData("coap://[not-an-ip]/t", "not an IPv6 address")]
    [InlineData("coap://[2001:db8::1]x/t", "after the IP literal")]
    [InlineData("coap://sensor.local/a%2", "malformed percent-encoding at index 21")]
    [InlineData("coap://sensor.local/a%G0", "malformed percent-encoding at index 21")]
    [InlineData("coap://sensor.local/a b", "' ' at index 21")]
    [InlineData("coap://sensor.local/a\\b", "'\\' at index 21")]
    [InlineData("coap://sensor.local/a?b c", "' ' at index 23")]
    [InlineData("coap://sens<or/a", "'<' at index 11")]
    public void RejectsTextThatIsNotACoapUriAndSaysWhy(string uri, string problem)
    {
        Action create = () => _ = new CoapRequestBuilder(uri);

        create.Should().Throw<ArgumentException>().Where(e => e.ParamName == "uri" && e.Message.Contains(problem, StringComparison.Ordinal));
    }

    [Fact]
    public void RejectsSegmentsArgumentsAndHostsLongerThanTheOptionsHold()
    {
        string longText = new('a', 256);

        ((Action)(() => _ = new CoapRequestBuilder("coap://h/" + longText))).Should().Throw<ArgumentException>().WithMessage("*Uri-Path holds at most 255*");
        ((Action)(() => _ = new CoapRequestBuilder("coap://h/p?" + longText))).Should().Throw<ArgumentException>().WithMessage("*Uri-Query holds at most 255*");
        ((Action)(() => _ = new CoapRequestBuilder("coap://" + longText + "/p"))).Should().Throw<ArgumentException>().WithMessage("*Uri-Host holds at most 255*");
        ((Action)(() => _ = new CoapRequestBuilder("coap://h/%41" + new string('a', 254)))).Should().NotThrow("255 decoded bytes fit");
    }

    [Theory]
    [InlineData("/absolute", "starts with '/'")]
    [InlineData("a/../b", "dot segment at index 2")]
    [InlineData("./b", "dot segment at index 0")]
    [InlineData("a#f", "fragment at index 1")]
    [InlineData("a%zz", "malformed percent-encoding at index 1")]
    [InlineData("a b", "' ' at index 1")]
    public void WithPathRejectsWhatItCannotAppendAndSaysWhy(string relativePath, string problem)
    {
        Action append = () => new CoapRequestBuilder("coap://h/base").WithPath(relativePath);

        append.Should().Throw<ArgumentException>().Where(e => e.ParamName == "relativePath" && e.Message.Contains(problem, StringComparison.Ordinal));
    }

    [Fact]
    public void BuildRejectsAResponseCodeOrAnAckType()
    {
        CoapRequestBuilder builder = new("coap://h/a");

        ((Action)(() => builder.Build(CoapCode.Content))).Should().Throw<ArgumentException>().Where(e => e.ParamName == "method");
        ((Action)(() => builder.Build(CoapCode.Get, CoapMessageType.Acknowledgement))).Should().Throw<ArgumentException>().Where(e => e.ParamName == "type");
    }

    [Fact]
    public void NullArgumentsThrowArgumentNullException()
    {
        ((Action)(() => _ = new CoapRequestBuilder(null!))).Should().Throw<ArgumentNullException>();
        ((Action)(() => new CoapRequestBuilder("coap://h").WithPath(null!))).Should().Throw<ArgumentNullException>();
        ((Action)(() => new CoapRequestBuilder("coap://h").ApplyTo(null!))).Should().Throw<ArgumentNullException>();
    }
}
