using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>Starting and stopping: a graceful stop answers what is in flight, sheds what arrives meanwhile, and closes the sockets.</summary>
public sealed class LifecycleTests
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task StopAsyncWaitsForAnInFlightHandlerToAnswerAndShedsARequestArrivingMeanwhile()
    {
        using BlockingRoute block = new();
        await using LoopbackServer server = LoopbackServer.Start(block.Map, LoopbackServer.Options(separateResponseDelay: TimeSpan.FromMinutes(5), loadSheddingMaxAge: TimeSpan.FromSeconds(3), udpPort: FreePorts.UdpAndTcp()));
        using RawPeer peer = new(server.EndPoint);
        CoapMessage inFlight = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block?n=1", token: 1);
        await peer.SendAsync(inFlight);
        await block.WaitUntilEnteredAsync();

        Task stopping = server.Server.StopAsync();
        server.Server.IsRunning.Should().BeFalse("stopping begins at once");
        CoapMessage late = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block?n=2", token: 2);
        await peer.SendAsync(late);
        CoapMessage shed = (await peer.ReceiveAsync()).Message;

        shed.Type.Should().Be(CoapMessageType.Acknowledgement);
        shed.MessageId.Should().Be(late.MessageId);
        shed.Code.Should().Be(CoapCode.ServiceUnavailable);
        shed.MaxAge.Should().Be(3u);
        stopping.IsCompleted.Should().BeFalse("the handler of the first request has not answered yet");

        block.Release();
        await stopping.WaitAsync(Liveness);
        CoapMessage answer = (await peer.ReceiveAsync()).Message;
        answer.MessageId.Should().Be(inFlight.MessageId, "the answer was sent before StopAsync returned");
        answer.Code.Should().Be(CoapCode.Content);
        answer.GetPayloadString().Should().Be("done 1");
        block.Canceled.IsCompleted.Should().BeFalse("a graceful stop does not cancel handlers");
        Rebinding(server.EndPoint).Should().BeTrue("the socket is closed once stopped");
    }

    [Fact]
    public async Task StopWaitsForAnInFlightHandlerToAnswerToo()
    {
        using BlockingRoute block = new();
        await using LoopbackServer server = LoopbackServer.Start(block.Map, LoopbackServer.Options(separateResponseDelay: TimeSpan.FromMinutes(5)));
        using RawPeer peer = new(server.EndPoint);
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block?n=1", token: 1));
        await block.WaitUntilEnteredAsync();

        Task stopping = Task.Factory.StartNew(() => server.Server.Stop(), TaskCreationOptions.LongRunning);

        // Stop blocks its thread and raises no event when it begins; its first step is to leave the running state.
        Wait.Until(() => !server.Server.IsRunning, "the server to stop", Liveness);
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block?n=2", token: 2));
        (await peer.ReceiveAsync()).Message.Code.Should().Be(CoapCode.ServiceUnavailable);
        stopping.IsCompleted.Should().BeFalse();

        block.Release();
        await stopping.WaitAsync(Liveness);
        (await peer.ReceiveAsync()).Message.GetPayloadString().Should().Be("done 1");
    }

    [Fact]
    public async Task StopAsyncWhoseWaitIsCanceledCancelsTheHandlersAndClosesTheSockets()
    {
        using BlockingRoute block = new();
        await using LoopbackServer server = LoopbackServer.Start(block.Map, LoopbackServer.Options(separateResponseDelay: TimeSpan.FromMinutes(5), udpPort: FreePorts.UdpAndTcp()));
        using RawPeer peer = new(server.EndPoint);
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block", token: 1));
        await block.WaitUntilEnteredAsync();

        await server.Server.StopAsync(new CancellationToken(canceled: true)).WaitAsync(Liveness);

        await block.Canceled.WaitAsync(Liveness);
        Rebinding(server.EndPoint).Should().BeTrue();
    }

    [Fact]
    public async Task StopWhoseWaitIsCanceledCancelsTheHandlersAndClosesTheSockets()
    {
        using BlockingRoute block = new();
        await using LoopbackServer server = LoopbackServer.Start(block.Map, LoopbackServer.Options(separateResponseDelay: TimeSpan.FromMinutes(5), udpPort: FreePorts.UdpAndTcp()));
        using RawPeer peer = new(server.EndPoint);
        await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/block", token: 1));
        await block.WaitUntilEnteredAsync();

        server.Server.Stop(new CancellationToken(canceled: true));

        await block.Canceled.WaitAsync(Liveness);
        Rebinding(server.EndPoint).Should().BeTrue();
    }

    [Fact]
    public async Task StoppingAndDisposingAgainAreHarmless()
    {
        CoapServer server = new(LoopbackServer.Options());
        server.MapGet("/x", _ => CoapResponse.Content("x"));
        server.Start();

        await server.StopAsync();
        await server.StopAsync();
        server.Stop();
        server.Dispose();
        server.Dispose();
        await server.DisposeAsync();

        server.IsRunning.Should().BeFalse();
        server.Invoking(s => s.Start()).Should().Throw<InvalidOperationException>("a stopped server does not start again");
    }

    [Fact]
    public async Task AServerThatNeverStartedStopsAndDisposesQuietly()
    {
        CoapServer server = new(LoopbackServer.Options());

        await server.StopAsync();
        server.Stop();
        server.Dispose();
        await server.DisposeAsync();

        server.IsRunning.Should().BeFalse();
        server.LocalEndPoints.Should().BeEmpty();
    }

    [Fact]
    public async Task TwoEndpointsServeAtOnceOverIPv4AndIPv6Loopback()
    {
        // Over [::1] where the machine has IPv6 loopback; otherwise on two IPv4 ports.
        IPAddress second = IPv6LoopbackWorks() ? IPAddress.IPv6Loopback : IPAddress.Loopback;
        CoapServerOptions options = new CoapServerOptions() { }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)).Listen("coap", new IPEndPoint(second, 0));
        await using CoapServer server = new(options);
        server.MapGet("/where", request => CoapResponse.Content(request.RemoteEndPoint.AddressFamily.ToString()));
        await server.StartAsync();
        IPEndPoint v4 = server.LocalEndPoints[0];
        IPEndPoint other = server.LocalEndPoints[1];
        await using CoapClient client4 = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        await using CoapClient client6 = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(second, 0) });

        CoapResponse overV4 = await client4.GetAsync(new Uri($"coap://127.0.0.1:{v4.Port}/where"));
        CoapResponse overOther = await client6.GetAsync(new Uri($"coap://{new IPEndPoint(other.Address, other.Port)}/where"));

        v4.Port.Should().NotBe(0);
        other.Port.Should().NotBe(0).And.NotBe(v4.Port);
        other.Address.Should().Be(second);
        overV4.GetPayloadString().Should().Be(nameof(AddressFamily.InterNetwork));
        overOther.GetPayloadString().Should().Be(second.AddressFamily.ToString());
    }

    private static bool IPv6LoopbackWorks()
    {
        if (!Socket.OSSupportsIPv6)
        {
            return false;
        }

        try
        {
            using Socket probe = new(AddressFamily.InterNetworkV6, SocketType.Dgram, ProtocolType.Udp);
            probe.Bind(new IPEndPoint(IPAddress.IPv6Loopback, 0));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>True when the server's port can be bound again, so its socket is closed.</summary>
    private static bool Rebinding(IPEndPoint endPoint)
    {
        try
        {
            using UdpClient socket = new(endPoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
