using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// A virtual-time world for messaging tests: one <see cref="ManualTimeProvider"/>, one
/// <see cref="InMemoryNetwork"/> on it, and the endpoints and scripted peers a test creates there
/// (disposed with the harness). Endpoints get a seeded <see cref="Random"/>, so runs repeat exactly.
/// </summary>
internal sealed class MessagingHarness : IDisposable
{
    public const string ClientAddress = "10.0.0.1";
    public const string ServerAddress = "10.0.0.2";

    private readonly List<IDisposable> _owned = [];
    private readonly Dictionary<CoapEndpoint, InMemoryTransport> _transports = [];

    public MessagingHarness(bool deliverImmediately = false)
    {
        Network = new InMemoryNetwork(Time) { DeliversImmediately = deliverImmediately };
    }

    public ManualTimeProvider Time { get; } = new();

    public InMemoryNetwork Network { get; }

    public static IPEndPoint At(string address) => InMemoryNetwork.EndPoint(address);

    /// <summary>Endpoint options on the harness's clock with a seeded random source.</summary>
    public CoapEndpointOptions Options(
        CoapTransmissionParameters? parameters = null,
        int deduplicationCapacity = 16384,
        TimeSpan? responseTimeout = null,
        int tokenLength = 8,
        int seed = 7)
        => new()
        {
            TransmissionParameters = parameters ?? CoapTransmissionParameters.Default,
            TimeProvider = Time,
            Random = new Random(seed),
            DeduplicationCapacity = deduplicationCapacity,
            ResponseTimeout = responseTimeout,
            TokenLength = tokenLength,
        };

    /// <summary>A started endpoint at <paramref name="address"/>.</summary>
    public CoapEndpoint Endpoint(string address, CoapEndpointOptions? options = null, CoapRequestHandler? handler = null)
    {
        InMemoryTransport transport = Network.CreateTransport(address);
        CoapEndpoint endpoint = new(transport, options ?? Options());
        endpoint.RequestHandler = handler;
        _transports.Add(endpoint, transport);
        _owned.Add(endpoint);
        endpoint.Start();
        return endpoint;
    }

    /// <summary>The transport under an endpoint this harness created.</summary>
    public InMemoryTransport TransportOf(CoapEndpoint endpoint) => _transports[endpoint];

    /// <summary>A scripted peer at <paramref name="address"/>.</summary>
    public TestPeer Peer(string address)
    {
        TestPeer peer = new(Network, address);
        _owned.Add(peer);
        return peer;
    }

    /// <summary>Datagrams from <paramref name="from"/> to <paramref name="to"/> that were not dropped.</summary>
    public IReadOnlyList<Datagram> Between(IPEndPoint from, IPEndPoint to)
        => Network.SentBetween(from, to).Where(d => !d.Dropped).ToList();

    /// <summary>Every datagram sent from <paramref name="from"/> to <paramref name="to"/>, dropped ones included.</summary>
    public IReadOnlyList<Datagram> AllBetween(IPEndPoint from, IPEndPoint to) => Network.SentBetween(from, to);

    /// <summary>Delivers everything in flight, then moves the clock, then delivers what the timers sent.</summary>
    public void Advance(TimeSpan delta)
    {
        Network.DeliverAll();
        Time.Advance(delta);
        Network.DeliverAll();
    }

    public void Dispose()
    {
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
    }

    /// <summary>A CON GET for /<paramref name="path"/> with no token (the endpoint assigns one).</summary>
    public static CoapMessage Get(string path = "resource", CoapMessageType type = CoapMessageType.Confirmable)
    {
        CoapMessage request = new() { Type = type, Code = CoapCode.Get };
        request.UriPath = path;
        return request;
    }

    /// <summary>A request as a scripted client would send it: its own Message ID and token.</summary>
    public static CoapMessage RawRequest(ushort messageId, byte[] token, CoapMessageType type = CoapMessageType.Confirmable, string path = "resource")
    {
        CoapMessage request = new() { Type = type, Code = CoapCode.Get, MessageId = messageId, Token = token };
        request.UriPath = path;
        return request;
    }

    /// <summary>A handler that answers every request piggybacked with 2.05 and the request's path as payload.</summary>
    public static CoapRequestHandler Echo(Action<CoapExchange>? observe = null) => exchange =>
    {
        observe?.Invoke(exchange);
        CoapMessage response = new() { Code = CoapCode.Content };
        response.SetPayload(exchange.Request.UriPath);
        exchange.Respond(response);
    };
}
