using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.Tests.Transports;

/// <summary>
/// One endpoint model for server and client: an endpoint's address finds its transport by scheme in a registry, the
/// client's URIs find theirs the same way, middleware wraps the transport, and what cannot work (no transport for the
/// scheme, a secure scheme nothing secured, middleware of the other kind) stops the start saying what to do, with
/// nothing left bound.
/// </summary>
public sealed class EndpointModelTests
{
    private const string MemoryScheme = "coap+mem";
    private const int MemoryPort = 7000;
    private static readonly IPEndPoint ServerAddress = new(IPAddress.Parse("10.0.0.2"), MemoryPort);
    private static readonly IPEndPoint ClientAddress = new(IPAddress.Parse("10.0.0.1"), 40000);

    [Fact]
    public async Task AServerAndAClientFindATransportOfTheirOwnSchemeInTheirRegistries()
    {
        ManualTimeProvider time = new();
        ManualTaskScheduler scheduler = new();
        InMemoryNetwork network = new(time) { DeliversImmediately = true };
        MemoryFactory factory = new(network);
        CoapServerOptions serverOptions = new() { Scheduler = scheduler, Endpoint = { TimeProvider = time } };
        serverOptions.Transports.Add(factory);
        await using CoapServer server = new(serverOptions.Listen($"{MemoryScheme}://{ServerAddress}"));
        server.MapGet("/hello", request => CoapResponse.Content($"hello {request.Peer.Scheme} {request.RemoteEndPoint}"));
        server.Start();
        CoapClientOptions clientOptions = new() { Endpoint = { TimeProvider = time } };
        clientOptions.Transports.Add(factory);
        await using CoapClient client = new(clientOptions);

        // No port in the URI: the scheme's transport says which (7000).
        Task<CoapResponse> get = client.GetAsync(new Uri($"{MemoryScheme}://10.0.0.2/hello"));
        scheduler.Settle(network);

        (await get).GetPayloadString().Should().Be($"hello {MemoryScheme} {ClientAddress}", "the server's peers carry the transport's scheme");
        server.LocalUris.Should().Equal(new Uri($"{MemoryScheme}://10.0.0.2:{MemoryPort}/"));
        network.Sent.Should().OnlyContain(d => d.Message != null && (d.To.Equals(ServerAddress) || d.To.Equals(ClientAddress)), "only the scheme's transports carried it");
    }

    [Fact]
    public async Task AnEndpointsOwnSettingsApplyToItAndTheServersToTheOthers()
    {
        ManualTimeProvider time = new();
        ManualTaskScheduler scheduler = new();
        InMemoryNetwork network = new(time) { DeliversImmediately = true };
        IPEndPoint small = new(IPAddress.Parse("10.0.0.3"), 5683);
        CoapServerOptions options = new CoapServerOptions { Scheduler = scheduler, Endpoint = { TimeProvider = time } }
            .Listen(network.CreateTransport(ServerAddress))
            .Listen(network.CreateTransport(small), endpoint => endpoint.Endpoint = new CoapEndpointOptions { TimeProvider = time, MaxMessageSize = 64, Blockwise = { BlockSize = 16 } });
        using CoapServer server = new(options);
        server.MapGet("/text", _ => CoapResponse.Content(new string('x', 100)));
        server.Start();
        using CoapEndpoint client = new(network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = time });
        client.Start();

