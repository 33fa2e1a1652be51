using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Simulation;
using CoapNet.Transports;

namespace CoapNet.Scenarios;

/// <summary>
/// What an idle DTLS session costs the server, in this process: a CoapServer with a coaps transport on loopback, then
/// that many clients that each handshake (and, unless --handshake-only, make one GET), after which their sockets stop
/// sending (so no close_notify reaches the server) and they are dropped. What stays on the managed heap, above the
/// server before them, is the server's: its sessions, now idle. Measures and prints; asserts nothing.
/// </summary>
internal static class DtlsMemoryScenario
{
    public const string Usage = """
        dtls-memory [--sessions 1000] [--handshake-only] [--concurrency 16] [--hold-seconds 0]
          --sessions         idle sessions to hold on the server
          --handshake-only   the clients handshake and send nothing (BouncyCastle keeps the handshake's last flight until a record arrives)
          --concurrency      handshakes at once
          --hold-seconds     keep the sessions that long after measuring (for dotnet-gcdump collect -p PID)
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        int sessions = 1000;
        int concurrency = 16;
        bool handshakeOnly = false;
        int hold = 0;
        CommandLine.Parse(args, Usage, ["--handshake-only"], (name, value) =>
        {
            switch (name)
            {
                case "--sessions":
                    sessions = int.Parse(value!, CultureInfo.InvariantCulture);
                    return true;
                case "--concurrency":
                    concurrency = int.Parse(value!, CultureInfo.InvariantCulture);
                    return true;
                case "--hold-seconds":
                    hold = int.Parse(value!, CultureInfo.InvariantCulture);
                    return true;
                case "--handshake-only":
                    handshakeOnly = true;
                    return true;
                default:
                    return false;
            }
        });

        byte[] key = "sample-secret"u8.ToArray();
        DtlsServerTransport dtls = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsServerOptions
        {
            PskKeys = DtlsServerOptions.PskTable(new Dictionary<string, byte[]> { ["coapnet"] = key }),
        });
        await using CoapServer server = new(new CoapServerOptions().Listen(dtls));
        server.MapGet("/hello", _ => CoapResponse.Content("Hello, CoAP!"));
        await server.StartAsync();
        Uri uri = new($"coaps://127.0.0.1:{dtls.LocalEndPoint.Port}/hello");

        // One full cycle first: BouncyCastle's tables, the JIT and the server's first-use state are not per session.
        await OpenAsync(uri, key, handshakeOnly: false, cut: false);
        long before = Memory.LiveHeap();
        long rssBefore = Memory.Rss();

        int next = -1;
        Task[] workers = new Task[concurrency];
        for (int w = 0; w < workers.Length; w++)
        {
            workers[w] = Task.Run(async () =>
            {
                while (Interlocked.Increment(ref next) < sessions)
                {
                    await OpenAsync(uri, key, handshakeOnly, cut: true);
                }
            });
        }

        await Task.WhenAll(workers);
        long after = Memory.LiveHeap();
        long rssAfter = Memory.Rss();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"dtls-memory: {dtls.SessionCount} idle sessions on the server ({(handshakeOnly ? "handshake only" : "one GET each")}); .NET {Environment.Version}"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"managed heap {before:N0} B -> {after:N0} B: {(after - before) / (double)Math.Max(1, dtls.SessionCount):N0} B per idle session"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"process VmRSS {rssBefore / 1024:N0} kB -> {rssAfter / 1024:N0} kB (clients' garbage included: an upper bound): {(rssAfter - rssBefore) / (double)Math.Max(1, dtls.SessionCount):N0} B per idle session"));
        if (hold > 0)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"holding the sessions {hold} s: process {Environment.ProcessId}"));
            await Task.Delay(TimeSpan.FromSeconds(hold));
        }

        GC.KeepAlive(server);
        return 0;
    }

    /// <summary>A client that handshakes (and GETs once); with <paramref name="cut"/> its socket then goes silent and it is dropped.</summary>
    private static async Task OpenAsync(Uri uri, byte[] key, bool handshakeOnly, bool cut)
    {
        // When cut, its socket sends nothing more, so the server never hears this client close.
        SilenceableUdpTransport network = new();
        DtlsClientTransport transport = new(network, new DtlsClientOptions { PskIdentity = "coapnet", PskKey = key });
        await using CoapClient client = new(transport);
        if (handshakeOnly)
        {
            transport.Start(new Ignore());
            await transport.ConnectAsync(new IPEndPoint(IPAddress.Loopback, uri.Port));
        }
        else
        {
            await client.GetAsync(uri);
        }

        network.Silent = cut;
    }

    private sealed class Ignore : IDatagramReceiver
    {
        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
        }
    }
}
