using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// Over real UDP on loopback, one request at a time (the socket never holds a backlog): a quick synchronous handler
/// leaves its lane for the socket's receive thread once trusted, and a handler that blocks never does (issue 25).
/// </summary>
public class InlineExecutionUdpTests
{
    private const string ReceiveThread = "CoapNet UDP receive";

    [Fact]
    public async Task AQuickHandlerRunsOnTheReceiveThreadOnceTrustedAndABlockingOneStaysOnItsLane()
    {
        List<string?> quick = [];
        List<string?> blocking = [];
        await using LoopbackServer server = LoopbackServer.Start(s =>
        {
            s.MapGet("/quick", _ =>
            {
                quick.Add(Thread.CurrentThread.Name);
                return CoapResponse.Content("quick");
            });
            s.MapGet("/blocking", _ =>
            {
                blocking.Add(Thread.CurrentThread.Name);
                Thread.Sleep(InlineGate.QuickLimit * 3);
                return CoapResponse.Content("blocking");
            });
        });
        using RawPeer peer = new(server.EndPoint);
        async Task GetAsync(string path, int i)
        {
            await peer.SendAsync(peer.Request(CoapMessageType.Confirmable, CoapCode.Get, path, token: (byte)i));
            (await peer.ReceiveAsync()).Message.Code.Should().Be(CoapCode.Content);
        }

        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            await GetAsync("/quick", i);
            await GetAsync("/blocking", i);
        }

        quick.Should().NotContain(ReceiveThread, "a handler starts on its lane");

        // A call that the machine's other load stretches past the limit sends the handler back for more quick calls:
        // a liveness bound, not a count.
        for (int i = 0; !quick.Contains(ReceiveThread); i++)
        {
            i.Should().BeLessThan(5 * InlineGate.MaxStreak, "a quick handler reaches the receive thread");
            await GetAsync("/quick", i);
        }

        await GetAsync("/blocking", 0);
        blocking.Should().NotContain(ReceiveThread);
    }
}
