using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.QBlock;
using CoapNet.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Interop;

/// <summary>
/// A megabyte each way with Q-Block enabled, over real UDP sockets on loopback, through a relay that records (and may
/// drop) every datagram: against libcoap 4.3.1, which has no Q-Block (its coap-server answers the Q-Block1 offer with
/// 4.02 Bad Option, so our client falls back to Block1/Block2, RFC 9177 section 4.1), and between our client and our
/// server, which move the body in Q-Block1 and Q-Block2 sets, also with a share of the datagrams lost.
/// </summary>
public sealed class QBlockLoopbackTests
{
    private const int Megabyte = 1_048_576;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(120);

    [SkippableFact]
    public async Task OurClientOffersQBlockToLibcoapGets402AndMovesAMegabyteBothWaysByteIdentical()
    {
        using LibCoapServer server = LibCoapServer.Start();
        byte[] body = Body(Megabyte, seed: 19);

        (List<RelayedDatagram> relayed, CoapResponse created, CoapResponse read) = await MoveAsync(server.EndPoint, $"/qblock-{Guid.NewGuid().ToString("N")[..8]}", body, dropShare: 0, new QBlockOptions { Enabled = true });

        created.Code.Should().Be(CoapCode.Created, created.GetPayloadString());
        read.Code.Should().Be(CoapCode.Content);
        read.Payload.ToArray().Should().Equal(body, "the megabyte comes back byte for byte");
        List<CoapMessage> toServer = relayed.Where(d => d.ToServer).Select(d => d.Message).ToList();
        List<CoapMessage> toClient = relayed.Where(d => !d.ToServer).Select(d => d.Message).ToList();
        toServer[0].Options.Contains(CoapOptionNumber.QBlock1).Should().BeTrue("the upload's block 0 offers Q-Block1");
        toServer[0].Type.Should().Be(CoapMessageType.Confirmable, "support is not known yet");
        toClient[0].Code.Should().Be(CoapCode.BadOption, "libcoap 4.3.1 has no Q-Block: an unrecognized critical option (RFC 7252 section 5.4.1)");
        toServer.Skip(1).Should().OnlyContain(m => !m.Options.Contains(CoapOptionNumber.QBlock1) && !m.Options.Contains(CoapOptionNumber.QBlock2), "after the refusal the client does not offer Q-Block to this server again");
        toServer.Where(m => m.Block1 is not null).Select(m => m.Block1!.Value.Number).Distinct().Should().HaveCount(Megabyte / 1024, "the upload goes in Block1 blocks (RFC 7959; a CON retransmitted on a loaded machine counts once)");
        toServer.Where(m => m.Block2 is not null).Select(m => m.Block2!.Value.Number).Distinct().Should().HaveCount((Megabyte / 1024) - 1, "the download in Block2 blocks, the first answering the plain GET");
    }

    [SkippableFact]
    public async Task OurClientAndServerMoveAMegabyteBothWaysInQBlockSetsByteIdentical()
    {
        (List<RelayedDatagram> relayed, byte[] body, byte[] uploaded, byte[] downloaded) = await TransferAsync(dropShare: 0, new QBlockOptions { Enabled = true });

        uploaded.Should().Equal(body, "the server's handler got the megabyte byte for byte");
        downloaded.Should().Equal(body, "and the client read it back byte for byte");
        List<CoapMessage> toServer = relayed.Where(d => d.ToServer).Select(d => d.Message).ToList();
        // Lossless, so each block goes once and each set is asked for once; on a loaded machine a set that is late past
        // NON_RECEIVE_TIMEOUT is asked for again (RFC 9177 section 10.2), which a tenth more allows. One per block does not.
        int sets = ((Megabyte / 1024) + 9) / 10;
        toServer.Where(m => m.Options.Contains(CoapOptionNumber.QBlock1)).Select(m => m.Options.TryGet(CoapOptionNumber.QBlock1, out CoapOptionEntry block) ? Convert.ToHexString(block.Value.Span) : string.Empty).Distinct().Should().HaveCount(Megabyte / 1024, "every block of the upload");
        toServer.Count(m => m.Options.Contains(CoapOptionNumber.QBlock1)).Should().BeInRange(Megabyte / 1024, (Megabyte / 1024) + (Megabyte / 10240), "each block of the upload once, but for a late set sent again");
        toServer.Count(m => m.Options.Contains(CoapOptionNumber.QBlock2)).Should().BeInRange(sets, sets + (sets / 10), "one request for the body and a 'Continue' per further set of 10 (103 sets of 1024 blocks), not one per block");
        List<CoapMessage> toClient = [.. relayed.Where(d => !d.ToServer && d.Message.Options.Contains(CoapOptionNumber.QBlock2)).Select(d => d.Message)];
        toClient.Select(m => m.Options.TryGet(CoapOptionNumber.QBlock2, out CoapOptionEntry block) ? Convert.ToHexString(block.Value.Span) : string.Empty).Distinct().Should().HaveCount(Megabyte / 1024, "every block of the download");
        toClient.Should().HaveCountGreaterThanOrEqualTo(Megabyte / 1024).And.HaveCountLessThanOrEqualTo((Megabyte / 1024) + (Megabyte / 10240), "each block of the download once, but for a set the client asked for again when it came late (RFC 9177 section 10.2)");
        relayed.Should().OnlyContain(d => d.Message.Block1 == null && d.Message.Block2 == null, "no RFC 7959 block option is used");
    }

