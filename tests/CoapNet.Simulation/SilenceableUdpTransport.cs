using System.Net;
using CoapNet.Transports;

namespace CoapNet.Simulation;

/// <summary>Sees one datagram on its way out, valid only during the call.</summary>
/// <param name="datagram">The bytes.</param>
/// <param name="remote">The destination.</param>
public delegate void SendProbe(ReadOnlySpan<byte> datagram, IPEndPoint remote);

/// <summary>
/// A UDP socket on 127.0.0.1 (a free port, or the one given) that can fall silent: once <see cref="Silent"/> is set it sends nothing more,
/// as a process that crashed or a device that went away says nothing on its way out, DTLS close_notify included; and a
/// probe for what it sends, for the secure transports that run over it.
/// </summary>
public sealed class SilenceableUdpTransport : IDatagramTransport
{
    private readonly UdpTransport _udp;
    private volatile bool _silent;

    /// <summary>Binds 127.0.0.1 at <paramref name="port"/>, a free one the system picks by default.</summary>
    /// <param name="port">The port, or 0.</param>
    public SilenceableUdpTransport(int port = 0) => _udp = new(new IPEndPoint(IPAddress.Loopback, port));

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint => _udp.LocalEndPoint;

    /// <summary>True from the moment nothing more is to be sent.</summary>
    public bool Silent
    {
        get => _silent;
        set => _silent = value;
    }

    /// <summary>Sees every datagram sent while not <see cref="Silent"/>, before the socket takes it.</summary>
    public SendProbe? OnSending { get; set; }

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver) => _udp.Start(receiver);

    /// <inheritdoc/>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        if (_silent)
        {
            return;
        }

        OnSending?.Invoke(datagram, remote);
        _udp.Send(datagram, remote);
    }

    /// <inheritdoc/>
    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        Send(datagram.Span, remote);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public void Dispose() => _udp.Dispose();

    /// <inheritdoc/>
    public ValueTask DisposeAsync() => _udp.DisposeAsync();
}
