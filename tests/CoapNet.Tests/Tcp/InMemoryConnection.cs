using System.IO.Pipelines;
using System.Net;
using System.Threading.Channels;
using CoapNet.Transports;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// One end of an in-memory connection: two pipes, each end reads one and writes the other. Deterministic,
/// no sockets; the pipes pause their writers at a threshold as the TCP transport's do.
/// </summary>
internal sealed class InMemoryConnection : TransportConnection, IDuplexPipe
{
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly CancellationTokenSource _closed = new();
    private readonly CountingWriter _writer;
    private int _disposed;

    private InMemoryConnection(Pipe input, Pipe output, IPEndPoint local, IPEndPoint remote)
    {
        _input = input;
        _output = output;
        _writer = new CountingWriter(output.Writer);
        LocalEndPoint = local;
        RemoteEndPoint = remote;
    }

    public override IDuplexPipe Transport => this;

    public override IPEndPoint RemoteEndPoint { get; }

    public override IPEndPoint LocalEndPoint { get; }

    public override CancellationToken ConnectionClosed => _closed.Token;

    public PipeReader Input => _input.Reader;

    public PipeWriter Output => _writer;

    /// <summary>How many times this end flushed its output: a socket transport sends once per flush.</summary>
    public int Flushes => Volatile.Read(ref _writer.Flushes);

    /// <summary>The connection's other end.</summary>
    public InMemoryConnection Other { get; private set; } = null!;

    /// <summary>Why <see cref="Abort"/> was called, if it was.</summary>
    public Exception? AbortReason { get; private set; }

    /// <summary>True once the layer disposed (closed) this end.</summary>
    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    /// <summary>Creates the two ends: the server's (at 10.0.0.1:5683) and the client's (at <paramref name="clientPort"/>).</summary>
    /// <param name="clientPort">The client's port, so several connections have distinct peers.</param>
    /// <param name="pauseThreshold">The bytes a pipe holds before its writer's flush waits.</param>
    /// <param name="clientAddress">The client's address; 10.0.0.2 when null.</param>
    public static (InMemoryConnection Server, InMemoryConnection Client) CreatePair(int clientPort = 40000, long pauseThreshold = 64 * 1024, IPAddress? clientAddress = null)
    {
        PipeOptions options = new(pauseWriterThreshold: pauseThreshold, resumeWriterThreshold: pauseThreshold / 2, useSynchronizationContext: false);
        Pipe toServer = new(options);
        Pipe toClient = new(options);
        IPEndPoint server = new(IPAddress.Parse("10.0.0.1"), 5683);
        IPEndPoint client = new(clientAddress ?? IPAddress.Parse("10.0.0.2"), clientPort);
        InMemoryConnection serverEnd = new(toServer, toClient, server, client);
        InMemoryConnection clientEnd = new(toClient, toServer, client, server) { Other = serverEnd };
        serverEnd.Other = clientEnd;
        return (serverEnd, clientEnd);
    }

    public override void Abort(Exception? reason = null)
    {
        AbortReason ??= reason ?? new IOException("aborted");
        _output.Writer.CancelPendingFlush();
        _input.Reader.CancelPendingRead();
        _closed.Cancel();
    }

    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // The other end reads the end of the stream, and its writes report the connection as completed.
        await _output.Writer.CompleteAsync();
        await _input.Reader.CompleteAsync();
        _closed.Cancel();
    }
}

/// <summary>A pipe's writer that counts its flushes.</summary>
internal sealed class CountingWriter(PipeWriter inner) : PipeWriter
{
    public int Flushes;

    public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;

    public override long UnflushedBytes => inner.UnflushedBytes;

    public override void Advance(int bytes) => inner.Advance(bytes);

    public override void CancelPendingFlush() => inner.CancelPendingFlush();

    public override void Complete(Exception? exception = null) => inner.Complete(exception);

    public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref Flushes);
        return inner.FlushAsync(cancellationToken);
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

    public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);
}

/// <summary>A listener the test feeds with the server ends of in-memory connections.</summary>
internal sealed class InMemoryListener : IConnectionListener
{
    private readonly Channel<TransportConnection> _pending = Channel.CreateUnbounded<TransportConnection>();

    public string Scheme => Channels.CoapPeer.TcpScheme;

    public IPEndPoint LocalEndPoint { get; } = new(IPAddress.Parse("10.0.0.1"), 5683);

    /// <summary>Opens a connection to the listener; returns the client end for the test to drive.</summary>
    public InMemoryConnection Connect(int clientPort = 40000, long pauseThreshold = 64 * 1024, IPAddress? clientAddress = null)
    {
        (InMemoryConnection server, InMemoryConnection client) = InMemoryConnection.CreatePair(clientPort, pauseThreshold, clientAddress);
        _pending.Writer.TryWrite(server);
        return client;
    }

    public async ValueTask<TransportConnection?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _pending.Reader.ReadAsync(cancellationToken);
        }
        catch (ChannelClosedException)
        {
            return null;
        }
    }

    public ValueTask DisposeAsync()
    {
        _pending.Writer.TryComplete();
        return ValueTask.CompletedTask;
    }
}

/// <summary>A connection factory whose connections the test answers as the server.</summary>
internal sealed class InMemoryConnector : IConnectionFactory
{
    private readonly Channel<InMemoryConnection> _opened = Channel.CreateUnbounded<InMemoryConnection>();
    private int _nextPort = 40000;

    public string Scheme => Channels.CoapPeer.TcpScheme;

    /// <summary>How many connections were opened.</summary>
    public int Opened => _nextPort - 40000;

    /// <summary>Waits for the next connection the endpoint opens; returns its server end.</summary>
    public async Task<InMemoryConnection> NextAsync()
    {
        using CancellationTokenSource failSafe = new(TimeSpan.FromSeconds(30));
        return await _opened.Reader.ReadAsync(failSafe.Token);
    }

    public ValueTask<TransportConnection> ConnectAsync(IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        (InMemoryConnection server, InMemoryConnection client) = InMemoryConnection.CreatePair(Interlocked.Increment(ref _nextPort));
        _opened.Writer.TryWrite(server);
        return ValueTask.FromResult<TransportConnection>(client);
    }
}
