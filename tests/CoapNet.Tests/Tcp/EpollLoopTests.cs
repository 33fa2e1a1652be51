using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// TCP connections on Linux are served by epoll loops shared by the process, each running the handling of what its
/// connections receive on its own thread: a call that does not return there must stall only its own connection.
/// </summary>
public sealed class EpollLoopTests
{
    private static readonly IPEndPoint AnyLoopbackPort = new(IPAddress.Loopback, 0);

    [Fact]
    public void ConnectionsOnLinuxAreServedByTheEpollLoops()
    {
        EpollLoop.IsAvailable.Should().Be(OperatingSystem.IsLinux() && System.Runtime.InteropServices.RuntimeInformation.ProcessArchitecture
            is System.Runtime.InteropServices.Architecture.X64 or System.Runtime.InteropServices.Architecture.Arm64);
    }

    [Fact]
    public async Task AHandlerThatDoesNotReturnStallsOnlyItsOwnConnection()
    {
        using ManualResetEventSlim entered = new();
        using ManualResetEventSlim release = new();
        await using CoapEndpoint server = new(new TcpConnectionListener(AnyLoopbackPort));
        server.RequestHandler = exchange =>
        {
            if (exchange.Request.UriPath == "/block")
            {
                entered.Set();
                release.Wait(Wait.DefaultBound);
            }

            TcpHarness.Echo(exchange);
        };
        server.Start();
        CoapPeer peer = CoapPeer.Tcp(server.LocalEndPoint);

        await using CoapEndpoint blocked = new(new TcpConnectionFactory());
        blocked.Start();
        Task<CoapMessage> blocking = blocked.SendRequestAsync(TcpHarness.Get("block", 1), peer);
        entered.Wait(Wait.DefaultBound).Should().BeTrue("the handler was called");

        // Each client is a connection of its own, given to the loops in turn: more of them than there are loops puts some
        // on the loop whose thread is inside the call, and those are answered only once a new thread serves that loop.
        List<CoapEndpoint> clients = [];
        try
        {
            List<Task<CoapMessage>> others = [];
            for (int i = 0; i < (2 * Environment.ProcessorCount) + 1; i++)
            {
                CoapEndpoint client = new(new TcpConnectionFactory());
                clients.Add(client);
                client.Start();
                others.Add(client.SendRequestAsync(TcpHarness.Get("other/" + i, (byte)i), peer));
            }

            for (int i = 0; i < others.Count; i++)
            {
                (await others[i].WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("/other/" + i);
            }

            blocking.IsCompleted.Should().BeFalse("its handler has not returned");
        }
        finally
        {
            release.Set();
            foreach (CoapEndpoint client in clients)
            {
                await client.DisposeAsync();
            }
        }

        (await blocking.WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("/block");
    }
}
