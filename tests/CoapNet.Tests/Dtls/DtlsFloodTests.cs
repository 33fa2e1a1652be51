using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// A flood of spoofed ClientHellos (RFC 6347 section 4.2.1): the cookie exchange keeps no state before a cookie returns.
/// Measured by <see cref="GC.GetTotalMemory(bool)"/>, which counts the whole process: it runs alone.
/// </summary>
[Collection(ProcessWideCollection.Name)]
public sealed class DtlsFloodTests
{
    [Fact]
    public async Task AFloodOfSpoofedClientHellosLeavesMemoryFlatAndARealClientStillConnectsAtOnce()
    {
        byte[] clientHello = await DtlsAttacker.ClientHelloAsync();
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("here")), out DtlsServerTransport transport);
        List<UdpClient> sources = [.. Enumerable.Range(0, 100).Select(_ => new UdpClient(new IPEndPoint(IPAddress.Loopback, 0)))];
        try
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            long before = GC.GetTotalMemory(forceFullCollection: true);

            // 100,000 ClientHellos from 100 source ports, none of which ever answers its HelloVerifyRequest:
            // each is one HMAC and one datagram back, and no state.
            for (int round = 0; round < 1000; round++)
            {
                foreach (UdpClient source in sources)
                {
                    source.Send(clientHello, clientHello.Length, server.EndPoint);
                }
            }

            await using CoapClient client = DtlsLoopback.Client();
            CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));

            GC.Collect();
            GC.WaitForPendingFinalizers();
            long after = GC.GetTotalMemory(forceFullCollection: true);
            response.GetPayloadString().Should().Be("here");
            transport.SessionCount.Should().Be(1, "only the real client holds a session");
            (after - before).Should().BeLessThan(8 << 20, "100,000 handshakes' worth of state would take hundreds of megabytes");
        }
        finally
        {
            sources.ForEach(s => s.Dispose());
        }
    }
}
