using System.Text.RegularExpressions;
using CoapNet.Cli;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.Cli;

/// <summary>The -v dump as the library logs it, in virtual time on the in-memory network: every retransmission is a line of its own.</summary>
public sealed class WireLoggerTests
{
    [Fact]
    public async Task EachRetransmissionIsALineWithTheMessageIdAsTheDumpWritesIt()
    {
        ManualTimeProvider time = new();
        InMemoryNetwork network = new(time) { DeliversImmediately = true };
        using TestPeer silent = new(network, "10.0.0.2");
        StringWriter error = new();
        Terminal terminal = new(TextWriter.Null, error, outputRedirected: true, errorRedirected: true, () => Stream.Null);
        using ILoggerFactory logging = WireLoggerProvider.CreateFactory(terminal, showPeer: false);
        await using CoapClient client = new(network.CreateTransport("10.0.0.1"), new CoapClientOptions { Endpoint = new CoapEndpointOptions { TimeProvider = time, LoggerFactory = logging, Random = new Random(3) } });

        Task<CoapResponse> pending = client.GetAsync(new Uri("coap://10.0.0.2/silent"));
        for (int i = 0; i < 4; i++)
        {
            // RFC 7252 section 4.2: the timeout doubles after each retransmission, from 2 to 3 s at first.
            time.Advance(TimeSpan.FromSeconds(3 << i));
        }

        string[] lines = error.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        string messageId = Regex.Match(lines[0], @"^-> v:1 t:CON c:GET i:([0-9a-f]{4}) ").Groups[1].Value;
        messageId.Should().NotBeEmpty(lines[0]);
        lines[1..].Should().Equal(
            $"-> retransmission 1/4 of i:{messageId}",
            $"-> retransmission 2/4 of i:{messageId}",
            $"-> retransmission 3/4 of i:{messageId}",
            $"-> retransmission 4/4 of i:{messageId}");
        silent.Received.Should().HaveCount(5);
        pending.IsCompleted.Should().BeFalse("the last retransmission still waits for its timeout");
    }
}
