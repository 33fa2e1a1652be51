using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// A CoapEndpoint over in-memory connections in virtual time: as a server fed by <see cref="Listener"/>,
/// or as a client whose connections arrive through <see cref="Connector"/>.
/// </summary>
internal sealed class TcpHarness : IAsyncDisposable
{
    private TcpHarness(CoapEndpoint endpoint, InMemoryListener? listener, InMemoryConnector? connector)
    {
        Endpoint = endpoint;
        Listener = listener;
        Connector = connector;
    }

    public ManualTimeProvider Time { get; private init; } = null!;

    public ListLoggerFactory Log { get; private init; } = null!;

    public CoapEndpoint Endpoint { get; }

    public InMemoryListener? Listener { get; }

    public InMemoryConnector? Connector { get; }

    /// <summary>A server that answers every request with 2.05 and the request's path as payload.</summary>
    public static TcpHarness Server(CoapConnectionOptions? connections = null, CoapRequestHandler? handler = null)
    {
        ManualTimeProvider time = new();
        ListLoggerFactory log = new();
        InMemoryListener listener = new();
        CoapEndpoint endpoint = new(listener, new CoapEndpointOptions { TimeProvider = time, LoggerFactory = log }, connections);
        endpoint.RequestHandler = handler ?? Echo;
        endpoint.Start();
        return new TcpHarness(endpoint, listener, null) { Time = time, Log = log };
    }

    /// <summary>A client whose connections the test answers as the server.</summary>
    public static TcpHarness Client(CoapConnectionOptions? connections = null)
    {
        ManualTimeProvider time = new();
        ListLoggerFactory log = new();
        InMemoryConnector connector = new();
        CoapEndpoint endpoint = new(connector, new CoapEndpointOptions { TimeProvider = time, LoggerFactory = log }, connections);
        endpoint.Start();
        return new TcpHarness(endpoint, null, connector) { Time = time, Log = log };
    }

    public static CoapPeer ServerPeer { get; } = CoapPeer.Tcp(new System.Net.IPEndPoint(System.Net.IPAddress.Parse("10.0.0.1"), 5683));

    public static void Echo(CoapExchange exchange)
    {
        CoapMessage response = new() { Code = CoapCode.Content };
        response.SetPayload(exchange.Request.UriPath);
        exchange.Respond(response);
    }

    public static CoapMessage Get(string path, byte token)
    {
        CoapMessage request = new() { Code = CoapCode.Get, Token = new byte[] { token } };
        request.UriPath = path;
        return request;
    }

    /// <summary>Opens a connection to the server as a raw peer.</summary>
    public RawStreamPeer Connect(int clientPort = 40000, long pauseThreshold = 64 * 1024, System.Net.IPAddress? clientAddress = null) => new(Listener!.Connect(clientPort, pauseThreshold, clientAddress));

    /// <summary>Opens a connection and reads the endpoint's CSM, leaving ours unsent.</summary>
    public async Task<RawStreamPeer> ConnectBeforeOwnCsmAsync()
    {
        RawStreamPeer peer = Connect();
        (await peer.ReceiveAsync()).Code.Should().Be(CoapCode.Csm);
        return peer;
    }

    /// <summary>Opens a connection and completes the CSM handshake.</summary>
    public async Task<RawStreamPeer> ConnectAndHandshakeAsync(int clientPort = 40000, uint? maxMessageSize = null, bool bert = false, System.Net.IPAddress? clientAddress = null)
    {
        RawStreamPeer peer = Connect(clientPort, clientAddress: clientAddress);
        await peer.HandshakeAsync(maxMessageSize, bert);
        return peer;
    }

    /// <summary>Waits for the next connection the client endpoint opens, and completes its handshake as the server.</summary>
    public async Task<RawStreamPeer> AcceptAndHandshakeAsync(uint? maxMessageSize = null, bool bert = false)
    {
        RawStreamPeer server = new(await Connector!.NextAsync());
        await server.HandshakeAsync(maxMessageSize, bert);
        return server;
    }

    public ValueTask DisposeAsync() => Endpoint.DisposeAsync();
}
