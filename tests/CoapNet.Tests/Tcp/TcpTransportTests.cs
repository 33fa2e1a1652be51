using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Tcp;

/// <summary>The TCP transport over real loopback sockets: bytes both ways, closing, aborting, and bounded buffering.</summary>
public sealed class TcpTransportTests
{
    private static readonly IPEndPoint AnyLoopbackPort = new(IPAddress.Loopback, 0);

    [Fact]
    public async Task CarriesBytesBothWaysBetweenAListenerAndAFactoryConnection()
    {
        await using TcpConnectionListener listener = new(AnyLoopbackPort);
        listener.LocalEndPoint.Port.Should().NotBe(0);
        listener.Scheme.Should().Be(CoapPeer.TcpScheme);

        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        await using TransportConnection client = await new TcpConnectionFactory().ConnectAsync(listener.LocalEndPoint);
        await using TransportConnection server = (await accepting)!;

        server.RemoteEndPoint.Should().Be(client.LocalEndPoint);
        await client.Transport.Output.WriteAsync("hello"u8.ToArray());
        (await ReadExactly(server.Transport.Input, 5)).Should().Equal("hello"u8.ToArray());
        await server.Transport.Output.WriteAsync("world"u8.ToArray());
        (await ReadExactly(client.Transport.Input, 5)).Should().Equal("world"u8.ToArray());
    }

    [Fact]
    public async Task TheReaderSeesTheEndOfTheStreamWhenThePeerDisposes()
    {
        await using TcpConnectionListener listener = new(AnyLoopbackPort);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        TransportConnection client = await new TcpConnectionFactory().ConnectAsync(listener.LocalEndPoint);
        await using TransportConnection server = (await accepting)!;

        await client.Transport.Output.WriteAsync("last"u8.ToArray());
        await client.DisposeAsync();

        // What was written before the close still arrives, then the end.
        (await ReadExactly(server.Transport.Input, 4)).Should().Equal("last"u8.ToArray());
        ReadResult end = await server.Transport.Input.ReadAsync();
        end.IsCompleted.Should().BeTrue();
        end.Buffer.IsEmpty.Should().BeTrue();
    }

    [Fact]
    public async Task TheEndIsSeenWhenItArrivedWithTheLastBytesBeforeTheConnectionWasAccepted()
    {
        // Bytes and the peer's FIN that are both waiting when the connection is first watched arrive as one readiness (on
        // Linux one epoll event, EPOLLIN with EPOLLRDHUP): the read of the bytes leaves room in its buffer, and the end must
        // still be read after them.
        await using TcpConnectionListener listener = new(AnyLoopbackPort);
        using Socket peer = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await peer.ConnectAsync(listener.LocalEndPoint);
        await peer.SendAsync("last"u8.ToArray());
        peer.Shutdown(SocketShutdown.Send);
        await Task.Delay(50);

        await using TransportConnection server = (await listener.AcceptAsync())!;

        (await ReadExactly(server.Transport.Input, 4).WaitAsync(Wait.DefaultBound)).Should().Equal("last"u8.ToArray());
        ReadResult end = await server.Transport.Input.ReadAsync().AsTask().WaitAsync(Wait.DefaultBound);
        end.IsCompleted.Should().BeTrue();
        end.Buffer.IsEmpty.Should().BeTrue();
    }

    [Fact]
    public async Task AbortEndsTheConnectionAndItsPendingRead()
    {
        await using TcpConnectionListener listener = new(AnyLoopbackPort);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        await using TransportConnection client = await new TcpConnectionFactory().ConnectAsync(listener.LocalEndPoint);
        await using TransportConnection server = (await accepting)!;
        ValueTask<ReadResult> pending = server.Transport.Input.ReadAsync();

        server.Abort(new InvalidOperationException("because"));

        Func<Task> reading = async () => await pending;
        (await reading.Should().ThrowAsync<InvalidOperationException>()).WithMessage("because");
        server.ConnectionClosed.IsCancellationRequested.Should().BeTrue();

        // The peer sees the connection end (a FIN or a reset), not data.
        bool ended;
        try
        {
            ReadResult atClient = await client.Transport.Input.ReadAsync();
            ended = atClient.IsCompleted && atClient.Buffer.IsEmpty;
        }
        catch (IOException)
        {
            ended = true;
        }

        ended.Should().BeTrue();
    }

    [Fact]
    public async Task AcceptReturnsNullOnceTheListenerIsDisposed()
    {
        TcpConnectionListener listener = new(AnyLoopbackPort);
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();

        await listener.DisposeAsync();

        (await accepting).Should().BeNull();
    }

    [Fact]
    public async Task APeerThatStopsReadingMakesFlushesWaitInsteadOfBuffering()
    {
        // A flush that waited half a second may still have been released by the transport draining into kernel buffers
        // with room left, when the transport's loop was starved that long (two test runs share two cores in CI); then
        // the abort came too late to be what released it, and the scenario runs again on a new connection.
        const int Attempts = 5;
        for (int attempt = 1; attempt <= Attempts; attempt++)
        {
            if (await AnAbortReleasesAFlushThatWaitsAsync())
            {
                return;
            }
        }

        Assert.Fail($"In {Attempts} attempts, no flush was still waiting when the abort came: each was released normally, so the abort released none.");
    }

