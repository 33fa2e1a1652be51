using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Tcp;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>A storm of malformed datagrams costs a bounded number of warning lines, and the count of the rest is not lost.</summary>
public class MalformedLogRateTests
{
    [Fact]
    public void AStormOfMalformedDatagramsWritesTenWarningsASecondAndThenSaysHowManyMoreThereWere()
    {
        using MessagingHarness h = new();
        ListLoggerFactory log = new();
        CoapEndpoint server = h.Endpoint(ServerAddress, new CoapEndpointOptions { TimeProvider = h.Time, LoggerFactory = log });
        TestPeer attacker = h.Peer(ClientAddress);
        byte[] tooShort = [0x50, 0x01];

        for (int i = 0; i < 200; i++)
        {
            attacker.SendBytes(tooShort, server.LocalEndPoint);
        }

        h.Network.DeliverAll();
        log.Warnings.Should().HaveCount(10);
        log.Warnings.Should().AllSatisfy(w => w.Should().Contain("malformed datagram"));
        log.WarningKeys[0].Should().Contain("Peer", "every log line names the other side by the same key, over UDP as over TCP");

        h.Time.Advance(TimeSpan.FromSeconds(1));
        attacker.SendBytes(tooShort, server.LocalEndPoint);
        h.Network.DeliverAll();

        log.Warnings.Should().HaveCount(12);
        log.Warnings[10].Should().StartWith("190 more malformed datagrams");
        log.Warnings[11].Should().Contain("malformed datagram");
    }
}
