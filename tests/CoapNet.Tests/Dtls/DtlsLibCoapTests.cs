using System.Diagnostics;
using System.Net;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Server;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// coaps with libcoap 4.3's OpenSSL build over real loopback sockets, in both directions, with a pre-shared key
/// (libcoap's <c>-u</c> identity and <c>-k</c> key).
/// </summary>
public sealed class DtlsLibCoapTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task LibcoapGetsOurHelloOverDtlsWithAPsk()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => SampleResources.Map(s), out _);

        string output = await RunClientAsync("-u", DtlsLoopback.Identity, "-k", "secretPSK", DtlsLoopback.Uri(server.EndPoint, "/hello").ToString());

        output.Should().Contain("Hello, CoAP!");
    }

    [SkippableFact]
    public async Task LibcoapUploadsAndDownloadsAMegabyteBlockWiseOverDtls()
    {
        const int Megabyte = 1 << 20;
        await using LoopbackServer server = DtlsLoopback.StartEndpoint(s => SampleResources.Map(s), server: new CoapServerOptions { Endpoint = { Blockwise = SampleResources.Blockwise } });
        string input = Path.GetTempFileName();
        string output = Path.GetTempFileName();
        try
        {
            byte[] body = new byte[Megabyte];
            new Random(5).NextBytes(body);
            await File.WriteAllBytesAsync(input, body);

            string hash = await RunClientAsync("-u", DtlsLoopback.Identity, "-k", "secretPSK", "-B", "60", "-m", "put", "-f", input, DtlsLoopback.Uri(server.EndPoint, "/upload").ToString());
            await RunClientAsync("-u", DtlsLoopback.Identity, "-k", "secretPSK", "-B", "60", "-o", output, DtlsLoopback.Uri(server.EndPoint, $"/large?size={Megabyte}").ToString());

            hash.Trim().Should().Be(Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(body)).ToLowerInvariant(), "/upload answers the SHA-256 of the whole body it received");
            (await File.ReadAllBytesAsync(output)).Should().Equal(Enumerable.Range(0, Megabyte).Select(i => (byte)(i % 251)));
        }
        finally
        {
            File.Delete(input);
            File.Delete(output);
        }
    }

    [SkippableFact]
    public async Task LibcoapThatLostOurFinishedRetransmitsItsFlightGetsOursAgainAndItsRequestIsAnswered()
    {
        // RFC 6347 section 4.2.4 with OpenSSL's DTLS on the other side: the relay loses the server's first record in
        // epoch 1 (its Finished); OpenSSL retransmits its last flight after its timer, and the server answers with its
        // ChangeCipherSpec and Finished again, though it has already left the handshake behind.
        await using LoopbackServer server = DtlsLoopback.StartServer(s => SampleResources.Map(s), out _);
        int dropped = 0;
        await using UdpRelay relay = new(server.EndPoint, (toServer, datagram) =>
        {
            if (!toServer && dropped == 0 && datagram.Length >= 13 && datagram[3] == 0 && datagram[4] == 1)
            {
                dropped++;
                return [];
            }

            return [datagram];
        });

        string output = await RunClientAsync("-u", DtlsLoopback.Identity, "-k", "secretPSK", DtlsLoopback.Uri(relay.EndPoint, "/hello").ToString());

        output.Should().Contain("Hello, CoAP!");
        dropped.Should().Be(1);
    }

    [SkippableFact]
    public async Task LibcoapWithAWrongKeyIsToldBadRecordMacAtOnceAndReachesNoHandler()
    {
        int calls = 0;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/hello", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("Hello, CoAP!"); }), out _);

        // -B 60: without the server's alert libcoap would wait a minute (retransmitting its Finished), past the bound
        // RunClientAsync gives it; with it, OpenSSL ends the handshake as soon as the alert arrives.
        string output = await RunClientAsync("-u", DtlsLoopback.Identity, "-k", "not-the-key", "-B", "60", DtlsLoopback.Uri(server.EndPoint, "/hello").ToString());

        output.Should().Contain("alert read:fatal:bad record mac");
        output.Should().NotContain("Hello");
        calls.Should().Be(0);
    }

    [SkippableFact]
    public async Task OurClientGetsFromLibcoapsDtlsServerWithAPsk()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-k", "secretPSK", "-h", "CoAP");
        await using CoapClient client = DtlsLoopback.Client();
        Uri root = new($"coaps://127.0.0.1:{libcoap.Port + 1}/");

        CoapResponse response = await client.GetAsync(root);
        CoapResponse again = client.Get(root);

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Contain("libcoap");
        again.GetPayloadString().Should().Be(response.GetPayloadString());
    }

    [SkippableFact]
    public async Task OurClientPutsAndGetsADynamicResourceOnLibcoapOverDtls()
    {
        using LibCoapServer libcoap = LibCoapServer.Start(LibCoap.ServerOpenSsl, "-k", "secretPSK");
        await using CoapClient client = DtlsLoopback.Client();
        Uri uri = new($"coaps://127.0.0.1:{libcoap.Port + 1}/dynamic-{Guid.NewGuid():N}");
        byte[] body = new byte[5000];
        new Random(3).NextBytes(body);

        (await client.PutAsync(uri, body, CoapContentFormat.OctetStream)).Code.Should().Be(CoapCode.Created);
        (await client.GetAsync(uri)).Payload.ToArray().Should().Equal(body);
    }

    private static async Task<string> RunClientAsync(params string[] arguments)
    {
        Process client = LibCoap.Start(LibCoap.ClientOpenSsl, arguments);
        try
        {
            return await LibCoap.ReadOutputAsync(client, Bound);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }
}