        Task<CoapMessage> whole = client.SendRequestAsync(CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://10.0.0.2/text")), new IPEndPoint(ServerAddress.Address, ServerAddress.Port));
        Task<CoapMessage> first = client.SendRequestAsync(CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://10.0.0.3/text")), small);
        scheduler.Settle(network);

        (await whole).Payload.Length.Should().Be(100);
        (await first).Payload.Length.Should().Be(100, "the client joined the blocks");
        network.Sent.Where(d => d.From.Equals(ServerAddress)).Should().ContainSingle("the server's settings: the body fits one message")
            .Which.Parsed.Block2.Should().BeNull();
        network.Sent.Where(d => d.From.Equals(small)).Select(d => d.Parsed.Block2?.Size).Should().HaveCount(7, "the endpoint's own settings: messages of 64 bytes at most, so 16-byte blocks")
            .And.OnlyContain(size => size == 16);
    }

    [Fact]
    public async Task AnEndpointsOwnSettingsCopiedFromTheServersKeepItsStagesAndChangeApart()
    {
        ManualTimeProvider time = new();
        ManualTaskScheduler scheduler = new();
        InMemoryNetwork network = new(time) { DeliversImmediately = true };
        IPEndPoint own = new(IPAddress.Parse("10.0.0.3"), 5683);
        CoapServerOptions options = new() { Scheduler = scheduler, Endpoint = { TimeProvider = time } };
        options.Endpoint.UseStage("Marker", _ => new MarkerStage(), CoapStagePosition.AboveAll);
        CoapEndpointOptions copy = options.Endpoint.Clone();
        copy.TransmissionParameters.NStart = 3;
        copy.Blockwise.MaxStoredBodies = 7;
        options.Listen(network.CreateTransport(own), endpoint => endpoint.Endpoint = copy);
        using CoapServer server = new(options);
        server.MapGet("/x", _ => CoapResponse.Content("handler"));
        server.Start();
        using CoapEndpoint client = new(network.CreateTransport(ClientAddress), new CoapEndpointOptions { TimeProvider = time });
        client.Start();

        Task<CoapMessage> marked = client.SendRequestAsync(CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://10.0.0.3/marked")), own);
        scheduler.Settle(network);

        (await marked).GetPayloadString().Should().Be("from the stage", "the copy keeps the stages added to the server's settings");
        options.Endpoint.TransmissionParameters.NStart.Should().Be(1, "the copy's nested settings are its own");
        options.Endpoint.Blockwise.MaxStoredBodies.Should().Be(new CoapNet.Blockwise.BlockwiseOptions().MaxStoredBodies);
    }

    [Fact]
    public async Task AnEndpointWhoseSchemeHasNoTransportStopsTheStartBeforeAnythingIsBound()
    {
        int free = FreePorts.UdpAndTcp();
        await using CoapServer server = new(new CoapServerOptions().Listen($"coap://127.0.0.1:{free}").Listen("coap+radio://127.0.0.1:1", endpoint => endpoint.Name = "radio"));

        FluentActions.Invoking(server.Start).Should().Throw<InvalidOperationException>()
            .WithMessage("coap+radio://127.0.0.1:1 (radio): no transport is registered for coap+radio (the server has coap, coaps, coap+tcp, coaps+tcp); add the package that provides it, or register a factory in CoapServerOptions.Transports.");
        CanBindUdp(free).Should().BeTrue("nothing was bound");
        server.IsRunning.Should().BeFalse();
    }

    [Fact]
    public async Task ACoapsEndpointThatNothingSecuredStopsTheStartSayingWhatToCall()
    {
        int free = FreePorts.UdpAndTcp();
        await using CoapServer server = new(new CoapServerOptions().Listen($"coap://127.0.0.1:{free}").Listen("coaps://127.0.0.1:0"));

        FluentActions.Invoking(server.Start).Should().Throw<InvalidOperationException>().WithMessage(
            "coaps://127.0.0.1:0 is not served: its transport carries coap, not coaps; secure it with UseDtls(...) from CoapNet.Dtls on the endpoint, "
            + "or in configuration with a Dtls section (Coap:Endpoints:NAME:Dtls) and services.AddCoapsEndpoints().");
        CanBindUdp(free).Should().BeTrue("the endpoint bound before it is closed again");
    }

    [Fact]
    public async Task MiddlewareOfTheOtherKindOrThatChangesTheSchemeIsRefusedAtStart()
    {
        await using CoapServer tlsOnUdp = new(new CoapServerOptions().Listen("coap://127.0.0.1:0", endpoint => endpoint.UseTls(Tls.TestPki.Instance.Server)));
        await using CoapServer dtlsOnTcp = new(new CoapServerOptions().Listen("coap+tcp://127.0.0.1:0", endpoint => endpoint.UseDtls(Dtls.DtlsLoopback.ServerOptions())));
        await using CoapServer dtlsOnCoap = new(new CoapServerOptions().Listen("coap://127.0.0.1:0", endpoint => endpoint.UseDtls(Dtls.DtlsLoopback.ServerOptions())));

        FluentActions.Invoking(tlsOnUdp.Start).Should().Throw<InvalidOperationException>()
            .WithMessage("coap://127.0.0.1:0 is a datagram endpoint, which connection middleware (UseTls, say) cannot wrap; *");
        FluentActions.Invoking(dtlsOnTcp.Start).Should().Throw<InvalidOperationException>()
            .WithMessage("coap+tcp://127.0.0.1:0 is a connection endpoint, which datagram middleware (UseDtls, say) cannot wrap; *");
        FluentActions.Invoking(dtlsOnCoap.Start).Should().Throw<InvalidOperationException>()
            .WithMessage("coap://127.0.0.1:0 is not served: its transport carries coaps, not coap; its middleware makes it coaps; listen on a coaps:// address instead, or leave that middleware out.");
    }

    [Fact]
    public async Task AClientSaysWhatACoapsRequestNeedsAndWhichSchemesItReaches()
    {
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        (await FluentActions.Awaiting(() => client.GetAsync(new Uri("coaps://127.0.0.1/x"))).Should().ThrowAsync<ArgumentException>()).Which.Message.Should().StartWith(
            "This client cannot reach coaps servers: its transport for coaps carries coap; secure it with options.UseDtls(...) from CoapNet.Dtls on the CoapClientOptions");
        (await FluentActions.Awaiting(() => client.GetAsync(new Uri("coap+radio://127.0.0.1:9/x"))).Should().ThrowAsync<ArgumentException>()).Which.Message.Should().StartWith(
            "This client has no transport for coap+radio: it reaches coap, coaps, coap+tcp, coaps+tcp (CoapClientOptions.Transports");
    }

    [Fact]
    public async Task AClientsConnectionMiddlewareWrapsTheConnectionsOfItsScheme()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/x", _ => CoapResponse.Content("over tcp")), LoopbackServer.Options(tcp: true));
        int connects = 0;
        CoapClientOptions options = new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) }
            .UseConnectionMiddleware("coap+tcp", (inner, _) => new CountingConnector(inner, () => Interlocked.Increment(ref connects)));
        await using CoapClient client = new(options);

