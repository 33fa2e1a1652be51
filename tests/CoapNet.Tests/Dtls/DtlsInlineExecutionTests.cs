using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Over coaps as over plain UDP (issue 25, <see cref="InlineExecutionUdpTests"/>): the DTLS engine decrypts on the UDP
/// socket's receive thread and a trusted quick handler answers there too, with no hand-off to another thread; a handler
/// that stalls there does not stop the socket, which another thread takes over, so other sessions are still answered
/// and the stalled session's records are decrypted in order once it returns. Real sockets on loopback; waits are
/// liveness bounds only.
/// </summary>
public class DtlsInlineExecutionTests
{
    private const string ReceiveThread = "CoapNet UDP receive";

    [Fact]
    public async Task AQuickHandlerAnswersCoapsRequestsOnTheSocketsReceiveThreadOnceTrusted()
    {
        List<string?> threads = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/quick", _ =>
        {
            lock (threads)
            {
                threads.Add(Thread.CurrentThread.Name);
            }

            return CoapResponse.Content("quick");
        }), out _);
        await using CoapClient client = DtlsLoopback.Client();
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/quick");

        for (int i = 0; i < InlineGate.FirstStreak; i++)
        {
            (await client.GetAsync(uri)).GetPayloadString().Should().Be("quick");
        }

        threads.Should().NotContain(ReceiveThread, "a handler starts on its lane");

        // A call the machine's other load stretches past the limit sends the handler back for more quick calls: a
        // liveness bound, not a count.
        for (int i = 0; !Contains(threads, ReceiveThread); i++)
        {
            i.Should().BeLessThan(5 * InlineGate.MaxStreak, "a quick handler reaches the receive thread over coaps too");
            (await client.GetAsync(uri)).GetPayloadString().Should().Be("quick");
        }
    }

    [Fact]
    public async Task AHandlerStalledOnTheReceiveThreadLeavesOtherSessionsServedAndItsOwnInOrder()
    {
        using ManualResetEventSlim release = new();
        int stall = 0;
        List<string?> threads = [];
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/n", request =>
        {
            lock (threads)
            {
                threads.Add(Thread.CurrentThread.Name);
            }

            // Once trusted and running inline, the first request with q=stall blocks the receive thread until released.
            string? q = request.GetQueryValue("q");
            if (q == "stall" && Thread.CurrentThread.Name == ReceiveThread && Interlocked.Exchange(ref stall, 1) == 0)
            {
                release.Wait();
            }

            return CoapResponse.Content(q ?? "n");
        }), out _);
        await using CoapClient stalled = DtlsLoopback.Client();
        await using CoapClient other = DtlsLoopback.Client();
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/n");
        for (int i = 0; !Contains(threads, ReceiveThread); i++)
        {
            i.Should().BeLessThan(5 * InlineGate.MaxStreak, "a quick handler reaches the receive thread");
            (await stalled.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
            (await other.GetAsync(uri)).Code.Should().Be(CoapCode.Content);
        }

        try
        {
            // A request that ran on a lane (a call the machine's load stretched sent the handler back) is answered at once;
            // the next one is tried, up to a liveness bound.
            Task<CoapResponse> blocked = stalled.GetAsync(new Uri(uri + "?q=stall"));
            for (int i = 0; Volatile.Read(ref stall) == 0; i++)
            {
                i.Should().BeLessThan(5 * InlineGate.MaxStreak, "a request reaches the handler on the receive thread");
                Wait.Until(() => Volatile.Read(ref stall) == 1 || blocked.IsCompleted, "the request is answered or stalls");
                if (Volatile.Read(ref stall) == 0)
                {
                    blocked = stalled.GetAsync(new Uri(uri + "?q=stall"));
                }
            }

            Task<CoapResponse> after = stalled.GetAsync(new Uri(uri + "?q=after"));

            // Another session is answered while the first is stuck: the socket was handed to a new thread.
            (await other.GetAsync(new Uri(uri + "?q=other")).WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("other");
            blocked.IsCompleted.Should().BeFalse("its handler is still blocked");

            release.Set();
            (await blocked.WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("stall");
            (await after.WaitAsync(Wait.DefaultBound)).GetPayloadString().Should().Be("after", "the stalled session's next record is decrypted once the first returns");
        }
        finally
        {
            release.Set();
        }
    }

    private static bool Contains(List<string?> threads, string name)
    {
        lock (threads)
        {
            return threads.Contains(name);
        }
    }
}
