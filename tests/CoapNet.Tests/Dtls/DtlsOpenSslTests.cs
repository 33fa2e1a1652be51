using System.Globalization;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Server;
using CoapNet.Simulation;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Our DTLS record protection (Records/) against OpenSSL's, a record layer that shares no code with ours or with
/// BouncyCastle's, for every AEAD suite our server and client offer: <c>openssl s_client</c> sends CoAP requests (bytes
/// the test builds) to our server and prints our responses, and our client gets from <c>openssl s_server</c>, which
/// prints our requests and sends the responses the test writes. Our record layer takes over from BouncyCastle's when the
/// handshake completes, so every exchange is encrypted and decrypted by ours.
/// </summary>
public sealed class DtlsOpenSslTests
{
    /// <summary>Past the 64-record replay window (RFC 6347 section 4.1.2.6), so it has moved beyond BouncyCastle's records.</summary>
    private const int ManyRequests = 70;

    private const byte ApplicationData = 23;
    private const byte Alert = 21;

    /// <summary>Every AEAD suite we offer, by OpenSSL's names: PSK (RFC 6655, RFC 5487) and ECDHE_ECDSA with certificates (RFC 7251, RFC 5289).</summary>
    public static TheoryData<string> Suites() =>
    [
        "PSK-AES128-CCM8",
        "PSK-AES128-CCM",
        "PSK-AES128-GCM-SHA256",
        "PSK-AES256-GCM-SHA384",
        "ECDHE-ECDSA-AES128-CCM8",
        "ECDHE-ECDSA-AES128-CCM",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
    ];

    /// <summary>The PSK suites, one per AEAD kind and key length.</summary>
    public static TheoryData<string> PskSuites() => ["PSK-AES128-CCM8", "PSK-AES128-CCM", "PSK-AES128-GCM-SHA256", "PSK-AES256-GCM-SHA384"];

    [SkippableTheory]
    [MemberData(nameof(Suites))]
    public async Task OpenSslsClientGetsOurAnswersInEverySuite(string cipher)
    {
        using Credentials credentials = Credentials.For(cipher);
        List<string> seen = [];
        await using LoopbackServer server = StartServer(seen, credentials.ServerOptions(), out _);
        using OpenSslDtlsPeer client = OpenSslDtlsPeer.Client(server.EndPoint, cipher, credentials.OpenSsl(server: false));

        (await client.NegotiatedCipherAsync()).Should().Be(cipher, "no fallback to another suite");
        for (int i = 0; i < ManyRequests; i++)
        {
            await ExchangeAsync(client, i);
        }

        seen.Should().Equal(Enumerable.Range(0, ManyRequests).Select(i => Convert.ToHexString(Token(i))), "each request reached the handler once, intact");
    }

    [SkippableTheory]
    [MemberData(nameof(Suites))]
    public async Task OurClientGetsFromOpenSslsServerInEverySuite(string cipher)
    {
        using Credentials credentials = Credentials.For(cipher);
        using OpenSslDtlsPeer server = OpenSslDtlsPeer.Server(cipher, credentials.OpenSsl(server: true));
        await using CoapClient client = credentials.Client();
        HashSet<ushort> answered = [];

        for (int i = 0; i < 5; i++)
        {
            string path = $"/openssl/{i}";
            Task<CoapResponse> get = client.GetAsync(new Uri($"coaps://127.0.0.1:{server.Port}{path}"));

            // s_server prints what it decrypted: our request, byte for byte (a retransmission of one answered is skipped).
            byte[] request;
            CoapMessage message;
            do
            {
                request = await server.ReceiveAsync();
                message = CoapMessageSerializer.Udp.Deserialize((ReadOnlyMemory<byte>)request);
            }
            while (answered.Contains(message.MessageId));

            message.Code.Should().Be(CoapCode.Get);
            message.UriPath.Should().Be(path);
            request.AsSpan().IndexOf("openssl"u8).Should().BePositive("the Uri-Path bytes arrived as sent");
            byte[] body = Body((i * 211) % 1025);
            answered.Add(message.MessageId);
            server.Send(PiggybackedContent(message, body));
            CoapResponse response = await get;

            response.Code.Should().Be(CoapCode.Content);
            response.Payload.ToArray().Should().Equal(body, "our client decrypted OpenSSL's record");
        }

        (await server.NegotiatedCipherAsync()).Should().Be(cipher, "no fallback to another suite");
    }

