using System.Net;
using System.Net.Sockets;
using CoapNet.Dtls;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.Tests.Server;

/// <summary>
/// Endpoints that cannot be bound (their ports are in use) make the server's start fail with one exception that names
/// each of them at once, by its address as users write it (scheme included: coap, coap+tcp, coaps, coaps+tcp) and its
/// name; still a <see cref="SocketException"/> with the operating system's code; and leave nothing bound, so the same
/// server starts once the ports are free.
/// </summary>
public sealed class BindErrorTests
{
    [Fact]
    public async Task ABusyUdpPortNamesTheCoapEndpointAndLeavesTheTcpOneUnbound()
    {
        using Socket holder = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        IPEndPoint busy = (IPEndPoint)holder.LocalEndPoint!;
        IPEndPoint tcp = new(IPAddress.Loopback, FreePorts.UdpAndTcp());
        await using CoapServer server = new(new CoapServerOptions().Listen("coap", busy, endpoint => endpoint.Name = "udp").Listen("coap+tcp", tcp));

        CoapBindException failure = FluentActions.Invoking(server.Start).Should().Throw<CoapBindException>().Which;

        failure.Should().BeAssignableTo<SocketException>("code that caught the SocketException binding used to throw still does");
        failure.SocketErrorCode.Should().Be(SocketError.AddressAlreadyInUse);
        failure.Message.Should().StartWith($"Cannot bind coap://127.0.0.1:{busy.Port} (udp): ", "the operating system's reason follows").And.EndWith(".");
        failure.Scheme.Should().Be("coap");
        failure.EndPoint.Should().Be(busy);
        failure.Name.Should().Be("udp");
        failure.Failures.Should().Equal(failure);
        server.IsRunning.Should().BeFalse();
        CanBind(tcp, SocketType.Stream, ProtocolType.Tcp).Should().BeTrue("the TCP endpoint bound before the UDP one failed is closed again");

        holder.Close();
        server.Start();
        server.LocalUris.Select(u => u.ToString()).Should().BeEquivalentTo([$"coap://127.0.0.1:{busy.Port}/", $"coap+tcp://127.0.0.1:{tcp.Port}/"], "once the port is free the same server starts");
    }

    [Fact]
    public async Task EveryBusyEndpointIsNamedAtOnceEachByItsOwnScheme()
    {
        using Socket udpHolder = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        udpHolder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        using Socket tcpHolder = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        tcpHolder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        tcpHolder.Listen();
        int udp = ((IPEndPoint)udpHolder.LocalEndPoint!).Port, tcp = ((IPEndPoint)tcpHolder.LocalEndPoint!).Port;
        int free = FreePorts.UdpAndTcp();
        CoapServerOptions options = new CoapServerOptions()
            .Listen($"coap://127.0.0.1:{free}")
            .Listen($"coaps://127.0.0.1:{udp}", endpoint => endpoint.UseDtls(CoapNet.Tests.Dtls.DtlsLoopback.ServerOptions()).Name = "Coap:Endpoints:secure")
            .Listen($"coaps+tcp://127.0.0.1:{tcp}", endpoint => endpoint.UseTls(CoapNet.Tests.Tls.TestPki.Instance.Server));
        await using CoapServer server = new(options);

        CoapBindException failure = (await FluentActions.Invoking(() => server.StartAsync()).Should().ThrowAsync<CoapBindException>()).Which;

        failure.Message.Should().StartWith($"Cannot bind 2 endpoints: coaps://127.0.0.1:{udp} (Coap:Endpoints:secure): ")
            .And.Contain($"; coaps+tcp://127.0.0.1:{tcp}: ").And.EndWith(".");
        failure.Failures.Select(f => (f.Scheme, f.EndPoint.Port)).Should().Equal(("coaps", udp), ("coaps+tcp", tcp));
        failure.Failures.Should().OnlyContain(f => f.SocketErrorCode == SocketError.AddressAlreadyInUse);
        CanBind(new IPEndPoint(IPAddress.Loopback, free), SocketType.Dgram, ProtocolType.Udp).Should().BeTrue("the endpoint that bound is closed again");
    }

    [Fact]
    public async Task ABusyTcpPortNamesTheCoapTcpEndpoint()
    {
        using Socket holder = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        holder.Listen();
        IPEndPoint busy = (IPEndPoint)holder.LocalEndPoint!;
        IPEndPoint udp = new(IPAddress.Loopback, FreePorts.UdpAndTcp());
        await using CoapServer server = new(new CoapServerOptions().Listen("coap", udp).Listen("coap+tcp", busy));

        CoapBindException failure = (await FluentActions.Invoking(() => server.StartAsync()).Should().ThrowAsync<CoapBindException>()).Which;

        failure.SocketErrorCode.Should().Be(SocketError.AddressAlreadyInUse);
        failure.Message.Should().StartWith($"Cannot bind coap+tcp://127.0.0.1:{busy.Port}: ");
        failure.Scheme.Should().Be("coap+tcp");
        CanBind(udp, SocketType.Dgram, ProtocolType.Udp).Should().BeTrue("nothing of the failed start is left bound");
    }

    [Fact]
    public void ATransportMadeDirectlyNamesItsEndpointToo()
    {
        using Socket holder = new(AddressFamily.InterNetworkV6, SocketType.Dgram, ProtocolType.Udp);
        holder.Bind(new IPEndPoint(IPAddress.IPv6Loopback, 0));
        int port = ((IPEndPoint)holder.LocalEndPoint!).Port;

        FluentActions.Invoking(() => new UdpTransport(new IPEndPoint(IPAddress.IPv6Loopback, port)))
            .Should().Throw<CoapBindException>().WithMessage($"Cannot bind the coap (UDP) endpoint [::1]:{port}: *");
        FluentActions.Invoking(() => new CoapBindException(null!, new IPEndPoint(IPAddress.Loopback, 1), new SocketException()))
            .Should().Throw<ArgumentNullException>().WithParameterName("scheme");
    }

    private static bool CanBind(IPEndPoint endPoint, SocketType type, ProtocolType protocol)
    {
        using Socket socket = new(AddressFamily.InterNetwork, type, protocol);
        try
        {
            socket.Bind(endPoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
