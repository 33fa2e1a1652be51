using System.Net;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>
/// One endpoint's view of a <see cref="MulticastSockets"/>: the unicast endpoint's (<see cref="Group"/> null), or a
/// group's, which hears only the group requests sent to its group and so is where a server tells a request that came
/// by multicast from one that did not.
/// </summary>
internal sealed class MulticastEndpointTransport(MulticastSockets sockets, IPAddress? group) : IDatagramTransport
{
    private readonly object _deliver = new();
    private IDatagramReceiver? _receiver;
    private int _disposed;

    /// <summary>The group; null for the unicast endpoint.</summary>
    public IPAddress? Group { get; } = group;

    /// <inheritdoc/>
    /// <remarks>The group and the port for a group endpoint; the wildcard and the port for the unicast one.</remarks>
    public IPEndPoint LocalEndPoint => new(Group ?? IPAddress.IPv6Any, sockets.Port);

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        if (Interlocked.CompareExchange(ref _receiver, receiver, null) is not null)
        {
            throw new InvalidOperationException("The transport was already started.");
        }

        sockets.Start();
    }

    /// <inheritdoc/>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (Group is null)
        {
            sockets.Send(datagram, remote);
        }
        else if (!GroupDatagrams.IsReset(datagram))
        {
            sockets.Replies.Record(this, datagram, remote);
            sockets.Send(datagram, remote);
        }
    }

    /// <inheritdoc/>
    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (Group is not null)
        {
            if (GroupDatagrams.IsReset(datagram.Span))
            {
                return ValueTask.CompletedTask;
            }

            sockets.Replies.Record(this, datagram.Span, remote);
        }

        return sockets.SendAsync(datagram, remote, cancellationToken);
    }

    /// <summary>
    /// Hands one datagram up. The IPv4 and IPv6 sockets each have a receive thread, so calls are serialized here for a
    /// receiver that asks for one call at a time (<see cref="IDatagramReceiver.SupportsInlineWork"/> false).
    /// </summary>
    internal void Deliver(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        IDatagramReceiver? receiver = Volatile.Read(ref _receiver);
        if (receiver is null || Volatile.Read(ref _disposed) != 0)
        {
            return;
        }

        if (receiver.SupportsInlineWork)
        {
            receiver.OnDatagram(datagram, remote);
            return;
        }

        lock (_deliver)
        {
            receiver.OnDatagram(datagram, remote);
        }
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            sockets.Release();
        }
    }

    /// <inheritdoc/>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }
}
