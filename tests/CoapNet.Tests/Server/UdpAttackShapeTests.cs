using CoapNet.Messages;
using CoapNet.Observe;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// Plain UDP under the attack shapes of issue 34 (many sources that each take something and go silent, from one address
/// on many ports and from many addresses), in virtual time: the per-peer and total bounds on observations and on peer
/// state hold, nothing grows past them, and a real client is still answered. UDP has no handshake or connection to
/// evict: a peer is its address and port, and what one holds expires or is bounded.
/// </summary>
public sealed class UdpAttackShapeTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void SilentObserversFromManySourcesGetNoMoreThanTheBoundsAndARealClientIsStillAnswered(bool oneAddress)
    {
        using VirtualTimeServer server = new(
            s =>
            {
                s.MapGet("/obs", _ => CoapResponse.Content("state")).Observable();
                s.MapGet("/x", _ => CoapResponse.Content("ok"));
            },
            configure: o => o.Observe = new ObserveOptions { MaxObservations = 40, MaxObservationsPerPeer = 3 });
        List<TestPeer> attackers = [];
        try
        {
            // 30 sources, each asking to observe 5 times with 5 tokens and never answering a notification.
            int observed = 0;
            for (int i = 0; i < 30; i++)
            {
                TestPeer attacker = new(server.Network, oneAddress ? $"10.0.9.9:{40000 + i}" : $"10.0.{9 + (i / 200)}.{1 + (i % 200)}:40000");
                attackers.Add(attacker);
                int ofThis = 0;
                for (byte token = 1; token <= 5; token++)
                {
                    attacker.Send(Get("/obs", (ushort)((i * 8) + token), token, observe: true, CoapMessageType.NonConfirmable), VirtualTimeServer.Address);
                    server.Settle();
                    if (attacker.Last.Parsed.Observe is not null)
                    {
                        ofThis++;
                    }
                }

                ofThis.Should().BeLessThanOrEqualTo(3, "MaxObservationsPerPeer bounds each address and port");
                observed += ofThis;
            }

            observed.Should().Be(40, "MaxObservations bounds them all");
            server.Server.Observations.Should().Be(40);

            // The real client: its observation is refused as RFC 7641 section 4.1 says (a plain response), its request answered.
            CoapMessage realClient = Ask(server, Get("/obs", 7, 7, observe: true));
            realClient.Code.Should().Be(CoapCode.Content);
            realClient.Observe.Should().BeNull();
            Ask(server, Get("/x", 8, 8)).GetPayloadString().Should().Be("ok");
        }
        finally
        {
            attackers.ForEach(a => a.Dispose());
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ThousandsOfSourcesThatSendOneRequestAndGoSilentDoNotShutARealClientOut(bool oneAddress)
    {
        using VirtualTimeServer server = new(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), configure: o => o.Endpoint.MaxPeers = 100);
        List<TestPeer> attackers = [];
        try
        {
            // Ten times MaxPeers sources, each one confirmable request: the least recently used idle peer makes room
            // for the next (the per-peer state table), so the last source is answered as the first was.
            for (int i = 0; i < 1000; i++)
            {
                TestPeer attacker = new(server.Network, oneAddress ? $"10.0.9.9:{20000 + i}" : $"10.{1 + (i / 250)}.0.{1 + (i % 250)}:40000");
                attackers.Add(attacker);
                attacker.Send(Get("/x", 1, 1), VirtualTimeServer.Address);
            }

            server.Settle();
            attackers.Should().OnlyContain(a => a.Received.Count == 1 && a.Last.Parsed.GetPayloadString() == "ok");
            Ask(server, Get("/x", 9, 9)).GetPayloadString().Should().Be("ok");
        }
        finally
        {
            attackers.ForEach(a => a.Dispose());
        }
    }

    private static CoapMessage Get(string path, ushort messageId, byte token, bool observe = false, CoapMessageType type = CoapMessageType.Confirmable)
    {
        CoapMessage request = new() { Type = type, Code = CoapCode.Get, MessageId = messageId, Token = new[] { token }, Observe = observe ? 0u : null };
        request.UriPath = path;
        return request;
    }

    /// <summary>Sends <paramref name="request"/> from the server's test peer and returns the answer.</summary>
    private static CoapMessage Ask(VirtualTimeServer server, CoapMessage request)
    {
        server.Send(request);
        server.Settle();
        return server.Peer.Last.Parsed;
    }
}
