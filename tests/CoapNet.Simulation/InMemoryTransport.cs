using System.Net;
using CoapNet.Transports;

namespace CoapNet.Simulation;

/// <summary>A datagram transport on an <see cref="InMemoryNetwork"/>; create it with <see cref="InMemoryNetwork.CreateTransport(string)"/>.</summary>
public sealed class InMemoryTransport : IDatagramTransport
{
    private readonly InMemoryNetwork _network;
    private IDatagramReceiver? _receiver;
    private int _disposed;

    internal InMemoryTransport(InMemoryNetwork network, IPEndPoint local)
    {
        _network = network;
        LocalEndPoint = local;
    }

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint { get; }

    /// <summary>True once disposed.</summary>
    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>Runs inside every <see cref="Send"/>, before the network takes the datagram: a probe for what the sender does around a send.</summary>
    public Action<ReadOnlyMemory<byte>, IPEndPoint>? OnSending { get; set; }

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        if (Interlocked.CompareExchange(ref _receiver, receiver, null) is not null)
        {
            throw new InvalidOperationException("The transport is already started.");
        }
    }

    /// <inheritdoc/>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        ArgumentNullException.ThrowIfNull(remote);
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        byte[] bytes = datagram.ToArray();
        OnSending?.Invoke(bytes, remote);
        _network.Transmit(this, bytes, remote);
    }

    /// <inheritdoc/>
    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Send(datagram.Span, remote);
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _network.Unbind(this);
        }
    }

    /// <inheritdoc/>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    internal void Deliver(Datagram datagram)
    {
        IDatagramReceiver? receiver = Volatile.Read(ref _receiver);
        if (receiver is null || IsDisposed)
        {
            return;
        }

        // The span is valid only during the call (IDatagramReceiver): scribble over it afterwards.
        byte[] scratch = (byte[])datagram.Bytes.Clone();
        try
        {
            receiver.OnDatagram(scratch, datagram.From);
        }
        finally
        {
            scratch.AsSpan().Fill(0xEE);
        }
    }
}
