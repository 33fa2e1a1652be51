using System.Security.Authentication;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>Our coaps client against our coaps server over real loopback sockets, with pre-shared keys (RFC 7252 section 9.1.3.1).</summary>
public sealed class DtlsPskTests
{
    [Fact]
    public async Task GetsOverDtlsAndTheHandlerReadsTheClientsPskIdentity()
    {
        CoapPeerIdentity? seen = null;
        string? scheme = null;
        await using LoopbackServer server = DtlsLoopback.StartServer(
            s => s.MapGet("/who", request =>
            {
                seen = request.Peer.Identity;
                scheme = request.Peer.Scheme;
                return CoapResponse.Content("hello " + request.Peer.Identity);
            }),
            out _);
        await using CoapClient client = DtlsLoopback.Client();

        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/who"));

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("hello psk:client-1");
        seen.Should().Be(CoapPeerIdentity.FromPreSharedKey("client-1"u8));
        scheme.Should().Be("coaps");
    }

    [Fact]
    public async Task ReusesOneSessionForManyRequestsSynchronousAndAsynchronous()
    {
        List<CoapSecurityContext> sessions = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => DtlsLoopback.MapSessionRecorder(s, "/n", sessions), out _);
        await using CoapClient client = DtlsLoopback.Client();
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/n");

        for (int i = 0; i < 5; i++)
        {
            (await client.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
            client.Get(uri).Code.Should().Be(CoapCode.Content);
        }

        await Task.WhenAll(Enumerable.Range(0, 10).Select(_ => client.GetAsync(uri)));

        sessions.Distinct().Should().ContainSingle("the client keeps one session per server and reuses it");
    }

    [Fact]
    public async Task ServesTheSampleResourcesWithBlockwiseTransfersInASession()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => SampleResources.Map(s), out _);
        await using CoapClient client = DtlsLoopback.Client();
        byte[] body = new byte[20_000];
        new Random(7).NextBytes(body);

        CoapResponse large = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/large?size=100000"));
        CoapResponse upload = await client.PutAsync(DtlsLoopback.Uri(server.EndPoint, "/upload"), body);

        large.Code.Should().Be(CoapCode.Content);
        large.Payload.ToArray().Should().Equal(Enumerable.Range(0, 100_000).Select(i => (byte)(i % 251)), "/large?size=100000 comes whole, in Block2 blocks");
        upload.Code.Should().Be(CoapCode.Changed);
        upload.GetPayloadString().Should().Be(Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(body)).ToLowerInvariant());
    }

    [Fact]
    public async Task AWrongKeyFailsTheHandshakeAtOnceWithBadRecordMacAndReachesNoHandler()
    {
        int calls = 0;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("no"); }), out _);

        // The client's Finished, under keys made from another key, fails the record's authentication at the server
        // (CCM_8, an AEAD suite), which ends the handshake with a fatal bad_record_mac (RFC 6347 section 4.1.2.7). Without
        // it the client would retransmit its Finished until its handshake timeout, long past the test's liveness bound.
        await using CoapClient client = DtlsLoopback.Client(key: "wrong-key"u8.ToArray(), options: new DtlsClientOptions { HandshakeTimeout = TimeSpan.FromMinutes(10) });

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x")).WaitAsync(Infrastructure.Wait.DefaultBound);

        (await get.Should().ThrowAsync<AuthenticationException>()).Which.Message.Should().Contain("refused the DTLS handshake: bad_record_mac (wrong key?)");
        calls.Should().Be(0);
    }

    [Fact]
    public async Task AnUnknownIdentityFailsTheHandshake()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("no")), out _);
        await using CoapClient client = DtlsLoopback.Client(identity: "stranger");

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

        await get.Should().ThrowAsync<AuthenticationException>();
    }

    [Fact]
    public async Task ACoapsUriWithoutASecureTransportIsRefusedWithAClearError()
    {
        await using CoapClient client = new();

        Func<Task> get = () => client.GetAsync(new Uri("coaps://127.0.0.1:5684/x"));

        (await get.Should().ThrowAsync<ArgumentException>()).Which.Message.Should().Contain("carries coap").And.Contain("UseDtls");
    }
}
