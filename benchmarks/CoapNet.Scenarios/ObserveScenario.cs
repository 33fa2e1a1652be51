using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Observe;
using CoapNet.Serialization;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// Issue 10's Observe scenario: many observers of one resource on loopback UDP, the resource changing
/// at a fixed rate. Observers are raw sockets (several tokens each) that read the change's timestamp
/// from each notification's 8-byte payload, so the client side allocates nothing per notification.
/// Prints notifications per second delivered, the lag from change to delivery (p50/p99) and the
/// server's managed heap per observation. Measures; asserts nothing.
/// </summary>
internal static class ObserveScenario
{
    public const string Usage = """
        observe [--observers 10000] [--sockets 100] [--rate 100] [--seconds 10]
          --observers  observations in all (each socket registers observers/sockets tokens)
          --sockets    client UDP sockets
          --rate       changes of the resource per second
          --seconds    how long the resource changes
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        int observers = 10_000, sockets = 100, rate = 100, seconds = 10;
        CommandLine.Parse(args, Usage, [], (name, value) =>
        {
            switch (name)
            {
                case "--observers":
                    observers = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--sockets":
                    sockets = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--rate":
                    rate = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--seconds":
                    seconds = CommandLine.ParseCount(name, value, 1);
                    return true;
                default:
                    return false;
            }
        });
        int perSocket = (observers + sockets - 1) / sockets;

        long changedAt = Stopwatch.GetTimestamp();
        await using CoapServer server = new(new CoapServerOptions
        {
            // One more than the observers: the warm-up observer keeps its slot (it never deregisters).
            Observe = new ObserveOptions { MaxObservations = observers + 1, MaxObservationsPerPeer = perSocket },
        }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        CoapRouteBuilder sensor = server.MapGet("/sensor", _ =>
        {
            byte[] payload = new byte[8];
            BinaryPrimitives.WriteInt64BigEndian(payload, Volatile.Read(ref changedAt));
            return CoapResponse.Content(payload, CoapContentFormat.OctetStream);
        }).Observable();
        server.Start();
        IPEndPoint target = server.LocalEndPoints[0];

        Observer[] clients = new Observer[sockets];
        for (int i = 0; i < sockets; i++)
        {
            clients[i] = new Observer(target, perSocket, i);
        }

        using CancellationTokenSource stop = new();
        // One thread per socket, blocked in ReceiveFrom: on pool threads they would starve the server's own work.
        Thread[] receivers = [.. clients.Select(c => new Thread(() => c.Receive(stop.Token)) { IsBackground = true })];
        foreach (Thread receiver in receivers)
        {
            receiver.Start();
        }


        // Warm the path (JIT, pools) with one registration and its deregistration, then measure the heap without observers.
        using (Observer warm = new(target, 1, sockets))
        {
            warm.Register();
            await Task.Delay(200);
        }

        await Task.Delay(100);
        (long managedBefore, long rssBefore) = (Memory.LiveHeap(), Memory.Rss());
        // Paced, and repeated for what a full socket buffer dropped: a registration with the same token only renews (RFC 7641 section 4.1).
        for (int round = 0; round < 5 && server.Observations < observers + 1; round++)
        {
            foreach (Observer client in clients)
            {
                client.Register();
                Thread.Sleep(5);
            }

            await Task.Delay(500);
        }

        Stopwatch waiting = Stopwatch.StartNew();
        while (server.Observations < observers + 1 && waiting.Elapsed < TimeSpan.FromSeconds(30))
        {
            await Task.Delay(50);
        }

        int registered = server.Observations - 1;
        (long managedAfter, long rssAfter) = (Memory.LiveHeap(), Memory.Rss());
        foreach (Observer client in clients)
        {
            client.Reset();
        }

        // The changes: one every 1/rate s, on a dedicated thread so pauses elsewhere do not shift them.
        long changes = 0;
        long interval = Stopwatch.Frequency / rate;
        Stopwatch run = Stopwatch.StartNew();
        Thread changer = new(() =>
        {
            long next = Stopwatch.GetTimestamp();
            long end = next + (seconds * Stopwatch.Frequency);
            while (next < end)
            {
                while (Stopwatch.GetTimestamp() < next)
                {
                    Thread.Sleep(1);
                }

                Volatile.Write(ref changedAt, Stopwatch.GetTimestamp());
                sensor.NotifyObservers();
                changes++;
                next += interval;
            }
        })
        { IsBackground = true, Name = "changes" };
        changer.Start();
        changer.Join();
        double changing = run.Elapsed.TotalSeconds;
        await Task.Delay(1000);
        await stop.CancelAsync();
        foreach (Observer client in clients)
        {
            client.Dispose();
        }

        foreach (Thread receiver in receivers)
        {
            receiver.Join();
        }

        long delivered = clients.Sum(c => c.Delivered);
        long[] histogram = new long[Observer.Buckets];
        foreach (Observer client in clients)
        {
            for (int b = 0; b < histogram.Length; b++)
            {
                histogram[b] += client.Histogram[b];
            }
        }

        Console.WriteLine($"observe: {registered:N0} observers on {sockets} sockets, {changes:N0} changes in {changing:F1} s ({changes / changing:F0}/s), {Environment.ProcessorCount} cores, {Environment.Version}");
        Console.WriteLine($"| notifications delivered | per second | of changes x observers | lag p50 | lag p99 | heap per observation | RSS after registration |");
        Console.WriteLine($"|---:|---:|---:|---:|---:|---:|---:|");
        double perObservation = registered == 0 ? 0 : (managedAfter - managedBefore) / (double)registered;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {delivered:N0} | {delivered / changing:N0} | {100.0 * delivered / Math.Max(1, changes * registered):F1}% | {Percentile(histogram, 0.50)} | {Percentile(histogram, 0.99)} | {perObservation:N0} B | {rssAfter / 1048576.0:F0} MB (was {rssBefore / 1048576.0:F0}) |"));
        return 0;
    }

    private static string Percentile(long[] histogram, double quantile)
    {
        long total = histogram.Sum();
        if (total == 0)
        {
            return "-";
        }

        long wanted = (long)Math.Ceiling(total * quantile);
        long seen = 0;
        for (int b = 0; b < histogram.Length; b++)
        {
            seen += histogram[b];
            if (seen >= wanted)
            {
                return b == histogram.Length - 1 ? $">{b / 10.0:F0} ms" : $"{b / 10.0:F1} ms";
            }
        }

        return "-";
    }

    /// <summary>One client socket holding several observations (tokens) of /sensor.</summary>
    private sealed class Observer : IDisposable
    {
        /// <summary>Lag buckets of 0.1 ms up to 1 s; the last holds everything longer. Small enough to stay off the Large Object Heap.</summary>
        public const int Buckets = 10_001;

        private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly IPEndPoint _server;
        private readonly int _tokens;
        private readonly int _index;

        public Observer(IPEndPoint server, int tokens, int index)
        {
            _server = server;
            _tokens = tokens;
            _index = index;
            _socket.ReceiveBufferSize = 4 << 20;
            _socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        }

        public long[] Histogram { get; } = new long[Buckets];

        public long Delivered { get; private set; }

        public void Register()
        {
            for (int t = 0; t < _tokens; t++)
            {
                CoapMessage request = new() { Type = CoapMessageType.NonConfirmable, Code = CoapCode.Get, MessageId = (ushort)t, Token = BitConverter.GetBytes((_index << 16) | t), Observe = 0 };
                request.UriPath = "/sensor";
                _socket.SendTo(CoapMessageSerializer.Udp.Serialize(request), _server);
            }
        }

        public void Reset()
        {
            Array.Clear(Histogram);
            Delivered = 0;
        }

        public void Receive(CancellationToken stop)
        {
            byte[] buffer = new byte[1500];
            byte[] ack = new byte[4];
            EndPoint from = new IPEndPoint(IPAddress.Any, 0);
            while (!stop.IsCancellationRequested)
            {
                int length;
                try
                {
                    length = _socket.ReceiveFrom(buffer, ref from);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }

                long now = Stopwatch.GetTimestamp();
                if (length < 12 || buffer[1] != 0x45)
                {
                    continue;
                }

                if (((buffer[0] >> 4) & 3) == 0)
                {
                    // A CON notification (liveness check) is acknowledged, as any observer must.
                    ack[0] = 0x60;
                    ack[2] = buffer[2];
                    ack[3] = buffer[3];
                    _socket.SendTo(ack, from);
                }

                long changed = BinaryPrimitives.ReadInt64BigEndian(buffer.AsSpan(length - 8));
                long tenthsOfMs = (now - changed) * 10_000 / Stopwatch.Frequency;
                Histogram[Math.Clamp(tenthsOfMs, 0, Buckets - 1)]++;
                Delivered++;
            }
        }

        public void Dispose() => _socket.Dispose();
    }
}
