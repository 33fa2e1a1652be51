using System.Net;
using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Tests.Interop;

/// <summary>
/// The first request on a new coap+tcp connection to libcoap's coap-server-notls, seen on the wire through a relay:
/// the client waits for libcoap's CSM (Max-Message-Size 8388864, Block-Wise-Transfer) before it sizes the body, so
/// a 1 MiB upload goes as one message and a body past libcoap's limit goes in BERT blocks (RFC 8323 section 6) from
/// its first block, never in the 1 KiB blocks a peer may assume before a CSM (section 5.3.1).
/// </summary>
public sealed class LibCoapFirstUploadTests
{
    [SkippableFact]
    public async Task AOneMebibyteUploadGoesAsOneMessageAndComesBackWhole()
    {
        using LibCoapServer server = LibCoapServer.Start();
        byte[] body = Body(1024 * 1024);
        List<CoapMessage> puts;
        await using (FrameRecordingRelay relay = new(server.EndPoint))
        await using (CoapClient client = new())
        {
            CoapResponse stored = await client.PutAsync(Uri(relay, "/first-upload"), body, CoapContentFormat.OctetStream);
            stored.IsSuccess.Should().BeTrue(stored.ToString());
            puts = await relay.ClientFramesAsync(m => m.Code == CoapCode.Put, 1, TimeSpan.FromSeconds(30));
        }

        puts.Should().ContainSingle("libcoap's CSM takes 8 MiB, so the first request is not cut in 1 KiB blocks");
        puts[0].Block1.Should().BeNull();
        puts[0].Payload.Length.Should().Be(body.Length);

        await using CoapClient reader = new();
        (await reader.GetAsync(new Uri($"coap+tcp://127.0.0.1:{server.Port}/first-upload"))).Payload.ToArray().Should().Equal(body, "libcoap stored the body whole");
    }

    [SkippableFact]
    public async Task AnUploadPastLibcoapsMaxMessageSizeUsesBertFromItsFirstBlock()
    {
        using LibCoapServer server = LibCoapServer.Start();
        byte[] body = Body((9 * 1024 * 1024) + 100);
        await using FrameRecordingRelay relay = new(server.EndPoint);
        await using CoapClient client = new();

        CoapResponse stored = await client.PutAsync(Uri(relay, "/bert-upload"), body, CoapContentFormat.OctetStream);

        stored.IsSuccess.Should().BeTrue(stored.ToString());
        List<CoapMessage> puts = await relay.ClientFramesAsync(m => m.Code == CoapCode.Put, 10, TimeSpan.FromSeconds(30));
        puts[0].Block1.Should().Be(new CoapBlock(0, true, 7), "BERT (SZX 7) from the first block");
        puts[0].Size1.Should().Be((uint)body.Length);
        puts.Should().OnlyContain(m => m.Block1!.Value.SizeExponent == 7);
        puts.Sum(m => (long)m.Payload.Length).Should().Be(body.Length);
        puts.Should().HaveCount(10, "nine blocks of 1 MiB, BERT's largest here, and the rest");
    }

    private static Uri Uri(FrameRecordingRelay relay, string path) => new($"coap+tcp://127.0.0.1:{relay.EndPoint.Port}{path}");

    private static byte[] Body(int length)
    {
        byte[] body = new byte[length];
        new Random(length).NextBytes(body);
        return body;
    }
}
