using System.Buffers;
using System.IO.Pipelines;
using System.Net.Security;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Tcp;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.Tests.Tls;

/// <summary>
/// The TLS listener over in-memory connections on a manual clock: handshake timeouts and the bound on handshakes in
/// virtual time, with real TLS (SslStream) on both ends.
/// </summary>
public sealed class TlsConnectionListenerTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task ASilentConnectionIsClosedAtTheHandshakeTimeoutAndNeverHandedUp()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        await using TlsConnectionListener listener = new(inner, Options(), timeProvider: time);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();

        InMemoryConnection silent = inner.Connect(40001);
        Wait.Until(() => time.ActiveTimerCount == 1, "the handshake's timeout is armed");
        time.Advance(Timeout - TimeSpan.FromMilliseconds(1));
        bool closedEarly = silent.Input.TryRead(out ReadResult early) && early.IsCompleted;
        time.Advance(TimeSpan.FromMilliseconds(1));

        closedEarly.Should().BeFalse();
        (await ReadToEndAsync(silent.Input)).Should().Be(0, "the server sent nothing, and closed");
        accepting.IsCompleted.Should().BeFalse("a connection without a handshake is never handed up");
    }

    [Fact]
    public async Task AConnectionThatNeverSpeaksWaitsApartAndTakesNoHandshakePlace()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsServerOptions options = Options();
        options.MaxPendingHandshakes = 1;
        await using TlsConnectionListener listener = new(inner, options, timeProvider: time);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();

        InMemoryConnection silent = inner.Connect(40001);
        Wait.Until(() => time.ActiveTimerCount == 1, "the silent connection waits, its timeout armed");
        InMemoryConnection client = inner.Connect(40002);
        await using SslStream ssl = await HandshakeAsync(client);
        await using TransportConnection? accepted = await accepting.AsTask().WaitAsync(Wait.DefaultBound);
        time.Advance(Timeout);

        accepted!.RemoteEndPoint.Port.Should().Be(40002, "a TLS client speaks first; the one that never did held no handshake place");
        accepted.SecurityContext.Should().BeNull("the client presented no certificate, so nothing about it is authenticated");
        ssl.NegotiatedApplicationProtocol.ToString().Should().Be("coap");
        (await ReadToEndAsync(silent.Input)).Should().Be(0, "it was closed at the handshake timeout, and told nothing");
    }

    [Fact]
    public async Task WhenMoreConnectionsWaitThanTheBoundTheOneSilentLongestIsClosed()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsServerOptions options = Options();
        options.MaxPendingHandshakes = 1;
        await using TlsConnectionListener listener = new(inner, options, timeProvider: time);
        _ = listener.AcceptAsync();
        List<InMemoryConnection> silent = [];
        for (int i = 0; i < HandshakeAdmission.WaitingFactor; i++)
        {
            silent.Add(inner.Connect(40001 + i));
            Wait.Until(() => time.ActiveTimerCount == silent.Count, "each waits, its timeout armed");
            time.Advance(TimeSpan.FromMilliseconds(1));
        }

        InMemoryConnection newcomer = inner.Connect(40100);

        (await ReadToEndAsync(silent[0].Input)).Should().Be(0, "eight may wait with one handshake place; the one silent longest gave its place up");
        Wait.Until(() => time.ActiveTimerCount == HandshakeAdmission.WaitingFactor, "the newcomer waits in its place");
        newcomer.IsDisposed.Should().BeFalse();
    }

    [Fact]
    public async Task ANewcomerWaitsWhileTheHandshakeInProgressSpeaksAndTakesItsPlaceOnceItIsSilentASecond()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsServerOptions options = Options();
        options.MaxPendingHandshakes = 1;
        options.HandshakeTimeout = TimeSpan.FromMinutes(1);
        await using TlsConnectionListener listener = new(inner, options, timeProvider: time);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        InMemoryConnection speaking = await SpeakingAsync(inner, 40001);

        InMemoryConnection client = inner.Connect(40002);
        Task<SslStream> handshake = HandshakeAsync(client);
        Wait.Until(() => time.ActiveTimerCount == 3, "the newcomer spoke and waits for the place (two timeouts and the admission's timer)");
        time.Advance(TimeSpan.FromSeconds(1));
        await using SslStream ssl = await handshake;
        await using TransportConnection? accepted = await accepting.AsTask().WaitAsync(Wait.DefaultBound);

        accepted!.RemoteEndPoint.Port.Should().Be(40002, "it waited for the place instead of being closed, and got it");
        Func<Task> closed = () => ReadToEndAsync(speaking.Input);
        await closed.Should().NotThrowAsync("silent for a second, the handshake in progress gave its place up: its connection was closed");
    }

    [Fact]
    public async Task AnAddressAtItsBoundWaitsForItsOwnHandshakesWhileOthersGoFirst()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsServerOptions options = Options();
        options.MaxPendingHandshakesPerAddress = 1;
        options.HandshakeTimeout = TimeSpan.FromMinutes(1);
        await using TlsConnectionListener listener = new(inner, options, timeProvider: time);
        Task<TransportConnection?> accepting = listener.AcceptAsync().AsTask();
        await SpeakingAsync(inner, 40001);

        InMemoryConnection sameAddress = inner.Connect(40002);
        Task<SslStream> waiting = HandshakeAsync(sameAddress);
        Wait.Until(() => time.ActiveTimerCount == 3, "the second connection of 10.0.0.2 spoke and waits");
        InMemoryConnection otherAddress = inner.Connect(40003, clientAddress: System.Net.IPAddress.Parse("192.0.2.7"));
        await using SslStream other = await HandshakeAsync(otherAddress);
        await using TransportConnection? first = await accepting.WaitAsync(Wait.DefaultBound);
        time.Advance(TimeSpan.FromSeconds(1));
        await using SslStream same = await waiting;
        await using TransportConnection? second = await listener.AcceptAsync().AsTask().WaitAsync(Wait.DefaultBound);

        first!.RemoteEndPoint.Address.ToString().Should().Be("192.0.2.7", "10.0.0.2 is at its bound (MaxPendingHandshakesPerAddress), 192.0.2.7 is not");
        second!.RemoteEndPoint.Port.Should().Be(40002, "once its address's handshake was silent a second, it took that place");
    }

    [Fact]
    public async Task AConnectionThatCompletesTlsAndSendsNoCsmIsAbortedAtTheCsmTimeout()
    {
        // RFC 8323 section 3.3 aborts a connection whose first message is not a CSM but sets no deadline: CsmTimeout is
        // ours, and over TLS it runs from the end of the handshake.
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsConnectionListener listener = new(inner, Options(), timeProvider: time);
        await using CoapNet.Messaging.CoapEndpoint endpoint = new(listener, new CoapNet.Messaging.CoapEndpointOptions { TimeProvider = time }, new CoapNet.Messaging.CoapConnectionOptions { CsmTimeout = TimeSpan.FromSeconds(3) });
        endpoint.Start();
        InMemoryConnection client = inner.Connect(40001);
        await using SslStream ssl = await HandshakeAsync(client);
        PipeReader frames = PipeReader.Create(ssl);
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        (await CoapNet.Serialization.CoapMessageSerializer.Tcp.DeserializeAsync(frames, bound.Token))!.Code.Should().Be(CoapNet.Messages.CoapCode.Csm);

        time.Advance(TimeSpan.FromSeconds(3));

        CoapNet.Messages.CoapMessage? abort = await CoapNet.Serialization.CoapMessageSerializer.Tcp.DeserializeAsync(frames, bound.Token);
        abort!.Code.Should().Be(CoapNet.Messages.CoapCode.Abort);
        abort.GetPayloadString().Should().Contain("No CSM within 3 s");
    }

    [Fact]
    public void AServersHandshakeTimeoutIsShorterThanAClientsByDefault()
    {
        new TlsServerOptions().HandshakeTimeout.Should().Be(TimeSpan.FromSeconds(5));
        new TlsClientOptions().HandshakeTimeout.Should().Be(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task DisposingEndsTheHandshakesInProgressAndAcceptReturnsNull()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsConnectionListener listener = new(inner, Options(), timeProvider: time);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        InMemoryConnection silent = inner.Connect(40001);
        Wait.Until(() => time.ActiveTimerCount == 1, "the handshake is in progress");

        await listener.DisposeAsync().AsTask().WaitAsync(Wait.DefaultBound);

        (await accepting.AsTask().WaitAsync(Wait.DefaultBound)).Should().BeNull();
        (await ReadToEndAsync(silent.Input)).Should().Be(0);
    }

    [Fact]
    public async Task AClientHandshakeWithASilentServerFailsAtItsTimeout()
    {
        ManualTimeProvider time = new();
        InMemoryConnector inner = new();
        TlsConnectionFactory factory = new(inner, new TlsClientOptions { HandshakeTimeout = Timeout }, timeProvider: time);

        Task<TransportConnection> connecting = factory.ConnectAsync(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 5684), "device.example", CancellationToken.None).AsTask();
        InMemoryConnection server = await inner.NextAsync();
        Wait.Until(() => time.ActiveTimerCount == 1, "the handshake's timeout is armed");
        time.Advance(Timeout);

        await connecting.Invoking(c => c.WaitAsync(Wait.DefaultBound)).Should().ThrowAsync<TimeoutException>();
        (await ReadClientHelloAsync(server.Input)).Should().BeTrue("the client spoke TLS, nothing else");
    }

    [Fact]
    public void OptionsAreCheckedWithTheirNames()
    {
        InMemoryListener inner = new();
        using System.Security.Cryptography.X509Certificates.X509Certificate2 withoutKey = TestPki.WithoutKey(TestPki.Instance.Server);

        FluentActions.Invoking(() => new TlsConnectionListener(inner, new TlsServerOptions()))
            .Should().Throw<ArgumentException>().WithParameterName("Certificate");
        FluentActions.Invoking(() => new TlsConnectionListener(inner, new TlsServerOptions { Certificate = withoutKey }))
            .Should().Throw<ArgumentException>().WithParameterName("Certificate").WithMessage("*private key*");
        FluentActions.Invoking(() => new TlsConnectionListener(inner, new TlsServerOptions { Certificate = TestPki.Instance.Server, HandshakeTimeout = TimeSpan.Zero }))
            .Should().Throw<ArgumentException>().WithParameterName("HandshakeTimeout");
        FluentActions.Invoking(() => new TlsConnectionListener(inner, new TlsServerOptions { Certificate = TestPki.Instance.Server, MaxPendingHandshakes = 0 }))
            .Should().Throw<ArgumentException>().WithParameterName("MaxPendingHandshakes");
        FluentActions.Invoking(() => new CoapNet.Server.CoapServerOptions().Listen("coaps+tcp://127.0.0.1:0", endpoint => endpoint.UseTls(new TlsServerOptions())))
            .Should().Throw<ArgumentException>().WithParameterName("Certificate");
        FluentActions.Invoking(() => new TlsConnectionFactory(new InMemoryConnector(), new TlsClientOptions { Certificate = withoutKey }))
            .Should().Throw<ArgumentException>().WithParameterName("Certificate");
    }

    [Fact]
    public void ACoapsTcpPeerIsKeptApartByTheHostItNames()
    {
        System.Net.IPEndPoint endPoint = new(System.Net.IPAddress.Loopback, 5684);

        CoapNet.Channels.CoapPeer.Tls(endPoint, "a.example").Should().Be(CoapNet.Channels.CoapPeer.Tls(endPoint, "A.example"), "host names compare without case");
        CoapNet.Channels.CoapPeer.Tls(endPoint, "a.example").Should().NotBe(CoapNet.Channels.CoapPeer.Tls(endPoint, "b.example"));
        CoapNet.Channels.CoapPeer.Tls(endPoint).Should().NotBe(CoapNet.Channels.CoapPeer.Tls(endPoint, "a.example"));
        CoapNet.Channels.CoapPeer.Tls(endPoint).Scheme.Should().Be("coaps+tcp");
        FluentActions.Invoking(() => CoapNet.Channels.CoapPeer.Tls(endPoint, string.Empty)).Should().Throw<ArgumentException>().WithParameterName("hostName");
    }

    private static TlsServerOptions Options() => new() { Certificate = TestPki.Instance.Server, HandshakeTimeout = Timeout };

    /// <summary>A TLS client's handshake with the listener over <paramref name="client"/>, completed.</summary>
    private static async Task<SslStream> HandshakeAsync(InMemoryConnection client)
    {
        SslStream ssl = new(new DuplexPipeStream(client));
        await Task.Run(() => ssl.AuthenticateAsClientAsync(ClientOptions())).WaitAsync(Wait.DefaultBound);
        return ssl;
    }

    /// <summary>
    /// A connection whose peer sent a ClientHello and then nothing more: once the server's first flight is back, the
    /// server has read it.
    /// </summary>
    private static async Task<InMemoryConnection> SpeakingAsync(InMemoryListener inner, int port)
    {
        (InMemoryConnection capture, InMemoryConnection captureClient) = InMemoryConnection.CreatePair();
        await using SslStream capturing = new(new DuplexPipeStream(captureClient));
        _ = capturing.AuthenticateAsClientAsync(ClientOptions());
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        ReadResult header = await capture.Input.ReadAtLeastAsync(5, bound.Token);
        int length = 5 + ((header.Buffer.Slice(3, 1).FirstSpan[0] << 8) | header.Buffer.Slice(4, 1).FirstSpan[0]);
        capture.Input.AdvanceTo(header.Buffer.Start);
        ReadResult whole = await capture.Input.ReadAtLeastAsync(length, bound.Token);
        byte[] clientHello = whole.Buffer.Slice(0, length).ToArray();
        capture.Input.AdvanceTo(whole.Buffer.End);

        InMemoryConnection speaking = inner.Connect(port);
        await speaking.Output.WriteAsync(clientHello, bound.Token);
        ReadResult answer = await speaking.Input.ReadAtLeastAsync(5, bound.Token);
        speaking.Input.AdvanceTo(answer.Buffer.Start);
        return speaking;
    }

    private static SslClientAuthenticationOptions ClientOptions() => new()
    {
        TargetHost = "127.0.0.1",
        ApplicationProtocols = [new SslApplicationProtocol("coap")],
        RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate?.Subject == "CN=coapnet-test-server",
    };

    /// <summary>Reads until the other end completes; returns how many bytes came.</summary>
    private static async Task<long> ReadToEndAsync(PipeReader reader)
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        long total = 0;
        while (true)
        {
            ReadResult result = await reader.ReadAsync(bound.Token);
            total += result.Buffer.Length;
            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                return total;
            }
        }
    }

    /// <summary>True when the first bytes the client sent are a TLS handshake record (a ClientHello).</summary>
    private static async Task<bool> ReadClientHelloAsync(PipeReader reader)
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        ReadResult result = await reader.ReadAtLeastAsync(6, bound.Token);
        byte[] header = result.Buffer.Slice(0, 6).ToArray();
        reader.AdvanceTo(result.Buffer.Start);
        return header[0] == 0x16 && header[1] == 0x03 && header[5] == 0x01;
    }
}
