using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Tests.Interop;

/// <summary>Confirmable requests complete over a path that loses datagrams in both directions.</summary>
public sealed class LossyPathTests
{
    [SkippableFact]
    public async Task ConfirmableRequestsToLibcoapCompleteThroughALossyRelay()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using LossyUdpRelay relay = new(server.EndPoint, dropShare: 0.2, seed: 7252);

        // Short timers keep the test fast (the back-off doubling is the RFC's): eight lost round trips in a row
        // would still complete within about 15 s.
        CoapClientOptions options = new()
        {
            Endpoint = new CoapEndpointOptions
            {
                TransmissionParameters = new CoapTransmissionParameters { AckTimeout = TimeSpan.FromMilliseconds(20), MaxRetransmit = 8 },
                Random = new Random(1),
            },
        };
        await using CoapClient client = new(options);
        Uri uri = new($"coap://127.0.0.1:{relay.EndPoint.Port}/");

        for (int i = 0; i < 25; i++)
        {
            CoapResponse response = await client.GetAsync(uri);
            response.Code.Should().Be(CoapCode.Content);
            response.GetPayloadString().Should().Contain("libcoap");
        }

        relay.DroppedToServer.Should().BeGreaterThan(0, "the relay dropped requests");
        relay.DroppedToClient.Should().BeGreaterThan(0, "the relay dropped responses");
    }
}
