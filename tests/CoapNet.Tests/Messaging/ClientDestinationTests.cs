using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// A client keeps the destination of its last IP-literal URI to send the next request to the same place without
/// parsing it again (issue 11: the client's cost per request). Each request still goes where its own URI says.
/// </summary>
public class ClientDestinationTests
{
    [Fact]
    public async Task RequestsThatAlternateBetweenTwoServersEachReachTheirOwn()
    {
        await using LoopbackServer first = LoopbackServer.Start(s => s.MapGet("/who", _ => CoapResponse.Content("first")));
        await using LoopbackServer second = LoopbackServer.Start(s => s.MapGet("/who", _ => CoapResponse.Content("second")));
        await using CoapClient client = new();

        for (int i = 0; i < 4; i++)
        {
            CoapResponse fromFirst = await client.GetAsync(first.Uri("/who"));
            CoapResponse fromSecond = client.Get(second.Uri("/who"));

            fromFirst.GetPayloadString().Should().Be("first");
            fromFirst.RemoteEndPoint.Should().Be(first.EndPoint);
            fromSecond.GetPayloadString().Should().Be("second");
            fromSecond.RemoteEndPoint.Should().Be(second.EndPoint);
        }
    }

    [Fact]
    public async Task TheSameAddressAndPortUnderTheOtherSchemeGoesOverTheOtherTransport()
    {
        // Both listeners on one port number, so that only the scheme tells the two destinations apart.
        await using LoopbackServer server = StartOnOnePortForBothTransports(s => s.MapGet("/transport", request => CoapResponse.Content(request.Peer.Scheme)));
        await using CoapClient client = new();
        int port = server.EndPoint.Port;

        for (int i = 0; i < 3; i++)
        {
            (await client.GetAsync(new Uri($"coap://127.0.0.1:{port}/transport"))).GetPayloadString().Should().Be("coap");
            (await client.GetAsync(new Uri($"coap+tcp://127.0.0.1:{port}/transport"))).GetPayloadString().Should().Be("coap+tcp");
        }
    }

    /// <summary>A server on one port over UDP and TCP; the port is tried until both are free.</summary>
    private static LoopbackServer StartOnOnePortForBothTransports(Action<CoapServer> map)
    {
        for (int attempt = 0; ; attempt++)
        {
            int port = FreePorts.UdpAndTcp();
            CoapServerOptions options = new CoapServerOptions()
            {
            }.Listen("coap+tcp", new IPEndPoint(IPAddress.Loopback, port)).Listen("coap", new IPEndPoint(IPAddress.Loopback, port));
            try
            {
                return LoopbackServer.Start(map, options);
            }
            catch (SocketException) when (attempt < 20)
            {
                // Taken meanwhile, over UDP or TCP: another port.
            }
        }
    }
}