    /// <summary>
    /// Writes to a peer that reads nothing until a flush waits, aborts, and returns whether the abort released that
    /// flush (completed, canceled, or the abort's reason); false when it was released normally, before the abort.
    /// </summary>
    private static async Task<bool> AnAbortReleasesAFlushThatWaitsAsync()
    {
        await using TcpConnectionListener listener = new(AnyLoopbackPort, new TcpTransportOptions { MaxOutputBufferSize = 16 * 1024 });
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        using Socket peer = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
        await peer.ConnectAsync(listener.LocalEndPoint);
        await using TransportConnection server = (await accepting)!;

        // Write until a flush has to wait: the peer reads nothing, so the kernel buffers fill, then our pipe. A flush
        // that waits may still be released while the transport moves bytes into kernel buffers that have room left;
        // once one stays waiting for half a second the buffers are most likely full, and only the abort below can release it.
        byte[] chunk = new byte[8 * 1024];
        long written = 0;
        Task<FlushResult> stuck;
        while (true)
        {
            server.Transport.Output.Write(chunk);
            written += chunk.Length;
            ValueTask<FlushResult> flushing = server.Transport.Output.FlushAsync();
            if (!flushing.IsCompleted)
            {
                Task<FlushResult> waiting = flushing.AsTask();
                if (await Task.WhenAny(waiting, Task.Delay(500)) != waiting)
                {
                    stuck = waiting;
                    break;
                }
            }

            written.Should().BeLessThan(256L * 1024 * 1024, "back-pressure must stop the writer long before this");
        }

        server.Abort(new IOException("aborted by the test"));

        // An abort releases the waiting writer: its flush ends as completed, canceled, or with the abort's reason.
        try
        {
            FlushResult released = await stuck;
            return released.IsCompleted || released.IsCanceled;
        }
        catch (IOException exception)
        {
            exception.Message.Should().Be("aborted by the test");
            return true;
        }
    }

    [Fact]
    public async Task AConnectionHoldsBuffersOfItsPoolOnlyWhileBytesAreInFlight()
    {
        // An idle connection must hold no buffer (a fleet keeps thousands open), and every buffer goes back to the pool
        // once its bytes are consumed: each direction takes one, and gives it back.
        CountingPool pool = new();
        await using TcpConnectionListener listener = new(AnyLoopbackPort, new TcpTransportOptions { MemoryPool = pool });
        ValueTask<TransportConnection?> accepting = listener.AcceptAsync();
        await using TransportConnection client = await new TcpConnectionFactory().ConnectAsync(listener.LocalEndPoint);
        TransportConnection server = (await accepting)!;

        for (int round = 1; round <= 3; round++)
        {
            await client.Transport.Output.WriteAsync("ping"u8.ToArray());
            (await ReadExactly(server.Transport.Input, 4)).Should().Equal("ping"u8.ToArray());
            await server.Transport.Output.WriteAsync("pong"u8.ToArray());
            (await ReadExactly(client.Transport.Input, 4)).Should().Equal("pong"u8.ToArray());
            await Wait.UntilAsync(() => pool.Outstanding == 0, $"the server's connection gives its buffers back after round {round}");
        }

        pool.Rented.Should().BeGreaterThanOrEqualTo(6, "each round's input and output took a buffer of the pool the options named");
        await server.DisposeAsync();
        pool.Outstanding.Should().Be(0);
    }

    [Fact]
    public async Task OneEndpointServesAnotherOverRealSockets()
    {
        await using CoapEndpoint server = new(new TcpConnectionListener(AnyLoopbackPort));
        server.RequestHandler = TcpHarness.Echo;
        server.Start();
        await using CoapEndpoint client = new(new TcpConnectionFactory());
        client.Start();
        CoapPeer peer = CoapPeer.Tcp(server.LocalEndPoint);

        Task<CoapMessage>[] responses = new Task<CoapMessage>[20];
        for (int i = 0; i < responses.Length; i++)
        {
            responses[i] = client.SendRequestAsync(TcpHarness.Get("n/" + i, (byte)i), peer);
        }

        for (int i = 0; i < responses.Length; i++)
        {
            (await responses[i]).GetPayloadString().Should().Be("/n/" + i);
        }

        (await client.PingAsync(server.LocalEndPoint)).Should().BeGreaterThan(TimeSpan.Zero);
    }

    private static async Task<byte[]> ReadExactly(PipeReader reader, int count)
    {
        while (true)
        {
            ReadResult result = await reader.ReadAsync();
            if (result.Buffer.Length >= count)
            {
                byte[] bytes = result.Buffer.Slice(0, count).ToArray();
                reader.AdvanceTo(result.Buffer.GetPosition(count));
                return bytes;
            }

            result.IsCompleted.Should().BeFalse("the bytes should arrive before the end");
            reader.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }

    /// <summary>A pool over <see cref="ArrayPool{T}.Shared"/> that counts what is rented and not yet given back.</summary>
    private sealed class CountingPool : MemoryPool<byte>
    {
        private int _outstanding;
        private int _rented;

        public int Outstanding => Volatile.Read(ref _outstanding);

        public int Rented => Volatile.Read(ref _rented);

        public override int MaxBufferSize => 4096;

        public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
        {
            Interlocked.Increment(ref _rented);
            Interlocked.Increment(ref _outstanding);
            return new Owner(this, ArrayPool<byte>.Shared.Rent(minBufferSize < 0 ? MaxBufferSize : minBufferSize));
        }

        protected override void Dispose(bool disposing)
        {
        }

        private sealed class Owner(CountingPool pool, byte[] array) : IMemoryOwner<byte>
        {
            private int _disposed;

            public Memory<byte> Memory => array;

            public void Dispose()
            {
                Interlocked.Exchange(ref _disposed, 1).Should().Be(0, "a pipe gives each buffer back once");
                Interlocked.Decrement(ref pool._outstanding);
                ArrayPool<byte>.Shared.Return(array);
            }
        }
    }
}
