using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Samples.Server;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;
using CoapNet.Tls;

namespace CoapNet.Tests.Tls;

/// <summary>CoAP over TLS (coaps+tcp, RFC 8323 section 9.1) between our client and our server over real loopback sockets.</summary>
public sealed class TlsLoopbackTests
{
    [Fact]
    public async Task GetsPutsAndDeletesOverCoapsTcp()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient client = TlsLoopback.Client();

        CoapResponse hello = await client.GetAsync(TlsLoopback.Uri(server, "/hello"));
        CoapResponse put = await client.PutAsync(TlsLoopback.Uri(server, "/store/lamp"), "on"u8.ToArray(), CoapContentFormat.TextPlain);
        CoapResponse got = client.Get(TlsLoopback.Uri(server, "/store/lamp"));
        CoapResponse deleted = await client.DeleteAsync(TlsLoopback.Uri(server, "/store/lamp"));

        hello.GetPayloadString().Should().Be("Hello, CoAP!");
        put.Code.Should().Be(CoapCode.Created);
        got.GetPayloadString().Should().Be("on");
        deleted.Code.Should().Be(CoapCode.Deleted);
    }

    [Fact]
    public async Task PingsOverCoapsTcp()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient client = TlsLoopback.Client();

        TimeSpan roundTrip = await client.PingAsync(TlsLoopback.Uri(server, "/"));

        roundTrip.Should().BeGreaterThan(TimeSpan.Zero);
    }

    [Fact]
    public async Task UploadsAndDownloadsAMegabyteBlockWiseOverCoapsTcp()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient client = TlsLoopback.Client();

        await SampleResourceExchanges.MovesAMegabyteBlockWiseAsync(client, path => TlsLoopback.Uri(server, path));
    }

    [Fact]
    public async Task ObservesOverCoapsTcp()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient client = TlsLoopback.Client();

        IReadOnlyList<string> seen = await SampleResourceExchanges.ObserveCounterAsync(client, TlsLoopback.Uri(server, "/counter"));

        seen.Should().Equal("0", "1", "2");
    }

    [Fact]
    public async Task AnObservationLostWithItsConnectionRegistersAgainOnANewOne()
    {
        // The server's clock is manual: it releases the idle connection (RFC 8323 section 5.5) when the test says.
        ManualTimeProvider serverTime = new();
        CoapServerOptions options = TlsLoopback.ServerOptions();
        options.Endpoint.TimeProvider = serverTime;
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s, serverTime), options);
        await using CoapClient client = TlsLoopback.Client();
        Uri counter = TlsLoopback.Uri(server, "/counter");
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(counter).GetAsyncEnumerator();
        (await observation.NextAsync()).GetPayloadString().Should().Be("0");
        await client.PostAsync(counter, default);
        (await observation.NextAsync()).GetPayloadString().Should().Be("1");

        serverTime.Advance(options.Connections.IdleTimeout + TimeSpan.FromSeconds(1));

        (await observation.NextAsync()).GetPayloadString().Should().Be("1", "the client registered again on a new TLS connection and got the current state");
        await client.PostAsync(counter, default);
        (await observation.NextAsync()).GetPayloadString().Should().Be("2", "notifications reach the same loop over the new connection");
        server.Server.Observations.Should().Be(1, "the registration of the released connection went with it (RFC 8323 section 7.2)");
    }

    [Fact]
    public async Task AHandlerReadsTheClientCertificateAsThePeersIdentity()
    {
        await using LoopbackServer server = TlsLoopback.StartWhoAmI(TlsClientCertificateMode.Required);
        await using CoapClient client = TlsLoopback.Client(tls => tls.Certificate = TestPki.Instance.Client);

        string answer = (await client.GetAsync(TlsLoopback.Uri(server, "/whoami"))).GetPayloadString();

        answer.Should().MatchRegex(@"^cert:CN=device-7 over TLS 1\.[23]$");
    }

    [Fact]
    public async Task AServerThatRequiresACertificateRefusesAClientWithoutOneAndNoHandlerRuns()
    {
        await using LoopbackServer server = TlsLoopback.StartWhoAmI(TlsClientCertificateMode.Required);
        await using CoapClient client = TlsLoopback.Client();

        Func<Task> get = () => client.GetAsync(TlsLoopback.Uri(server, "/whoami"));

        // The handshake fails, so no request (and no handler) is reached: the client sees its connection end.
        await get.Should().ThrowAsync<CoapNet.Messaging.CoapConnectionException>();
    }

    [Fact]
    public async Task AnAllowedClientWithoutACertificateIsServedWithoutAnIdentity()
    {
        await using LoopbackServer server = TlsLoopback.StartWhoAmI(TlsClientCertificateMode.Allowed);
        await using CoapClient anonymous = TlsLoopback.Client();
        await using CoapClient device = TlsLoopback.Client(tls => tls.Certificate = TestPki.Instance.Client);

        (await anonymous.GetAsync(TlsLoopback.Uri(server, "/whoami"))).GetPayloadString().Should().Be("anonymous");
        (await device.GetAsync(TlsLoopback.Uri(server, "/whoami"))).GetPayloadString().Should().StartWith("cert:CN=device-7 over TLS");
    }

    [Fact]
    public async Task TheClientChecksTheServersCertificateAgainstTheHostItAddressed()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => s.MapGet("/hello", _ => CoapResponse.Content("Hello")));
        await using CoapClient client = TlsLoopback.Client();
        IPEndPoint endPoint = TlsLoopback.EndPoint(server);

        // The certificate names device.example (and 127.0.0.1), not other.example: the same server, addressed by another name, is refused.
        CoapResponse named = await client.SendAsync(Get("/hello"), CoapPeer.Tls(endPoint, TestPki.ServerName));
        Func<Task> otherName = () => client.SendAsync(Get("/hello"), CoapPeer.Tls(endPoint, "other.example"));

        named.GetPayloadString().Should().Be("Hello");
        (await otherName.Should().ThrowAsync<CoapNet.Messaging.CoapConnectionException>()).Which.Message.Should().Contain("certificate");
    }

    [Fact]
    public async Task AValidatorDecidesInPlaceOfTheTrustStoreAndSeesWhatValidationFound()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(
            s => s.MapGet("/hello", _ => CoapResponse.Content("Hello")),
            TlsLoopback.ServerOptions(tls => tls.Certificate = TestPki.Instance.Untrusted));
        SslPolicyErrors seen = SslPolicyErrors.None;
        string? subject = null;
        await using CoapClient pinning = TlsLoopback.Client(tls => tls.CertificateValidator = (certificate, _, errors) =>
        {
            seen = errors;
            subject = certificate.Subject;
            return certificate.Thumbprint == TestPki.Instance.Untrusted.Thumbprint;
        });

        CoapResponse response = await pinning.GetAsync(TlsLoopback.Uri(server, "/hello"));

        response.GetPayloadString().Should().Be("Hello");
        seen.Should().HaveFlag(SslPolicyErrors.RemoteCertificateChainErrors);
        subject.Should().Be("CN=untrusted-server");
    }

    [Fact]
    public async Task TheClientRefusesAnUntrustedCertificateAndSendsNoCoap()
    {
        // A TLS server of the test's own with a self-signed certificate: it records every byte the client sends and
        // whatever application data reaches it through TLS.
        using TcpListener listener = new(IPAddress.Loopback, 0);
        listener.Start();
        Task<(byte[] Raw, int ApplicationBytes)> serving = ServeOnceAsync(listener, TestPki.Instance.Untrusted);
        await using CoapClient client = TlsLoopback.Client();
        Uri uri = new($"coaps+tcp://127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}/secret-path");

        Func<Task> get = () => client.GetAsync(uri);

        (await get.Should().ThrowAsync<CoapNet.Messaging.CoapConnectionException>()).Which.Message.Should().Contain("certificate");
        (byte[] raw, int applicationBytes) = await serving.WaitAsync(Wait.DefaultBound);
        applicationBytes.Should().Be(0, "no CoAP (not even the CSM) goes into a session whose certificate was refused");
        TlsRecords.AreAllRecords(raw).Should().BeTrue("everything the client sent is a TLS record");
        System.Text.Encoding.ASCII.GetString(raw).Should().NotContain("secret-path");
    }

    [Fact]
    public async Task APlainCoapTcpClientOnTheTlsPortIsAnsweredNothingInTheClearAndOthersAreServed()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient client = TlsLoopback.Client();
        await using CoapClient plain = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        IPEndPoint endPoint = TlsLoopback.EndPoint(server);
        (await client.GetAsync(TlsLoopback.Uri(server, "/hello"))).GetPayloadString().Should().Be("Hello, CoAP!");

        // Our own coap+tcp client: its CSM is not a TLS record, so the server ends that connection and answers no CoAP.
        Func<Task> cleartext = () => plain.GetAsync(new Uri($"coap+tcp://127.0.0.1:{endPoint.Port}/hello"));

        await cleartext.Should().ThrowAsync<Exception>();
        (await client.GetAsync(TlsLoopback.Uri(server, "/hello"))).GetPayloadString().Should().Be("Hello, CoAP!", "the established session goes on");
        await using CoapClient another = TlsLoopback.Client();
        (await another.GetAsync(TlsLoopback.Uri(server, "/hello"))).GetPayloadString().Should().Be("Hello, CoAP!", "new sessions are accepted");
    }

    public static TheoryData<string, byte[]> NotTls => new()
    {
        // A CoAP over TCP CSM (RFC 8323 section 5.3): Len 0, TKL 0, code 7.01.
        { "a coap+tcp CSM", [0x00, 0xE1] },
        // A handshake record whose body is not a ClientHello.
        { "a malformed handshake record", [0x16, 0x03, 0x01, 0x00, 0x04, 0xFF, 0x00, 0x00, 0x00] },
        // A record of a content type TLS does not have.
        { "a record of no TLS content type", [0x63, 0x03, 0x03, 0x00, 0x02, 0x01, 0x02] },
        { "HTTP", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray() },
    };

    [Theory]
    [MemberData(nameof(NotTls))]
    public async Task BytesThatAreNotTlsCloseOnlyTheirConnectionAndGetNoCoapBack(string what, byte[] bytes)
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        await using CoapClient client = TlsLoopback.Client();
        (await client.GetAsync(TlsLoopback.Uri(server, "/hello"))).GetPayloadString().Should().Be("Hello, CoAP!");

        using Socket raw = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await raw.ConnectAsync(TlsLoopback.EndPoint(server));
        await raw.SendAsync(bytes);

        // Then nothing more: what is not a whole record yet fails at the end of the stream (a peer that stays silent
        // instead meets the handshake timeout, TlsConnectionListenerTests).
        raw.Shutdown(SocketShutdown.Send);
        byte[] answer = await ReadToEndAsync(raw);

        // At most a TLS alert (content type 21) before the close; never a CoAP frame.
        answer.Should().Match<byte[]>(a => a.Length == 0 || (a[0] == 0x15 && TlsRecords.AreAllRecords(a)), $"{what} gets nothing but a TLS alert");
        (await client.GetAsync(TlsLoopback.Uri(server, "/hello"))).GetPayloadString().Should().Be("Hello, CoAP!", "the other session goes on");
    }

    private static CoapMessage Get(string path)
    {
        CoapMessage request = new() { Code = CoapCode.Get };
        request.Options.Add(CoapOptionNumber.UriPath, path.TrimStart('/'));
        return request;
    }

    private static async Task<byte[]> ReadToEndAsync(Socket socket)
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        using MemoryStream received = new();
        byte[] buffer = new byte[4096];
        try
        {
            int count;
            while ((count = await socket.ReceiveAsync(buffer, SocketFlags.None, bound.Token)) > 0)
            {
                received.Write(buffer, 0, count);
            }
        }
        catch (SocketException)
        {
            // Reset by the server: the connection is over all the same.
        }

        return received.ToArray();
    }

    private static async Task<(byte[] Raw, int ApplicationBytes)> ServeOnceAsync(TcpListener listener, System.Security.Cryptography.X509Certificates.X509Certificate2 certificate)
    {
        using Socket accepted = await listener.AcceptSocketAsync();

        // Every byte from the client is kept as it arrives, then handed to the TLS server through a pipe.
        using MemoryStream raw = new();
        Pipe fromClient = new();
        Task recording = Task.Run(async () =>
        {
            byte[] chunk = new byte[4096];
            try
            {
                int received;
                while ((received = await accepted.ReceiveAsync(chunk, SocketFlags.None)) > 0)
                {
                    raw.Write(chunk, 0, received);
                    await fromClient.Writer.WriteAsync(chunk.AsMemory(0, received));
                }
            }
            catch (SocketException)
            {
                // Reset by the client that gave up: the end of what it sent all the same.
            }

            await fromClient.Writer.CompleteAsync();
        });
        await using SslStream ssl = new(new CoapNet.Tls.DuplexPipeStream(new Duplex(fromClient.Reader, PipeWriter.Create(new NetworkStream(accepted, ownsSocket: false)))));
        int application = 0;
        try
        {
            await ssl.AuthenticateAsServerAsync(new SslServerAuthenticationOptions
            {
                ServerCertificate = certificate,
                ApplicationProtocols = [new SslApplicationProtocol("coap")],
            });
            byte[] buffer = new byte[1024];
            int count;
            while ((count = await ssl.ReadAsync(buffer)) > 0)
            {
                application += count;
            }
        }
        catch (Exception e) when (e is IOException or System.Security.Authentication.AuthenticationException)
        {
            // The client's alert, or its close: either ends the session.
        }

        await recording.WaitAsync(Wait.DefaultBound);
        return (raw.ToArray(), application);
    }

    private sealed record Duplex(PipeReader Input, PipeWriter Output) : IDuplexPipe;

    [Fact]
    public async Task TheServerAgreesOnTheAlpnProtocolCoap()
    {
        await using LoopbackServer server = TlsLoopback.StartServer(s => SampleResources.Map(s));
        using TcpClient tcp = new(AddressFamily.InterNetwork);
        await tcp.ConnectAsync(TlsLoopback.EndPoint(server));
        await using SslStream ssl = new(tcp.GetStream());

        // RFC 8323 section 9.1: the ALPN protocol ID of CoAP over TLS is "coap"; a client offering others as well gets it.
        await ssl.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            ApplicationProtocols = [SslApplicationProtocol.Http11, new SslApplicationProtocol("coap")],
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        });

        ssl.NegotiatedApplicationProtocol.ToString().Should().Be("coap");
    }
}
