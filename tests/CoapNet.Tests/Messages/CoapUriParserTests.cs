using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

// SetUri and CoapRequestBuilder share one parser (RFC 7252 section 6.4); SetUri gives it the text System.Uri
// has already checked and escaped. These pin where that makes the two entry points behave as they do.
public class CoapUriParserTests
{
    [Fact]
    public void BothEntryPointsRefuseAPathSegmentLongerThanUriPathHolds()
    {
        // RFC 7252 section 5.10.1: Uri-Path holds 0 to 255 bytes.
        string uri = "coap://h/" + new string('a', 256);

        FluentActions.Invoking(() => CoapMessage.CreateRequest(CoapCode.Get, new Uri(uri))).Should().Throw<ArgumentException>().WithMessage("*Uri-Path holds at most 255*");
        FluentActions.Invoking(() => new CoapRequestBuilder(uri)).Should().Throw<ArgumentException>().WithMessage("*Uri-Path holds at most 255*");
    }

    [Fact]
    public void SetUriTakesTheCharactersSystemUriLeavesUnescapedAsTheyAre()
    {
        // System.Uri escapes a stray '%' to "%25" and leaves '[' and ']' in a path as they are.
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://h/[x]/a%zz?[y]"));

        message.GetUriPathSegments().Should().Equal("[x]", "a%zz");
        message.GetUriQueryArguments().Should().Equal("[y]");
    }

    [Fact]
    public void SetUriIgnoresUserInformationWhichTheBuilderRefuses()
    {
        // RFC 7252 section 6.1 has no user information; SetUri has always dropped what System.Uri accepted.
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://user@sensor.local/t"));

        message.UriHost.Should().Be("sensor.local");
        message.GetUriPathSegments().Should().Equal("t");
        FluentActions.Invoking(() => new CoapRequestBuilder("coap://user@sensor.local/t")).Should().Throw<ArgumentException>().WithMessage("*user information*");
    }
}
