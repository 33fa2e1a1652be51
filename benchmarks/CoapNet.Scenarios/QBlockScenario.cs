using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.QBlock;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// Issue 24's Q-Block measurement: a body uploaded to our server and read back by our client on loopback, once with
/// plain block-wise (RFC 7959, a CON request per block) and once with Q-Block1/Q-Block2 (RFC 9177, NON blocks a
/// MAX_PAYLOADS_SET at a time), through a relay that counts the datagrams each way and drops a seeded share of them.
/// The RFCs' default timers (ACK_TIMEOUT 2 s; NON_TIMEOUT 2 s, NON_RECEIVE_TIMEOUT 4 s). Measures; asserts nothing.
/// </summary>
internal static class QBlockScenario
{
    public const string Usage = """
        qblock [--size 1048576] [--rounds 3] [--loss-percent 0,1]
          --size          body bytes each way
          --rounds        transfers per mode and loss
          --loss-percent  shares of datagrams the relay drops, each way, in percent
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        int size = 1024 * 1024, rounds = 3;
        IReadOnlyList<int> losses = [0, 1];
        CommandLine.Parse(args, Usage, [], (name, value) =>
        {
            switch (name)
            {
                case "--size":
                    size = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--rounds":
                    rounds = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--loss-percent":
                    losses = CommandLine.ParseCounts(name, value, 0);
                    return true;
                default:
                    return false;
            }
        });

        byte[] body = new byte[size];
        new Random(24).NextBytes(body);
        Console.WriteLine($"qblock: {size:N0} bytes each way (PUT then GET), {Environment.ProcessorCount} cores, {Environment.Version}, load {LoadAverage.Read():F2}");
        Console.WriteLine("| mode | loss | direction | seconds | datagrams to server | datagrams to client | bytes on the wire | dropped | body intact |");
        Console.WriteLine("|---|---:|---|---:|---:|---:|---:|---:|---|");
        foreach (int loss in losses)
        {
            foreach (bool qblock in new[] { false, true })
            {
                for (int round = 0; round < rounds; round++)
                {
                    await MeasureAsync(body, qblock, loss, seed: round + 1);
                }
            }
        }

        return 0;
    }

    private static async Task MeasureAsync(byte[] body, bool qblock, int lossPercent, int seed)
    {
        QBlockOptions options = new() { Enabled = qblock };
        byte[]? stored = null;
        await using CoapServer server = new(new CoapServerOptions { Endpoint = new CoapEndpointOptions { QBlock = options } }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        server.MapPut("/body", request =>
        {
            stored = request.Payload.ToArray();
            return new CoapResponse(CoapCode.Changed);
        });
        server.MapGet("/body", _ => CoapResponse.Content(stored ?? [], CoapContentFormat.OctetStream));
        server.Start();
        Uri root = server.LocalUris[0];
        using CountingRelay relay = new(new IPEndPoint(IPAddress.Loopback, root.Port), lossPercent / 100.0, seed);
        await using CoapClient client = new(new CoapClientOptions { Endpoint = new CoapEndpointOptions { QBlock = options } });
        Uri uri = new($"coap://127.0.0.1:{relay.Port}/body");
        string mode = qblock ? "Q-Block" : "block-wise";

        Stopwatch watch = Stopwatch.StartNew();
        CoapResponse changed = await client.PutAsync(uri, body, CoapContentFormat.OctetStream);
        Print(mode, lossPercent, "upload", watch.Elapsed, relay.TakeCounts(), changed.Code == CoapCode.Changed && stored is not null && stored.AsSpan().SequenceEqual(body));

        watch.Restart();
        CoapResponse read = await client.GetAsync(uri);
        Print(mode, lossPercent, "download", watch.Elapsed, relay.TakeCounts(), read.Code == CoapCode.Content && read.Payload.Span.SequenceEqual(body));
    }

    private static void Print(string mode, int lossPercent, string direction, TimeSpan elapsed, (long ToServer, long ToClient, long Bytes, long Dropped) counts, bool intact)
        => Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {mode} | {lossPercent} % | {direction} | {elapsed.TotalSeconds:F2} | {counts.ToServer:N0} | {counts.ToClient:N0} | {counts.Bytes:N0} | {counts.Dropped:N0} | {(intact ? "yes" : "NO")} |"));

    /// <summary>
    /// A UDP relay between one client and the server that counts what passes each way and drops a seeded share, on two
    /// threads of its own (blocking receives, so the counts are exact when a transfer has completed).
    /// </summary>
    private sealed class CountingRelay : IDisposable
    {
        private readonly Socket _front = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly Socket _back = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly IPEndPoint _server;
        private readonly double _drop;
        private readonly Random _random;
        private readonly object _gate = new();
        private EndPoint? _client;
        private long _toServer, _toClient, _bytes, _dropped;

        public CountingRelay(IPEndPoint server, double drop, int seed)
        {
            _server = server;
            _drop = drop;
            _random = new Random(seed);
            _front.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _back.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            new Thread(() => Pump(toServer: true)) { IsBackground = true }.Start();
            new Thread(() => Pump(toServer: false)) { IsBackground = true }.Start();
        }

        public int Port => ((IPEndPoint)_front.LocalEndPoint!).Port;

        /// <summary>The counts since the last call.</summary>
        public (long ToServer, long ToClient, long Bytes, long Dropped) TakeCounts()
        {
            lock (_gate)
            {
                (long, long, long, long) counts = (_toServer, _toClient, _bytes, _dropped);
                _toServer = _toClient = _bytes = _dropped = 0;
                return counts;
            }
        }

        public void Dispose()
        {
            _front.Dispose();
            _back.Dispose();
        }

        private void Pump(bool toServer)
        {
            Socket from = toServer ? _front : _back;
            byte[] buffer = new byte[65536];
            while (true)
            {
                EndPoint sender = new IPEndPoint(IPAddress.Any, 0);
                int length;
                try
                {
                    length = from.ReceiveFrom(buffer, ref sender);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }

                EndPoint? to;
                lock (_gate)
                {
                    if (toServer)
                    {
                        _client = sender;
                    }

                    to = toServer ? _server : _client;
                    if (_random.NextDouble() < _drop)
                    {
                        _dropped++;
                        continue;
                    }

                    _ = toServer ? _toServer++ : _toClient++;
                    _bytes += length;
                }

                try
                {
                    (toServer ? _back : _front).SendTo(buffer.AsSpan(0, length), SocketFlags.None, to!);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }
            }
        }
    }
}