    [SkippableTheory]
    [MemberData(nameof(PskSuites))]
    public async Task AfterAQuietSpellPastTheLastFlightsLifetimeEveryRecordBothWaysIsOurs(string cipher)
    {
        ManualTimeProvider time = new();
        List<string> seen = [];
        await using LoopbackServer server = StartServer(seen, DtlsLoopback.ServerOptions(time), out DtlsServerTransport dtls);
        using OpenSslDtlsPeer client = OpenSslDtlsPeer.Client(server.EndPoint, cipher, OpenSslDtlsPeer.Psk(DtlsLoopback.Identity, DtlsLoopback.Key));
        (await client.NegotiatedCipherAsync()).Should().Be(cipher);
        await Wait.UntilAsync(() => dtls.SessionCount == 1, "our side of the handshake to complete");

        // RFC 6347 section 4.2.4: past 2 MSL (240 s) the server lets go of the Finished it kept for a retransmitted last
        // flight; OpenSSL's first record, decrypted by ours as every record is, still finds the session.
        time.Advance(TimeSpan.FromMinutes(5));
        for (int i = 0; i < 3; i++)
        {
            await ExchangeAsync(client, i);
        }

        seen.Should().HaveCount(3);
    }

    [SkippableTheory]
    [MemberData(nameof(PskSuites))]
    public async Task RecordsFromOpenSslThatAreReplayedTamperedOrCutShortAreDroppedSilentlyAndTheSessionGoesOn(string cipher)
    {
        List<string> seen = [];
        await using LoopbackServer server = StartServer(seen, DtlsLoopback.ServerOptions(), out _);
        List<byte> towardClient = [];
        int application = 0;

        // Every application record is read by our record protection, the first one included.
        await using UdpRelay relay = new(server.EndPoint, (toServer, datagram) =>
        {
            if (!toServer)
            {
                lock (towardClient)
                {
                    towardClient.Add(datagram[0]);
                }

                return [datagram];
            }

            if (datagram[0] != ApplicationData)
            {
                return [datagram];
            }

            return Interlocked.Increment(ref application) switch
            {
                // RFC 6347 section 4.1.2.6: a replay is discarded (else CoAP deduplication would answer it again).
                2 => [datagram, datagram],

                // RFC 6347 section 4.1.2.7: a record that does not authenticate or parse is discarded, and does not
                // use up its sequence number: the genuine record after them is read.
                3 => [FlipBit(datagram), datagram[..^5], EmptyFragment(datagram), datagram],
                _ => [datagram],
            };
        });
        using OpenSslDtlsPeer client = OpenSslDtlsPeer.Client(relay.EndPoint, cipher, OpenSslDtlsPeer.Psk(DtlsLoopback.Identity, DtlsLoopback.Key));

        (await client.NegotiatedCipherAsync()).Should().Be(cipher);
        for (int i = 0; i < 5; i++)
        {
            // Each response is the next thing s_client prints: none was added by a replayed or altered record.
            await ExchangeAsync(client, i);
        }

        Volatile.Read(ref application).Should().Be(5, "one application record per request, the replayed and altered ones aside");
        seen.Should().Equal(Enumerable.Range(0, 5).Select(i => Convert.ToHexString(Token(i))));
        lock (towardClient)
        {
            towardClient.Should().NotContain(Alert, "a bad record is dropped silently, not answered with an alert");
        }

        client.HasExited.Should().BeFalse();
    }

