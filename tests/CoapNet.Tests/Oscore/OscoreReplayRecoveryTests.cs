using System.Buffers.Binary;
using System.Net;
using System.Runtime.CompilerServices;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Oscore.Cose;
using CoapNet.Oscore.Protection;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Oscore;

/// <summary>
/// A server that lost its replay window (RFC 8613 Appendix B.1.2): it processes no request until one echoes a value it
/// sent in a protected 4.01, and from that request's Partial IV on it refuses everything older. Each test has a server and
/// contexts of its own.
/// </summary>
public sealed class OscoreReplayRecoveryTests
{
    [Fact]
    public async Task A_server_without_its_window_challenges_with_Echo_runs_nothing_until_echoed_and_then_refuses_what_came_before()
    {
        int runs = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref runs), new OscoreContextOptions { ReplayWindowKnown = false });
        OscoreContext client = Context("0a", "0b");

        // A request sent before the restart (recorded by an attacker, or simply late): verified, but maybe a replay.
        CoapMessage before = OscoreProtection.ProtectRequest(client, Get(), out RequestBinding beforeBinding);
        before.MessageId = 1;
        CoapMessage challenge = Open(beforeBinding, await RawPeer.Exchange(server.EndPoint, before));
        before.MessageId = 2;
        CoapMessage again = Open(beforeBinding, await RawPeer.Exchange(server.EndPoint, before));

        challenge.Code.Should().Be(CoapCode.Unauthorized);
        challenge.Echo.Should().NotBeNull();
        again.Code.Should().Be(CoapCode.Unauthorized, "every request is challenged while the window is unknown");
        again.Echo!.Value.ToArray().Should().Equal(challenge.Echo!.Value.ToArray());
        Volatile.Read(ref runs).Should().Be(0, "a challenged request is not processed");

        // The client sends the request again with the Echo value, under a new Partial IV: the window starts there.
        CoapMessage echoing = Get();
        echoing.Echo = challenge.Echo;
        CoapMessage fresh = OscoreProtection.ProtectRequest(client, echoing, out RequestBinding freshBinding);
        fresh.MessageId = 3;
        CoapMessage answer = Open(freshBinding, await RawPeer.Exchange(server.EndPoint, fresh));

        answer.Code.Should().Be(CoapCode.Content);
        answer.GetPayloadString().Should().Be("run 1");

        // Everything sent before the echoing request is refused now, and so is that one again.
        before.MessageId = 4;
        CoapMessage replayed = await RawPeer.Exchange(server.EndPoint, before);
        fresh.MessageId = 5;
        CoapMessage replayedFresh = await RawPeer.Exchange(server.EndPoint, fresh);

        replayed.Code.Should().Be(CoapCode.Unauthorized);
        replayed.GetPayloadString().Should().Be("Replay detected");
        replayedFresh.GetPayloadString().Should().Be("Replay detected");
        Volatile.Read(ref runs).Should().Be(1);
    }

    [Theory]
    [InlineData("coap")]
    [InlineData("coap+tcp")]
    public async Task Our_client_repeats_a_challenged_request_with_the_Echo_value_by_itself(string scheme)
    {
        int runs = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref runs), new OscoreContextOptions { ReplayWindowKnown = false }, tcp: scheme == "coap+tcp");
        List<string> wire = [];
        IPEndPoint endPoint = scheme == "coap+tcp" ? server.TcpEndPoint! : server.EndPoint;
        await using CoapClient client = new(new CoapClientOptions
        {
            Endpoint = new CoapEndpointOptions()
                .UseOscore(new OscoreOptions().AddClientContext(endPoint, Context("0a", "0b")))
                .UseStage("Wire", _ => new WireCounter(wire), CoapStagePosition.BelowAll),
        });

        CoapResponse first = await client.GetAsync(server.Uri("/count", scheme));
        CoapResponse second = await client.GetAsync(server.Uri("/count", scheme));

        first.Code.Should().Be(CoapCode.Content);
        first.GetPayloadString().Should().Be("run 1");
        second.GetPayloadString().Should().Be("run 2");
        lock (wire)
        {
            // The first request, its repetition with the Echo value, then the second request alone: the window is known.
            wire.Should().Equal("request", "response", "request", "response", "request", "response");
        }
    }

    [Fact]
    public async Task A_context_whose_store_was_used_in_an_earlier_run_starts_without_a_window()
    {
        int runs = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref runs), new OscoreContextOptions { SequenceStore = new UsedBefore(300) });
        CoapMessage request = OscoreProtection.ProtectRequest(Context("0a", "0b"), Get(), out RequestBinding binding);
        request.MessageId = 7;

        CoapMessage answer = Open(binding, await RawPeer.Exchange(server.EndPoint, request));

        answer.Code.Should().Be(CoapCode.Unauthorized);
        answer.Echo.Should().NotBeNull();
        Volatile.Read(ref runs).Should().Be(0);
    }

    [Fact]
    public async Task Our_client_sends_a_GET_again_under_a_new_Partial_IV_when_later_requests_overtook_it_past_the_replay_window()
    {
        int runs = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref runs), new OscoreContextOptions());

        // The relay holds back the client's first request, and its retransmissions, until 40 later ones have gone through:
        // the server's window (32 numbers, RFC 8613 section 7.4) has then moved past its Partial IV.
        StrongBox<byte[]?> held = new();
        int heldId = -1;
        await using UdpRelay relay = new(server.EndPoint, (toServer, datagram) =>
        {
            if (!toServer || datagram.Length < 4)
            {
                return [datagram];
            }

            int id = BinaryPrimitives.ReadUInt16BigEndian(datagram.AsSpan(2));
            if (heldId < 0)
            {
                heldId = id;
                Volatile.Write(ref held.Value, datagram);
                return [];
            }

            return id == heldId ? [] : [datagram];
        });
        CoapEndpointOptions endpoint = new CoapEndpointOptions().UseOscore(new OscoreOptions().AddClientContext(relay.EndPoint, Context("0a", "0b")));
        endpoint.TransmissionParameters.NStart = 64;
        await using CoapClient client = new(new CoapClientOptions { Endpoint = endpoint });
        Uri uri = new($"coap://127.0.0.1:{relay.EndPoint.Port}/count");

        Task<CoapResponse> overtaken = client.GetAsync(uri);
        await Wait.UntilAsync(() => Volatile.Read(ref held.Value) is not null, "the first request held back", TimeSpan.FromSeconds(30));
        for (int i = 0; i < 40; i++)
        {
            (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        }

        await relay.SendToServerAsync(held.Value!);
        CoapResponse answer = await overtaken;

        answer.Code.Should().Be(CoapCode.Content, "refused as a replay, unprocessed, and sent again under a new Partial IV: {0}", answer.GetPayloadString());
        Volatile.Read(ref runs).Should().Be(41, "the refused request never ran; its repetition did, once");
    }

    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");

    private static CoapMessage Get()
    {
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://127.0.0.1/count"));
        request.Token = new byte[] { 1, 2, 3, 4 };
        return request;
    }

    private static OscoreContext Context(string sender, string recipient, OscoreContextOptions? more = null)
    {
        OscoreContextOptions options = more ?? new OscoreContextOptions();
        options.MasterSecret = Secret;
        options.MasterSalt = Convert.FromHexString("9e7ca92223786340");
        options.SenderId = Convert.FromHexString(sender);
        options.RecipientId = Convert.FromHexString(recipient);
        return new OscoreContext(options);
    }

    private static LoopbackServer Start(Func<int> run, OscoreContextOptions serverContext, bool tcp = false)
    {
        CoapServerOptions options = LoopbackServer.Options(tcp: tcp);
        options.Endpoint.UseOscore(new OscoreOptions().AddServerContext(Context("0b", "0a", serverContext)));
        return LoopbackServer.Start(s => s.MapGet("/count", _ => CoapResponse.Content("run " + run())), options);
    }

    /// <summary>The plaintext of a protected answer to the request of <paramref name="binding"/>.</summary>
    private static CoapMessage Open(RequestBinding binding, CoapMessage answer)
    {
        answer.Options.TryGet(CoapOptionNumber.Oscore, out CoapOptionEntry option).Should().BeTrue("the answer is protected: {0}", answer.GetPayloadString());
        OscoreOptionValue.TryRead(option.Value, out OscoreOptionValue value).Should().BeTrue();
        return OscoreProtection.OpenResponse(binding, answer, value) ?? throw new InvalidDataException("The answer did not verify.");
    }

    /// <summary>A store whose context sent messages in an earlier run: its next number is past 0.</summary>
    private sealed class UsedBefore(long next) : IOscoreSequenceStore
    {
        public long Load() => next;

        public void Reserve(long limit)
        {
        }
    }

    /// <summary>Counts the requests and responses on the client's wire.</summary>
    private sealed class WireCounter(List<string> seen) : CoapStage
    {
        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            lock (seen)
            {
                seen.Add("request");
            }

            next(call, request);
        }

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            lock (seen)
            {
                seen.Add("response");
            }

            next(call, response);
        }
    }
}
