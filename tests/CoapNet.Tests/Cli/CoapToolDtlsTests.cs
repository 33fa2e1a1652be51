using System.Net;
using System.Net.Sockets;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Tests.Dtls;
using CoapNet.Tests.Interop;
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
    public async Task AWrongKeyIsOneLineThatSaysSo()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/who", _ => CoapResponse.Content("no")), out DtlsServerTransport _);
        string uri = DtlsLoopback.Uri(server.EndPoint, "/who").ToString();

        // Whether the server alerts or drops our Finished and waits (RFC 6347 section 4.1.2.7), it answered our hello:
        // within -B the tool names a wrong key as the likely cause.
        CoapToolResult result = await CoapTool.RunAsync("get", uri, "-u", DtlsLoopback.Identity, "-k", "wrong", "--timeout", "3");

        result.ExitCode.Should().Be(1, result.ToString());
        result.Output.Should().BeEmpty();
        result.ErrorLines.Should().ContainSingle().Which.Should().StartWith($"error: {uri}: the server at 127.0.0.1:{server.EndPoint.Port} ").And.EndWith("(wrong key?)");
    }

    [Theory]
    [InlineData(20, "bad_record_mac (wrong key?)")]
    [InlineData(51, "decrypt_error (wrong key?)")]
    public async Task AServersAlertIsOneLineThatNamesItAndItsLikelyCause(byte alert, string said)
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/hello", _ => CoapResponse.Content("no")), out DtlsServerTransport _);
        await using UdpRelay relay = new(server.EndPoint, new FinishedRefusal(alert).Rule);
        string uri = DtlsLoopback.Uri(relay.EndPoint, "/hello").ToString();

        CoapToolResult result = await CoapTool.RunAsync("get", uri, "-u", DtlsLoopback.Identity, "-k", "wrong");

        result.ExitCode.Should().Be(1, result.ToString());
        result.ErrorLines.Should().Equal($"error: {uri}: the server at {relay.EndPoint} refused the DTLS handshake: {said}");
    }

    [Fact]
    public async Task AnUnknownIdentityIsOneLineThatSaysSo()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/who", _ => CoapResponse.Content("no")), out DtlsServerTransport _);
        string uri = DtlsLoopback.Uri(server.EndPoint, "/who").ToString();

        CoapToolResult result = await CoapTool.RunAsync("get", uri, "-u", "stranger", "-k", "secretPSK");

        result.ExitCode.Should().Be(1, result.ToString());
        result.ErrorLines.Should().Equal($"error: {uri}: the server at 127.0.0.1:{server.EndPoint.Port} refused the DTLS handshake: unknown_psk_identity (unknown identity?)");
    }

    [Fact]
    public async Task AServerThatNeverAnswersTheHandshakeIsAHandshakeTimeoutNotANoAnswer()
    {
        // Bound, so no ICMP port unreachable ends it sooner, and never read.
        using UdpClient silent = new(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)silent.Client.LocalEndPoint!).Port;
        string uri = $"coaps://127.0.0.1:{port}/hello";

        CoapToolResult result = await CoapTool.RunAsync("get", uri, "-u", DtlsLoopback.Identity, "-k", "secretPSK", "-B", "1");

        result.ExitCode.Should().Be(3, result.ToString());
        result.ErrorLines.Should().Equal($"error: {uri}: the DTLS handshake with 127.0.0.1:{port} got no answer within 1 s: nothing answers DTLS at that address and port");
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
