using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Endpoints;

/// <summary>
/// A server for handler tests in virtual time: the in-memory network, the manual clock and task scheduler, and a
/// scripted peer (optionally with a security identity, as a DTLS transport would deliver it). <see cref="Send"/> sends
/// one request and runs the server until it is quiet, then returns the response on the wire.
/// </summary>
internal sealed class HandlerHost : IDisposable
{
    public static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTaskScheduler _scheduler = new();
    private ushort _messageId;

    public HandlerHost(Action<CoapServerOptions>? configure = null, Func<IPEndPoint, CoapPeerIdentity?>? identities = null)
    {
        Network = new InMemoryNetwork(Time);
        IDatagramTransport transport = Network.CreateTransport(ServerAddress);
        if (identities is not null)
        {
            transport = new IdentifyingTransport(transport, identities);
        }

        CoapServerOptions options = new CoapServerOptions()
        {
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = Time },
        }.Listen(transport);
        configure?.Invoke(options);
        Server = new CoapServer(options);
        Peer = new TestPeer(Network, "10.0.0.1");
    }

    public ManualTimeProvider Time { get; } = new();

    public InMemoryNetwork Network { get; }

    public TestPeer Peer { get; }

    public CoapServer Server { get; }

    public static CoapMessage Request(CoapCode method, string pathAndQuery)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = method };
        int query = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        request.UriPath = query < 0 ? pathAndQuery : pathAndQuery[..query];
        if (query >= 0)
        {
            request.UriQuery = pathAndQuery[(query + 1)..];
        }

        return request;
    }

    /// <summary>Sends a request (its Message ID and token are set here) and returns the server's response to it.</summary>
    public CoapMessage Send(CoapMessage request)
    {
        if (!Server.IsRunning)
        {
            Server.Start();
        }

        request.MessageId = ++_messageId;
        request.Token = BitConverter.GetBytes(_messageId);
        Peer.ClearReceived();
        Peer.Send(request, ServerAddress);
        Settle();
        return Peer.Received.Select(d => d.Parsed).Last(m => m.Token.Span.SequenceEqual(request.Token.Span) && m.Code.IsResponse);
    }

    public CoapMessage Send(CoapCode method, string pathAndQuery, Action<CoapMessage>? configure = null)
    {
        CoapMessage request = Request(method, pathAndQuery);
        configure?.Invoke(request);
        return Send(request);
    }

    public void Settle() => _scheduler.Settle(Network);

    public void Dispose()
    {
        Server.Dispose();
        Peer.Dispose();
    }

    /// <summary>Delivers every datagram with the security context of its sender's identity, as a DTLS transport does after its handshake.</summary>
    private sealed class IdentifyingTransport(IDatagramTransport inner, Func<IPEndPoint, CoapPeerIdentity?> identities) : IDatagramTransport, IDatagramReceiver
    {
        private readonly Dictionary<(IPEndPoint, CoapPeerIdentity), CoapSecurityContext> _sessions = [];
        private IDatagramReceiver? _receiver;

        public IPEndPoint LocalEndPoint => inner.LocalEndPoint;

        public void Start(IDatagramReceiver receiver)
        {
            _receiver = receiver;
            inner.Start(this);
        }

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote) => OnDatagram(datagram, remote, null);

        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext)
        {
            CoapSecurityContext? session = null;
            if (identities(remote) is { } identity)
            {
                lock (_sessions)
                {
                    // A new identity from the same address is a new handshake, so a new session.
                    if (!_sessions.TryGetValue((remote, identity), out session))
                    {
                        session = new CoapSecurityContext("DTLS 1.2", identity);
                        _sessions[(remote, identity)] = session;
                    }
                }
            }

            _receiver!.OnDatagram(datagram, remote, session);
        }

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => inner.Send(datagram, remote);

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default) => inner.SendAsync(datagram, remote, cancellationToken);

        public void Dispose() => inner.Dispose();

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
