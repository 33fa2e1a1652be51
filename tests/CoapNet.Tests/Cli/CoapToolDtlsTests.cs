using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Tests.Dtls;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Cli;

/// <summary>coaps:// in the tool with a pre-shared key, libcoap's -u and -k, against our DTLS server on 127.0.0.1.</summary>
public sealed class CoapToolDtlsTests
{
    [Fact]
    public async Task GetsAndObservesOverDtlsWithTheKeyAsTextOrHex()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s =>
            {
                s.MapGet("/who", request => CoapResponse.Content("hello " + request.Peer.SecurityContext?.Identity));
                s.MapGet("/tick", _ => CoapResponse.Content("tick")).Observable();
            },
            out DtlsServerTransport _);
        string uri = DtlsLoopback.Uri(server.EndPoint, "/who").ToString();
        string hex = "0x" + Convert.ToHexStringLower(DtlsLoopback.Key);

        CoapToolResult text = await CoapTool.RunAsync("get", uri, "-u", DtlsLoopback.Identity, "-k", "secretPSK");
        CoapToolResult viaHex = await CoapTool.RunAsync("get", uri, "-u", DtlsLoopback.Identity, "-k", hex);
        CoapToolResult observed = await CoapTool.RunAsync("observe", DtlsLoopback.Uri(server.EndPoint, "/tick").ToString(), "-u", DtlsLoopback.Identity, "-k", hex, "--count", "1");

        text.ExitCode.Should().Be(0, text.ToString());
        text.OutputText.Should().Be("hello psk:" + DtlsLoopback.Identity);
        viaHex.OutputText.Should().Be(text.OutputText);
        observed.ExitCode.Should().Be(0, observed.ToString());
        observed.OutputText.Should().Be("tick\n");
        server.Server.Observations.Should().Be(0);
    }

    [Fact]
    public async Task AWrongKeyGetsNoAnswerAndSaysSo()
    {
        // The handshake cannot complete; whether the client hears an alert or only silence is the DTLS layer's (today: silence until --timeout).
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/who", _ => CoapResponse.Content("no")), out DtlsServerTransport _);

        CoapToolResult result = await CoapTool.RunAsync("get", DtlsLoopback.Uri(server.EndPoint, "/who").ToString(), "-u", DtlsLoopback.Identity, "-k", "wrong", "--timeout", "3");

        result.ExitCode.Should().NotBe(0, result.ToString());
        result.Output.Should().BeEmpty();
        result.Error.Should().Contain("error:");
    }

    [Theory]
    [InlineData("coaps://127.0.0.1/x")]
    [InlineData("coaps://127.0.0.1/x", "-u", "id")]
    [InlineData("coap://127.0.0.1/x", "-u", "id", "-k", "key")]
    [InlineData("coaps://127.0.0.1/x", "-u", "id", "-k", "0xabc")]
    public async Task CoapsAndTheKeyGoTogether(params string[] arguments)
    {
        CoapToolResult result = await CoapTool.RunAsync(["get", .. arguments]);

        result.ExitCode.Should().Be(2, result.ToString());
        result.Error.Should().Contain("error:");
    }
}