    [SkippableFact]
    public async Task OurClientAndServerMoveAMegabyteBothWaysInQBlockSetsThroughALossyPath()
    {
        // Short timers keep the test fast; the RFC's rules are the same (NON_RECEIVE_TIMEOUT above NON_TIMEOUT_RANDOM).
        QBlockOptions fast = new() { Enabled = true, NonTimeout = TimeSpan.FromMilliseconds(40), NonReceiveTimeout = TimeSpan.FromMilliseconds(150), NonMaxRetransmit = 8 };

        (List<RelayedDatagram> relayed, byte[] body, byte[] uploaded, byte[] downloaded) = await TransferAsync(dropShare: 0.05, fast);

        uploaded.Should().Equal(body);
        downloaded.Should().Equal(body);
        relayed.Count(d => d.Dropped).Should().BeGreaterThan(50, "the relay lost some 5 % of the datagrams");
        relayed.Where(d => !d.ToServer && !d.Dropped).Select(d => d.Message).Count(m => m.Code == CoapCode.RequestEntityIncomplete && m.ContentFormat == CoapContentFormat.MissingBlocksCborSeq)
            .Should().BeGreaterThan(0, "the server listed the upload blocks it lacked (RFC 9177 section 5)");
        relayed.Where(d => d.ToServer).Select(d => d.Message).Count(m => m.Options.CountOf(CoapOptionNumber.QBlock2) > 0 && m.Options.GetAll(CoapOptionNumber.QBlock2).ToArray().Any(o => (CoapBlock.FromEncoded(o.GetUInt()) is { More: false })))
            .Should().BeGreaterThan(0, "the client asked for lost download blocks alone (RFC 9177 section 4.4)");
    }

    /// <summary>Uploads a megabyte to our server and reads it back, both with <paramref name="qblock"/>, through a recording relay.</summary>
    private static async Task<(List<RelayedDatagram> Relayed, byte[] Body, byte[] Uploaded, byte[] Downloaded)> TransferAsync(double dropShare, QBlockOptions qblock)
    {
        byte[]? stored = null;
        await using LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapPut("/body", request =>
                {
                    stored = request.Payload.ToArray();
                    return new CoapResponse(CoapCode.Changed);
                });
                s.MapGet("/body", _ => CoapResponse.Content(stored ?? [], CoapContentFormat.OctetStream));
            },
            new CoapServerOptions { Endpoint = new CoapEndpointOptions { QBlock = qblock } }.Listen("coap://127.0.0.1:0"));
        byte[] body = Body(Megabyte, seed: 31);

        (List<RelayedDatagram> relayed, CoapResponse changed, CoapResponse read) = await MoveAsync(server.EndPoint, "/body", body, dropShare, qblock);

        changed.Code.Should().Be(CoapCode.Changed, changed.GetPayloadString());
        read.Code.Should().Be(CoapCode.Content);
        return (relayed, body, stored ?? [], read.Payload.ToArray());
    }

    /// <summary>PUTs <paramref name="body"/> to <paramref name="path"/> on <paramref name="server"/> and GETs it back, through a recording relay that drops <paramref name="dropShare"/>.</summary>
    private static async Task<(List<RelayedDatagram> Relayed, CoapResponse Put, CoapResponse Get)> MoveAsync(IPEndPoint server, string path, byte[] body, double dropShare, QBlockOptions qblock)
    {
        await using LossyUdpRelay relay = new(server, dropShare, seed: 9177, record: true);
        await using CoapClient client = new(new CoapClientOptions
        {
            Endpoint = new CoapEndpointOptions
            {
                QBlock = qblock,
                TransmissionParameters = new CoapTransmissionParameters { AckTimeout = TimeSpan.FromMilliseconds(200), MaxRetransmit = 8 },
            },
        });
        Uri uri = new($"coap://127.0.0.1:{relay.EndPoint.Port}{path}");
        using CancellationTokenSource bound = new(Bound);
        CoapResponse put = await client.PutAsync(uri, body, CoapContentFormat.OctetStream, bound.Token);
        CoapResponse get = await client.GetAsync(uri, bound.Token);
        return ([.. relay.Relayed], put, get);
    }

    private static byte[] Body(int size, int seed)
    {
        byte[] body = new byte[size];
        new Random(seed).NextBytes(body);
        return body;
    }
}
