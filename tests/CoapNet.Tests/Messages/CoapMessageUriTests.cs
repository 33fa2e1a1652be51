using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

// RFC 7252 section 6.4 (decomposing a URI into options) and section 6.5 (composing a URI from options).
public class CoapMessageUriTests
{
    private static CoapMessage Decompose(string uri)
    {
        CoapMessage message = new();
        message.SetUri(new Uri(uri));
        return message;
    }

    private static string[] RawHex(CoapMessage message, CoapOptionNumber number)
        => message.Options.GetAll(number).ToArray().Select(e => Convert.ToHexString(e.Value.Span)).ToArray();

    [Theory]
    [InlineData("coap://example.com:5683/~sensors/temp.xml")]
    [InlineData("coap://EXAMPLE.com/%7Esensors/temp.xml")]
    [InlineData("coap://EXAMPLE.com:/%7esensors/temp.xml")]
    public void TheEquivalentUrisOfSection63GiveTheSameOptions(string uri)
    {
        CoapMessage message = Decompose(uri);

        message.UriHost.Should().Be("example.com");
        message.UriPort.Should().BeNull();
        message.GetUriPathSegments().Should().Equal("~sensors", "temp.xml");
        message.Options.Contains(CoapOptionNumber.UriQuery).Should().BeFalse();
        message.Options.Count.Should().Be(3);
    }

    [Fact]
    public void TheEquivalentUrisOfSection63GiveIdenticalOptionBytes()
    {
        CoapOptionCollection a = Decompose("coap://example.com:5683/~sensors/temp.xml").Options;
        CoapOptionCollection b = Decompose("coap://EXAMPLE.com/%7Esensors/temp.xml").Options;
        CoapOptionCollection c = Decompose("coap://EXAMPLE.com:/%7esensors/temp.xml").Options;

        b.Should().Equal(a);
        c.Should().Equal(a);
    }

    [Theory]
    [InlineData("coap://192.0.2.1/x")]
    [InlineData("coap://[::1]/x")]
    [InlineData("coap://[2001:DB8::1]/x")]
    [InlineData("coap://[fe80::1%25eth0]/x")]
    public void AnIpLiteralHostGivesNoUriHost(string uri)
    {
        CoapMessage message = Decompose(uri);

        message.Options.Contains(CoapOptionNumber.UriHost).Should().BeFalse();
        message.GetUriPathSegments().Should().Equal("x");
    }

    [Theory]
    [InlineData("coap://127.1/", "127.1")]
    [InlineData("coap://192.0.2.1.example/", "192.0.2.1.example")]
    [InlineData("coap://Sensor-1.Example.ORG/", "sensor-1.example.org")]
    [InlineData("coap://localhost/", "localhost")]
    public void ARegisteredNameGivesALowerCaseUriHost(string uri, string host)
    {
        // RFC 3986 section 3.2.2: "127.1" does not match IPv4address, so it is a reg-name.
        Decompose(uri).UriHost.Should().Be(host);
    }

    [Theory]
    [InlineData("coap", 5683)]
    [InlineData("coaps", 5684)]
    [InlineData("coap+tcp", 5683)]
    [InlineData("coaps+tcp", 5684)]
    [InlineData("coap+ws", 80)]
    [InlineData("coaps+ws", 443)]
    public void EachCoapSchemeHasItsDefaultPort(string scheme, int port)
    {
        CoapMessage.GetDefaultPort(scheme).Should().Be(port);
    }

    [Theory]
    [InlineData("coap", 5683)]
    [InlineData("coaps", 5684)]
    [InlineData("coap+tcp", 5683)]
    [InlineData("coaps+tcp", 5684)]
    [InlineData("coap+ws", 80)]
    [InlineData("coaps+ws", 443)]
    public void TheDefaultPortGivesNoUriPortWhetherWrittenOrNot(string scheme, int port)
    {
        Decompose($"{scheme}://example.com:{port}/").UriPort.Should().BeNull();
        Decompose($"{scheme}://example.com/").UriPort.Should().BeNull();
        Decompose($"{scheme}://example.com:{port}/").Options.Contains(CoapOptionNumber.UriPort).Should().BeFalse();
    }

