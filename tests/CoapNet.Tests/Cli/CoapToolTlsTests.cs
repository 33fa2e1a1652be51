using CoapNet.Samples.Server;
using CoapNet.Tests.Server;
using CoapNet.Tests.Tls;
using CoapNet.Tls;

namespace CoapNet.Tests.Cli;

/// <summary>The coap tool's coaps+tcp:// requests with --ca, --cert and --key, against our server on loopback.</summary>
public sealed class CoapToolTlsTests : IDisposable
{
    private readonly PemFiles _pem = new();

    public void Dispose() => _pem.Dispose();

    [Fact]
    public async Task GetsOverCoapsTcpTrustingTheCaGiven()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));

        CoapToolResult result = await CoapTool.RunAsync("get", TlsLoopback.Uri(server, "/hello").ToString(), "--ca", Pem("ca.pem"));

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.TrimEnd().Should().Be("Hello, CoAP!");
    }

    [Fact]
    public async Task RefusesAServerItsTrustDoesNotCoverAndSaysWhy()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));

        CoapToolResult result = await CoapTool.RunAsync("get", TlsLoopback.Uri(server, "/hello").ToString(), "--ca", Pem("other-ca.pem"));

        result.ExitCode.Should().NotBe(0, result.ToString());
        result.OutputText.Should().BeEmpty();
        result.Error.Should().Contain("certificate");
    }

    [Fact]
    public async Task PresentsTheClientCertificateGiven()
    {
        await using LoopbackServer server = TlsLoopback.StartWhoAmI(TlsClientCertificateMode.Required);

        CoapToolResult result = await CoapTool.RunAsync("get", TlsLoopback.Uri(server, "/whoami").ToString(), "--ca", Pem("ca.pem"), "--cert", Pem("client.pem"), "--key", Pem("client.key"));

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().StartWith("cert:CN=device-7 over TLS");
    }

    [Fact]
    public async Task ACertificateWithoutItsKeyIsAUsageError()
    {
        CoapToolResult result = await CoapTool.RunAsync("get", "coaps+tcp://127.0.0.1/hello", "--cert", Pem("client.pem"));

        result.ExitCode.Should().Be(2, result.ToString());
        result.Error.Should().Contain("--cert and --key go together");
    }

    private string Pem(string name) => _pem[name];
}