    [SkippableFact]
    public async Task CloseNotifyCrossesBothWaysInOurRecordProtection()
    {
        const string Cipher = "PSK-AES128-GCM-SHA256";
        string[] psk = OpenSslDtlsPeer.Psk(DtlsLoopback.Identity, DtlsLoopback.Key);
        LoopbackServer server = StartServer([], DtlsLoopback.ServerOptions(), out DtlsServerTransport dtls);
        bool stopped = false;
        try
        {
            using (OpenSslDtlsPeer leaving = OpenSslDtlsPeer.Client(server.EndPoint, Cipher, psk))
            {
                await ExchangeAsync(leaving, 0);
                await ExchangeAsync(leaving, 1);
                dtls.SessionCount.Should().Be(1);

                // RFC 5246 section 7.2.1: s_client sends close_notify when its input ends; ours ends the session.
                leaving.CloseInput();
                await leaving.WaitForExitAsync();
                await Wait.UntilAsync(() => dtls.SessionCount == 0, "the session to close on OpenSSL's close_notify");
            }

            using OpenSslDtlsPeer staying = OpenSslDtlsPeer.Client(server.EndPoint, Cipher, psk);
            await ExchangeAsync(staying, 0);
            await ExchangeAsync(staying, 1);

            stopped = true;
            await server.DisposeAsync();

            (await staying.WaitForExitAsync()).Should().Be(0, "s_client ends cleanly once it has read our close_notify");
        }
        finally
        {
            if (!stopped)
            {
                await server.DisposeAsync();
            }
        }
    }

    /// <summary>
    /// Sends request <paramref name="index"/> (a CON GET /bytes of a length that varies with it, built here byte by
    /// byte) through <paramref name="client"/> and checks that the next thing it decrypted is the 2.05 for it,
    /// piggybacked on the ACK.
    /// </summary>
    private static async Task ExchangeAsync(OpenSslDtlsPeer client, int index)
    {
        int size = (index * 37) % 1025;
        ushort messageId = (ushort)(0x5000 + index);
        client.Send(Get(messageId, Token(index), "bytes", $"n={size}", "pad=" + new string('x', index % 40)));

        CoapMessage response = CoapMessageSerializer.Udp.Deserialize((ReadOnlyMemory<byte>)await client.ReceiveAsync());

        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(messageId);
        response.Token.ToArray().Should().Equal(Token(index));
        response.Code.Should().Be(CoapCode.Content);
        response.Payload.ToArray().Should().Equal(Body(size));
    }

