using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using CoapNet.Freshness;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Interop;
using CoapNet.Transports;

namespace CoapNet.Tests.Freshness;

/// <summary>
/// RFC 9175 section 2.3 against libcoap 4.3's coap-client over real loopback sockets: our server, requiring fresh unsafe
/// requests, answers libcoap's PUT with 4.01 and an Echo value, and libcoap repeats the PUT with that value by itself,
/// which our server processes. libcoap's -v 7 log shows the PDUs it sent and received; our handler shows what arrived.
/// </summary>
public sealed class LibCoapEchoTests
{
    [SkippableFact]
    public async Task LibCoapAnswersOurChallengeByRepeatingThePutWithTheEcho()
    {
        ConcurrentQueue<CoapMessage> handled = new();
        await using CoapEndpoint server = new(
            new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)),
            new CoapEndpointOptions { Echo = new EchoOptions { RequireFreshness = true } })
        {
            RequestHandler = exchange =>
            {
                handled.Enqueue(exchange.Request);
                CoapMessage response = new() { Code = CoapCode.Changed };
                response.SetPayload("done");
                exchange.Respond(response);
            },
        };
        server.Start();

        Process client = LibCoap.Start(LibCoap.Client, "-m", "put", "-e", "on", "-B", "10", "-v", "7", $"coap://127.0.0.1:{server.LocalEndPoint.Port}/lamp");
        string output;
        try
        {
            output = await LibCoap.ReadOutputAsync(client, TimeSpan.FromSeconds(30));
        }
        finally
        {
            LibCoap.Stop(client);
        }

        // Our handler ran once, for the repetition: the first PUT was answered 4.01 by the Echo stage.
        CoapMessage processed = handled.Should().ContainSingle(output).Which;
        processed.Code.Should().Be(CoapCode.Put);
        processed.Echo.Should().NotBeNull("libcoap repeated the PUT with the Echo value (RFC 9175 section 2.3)\n" + output);
        processed.Echo!.Value.Length.Should().Be(16, "our value: an 8-byte timestamp and an 8-byte MAC");
        processed.GetPayloadString().Should().Be("on");

        // libcoap's own log: the challenge it received, then the 2.04 to its repetition, which it reports.
        output.Should().Contain("c:4.01", "libcoap logs the 4.01 it received");
        output.Should().Contain("Echo", "the 4.01 it logged carries the Echo option");
        output.IndexOf("c:4.01", StringComparison.Ordinal).Should().BeLessThan(output.IndexOf("c:2.04", StringComparison.Ordinal), output);
        string echo = "Echo:0x" + Convert.ToHexString(processed.Echo.Value.Span).ToLowerInvariant();
        output.Split('\n').Where(line => line.Contains("c:PUT", StringComparison.Ordinal)).Should().HaveCount(2, "the PUT and its repetition (libcoap 4.3.1 logs each PDU it sends)\n" + output)
            .And.Subject.Last().Should().Contain(echo, "the repetition carries the value of our 4.01 (libcoap also draws a new token for it)");
        output.Split('\n').Should().Contain(line => line.Contains("c:4.01", StringComparison.Ordinal) && line.Contains(echo, StringComparison.Ordinal));
        output.Should().Contain("done", "libcoap prints the payload of the final answer");
    }
}
