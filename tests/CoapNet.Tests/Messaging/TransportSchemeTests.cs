using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;
using static CoapNet.Tests.Messaging.MessagingHarness;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The scheme of a datagram endpoint is its transport's: a transport that secures its datagrams (DTLS says
/// "coaps", RFC 7252 section 9.1) gives it to the endpoint and to every peer heard on it, so handlers, logs and
/// matching see it instead of a hard-coded "coap".
/// </summary>
public class TransportSchemeTests
{
    [Fact]
    public void APlainTransportIsCoap()
    {
        using MessagingHarness h = new();
        h.Endpoint(ClientAddress).Scheme.Should().Be(CoapPeer.UdpScheme);
    }

    [Fact]
    public async Task TheEndpointAndEveryPeerHeardOnItCarryTheTransportsScheme()
    {
        using MessagingHarness h = new();
        CoapPeer? seen = null;
        await using CoapEndpoint server = new(new SchemedTransport(h.Network.CreateTransport(ServerAddress), "coaps"), h.Options());
        server.RequestHandler = exchange =>
        {
            seen = exchange.Peer;
            exchange.Respond(exchange.Request.CreateResponse(CoapCode.Content));
        };
        server.Start();
        await using CoapEndpoint client = new(new SchemedTransport(h.Network.CreateTransport(ClientAddress), "coaps"), h.Options());
        client.Start();

        Task<CoapMessage> response = client.SendRequestAsync(Get(), server.LocalEndPoint);
        h.Network.DeliverAll();
        h.Network.DeliverAll();

        server.Scheme.Should().Be("coaps");
        seen.Should().Be(new CoapPeer("coaps", client.LocalEndPoint));
        (await response.Done()).Code.Should().Be(CoapCode.Content, "the response is matched to the request in the transport's scheme");
    }

    /// <summary>A transport that says which scheme it carries, over an in-memory one.</summary>
    private sealed class SchemedTransport(InMemoryTransport inner, string scheme) : IDatagramTransport
    {
        public IPEndPoint LocalEndPoint => inner.LocalEndPoint;

        public string Scheme => scheme;

        public void Start(IDatagramReceiver receiver) => inner.Start(receiver);

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => inner.Send(datagram, remote);

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
            => inner.SendAsync(datagram, remote, cancellationToken);

        public void Dispose() => inner.Dispose();

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
