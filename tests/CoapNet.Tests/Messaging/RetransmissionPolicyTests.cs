using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.Tests.Infrastructure;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The retransmission seam: a <see cref="CoapRetransmissionPolicy"/> chosen in the options owns the timeouts, the
/// back-off, MAX_RETRANSMIT and NSTART of each peer and hears the round trip of every acknowledged message (the
/// default's exact schedule is pinned by <see cref="RetransmissionTests"/>).
/// </summary>
public class RetransmissionPolicyTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromTicks(1);

    [Fact]
    public async Task APolicyChoosesTheTimeoutsTheBackOffAndWhenToGiveUp()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        LinearPolicy policy = new(initial: TimeSpan.FromSeconds(1), step: TimeSpan.FromMilliseconds(500), maxRetransmit: 3, nstart: 1);
        CoapEndpoint client = h.Endpoint(ClientAddress, With(h, policy));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);

        // 1 s, then 1.5 s, 2 s and 2.5 s: sent at 0, 1, 2.5 and 4.5 s; given up at 7 s.
        h.Time.Advance(TimeSpan.FromSeconds(7) - Tick);
        h.Between(client.LocalEndPoint, server.EndPoint).Select(d => d.Time).Should().Equal(
            TimeSpan.Zero, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(2.5), TimeSpan.FromSeconds(4.5));
        request.IsCompleted.Should().BeFalse();
        policy.Peers.Single().BackOffs.Should().Equal([1, 2, 3], "the back-off is asked after each retransmission with its number");

        h.Time.Advance(Tick);
        Func<Task> outcome = () => request.Done();
        (await outcome.Should().ThrowAsync<CoapTimeoutException>()).Which.Message.Should().Contain("after 3 retransmissions");
    }

    [Fact]
    public void AnAcknowledgementWithoutRetransmissionIsAStrongSampleOfTheRoundTrip()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        LinearPolicy policy = new(initial: TimeSpan.FromSeconds(2), step: TimeSpan.Zero, maxRetransmit: 4, nstart: 1);
        CoapEndpoint client = h.Endpoint(ClientAddress, With(h, policy));

        _ = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        h.Time.Advance(TimeSpan.FromMilliseconds(300));
        server.SendAck(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        policy.Peers.Single().Samples.Should().Equal((TimeSpan.FromMilliseconds(300), 0));
    }

    [Fact]
    public async Task AnAcknowledgementAfterARetransmissionIsAWeakSampleFromTheFirstTransmission()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        LinearPolicy policy = new(initial: TimeSpan.FromSeconds(2), step: TimeSpan.Zero, maxRetransmit: 4, nstart: 1);
        CoapEndpoint client = h.Endpoint(ClientAddress, With(h, policy));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Advance(TimeSpan.FromSeconds(2.5));
        server.Received.Should().HaveCount(2, "the first timeout expired once");
        server.SendPiggybacked(server.Last.Parsed, client.LocalEndPoint, CoapCode.Content, "ok");
        h.Network.DeliverAll();

        (await request.Done()).Code.Should().Be(CoapCode.Content);
        policy.Peers.Single().Samples.Should().Equal((TimeSpan.FromSeconds(2.5), 1));
    }

    [Fact]
    public async Task AResetIsNoRoundTripSample()
    {
        using MessagingHarness h = new();
        TestPeer server = h.Peer(ServerAddress);
        LinearPolicy policy = new(initial: TimeSpan.FromSeconds(2), step: TimeSpan.Zero, maxRetransmit: 4, nstart: 1);
        CoapEndpoint client = h.Endpoint(ClientAddress, With(h, policy));

        Task<CoapMessage> request = client.SendRequestAsync(Get(), server.EndPoint);
        h.Network.DeliverAll();
        server.SendReset(server.Last.Parsed.MessageId, client.LocalEndPoint);
        h.Network.DeliverAll();

        Func<Task> outcome = () => request.Done();
        await outcome.Should().ThrowAsync<CoapResetException>();
        policy.Peers.Single().Samples.Should().BeEmpty();
    }

    [Fact]
    public void NStartComesFromThePolicyAndItsStateIsKeptPerPeer()
    {
        using MessagingHarness h = new();
        TestPeer first = h.Peer(ServerAddress);
        TestPeer second = h.Peer("10.0.0.3");
        LinearPolicy policy = new(initial: TimeSpan.FromSeconds(2), step: TimeSpan.Zero, maxRetransmit: 4, nstart: 3);
        CoapEndpoint client = h.Endpoint(ClientAddress, With(h, policy));

        for (int i = 0; i < 4; i++)
        {
            _ = client.SendRequestAsync(Get(), first.EndPoint);
        }

        _ = client.SendRequestAsync(Get(), second.EndPoint);
        h.Network.DeliverAll();

        first.Received.Should().HaveCount(3, "NSTART 3 lets three interactions be outstanding; the fourth waits");
        second.Received.Should().ContainSingle();
        policy.Peers.Select(p => p.Peer.EndPoint).Should().Equal(first.EndPoint, second.EndPoint);
    }

    [Fact]
    public void ServerRetransmissionsFollowTheServersPolicy()
    {
        using MessagingHarness h = new();
        TestPeer client = h.Peer(ClientAddress);
        LinearPolicy policy = new(initial: TimeSpan.FromSeconds(1), step: TimeSpan.FromSeconds(1), maxRetransmit: 2, nstart: 1);
        CoapExchange? held = null;
        CoapEndpoint server = h.Endpoint(ServerAddress, With(h, policy), exchange =>
        {
            exchange.Accept();
            held = exchange;
        });

        client.Send(RawRequest(0x1234, [1, 2]), server.LocalEndPoint);
        h.Network.DeliverAll();
        held!.Respond(held.Request.CreateResponse(CoapCode.Content));
        h.Advance(TimeSpan.FromSeconds(10));

        // The empty ACK, then the CON response at 0, 1 and 3 s (timeouts of 1 s and 2 s).
        IReadOnlyList<Datagram> sent = h.Between(server.LocalEndPoint, client.EndPoint);
        sent.Should().HaveCount(4);
        sent.Skip(1).Select(d => d.Time - sent[1].Time).Should().Equal(TimeSpan.Zero, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(3));
    }

    [Fact]
    public void ANullPolicyIsRefusedByName()
    {
        Action create = () => _ = new CoapEndpoint(new InMemoryNetwork().CreateTransport("10.0.0.9"), new CoapEndpointOptions { RetransmissionPolicy = null! });
        create.Should().Throw<ArgumentException>().WithParameterName(nameof(CoapEndpointOptions.RetransmissionPolicy));
    }

    private static CoapEndpointOptions With(MessagingHarness h, CoapRetransmissionPolicy policy)
        => new()
        {
            TimeProvider = h.Time,
            Random = new Random(7),
            RetransmissionPolicy = policy,
        };

    /// <summary>A policy unlike the RFC's: no jitter and a linear back-off, recording what it is asked and told.</summary>
    private sealed class LinearPolicy(TimeSpan initial, TimeSpan step, int maxRetransmit, int nstart) : CoapRetransmissionPolicy
    {
        public List<PeerState> Peers { get; } = [];

        public override CoapPeerRetransmission CreatePeerState(CoapPeer peer, CoapTransmissionParameters parameters, TimeProvider timeProvider)
        {
            PeerState state = new(peer, initial, step, maxRetransmit, nstart);
            Peers.Add(state);
            return state;
        }
    }

    private sealed class PeerState(CoapPeer peer, TimeSpan initial, TimeSpan step, int maxRetransmit, int nstart) : CoapPeerRetransmission
    {
        public CoapPeer Peer { get; } = peer;

        public List<int> BackOffs { get; } = [];

        public List<(TimeSpan Elapsed, int Retransmissions)> Samples { get; } = [];

        public override int NStart => nstart;

        public override int MaxRetransmit => maxRetransmit;

        public override TimeSpan GetInitialTimeout(Random random) => initial;

        public override TimeSpan GetNextTimeout(TimeSpan initialTimeout, TimeSpan timeout, int retransmissions)
        {
            BackOffs.Add(retransmissions);
            return timeout + step;
        }

        public override void OnAcknowledged(TimeSpan elapsed, int retransmissions) => Samples.Add((elapsed, retransmissions));
    }
}
