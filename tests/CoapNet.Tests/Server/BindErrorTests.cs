using System.Net;
using System.Net.Sockets;
using CoapNet.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Server;

/// <summary>
/// An endpoint that cannot be bound (its port is in use) makes the server's start fail with an exception that names
/// the scheme, the address and the port, still a <see cref="SocketException"/> with the operating system's code, and
/// leaves nothing bound, so the same server starts once the port is free.
/// </summary>
public sealed class BindErrorTests
{
    [Fact]
    public async Task ABusyUdpPortNamesTheUdpEndpointAndLeavesTheTcpOneUnbound()
    {
        using Socket holder = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        IPEndPoint busy = (IPEndPoint)holder.LocalEndPoint!;
        IPEndPoint tcp = new(IPAddress.Loopback, FreePort(SocketType.Stream, ProtocolType.Tcp));
        await using CoapServer server = new(new CoapServerOptions { Endpoints = [busy], TcpEndpoints = [tcp] });

        CoapBindException failure = FluentActions.Invoking(server.Start).Should().Throw<CoapBindException>().Which;

        failure.Should().BeAssignableTo<SocketException>("code that caught the SocketException binding used to throw still does");
        failure.SocketErrorCode.Should().Be(SocketError.AddressAlreadyInUse);
        failure.Message.Should().StartWith($"Cannot bind the coap (UDP) endpoint 127.0.0.1:{busy.Port}: ", "the operating system's reason follows").And.EndWith(".");
        failure.Scheme.Should().Be("coap");
        failure.EndPoint.Should().Be(busy);
        server.IsRunning.Should().BeFalse();
        CanBind(tcp, SocketType.Stream, ProtocolType.Tcp).Should().BeTrue("the TCP endpoint bound before the UDP one failed is closed again");

        holder.Close();
        server.Start();
        server.LocalUris.Select(u => u.ToString()).Should().BeEquivalentTo([$"coap://127.0.0.1:{busy.Port}/", $"coap+tcp://127.0.0.1:{tcp.Port}/"], "once the port is free the same server starts");
    }

    [Fact]
    public async Task ABusyTcpPortNamesTheTcpEndpoint()
    {
        using Socket holder = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        holder.Listen();
        IPEndPoint busy = (IPEndPoint)holder.LocalEndPoint!;
        IPEndPoint udp = new(IPAddress.Loopback, FreePort(SocketType.Dgram, ProtocolType.Udp));
        await using CoapServer server = new(new CoapServerOptions { Endpoints = [udp], TcpEndpoints = [busy] });

        CoapBindException failure = (await FluentActions.Invoking(() => server.StartAsync()).Should().ThrowAsync<CoapBindException>()).Which;

        failure.SocketErrorCode.Should().Be(SocketError.AddressAlreadyInUse);
        failure.Message.Should().StartWith($"Cannot bind the coap+tcp (TCP) endpoint 127.0.0.1:{busy.Port}: ");
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

    private static int FreePort(SocketType type, ProtocolType protocol)
    {
        using Socket socket = new(AddressFamily.InterNetwork, type, protocol);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
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