    [Theory]
    [InlineData("coap://h:61616/", 61616)]
    [InlineData("coap://h:5684/", 5684)]
    [InlineData("coaps://h:5683/", 5683)]
    [InlineData("coap+tcp://h:5684/", 5684)]
    [InlineData("coaps+tcp://h:5683/", 5683)]
    [InlineData("coap+ws://h:5683/", 5683)]
    [InlineData("coaps+ws://h:80/", 80)]
    [InlineData("coap://[::1]:1/", 1)]
    [InlineData("coap://h:0/", 0)]
    [InlineData("coap://h:65535/", 65535)]
    public void ANonDefaultPortGivesUriPort(string uri, int port)
    {
        Decompose(uri).UriPort.Should().Be((ushort)port);
    }

    [Theory]
    [InlineData("http")]
    [InlineData("https")]
    [InlineData("COAP")]
    [InlineData("coap+udp")]
    [InlineData("")]
    public void GetDefaultPortRejectsAnythingButALowerCaseCoapScheme(string scheme)
    {
        FluentActions.Invoking(() => CoapMessage.GetDefaultPort(scheme)).Should().Throw<ArgumentException>();
    }

    [Fact]
    public void UpperCaseSchemeAndHostAreAccepted()
    {
        CoapMessage message = Decompose("COAPS://EXAMPLE.COM:5684/A");

        message.UriHost.Should().Be("example.com");
        message.UriPort.Should().BeNull();
        message.GetUriPathSegments().Should().Equal("A");
    }

    [Theory]
    [InlineData("coap://h")]
    [InlineData("coap://h/")]
    [InlineData("coap://h?")]
    [InlineData("coap://h/?")]
    public void AnEmptyOrSingleSlashPathAndAnEmptyQueryGiveNoOptions(string uri)
    {
        CoapMessage message = Decompose(uri);

        message.Options.Contains(CoapOptionNumber.UriPath).Should().BeFalse();
        message.Options.Contains(CoapOptionNumber.UriQuery).Should().BeFalse();
    }

    [Theory]
    [InlineData("coap://h/a", new[] { "a" })]
    [InlineData("coap://h/a/", new[] { "a", "" })]
    [InlineData("coap://h//", new[] { "", "" })]
    [InlineData("coap://h/a//b", new[] { "a", "", "b" })]
    [InlineData("coap://h/a%2Fb/c", new[] { "a/b", "c" })]
    [InlineData("coap://h/a%2fb", new[] { "a/b" })]
    [InlineData("coap://h/a%20b", new[] { "a b" })]
    [InlineData("coap://h/%3F%23%25%26", new[] { "?#%&" })]
    [InlineData("coap://h/%C3%A4/%E2%82%AC", new[] { "ä", "€" })]
    [InlineData("coap://h/a;b=c/d:e@f/!$'()*+,", new[] { "a;b=c", "d:e@f", "!$'()*+," })]
    [InlineData("coap://h/.well-known/core", new[] { ".well-known", "core" })]
    public void EachPathSegmentIsOnePercentDecodedUriPath(string uri, string[] segments)
    {
        Decompose(uri).GetUriPathSegments().Should().Equal(segments);
    }

    [Fact]
    public void PercentEncodingsAreDecodedToBytesEvenWhenTheyAreNotUtf8()
    {
        // RFC 7252 section 6.4 steps 8 and 9 convert each percent-encoding "to the corresponding byte".
        CoapMessage message = Decompose("coap://h/%FF%00/%C3?%FEx");

        RawHex(message, CoapOptionNumber.UriPath).Should().Equal("FF00", "C3");
        RawHex(message, CoapOptionNumber.UriQuery).Should().Equal("FE78");
    }

    [Fact]
    public void DotSegmentsAreRemovedAsReferenceResolutionRequires()
    {
        // RFC 7252 section 6.4 step 2 resolves the URI (RFC 3986 section 5.2), which removes dot segments.
        Decompose("coap://h/a/./b/../c").GetUriPathSegments().Should().Equal("a", "c");
        Decompose("coap://h/..").GetUriPathSegments().Should().BeEmpty();
    }

