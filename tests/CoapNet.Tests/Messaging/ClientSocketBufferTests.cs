using CoapNet.Client;
using CoapNet.Transports;

namespace CoapNet.Tests.Messaging;

/// <summary>A client's UDP socket buffers can be sized (issue 11: a client with hundreds of requests in flight gets their answers in bursts).</summary>
public class ClientSocketBufferTests
{
    [Fact]
    public void TheSizesReachTheSocket()
    {
        using UdpTransport transport = Open(new CoapClientOptions { Udp = { SocketReceiveBufferSize = 64 * 1024, SocketSendBufferSize = 48 * 1024 } });

        // Linux reports twice the size set (half is for its bookkeeping); other systems report it as set.
        transport.SocketReceiveBufferSize.Should().BeGreaterThanOrEqualTo(64 * 1024);
        transport.SocketSendBufferSize.Should().BeGreaterThanOrEqualTo(48 * 1024);
    }

    [Fact]
    public void ByDefaultTheReceiveBufferIsAskedForOneMebibyteAndNullKeepsTheSystemDefault()
    {
        using UdpTransport byDefault = Open(null);
        using UdpTransport system = Open(new CoapClientOptions { Udp = { SocketReceiveBufferSize = null } });
        using UdpTransport small = Open(new CoapClientOptions { Udp = { SocketReceiveBufferSize = 1024 } });

        // What the kernel grants is capped by net.core.rmem_max, so the 1 MiB asked for may come back smaller, but
        // never smaller than the system default that asking for nothing leaves.
        byDefault.SocketReceiveBufferSize.Should().BeGreaterThanOrEqualTo(system.SocketReceiveBufferSize);
        system.SocketReceiveBufferSize.Should().NotBe(small.SocketReceiveBufferSize);
    }

    [Theory]
    [InlineData(1023, null)]
    [InlineData(null, 0)]
    public void ASizeBelowOneKibibyteIsRefusedWithItsName(int? receive, int? send)
    {
        Action create = () => _ = new CoapClient(new CoapClientOptions { Udp = { SocketReceiveBufferSize = receive, SocketSendBufferSize = send } });

        create.Should().Throw<ArgumentException>().WithMessage("*SocketReceiveBufferSize and SocketSendBufferSize*");
    }

    /// <summary>The socket a client with <paramref name="options"/> opens for coap://, as its transport registry makes it.</summary>
    private static UdpTransport Open(CoapClientOptions? options)
    {
        options ??= new CoapClientOptions();
        CoapDatagramTransportFactory coap = (CoapDatagramTransportFactory)options.Transports.Find("coap")!;
        return (UdpTransport)coap.Open(new CoapTransportContext("coap", options));
    }
}
