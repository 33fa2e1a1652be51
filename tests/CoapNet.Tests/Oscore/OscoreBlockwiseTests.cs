using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Serialization;
using CoapNet.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Oscore;

/// <summary>
/// Block-wise transfer through OSCORE between our client and our server over loopback (RFC 8613 section 4.1.3.4): inner
/// block-wise above OSCORE cuts and joins the plaintext, each block protected with a Partial IV of its own; outer
/// block-wise below it cuts and joins an OSCORE message too large for one message, its later blocks answered below OSCORE
/// without a new Partial IV. Each test has a server and contexts of its own.
/// </summary>
public sealed class OscoreBlockwiseTests
{
    private const int Megabyte = 1024 * 1024;

    [Theory]
    [InlineData("coap")]
    [InlineData("coap+tcp")]
    public async Task A_megabyte_comes_down_whole_through_OSCORE(string scheme)
    {
        byte[] body = Body(Megabyte, seed: 1);
        await using LoopbackServer server = Start(s => s.MapGet("/big", _ => new CoapResponse(CoapCode.Content, body, CoapContentFormat.OctetStream)), scheme);
        await using CoapClient client = Client(server, scheme);

        CoapResponse response = await client.GetAsync(server.Uri("/big", scheme));

        response.Code.Should().Be(CoapCode.Content);
        response.Payload.ToArray().Should().Equal(body);
    }

    [Theory]
    [InlineData("coap")]
    [InlineData("coap+tcp")]
    public async Task A_megabyte_goes_up_whole_through_OSCORE(string scheme)
    {
        byte[] body = Body(Megabyte, seed: 2);
        byte[] received = [];
        string? identity = null;
        await using LoopbackServer server = Start(
            s => s.MapPut("/upload", request =>
            {
                received = request.Payload.ToArray();
                identity = request.Peer.Identity?.ToString();
                return new CoapResponse(CoapCode.Changed);
            }),
            scheme);
        await using CoapClient client = Client(server, scheme);

        CoapResponse response = await client.PutAsync(server.Uri("/upload", scheme), body, CoapContentFormat.OctetStream);

        response.Code.Should().Be(CoapCode.Changed);
        received.Should().Equal(body);
        identity.Should().Be("oscore:0a", "the handler sees the whole body as the client that protected each block sent it");
    }

    [Fact]
    public async Task An_OSCORE_message_too_large_for_a_datagram_goes_in_outer_blocks_whose_later_ones_are_answered_below_OSCORE()
    {
        // A plaintext that fits one datagram, so inner block-wise sends it whole, and whose OSCORE message does not (the
        // Code, the tag and the OSCORE option make it 10 bytes longer): outer block-wise cuts the protected response, and
        // the client asks for its later blocks with the same protected request and an outer Block2 (RFC 8613 section
        // 4.1.3.4.2). Those repeat the request's Partial IV: were they to reach OSCORE again, it would refuse them as
        // replays, so the outer stage must find the body it kept under the protected request, as it saw it.
        byte[] body = Body(FillingPayload(8, 1152), seed: 3);
        List<string> wire = [];
        await using LoopbackServer server = Start(s => s.MapGet("/edge", _ => new CoapResponse(CoapCode.Content, body, CoapContentFormat.OctetStream)), "coap");
        await using CoapClient client = Client(server, "coap", endpoint => endpoint.UseStage("Wire", _ => new WireRecorder(wire), CoapStagePosition.BelowAll));

        CoapResponse response = await client.GetAsync(server.Uri("/edge"));

        response.Code.Should().Be(CoapCode.Content);
        response.Payload.ToArray().Should().Equal(body);
        lock (wire)
        {
            wire.Should().Equal(
                "request POST oscore",
                "response 2.04 oscore block2=0+",
                "request POST oscore block2=1",
                "response 2.04 oscore block2=1");
        }
    }

    [Fact]
    public async Task Two_downloads_at_once_through_OSCORE_each_get_their_own_body()
    {
        byte[] first = Body(40 * 1024, seed: 4);
        byte[] second = Body(30 * 1024, seed: 5);
        await using LoopbackServer server = Start(
            s =>
            {
                s.MapGet("/first", _ => new CoapResponse(CoapCode.Content, first, CoapContentFormat.OctetStream));
                s.MapGet("/second", _ => new CoapResponse(CoapCode.Content, second, CoapContentFormat.OctetStream));
            },
            "coap");
        await using CoapClient client = Client(server, "coap");

        Task<CoapResponse> one = client.GetAsync(server.Uri("/first"));
        Task<CoapResponse> two = client.GetAsync(server.Uri("/second"));

        (await one).Payload.ToArray().Should().Equal(first);
        (await two).Payload.ToArray().Should().Equal(second);
    }

    /// <summary>The payload length with which a 2.05 with Content-Format and a token of <paramref name="tokenLength"/> bytes is 2 bytes short of <paramref name="datagram"/>.</summary>
    private static int FillingPayload(int tokenLength, int datagram)
    {
        CoapMessage probe = new() { Code = CoapCode.Content, Payload = new byte[1000] };
        probe.ContentFormat = CoapContentFormat.OctetStream;
        int overhead = CoapMessageSerializer.Udp.GetSerializedLength(probe, tokenLength) - 1000;
        return datagram - 2 - overhead;
    }

    private static byte[] Body(int length, int seed)
    {
        byte[] body = new byte[length];
        new Random(seed).NextBytes(body);
        return body;
    }

    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");

    private static OscoreContext Context(string sender, string recipient) => new(new OscoreContextOptions
    {
        MasterSecret = Secret,
        MasterSalt = Convert.FromHexString("9e7ca92223786340"),
        SenderId = Convert.FromHexString(sender),
        RecipientId = Convert.FromHexString(recipient),
    });

    private static LoopbackServer Start(Action<CoapServer> map, string scheme)
    {
        CoapServerOptions options = LoopbackServer.Options(tcp: scheme == "coap+tcp");
        options.Endpoint.UseOscore(new OscoreOptions().AddServerContext(Context("0b", "0a")));
        return LoopbackServer.Start(map, options);
    }

    private static CoapClient Client(LoopbackServer server, string scheme, Func<CoapEndpointOptions, CoapEndpointOptions>? more = null)
    {
        IPEndPoint endPoint = scheme == "coap+tcp" ? server.TcpEndPoint! : server.EndPoint;
        CoapEndpointOptions endpoint = new CoapEndpointOptions { TokenLength = 8 }.UseOscore(new OscoreOptions().AddClientContext(endPoint, Context("0a", "0b")));
        return new CoapClient(new CoapClientOptions { Endpoint = more?.Invoke(endpoint) ?? endpoint });
    }

    /// <summary>Records what the client sends and receives on the wire: code, whether OSCORE protects it, and the outer Block2.</summary>
    private sealed class WireRecorder(List<string> seen) : CoapStage
    {
        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            Record("request", request);
            next(call, request);
        }

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            Record("response", response);
            next(call, response);
        }

        private void Record(string what, CoapMessage message)
        {
            string text = $"{what} {(message.Code.IsRequest ? message.Code.Name : message.Code.ToString()[..4])}";
            if (message.Options.Contains(CoapOptionNumber.Oscore))
            {
                text += " oscore";
            }

            if (message.Block2 is { } block)
            {
                text += $" block2={block.Number}{(block.More ? "+" : string.Empty)}";
            }

            lock (seen)
            {
                seen.Add(text);
            }
        }
    }
}