        CoapResponse response = await client.GetAsync(new Uri($"coap+tcp://127.0.0.1:{server.TcpEndPoint!.Port}/x"));

        response.GetPayloadString().Should().Be("over tcp");
        connects.Should().Be(1, "the connection went through the middleware");
    }

    private static bool CanBindUdp(int port)
    {
        using Socket socket = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        try
        {
            socket.Bind(new IPEndPoint(IPAddress.Loopback, port));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>The coap+mem scheme: the in-memory network's transports, at the endpoint's address on a server and at <see cref="ClientAddress"/> on a client.</summary>
    private sealed class MemoryFactory(InMemoryNetwork network) : CoapDatagramTransportFactory(MemoryScheme, MemoryPort)
    {
        public override IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context) => new Renamed(network.CreateTransport(localEndPoint));

        public override IDatagramTransport Open(CoapTransportContext context) => new Renamed(network.CreateTransport(ClientAddress));
    }

    /// <summary>An in-memory transport that says it carries coap+mem.</summary>
    private sealed class Renamed(InMemoryTransport inner) : IDatagramTransport
    {
        public IPEndPoint LocalEndPoint => inner.LocalEndPoint;

        public string Scheme => MemoryScheme;

        public void Start(IDatagramReceiver receiver) => inner.Start(receiver);

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => inner.Send(datagram, remote);

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default) => inner.SendAsync(datagram, remote, cancellationToken);

        public void Dispose() => inner.Dispose();

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }

    /// <summary>Answers GET /marked itself, before any handler.</summary>
    private sealed class MarkerStage : CoapStage
    {
        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            if (exchange.Request.UriPath == "/marked")
            {
                exchange.RespondFrom(this, new CoapMessage { Code = CoapCode.Content, Payload = "from the stage"u8.ToArray() });
                return;
            }

            next(exchange);
        }
    }

    /// <summary>Counts the connections opened through it.</summary>
    private sealed class CountingConnector(IConnectionFactory inner, Action opened) : IConnectionFactory
    {
        public string Scheme => inner.Scheme;

        public ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
        {
            opened();
            return inner.ConnectAsync(remote, cancellationToken);
        }
    }
}
