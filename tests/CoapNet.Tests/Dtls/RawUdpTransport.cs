using System.Net;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>A UDP transport on 127.0.0.1 that also sends raw datagrams from its own socket, as an attacker on the path could.</summary>
internal sealed class RawUdpTransport : IDatagramTransport
{
    private readonly UdpTransport _udp = new(new IPEndPoint(IPAddress.Loopback, 0));

    public IPEndPoint LocalEndPoint => _udp.LocalEndPoint;

    public void SendRaw(byte[] datagram, IPEndPoint remote) => _udp.Send(datagram, remote);

    public void Start(IDatagramReceiver receiver) => _udp.Start(receiver);

    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _udp.Send(datagram, remote);

    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default) => _udp.SendAsync(datagram, remote, cancellationToken);

    public void Dispose() => _udp.Dispose();

    public ValueTask DisposeAsync() => _udp.DisposeAsync();
}
