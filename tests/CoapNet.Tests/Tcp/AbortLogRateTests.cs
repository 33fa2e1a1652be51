using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// A storm of connections that each send one bad frame costs a bounded number of warning lines (the same
/// <see cref="Messaging.CoapEndpointOptions.MalformedLogLinesPerSecond"/> as malformed datagrams), and the
/// count of the rest is not lost.
/// </summary>
public sealed class AbortLogRateTests
{
    [Fact]
    public async Task AStormOfAbortedConnectionsWritesTenWarningsASecondAndThenSaysHowManyMoreThereWere()
    {
        await using TcpHarness server = TcpHarness.Server();

        for (int i = 0; i < 30; i++)
        {
            await AbortWithABadFrameAsync(server, 41000 + i);
        }

        server.Log.Warnings.Should().HaveCount(10);
        server.Log.Warnings.Should().AllSatisfy(w => w.Should().Contain(nameof(CoapFormatErrorReason.InvalidTokenLength)));
        server.Log.WarningKeys[0].Should().Contain("Peer", "every log line names the other side by the same key, over TCP as over UDP");

        server.Time.Advance(TimeSpan.FromSeconds(1));
        await AbortWithABadFrameAsync(server, 42000);

        server.Log.Warnings.Should().HaveCount(12);
        server.Log.Warnings[10].Should().StartWith("20 more connections were aborted or refused");
        server.Log.Warnings[11].Should().Contain("Aborted the connection");
    }

    [Fact]
    public async Task AStormOfConnectionsPastMaxConnectionsWritesABoundedNumberOfWarnings()
    {
        // The one connection carries a request the handler holds, so it is not idle and cannot give its place up.
        TaskCompletionSource<CoapNet.Messaging.CoapExchange> held = new(TaskCreationOptions.RunContinuationsAsynchronously);
        await using TcpHarness server = TcpHarness.Server(new CoapNet.Messaging.CoapConnectionOptions { MaxConnections = 1 }, exchange => held.TrySetResult(exchange));
        RawStreamPeer busy = await server.ConnectAndHandshakeAsync(43000);
        await busy.SendAsync(TcpHarness.Get("held", 1));
        await held.Task;

        for (int i = 1; i <= 30; i++)
        {
            (await server.Connect(clientPort: 43000 + i).ReceiveUntilClosedAsync()).Should().BeEmpty("refused at once");
        }

        server.Log.Warnings.Should().HaveCount(10).And.AllSatisfy(w => w.Should().Contain("already holds 1 connections"));
        server.Time.Advance(TimeSpan.FromSeconds(1));
        (await server.Connect(clientPort: 43100).ReceiveUntilClosedAsync()).Should().BeEmpty();
        server.Log.Warnings[10].Should().StartWith("20 more connections were aborted or refused");
    }

    private static async Task AbortWithABadFrameAsync(TcpHarness server, int clientPort)
    {
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(clientPort);

        // TKL 15 is reserved (RFC 8323 section 3.2): the frame is malformed from its first byte.
        await peer.SendBytesAsync(0x0F);

        (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Which.Code.Should().Be(CoapCode.Abort);
    }
}