    /// <summary>
    /// Our DTLS server with GET /bytes (<see cref="MapBytes"/>). It answers every request piggybacked, however busy the
    /// machine: it sends no empty ACK after a delay (RFC 7252 section 5.2.2), so s_client's application records are the
    /// test's requests alone, one each, and a relay can count them.
    /// </summary>
    private static LoopbackServer StartServer(List<string> seen, DtlsServerOptions options, out DtlsServerTransport transport)
    {
        transport = new DtlsServerTransport(new CoapNet.Transports.UdpTransport(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0)), options);
        return LoopbackServer.Start(s => MapBytes(s, seen), new CoapServerOptions { Endpoint = { SeparateResponseDelay = null } }.Listen(transport));
    }

    /// <summary>GET /bytes?n=N answers N bytes of <see cref="Body"/> and records the request's token.</summary>
    private static void MapBytes(CoapServer server, List<string> tokens)
        => server.MapGet("/bytes", request =>
        {
            lock (tokens)
            {
                tokens.Add(Convert.ToHexString(request.Message.Token.Span));
            }

            return CoapResponse.Content(Body(int.Parse(request.GetQueryValue("n")!, CultureInfo.InvariantCulture)), CoapContentFormat.OctetStream);
        });

    private static byte[] Token(int index) => [0xC0, 0xA9, (byte)index];

    private static byte[] Body(int size) => [.. Enumerable.Range(0, size).Select(i => (byte)((i * 31) + size))];

    // RFC 7252 section 3: version 1, CON, the token length; GET; the Message ID; the token; then each option as the
    // delta from the previous number and the value's length (a nibble each, 13 for one extension byte, section 3.1).
    private static byte[] Get(ushort messageId, byte[] token, string path, params string[] queries)
    {
        List<byte> bytes = [(byte)(0x40 | token.Length), 0x01, (byte)(messageId >> 8), (byte)messageId, .. token];
        int previous = 0;
        foreach ((int number, string value) in queries.Select(q => (15, q)).Prepend((11, path)))
        {
            byte[] encoded = Encoding.UTF8.GetBytes(value);
            int delta = number - previous;
            previous = number;
            delta.Should().BeLessThan(13);
            encoded.Length.Should().BeLessThan(269);
            bytes.Add((byte)((delta << 4) | (encoded.Length < 13 ? encoded.Length : 13)));
            if (encoded.Length >= 13)
            {
                bytes.Add((byte)(encoded.Length - 13));
            }

            bytes.AddRange(encoded);
        }

        return [.. bytes];
    }

    // RFC 7252 sections 3 and 5.2.1: an ACK with the request's Message ID and token, 2.05, the payload after 0xFF.
    private static byte[] PiggybackedContent(CoapMessage request, byte[] body)
        => [(byte)(0x60 | request.Token.Length), 0x45, (byte)(request.MessageId >> 8), (byte)request.MessageId, .. request.Token.Span, .. body.Length > 0 ? (byte[])[0xFF, .. body] : []];

    /// <summary>The record with one bit flipped in its ciphertext, in the first byte of the CoAP token (13-byte header, 8-byte explicit nonce, 4-byte CoAP header).</summary>
    private static byte[] FlipBit(byte[] record)
    {
        byte[] flipped = (byte[])record.Clone();
        flipped[13 + 8 + 4] ^= 0x04;
        return flipped;
    }

    /// <summary>The record's header alone, saying its fragment is empty: too short for any AEAD record.</summary>
    private static byte[] EmptyFragment(byte[] record)
    {
        byte[] header = record[..13];
        header[11] = 0;
        header[12] = 0;
        return header;
    }

    /// <summary>
    /// The credentials of one suite: the PSK of <see cref="DtlsLoopback"/>, or for an ECDHE_ECDSA suite a CA with a
    /// P-256 leaf for our side and one for OpenSSL's (as PEM files), each side trusting the CA.
    /// </summary>
    private sealed class Credentials : IDisposable
    {
        private readonly X509Certificate2? _authority;
        private readonly X509Certificate2? _ours;
        private readonly X509Certificate2? _theirs;
        private readonly DtlsKeys.PemFolder? _pem;

        private Credentials(bool certificates)
        {
            if (certificates)
            {
                _authority = DtlsKeys.NewAuthority("CoapNet Test CA");
                _ours = DtlsKeys.NewLeaf(_authority, "coapnet");
                _theirs = DtlsKeys.NewLeaf(_authority, "openssl");
                _pem = new DtlsKeys.PemFolder();
            }
        }

        public static Credentials For(string cipher) => new(cipher.StartsWith("ECDHE-ECDSA-", StringComparison.Ordinal));

        public DtlsServerOptions ServerOptions() => _authority is null ? DtlsLoopback.ServerOptions() : DtlsCertificateTests.ServerOptions(_ours!, _authority);

        public CoapClient Client() => _authority is null ? DtlsLoopback.Client() : DtlsLoopback.ClientWith(DtlsCertificateTests.ClientOptions(_ours!, _authority));

        public string[] OpenSsl(bool server)
            => _authority is null
                ? [.. server ? OpenSslDtlsPeer.NoCertificate : [], .. OpenSslDtlsPeer.Psk(DtlsLoopback.Identity, DtlsLoopback.Key)]
                : OpenSslDtlsPeer.Certificate(_pem!.Certificate(_theirs!, "openssl.pem"), _pem.CertificateKey(_theirs!, "openssl.key"), _pem.Certificate(_authority, "ca.pem"), server);

        public void Dispose()
        {
            _pem?.Dispose();
            _authority?.Dispose();
            _ours?.Dispose();
            _theirs?.Dispose();
        }
    }
}
