using System.Net;
using CoapNet.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Transports;

/// <summary>
/// The one endpoint parser: a scheme, a host and a port, the port a registered transport's or the CoAP schemes' default
/// when none is written; what it cannot read it says where and why.
/// </summary>
public sealed class CoapAddressTests
{
    [Theory]
    [InlineData("coap://[::]:5683", "coap", "::", 5683, "coap://[::]:5683")]
    [InlineData("coap://0.0.0.0", "coap", "0.0.0.0", 5683, "coap://0.0.0.0:5683")]
    [InlineData("COAPS+TCP://127.0.0.1", "coaps+tcp", "127.0.0.1", 5684, "coaps+tcp://127.0.0.1:5684")]
    [InlineData("coaps://[::1]", "coaps", "::1", 5684, "coaps://[::1]:5684")]
    [InlineData("coap+tcp://Sensor.Example:7000/temp?unit=c", "coap+tcp", "sensor.example", 7000, "coap+tcp://sensor.example:7000")]
    [InlineData("coap+ws://10.0.0.1", "coap+ws", "10.0.0.1", 80, "coap+ws://10.0.0.1:80")]
    public void ReadsTheSchemeTheHostAndThePortOrTheSchemesDefault(string text, string scheme, string host, int port, string written)
    {
        CoapAddress address = CoapAddress.Parse(text);

        address.Scheme.Should().Be(scheme);
        address.Host.Should().Be(host);
        address.Port.Should().Be(port);
        address.IPAddress.Should().Be(IPAddress.TryParse(host, out IPAddress? ip) ? ip : null);
        address.ToString().Should().Be(written);
        CoapAddress.Parse(written).Should().Be(address, "what it writes reads back as itself");
    }

    [Fact]
    public void ARegisteredTransportGivesItsSchemeItsDefaultPort()
    {
        CoapTransportRegistry transports = CoapTransportRegistry.CreateDefault();
        transports.Add(new NamedDatagramFactory("coap+radio", 61616));

        CoapAddress.Parse("coap+radio://10.1.2.3", transports).Port.Should().Be(61616);
        CoapAddress.Parse("coap+radio://10.1.2.3:9", transports).Port.Should().Be(9);
        CoapAddress.TryParse("coap+radio://10.1.2.3", null, out _, out string? error).Should().BeFalse("without the registry the scheme has no default port");
        error.Should().Be("'coap+radio://10.1.2.3' has no port, and its scheme has no default port to stand for it.");
    }

    [Theory]
    [InlineData("coap://127.0.0.1:99999/hello", "'coap://127.0.0.1:99999/hello' has the port '99999', which is not a number from 0 to 65535.")]
    [InlineData("coap://[::1/x", "'coap://[::1/x' opens an IP literal with '[' at index 7 but does not close it.")]
    [InlineData("coap://user@127.0.0.1/", "'coap://user@127.0.0.1/' has user information before '@' at index 11; a CoAP URI has none (RFC 7252 section 6.1).")]
    [InlineData("127.0.0.1:5683", "'127.0.0.1:5683' is not an absolute URI: it does not start with a scheme such as \"coap:\" (RFC 7252 section 6.4 step 1).")]
    [InlineData("localhost:5683", "'localhost:5683' has no authority: a CoAP URI is scheme://host[:port][/path][?query] (RFC 7252 section 6.1).")]
    [InlineData("", "An endpoint address is a URI such as coap://[::]:5683; the text is empty.")]
    public void WhatItCannotReadItSaysWhereAndWhy(string text, string error)
    {
        CoapAddress.TryParse(text, null, out CoapAddress? address, out string? said).Should().BeFalse();

        address.Should().BeNull();
        said.Should().Be(error);
        FluentActions.Invoking(() => CoapAddress.Parse(text)).Should().Throw<FormatException>().WithMessage(error);
    }

    [Fact]
    public void AnEndpointListensOnAnIpAddressWithoutAPath()
    {
        CoapServerOptions options = new();

        FluentActions.Invoking(() => options.Listen("coap://sensor.local:5683")).Should().Throw<FormatException>()
            .WithMessage("'coap://sensor.local:5683' names the host 'sensor.local'; an endpoint listens on an IP address, such as [::] (every interface), 0.0.0.0 or 127.0.0.1.");
        FluentActions.Invoking(() => options.Listen("coap://[::]:5683/hello")).Should().Throw<FormatException>()
            .WithMessage("'coap://[::]:5683/hello' names a resource after its address; an endpoint listens on scheme://host:port alone, such as coap://[::]:5683.");
        FluentActions.Invoking(() => CoapAddress.Parse("coap://sensor.local").ToEndPoint()).Should().Throw<InvalidOperationException>().WithMessage("*names the host 'sensor.local'*");
        options.Listen("coap://[::]:5683/").ListenOptions.Should().ContainSingle().Which.Address.ToString().Should().Be("coap://[::]:5683", "a lone '/' is no path");
    }

    [Theory]
    [InlineData("")]
    [InlineData("1coap")]
    [InlineData("co ap")]
    [InlineData("coap:")]
    public void ASchemeKeepsRfc3986sSyntax(string scheme)
    {
        FluentActions.Invoking(() => new CoapAddress(scheme, new IPEndPoint(IPAddress.Loopback, 1))).Should().Throw<ArgumentException>().WithParameterName("scheme");
        FluentActions.Invoking(() => new NamedDatagramFactory(scheme, 1)).Should().Throw<ArgumentException>().WithParameterName("scheme");
    }

    /// <summary>A datagram transport factory that only has a name and a port, for the parser to look at.</summary>
    private sealed class NamedDatagramFactory(string scheme, int port) : CoapDatagramTransportFactory(scheme, port)
    {
        public override IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context) => throw new InvalidOperationException("Not bound in these tests.");

        public override IDatagramTransport Open(CoapTransportContext context) => throw new InvalidOperationException("Not opened in these tests.");
    }
}