    [Theory]
    [InlineData("coap://h/?a=1&b=2", new[] { "a=1", "b=2" })]
    [InlineData("coap://h/?a", new[] { "a" })]
    [InlineData("coap://h/?a&&b", new[] { "a", "", "b" })]
    [InlineData("coap://h/?a&", new[] { "a", "" })]
    [InlineData("coap://h/?x=%26y", new[] { "x=&y" })]
    [InlineData("coap://h/?q=a+b", new[] { "q=a+b" })]
    [InlineData("coap://h/?q=a%20b", new[] { "q=a b" })]
    [InlineData("coap://h/p?b/c?d", new[] { "b/c?d" })]
    [InlineData("coap://h/?%3D=%3F", new[] { "==?" })]
    [InlineData("coap://h/?q=%C3%B6", new[] { "q=ö" })]
    public void EachQueryArgumentIsOnePercentDecodedUriQuery(string uri, string[] arguments)
    {
        Decompose(uri).GetUriQueryArguments().Should().Equal(arguments);
    }

    [Theory]
    [InlineData("coap://h/p#f")]
    [InlineData("coap://h/p#")]
    [InlineData("coap://h/?q#f")]
    public void AUriWithAFragmentIsRejected(string uri)
    {
        FluentActions.Invoking(() => Decompose(uri)).Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData("/sensors/temp")]
    [InlineData("sensors/temp")]
    [InlineData("//example.com/sensors")]
    [InlineData("?a=1")]
    public void ARelativeUriIsRejected(string uri)
    {
        CoapMessage message = new();

        message.Invoking(m => m.SetUri(new Uri(uri, UriKind.Relative))).Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData("http://example.com/")]
    [InlineData("https://example.com/")]
    [InlineData("ws://example.com/")]
    [InlineData("file:///etc/hosts")]
    [InlineData("mailto:a@example.com")]
    [InlineData("urn:ietf:rfc:7252")]
    public void AUriWithANonCoapSchemeIsRejected(string uri)
    {
        FluentActions.Invoking(() => Decompose(uri)).Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData("coap://h/a\\b")]
    [InlineData("coap://h/a/b\\")]
    [InlineData("coap://h/?a\\b")]
    public void AUriWithABackslashIsRejectedRatherThanReadAsASlash(string uri)
    {
        // System.Uri silently turns '\' into '/', which would split one segment in two; RFC 3986 allows no '\'.
        FluentActions.Invoking(() => Decompose(uri)).Should().Throw<ArgumentException>();
    }

    [Fact]
    public void AUriWithAnEmptyHostIsRejected()
    {
        // An empty reg-name would need a zero-length Uri-Host, which RFC 7252 section 5.10.1 does not allow.
        FluentActions.Invoking(() => Decompose("coap:///sensors")).Should().Throw<ArgumentException>();
    }

