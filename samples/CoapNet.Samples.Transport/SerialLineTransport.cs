using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using CoapNet.Transports;

namespace CoapNet.Samples.Transport;

/// <summary>
/// One end of a <see cref="SerialLine"/> as a CoAP datagram transport: each datagram goes out SLIP-framed, and each frame
/// that comes in is handed to the receiver as a datagram from the other end. CoAP's message layer runs over it as over
/// UDP (RFC 7252: Message IDs, confirmable delivery, deduplication), so a lossy line would be retransmitted over.
/// </summary>
/// <remarks>
/// A serial line joins two parties only, so each end has an address of its own (<see cref="LocalEndPoint"/>) and every
/// datagram is to or from the other's; the scheme says what it carries, which the endpoint gives every peer it hears.
/// </remarks>
internal sealed class SerialLineTransport(IDuplexPipe line, IPEndPoint local, IPEndPoint remote, string scheme) : IDatagramTransport
{
    private readonly object _sending = new();
    private readonly CancellationTokenSource _stopping = new();
    private Task? _receiving;

    public IPEndPoint LocalEndPoint { get; } = local;

    public string Scheme { get; } = scheme;

    public void Start(IDatagramReceiver receiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        if (Interlocked.CompareExchange(ref _receiving, Task.CompletedTask, null) is not null)
        {
            throw new InvalidOperationException("The transport is already started.");
        }

        _receiving = Task.Run(() => ReceiveAsync(receiver));
    }

    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint destination)
    {
        CheckDestination(destination);
        lock (_sending)
        {
            // The pipe has room (no pause threshold is reached by CoAP's few messages in flight): the flush completes at once.
            SlipFraming.Write(datagram, line.Output);
            ValueTask<FlushResult> flush = line.Output.FlushAsync();
            if (!flush.IsCompletedSuccessfully)
            {
                flush.AsTask().GetAwaiter().GetResult();
            }
        }
    }

    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint destination, CancellationToken cancellationToken = default)
    {
        Send(datagram.Span, destination);
        return ValueTask.CompletedTask;
    }

    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync();
        await line.Output.CompleteAsync();
        if (_receiving is { } receiving)
        {
            await receiving.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        _stopping.Dispose();
    }

    private void CheckDestination(IPEndPoint destination)
    {
        if (!destination.Equals(remote))
        {
            throw new ArgumentException($"This serial line reaches {remote} only, not {destination}.", nameof(destination));
        }
    }

    private async Task ReceiveAsync(IDatagramReceiver receiver)
    {
        List<byte> frame = [];
        try
        {
            while (true)
            {
                ReadResult read = await line.Input.ReadAsync(_stopping.Token);
                ReadOnlySequence<byte> buffer = read.Buffer;
                while (SlipFraming.TryRead(ref buffer, frame))
                {
                    receiver.OnDatagram(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(frame), remote);
                }

                line.Input.AdvanceTo(buffer.Start, buffer.End);
                if (read.IsCompleted)
                {
                    return;
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Disposed.
        }
        finally
        {
            await line.Input.CompleteAsync();
        }
    }
}