    [Fact]
    public void SetUriRejectsNull()
    {
        new CoapMessage().Invoking(m => m.SetUri(null!)).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void SetUriReplacesTheUriOptionsAndKeepsTheOthers()
    {
        CoapMessage message = Decompose("coap://old.example:1234/a/b?c");
        message.ContentFormat = CoapContentFormat.Cbor;
        message.Observe = 0;

        message.SetUri(new Uri("coap://[::1]/x"));

        message.UriHost.Should().BeNull();
        message.UriPort.Should().BeNull();
        message.GetUriPathSegments().Should().Equal("x");
        message.GetUriQueryArguments().Should().BeEmpty();
        message.ContentFormat.Should().Be(CoapContentFormat.Cbor);
        message.Observe.Should().Be(0);
    }

    [Fact]
    public void ARejectedUriLeavesTheOptionsUnchanged()
    {
        CoapMessage message = Decompose("coap://example.com/a?b");

        message.Invoking(m => m.SetUri(new Uri("coap://other/x#frag"))).Should().Throw<ArgumentException>();
        message.Invoking(m => m.SetUri(new Uri("http://other/x"))).Should().Throw<ArgumentException>();

        message.UriHost.Should().Be("example.com");
        message.GetUriPathSegments().Should().Equal("a");
        message.GetUriQueryArguments().Should().Equal("b");
    }

    [Fact]
    public void GetUriComposesTheUriOfSection63()
    {
        CoapMessage message = new() { UriHost = "example.com" };
        message.SetUriPathSegments(["~sensors", "temp.xml"]);

        message.GetUri().AbsoluteUri.Should().Be("coap://example.com/~sensors/temp.xml");
    }

    [Fact]
    public void GetUriUsesTheDestinationHostWhenThereIsNoUriHost()
    {
        CoapMessage message = new() { UriPath = "/x" };

        message.GetUri(destinationHost: "192.0.2.1").AbsoluteUri.Should().Be("coap://192.0.2.1/x");
        message.GetUri(destinationHost: "::1").AbsoluteUri.Should().Be("coap://[::1]/x");
        message.GetUri(destinationHost: "2001:DB8:0:0:0:0:0:1").AbsoluteUri.Should().Be("coap://[2001:db8::1]/x");
        message.GetUri(destinationHost: "example.net").AbsoluteUri.Should().Be("coap://example.net/x");
    }

    [Fact]
    public void GetUriPrefersUriHostOverTheDestinationHost()
    {
        new CoapMessage { UriHost = "example.com" }.GetUri(destinationHost: "192.0.2.1").AbsoluteUri
            .Should().Be("coap://example.com/");
    }

    [Fact]
    public void GetUriPutsAnIpv6UriHostInBrackets()
    {
        new CoapMessage { UriHost = "[2001:db8::1]" }.GetUri().AbsoluteUri.Should().Be("coap://[2001:db8::1]/");
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    public void GetUriNeedsAHost(string? destinationHost)
    {
        new CoapMessage { UriPath = "/x" }.Invoking(m => m.GetUri(destinationHost: destinationHost))
            .Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData("http")]
    [InlineData("COAP")]
    public void GetUriRejectsANonCoapScheme(string scheme)
    {
        new CoapMessage { UriHost = "h" }.Invoking(m => m.GetUri(scheme)).Should().Throw<ArgumentException>();
    }

    [Fact]
    public void GetUriRejectsANullScheme()
    {
        new CoapMessage { UriHost = "h" }.Invoking(m => m.GetUri(null!)).Should().Throw<ArgumentNullException>();
    }

    [Theory]
    [InlineData("coap", null, null, "coap://h/")]
    [InlineData("coap", (ushort)5683, null, "coap://h/")]
    [InlineData("coap", (ushort)5684, null, "coap://h:5684/")]
    [InlineData("coaps", (ushort)5684, null, "coaps://h/")]
    [InlineData("coaps", (ushort)5683, null, "coaps://h:5683/")]
    [InlineData("coaps", null, 5684, "coaps://h/")]
    [InlineData("coap", null, 61616, "coap://h:61616/")]
    [InlineData("coap", (ushort)1234, 61616, "coap://h:1234/")]
    [InlineData("coap+tcp", null, 5683, "coap+tcp://h/")]
    [InlineData("coaps+tcp", null, null, "coaps+tcp://h/")]
    [InlineData("coap+ws", (ushort)80, null, "coap+ws://h/")]
    [InlineData("coaps+ws", null, 443, "coaps+ws://h/")]
    [InlineData("coaps+ws", null, 8443, "coaps+ws://h:8443/")]
    public void GetUriOmitsTheDefaultPortOfTheScheme(string scheme, ushort? uriPort, int? destinationPort, string expected)
    {
        CoapMessage message = new() { UriHost = "h", UriPort = uriPort };

        message.GetUri(scheme, destinationPort: destinationPort).AbsoluteUri.Should().Be(expected);
    }

    [Theory]
    [InlineData("a/b", "a%2Fb")]
    [InlineData("c d", "c%20d")]
    [InlineData("%", "%25")]
    [InlineData("?", "%3F")]
    [InlineData("#", "%23")]
    [InlineData("[]", "%5B%5D")]
    [InlineData("a\\b", "a%5Cb")]
    [InlineData("ä€", "%C3%A4%E2%82%AC")]
    [InlineData("\U0001F600", "%F0%9F%98%80")]
    [InlineData("-._~", "-._~")]
    [InlineData("!$&'()*+,;=", "!$&'()*+,;=")]
    [InlineData(":@", ":@")]
    public void GetUriPercentEncodesWhatASegmentMayNotHold(string segment, string expected)
    {
        CoapMessage message = new() { UriHost = "h" };
        message.SetUriPathSegments([segment]);

        message.GetUri().AbsoluteUri.Should().Be("coap://h/" + expected);
    }

    [Theory]
    [InlineData("x=1&2", "x=1%262")]
    [InlineData("p/q?r", "p/q?r")]
    [InlineData("a b", "a%20b")]
    [InlineData("#", "%23")]
    [InlineData("%", "%25")]
    [InlineData("=:@!$'()*+,;", "=:@!$'()*+,;")]
    [InlineData("q=ö", "q=%C3%B6")]
    public void GetUriPercentEncodesWhatAQueryArgumentMayNotHoldIncludingTheAmpersand(string argument, string expected)
    {
        CoapMessage message = new() { UriHost = "h" };
        message.Options.Add(CoapOptionNumber.UriQuery, argument);

        message.GetUri().AbsoluteUri.Should().Be("coap://h/?" + expected);
    }

    [Fact]
    public void GetUriJoinsQueryArgumentsWithAmpersands()
    {
        CoapMessage message = new() { UriHost = "h", UriPath = "/p", UriQuery = "a=1&b=2&&c" };

        message.GetUri().AbsoluteUri.Should().Be("coap://h/p?a=1&b=2&&c");
    }

    [Fact]
    public void GetUriKeepsEmptySegments()
    {
        CoapMessage message = new() { UriHost = "h" };

        message.SetUriPathSegments(["a", ""]);
        message.GetUri().AbsoluteUri.Should().Be("coap://h/a/");

        message.SetUriPathSegments(["", ""]);
        message.GetUri().AbsoluteUri.Should().Be("coap://h//");

        message.SetUriPathSegments(["a", "", "b"]);
        message.GetUri().AbsoluteUri.Should().Be("coap://h/a//b");
    }

    [Theory]
    [InlineData("coap://example.com/~sensors/temp.xml")]
    [InlineData("coap://example.com:61616/")]
    [InlineData("coap://example.com/a%2Fb/c%20d/%25/%3F?x=1%262&p/q?r&&")]
    [InlineData("coap://example.com/a/")]
    [InlineData("coap://example.com//")]
    [InlineData("coap://example.com/a;b=c/d:e@f?g=h")]
    [InlineData("coap://example.com/%C3%A4/%E2%82%AC?q=%C3%B6")]
    [InlineData("coap://example.com/%FF?%00")]
    [InlineData("coaps://example.com:5683/x")]
    [InlineData("coaps+tcp://example.com/.well-known/core?rt=temperature")]
    [InlineData("coap+ws://example.com:5683/x")]
    public void AUriRoundTripsThroughTheOptions(string uri)
    {
        Uri original = new(uri);
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Get, original);

        Uri composed = message.GetUri(original.Scheme);

        composed.AbsoluteUri.Should().Be(original.AbsoluteUri);
        CoapMessage again = CoapMessage.CreateRequest(CoapCode.Get, composed);
        again.Options.Should().Equal(message.Options);
    }

    [Theory]
    [InlineData("coap://192.0.2.1/x?y", "192.0.2.1")]
    [InlineData("coap://[::1]:61616/x", "::1")]
    [InlineData("coap://[2001:db8::1]/", "2001:db8::1")]
    public void AUriWithAnIpLiteralRoundTripsGivenTheDestinationAddress(string uri, string destination)
    {
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Get, new Uri(uri));

        message.GetUri(destinationHost: destination).AbsoluteUri.Should().Be(new Uri(uri).AbsoluteUri);
    }

    [Fact]
    public void OptionsRoundTripThroughAUri()
    {
        CoapMessage message = new() { UriHost = "example.com", UriPort = 7 };
        message.SetUriPathSegments(["a/b", "", "c d", "%", "ä", "x?y#z", "[v]"]);
        message.Options.Add(CoapOptionNumber.UriQuery, "k=v&w");
        message.Options.Add(CoapOptionNumber.UriQuery, string.Empty);
        message.Options.Add(CoapOptionNumber.UriQuery, "/?#");
        message.Options.Add(CoapOptionNumber.UriPath, new byte[] { 0xFF, 0xFE });

        CoapMessage again = CoapMessage.CreateRequest(CoapCode.Get, message.GetUri());

        again.Options.Should().Equal(message.Options);
    }
}
