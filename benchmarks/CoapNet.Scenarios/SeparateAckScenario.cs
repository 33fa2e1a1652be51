using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// What the separate-response delay (<see cref="CoapServerOptions.SeparateResponseDelay"/>, RFC 7252 section 5.2.2)
/// costs each way, for each delay given:
/// <list type="bullet">
/// <item>the wait of a client that sends one confirmable request at a time (NSTART = 1, as libcoap and aiocoap do):
/// its next request goes when the previous one is acknowledged, so N concurrent requests to a slow handler take about
/// N x delay plus the handler's time;</item>
/// <item>the messages a busy server adds: a request not answered within the delay gets an empty ACK, and its response
/// then goes as a separate CON that the client acknowledges, two datagrams more than a piggybacked answer. A closed
/// loop of raw sockets (one CON GET in flight each) keeps the server saturated and counts the separate responses.</item>
/// </list>
/// The server runs in this process (JIT, workstation GC) beside the load, on the same cores. Measures and prints;
/// asserts nothing.
/// </summary>
internal static class SeparateAckScenario
{
    public const string Usage = """
        separate-ack [--delays 25,50,100,200,500,1000] [--sockets 256] [--seconds 5] [--handler-us 0,50]
                     [--slow-requests 10] [--slow-ms 1500]
          --delays         SeparateResponseDelay values to compare, in milliseconds
          --sockets        load: client sockets, one CON GET in flight on each (the server's queue holds up to this many)
          --seconds        load: how long each delay is measured under load
          --handler-us     load: CPU time each request's handler spends (busy wait), in microseconds; one run per value
          --slow-requests  NSTART = 1: how many requests to the slow handler the client starts at once
          --slow-ms        NSTART = 1: how long the slow handler takes
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"separate-ack: {Environment.ProcessorCount} cores, .NET {Environment.Version}; load {settings.Sockets} sockets x {settings.Seconds} s per cell; "
            + $"NSTART=1 client: {settings.SlowRequests} x GET /slow ({settings.SlowMs} ms) at once"));
        Console.WriteLine("delay ms  NSTART=1 total s  handler us  requests  req/s     separate  per 1000  extra datagrams per 1000  p99 ms  max ms");
        foreach (int delay in settings.Delays)
        {
            double wait = await NStartWaitAsync(TimeSpan.FromMilliseconds(delay), settings);
            foreach (int work in settings.HandlerMicroseconds)
            {
                LoadResult load = Load(TimeSpan.FromMilliseconds(delay), work, settings);
                double perThousand = 1000.0 * load.Separate / Math.Max(1, load.Requests);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{delay,-9} {wait,-17:0.00} {work,-11} {load.Requests,-9} {load.Requests / load.Seconds,-9:0} {load.Separate,-9} {perThousand,-9:0.00} {2 * perThousand,-25:0.00} {load.P99Ms,-7:0.0} {load.MaxMs:0.0}"));
            }
        }

        return 0;
    }

    /// <summary>The time a NSTART = 1 client takes for its concurrent requests to a slow handler.</summary>
    private static async Task<double> NStartWaitAsync(TimeSpan delay, Settings settings)
    {
        await using CoapServer server = new(new CoapServerOptions { Endpoint = new CoapEndpointOptions { SeparateResponseDelay = delay } }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        server.MapGet("/slow", async (_, cancellationToken) =>
        {
            await Task.Delay(settings.SlowMs, cancellationToken).ConfigureAwait(false);
            return CoapResponse.Content("slept");
        });
        await server.StartAsync();
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });
        Uri uri = new($"coap://127.0.0.1:{server.LocalEndPoints[0].Port}/slow");
        await client.GetAsync(new Uri($"coap://127.0.0.1:{server.LocalEndPoints[0].Port}/.well-known/core"));

        long start = Stopwatch.GetTimestamp();
        Task<CoapResponse>[] requests = new Task<CoapResponse>[settings.SlowRequests];
        for (int i = 0; i < requests.Length; i++)
        {
            requests[i] = client.GetAsync(uri);
        }

        await Task.WhenAll(requests);
        return Stopwatch.GetElapsedTime(start).TotalSeconds;
    }

    private static LoadResult Load(TimeSpan delay, int handlerMicroseconds, Settings settings)
    {
        using CoapServer server = new(new CoapServerOptions { MaxPendingRequests = Math.Max(1024, settings.Sockets), Endpoint = new CoapEndpointOptions { SeparateResponseDelay = delay } }.Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        CoapResponse hello = CoapResponse.Content("Hello, CoAP!");
        long spin = handlerMicroseconds * Stopwatch.Frequency / 1_000_000;
        server.MapGet("/hello", async (_, _) =>
        {
            // CPU work the handler does (an async handler does it on the dispatch block, as handlers that compute do).
            long until = Stopwatch.GetTimestamp() + spin;
            while (Stopwatch.GetTimestamp() < until)
            {
                Thread.SpinWait(10);
            }

            return hello;
        });
        server.Start();
        using Driver driver = new(new IPEndPoint(IPAddress.Loopback, server.LocalEndPoints[0].Port), settings.Sockets);
        LoadResult result = default;
        Thread thread = new(() => result = driver.Run(TimeSpan.FromSeconds(settings.Seconds))) { Name = "separate-ack load" };
        thread.Start();
        thread.Join();
        return result;
    }

    /// <summary>What a load run saw: requests answered, of which <paramref name="Separate"/> separately (an empty ACK, a CON response and its ACK).</summary>
    private readonly record struct LoadResult(long Requests, double Seconds, long Separate, double P99Ms, double MaxMs);

    /// <summary>
    /// Connected UDP sockets with a prebuilt CON GET /hello each: send on every socket, then take every answer, piggybacked
    /// or an empty ACK followed by the separate CON response (acknowledged at once, as a client must).
    /// </summary>
    private sealed class Driver : IDisposable
    {
        private readonly Socket[] _sockets;
        private readonly byte[][] _requests;
        private readonly ushort[] _nextMessageId;
        private readonly long[] _sentAt;
        private readonly byte[] _buffer = new byte[2048];
        private readonly byte[] _ack = new byte[4];

        public Driver(IPEndPoint server, int count)
        {
            _sockets = new Socket[count];
            _requests = new byte[count][];
            _nextMessageId = new ushort[count];
            _sentAt = new long[count];
            Random random = new(521);
            for (int s = 0; s < count; s++)
            {
                _sockets[s] = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp) { ReceiveTimeout = 10_000 };
                _sockets[s].Connect(server);
                _requests[s] = Serialization.CoapMessageSerializer.Udp.Serialize(new CoapMessage
                {
                    Type = CoapMessageType.Confirmable,
                    Code = CoapCode.Get,
                    Token = BitConverter.GetBytes(random.Next()),
                    UriPath = "hello",
                });
                _nextMessageId[s] = (ushort)random.Next(ushort.MaxValue + 1);
            }
        }

        public LoadResult Run(TimeSpan duration)
        {
            // A warm-up second, not counted: the JIT and the caches first.
            Exchange(Stopwatch.GetTimestamp() + Stopwatch.Frequency, null, out _);
            List<double> latencies = [];
            long start = Stopwatch.GetTimestamp();
            long requests = Exchange(start + (long)(duration.TotalSeconds * Stopwatch.Frequency), latencies, out long separate);
            double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
            latencies.Sort();
            return new LoadResult(requests, seconds, separate, latencies[(int)(latencies.Count * 0.99)], latencies[^1]);
        }

        public void Dispose()
        {
            foreach (Socket socket in _sockets)
            {
                socket.Dispose();
            }
        }

        private long Exchange(long until, List<double>? latencies, out long separate)
        {
            long answered = 0;
            separate = 0;
            while (Stopwatch.GetTimestamp() < until)
            {
                for (int s = 0; s < _sockets.Length; s++)
                {
                    byte[] request = _requests[s];
                    BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(2), ++_nextMessageId[s]);
                    _sentAt[s] = Stopwatch.GetTimestamp();
                    _sockets[s].Send(request);
                }

                for (int s = 0; s < _sockets.Length; s++)
                {
                    if (Receive(s))
                    {
                        separate++;
                    }

                    latencies?.Add(Stopwatch.GetElapsedTime(_sentAt[s]).TotalMilliseconds);
                }

                answered += _sockets.Length;
            }

            return answered;
        }

        /// <summary>Takes socket <paramref name="s"/>'s answer; true when it was a separate response (after an empty ACK).</summary>
        private bool Receive(int s)
        {
            while (true)
            {
                int length = _sockets[s].Receive(_buffer);
                int type = (_buffer[0] >> 4) & 3;
                if (length == 4 && type == 2 && _buffer[1] == 0)
                {
                    // RFC 7252 section 5.2.2: an empty ACK; the response follows as a CON of its own. It may also come before
                    // the separate response, or after it (two server threads send them), so an empty ACK alone decides nothing.
                    continue;
                }

                if (type == 0 && _buffer[1] == CoapCode.Content.Value)
                {
                    // The separate response, acknowledged as a client must.
                    _ack[0] = 0x60;
                    _ack[1] = 0;
                    _ack[2] = _buffer[2];
                    _ack[3] = _buffer[3];
                    _sockets[s].Send(_ack);
                    return true;
                }

                if (type != 2 || _buffer[1] != CoapCode.Content.Value || BinaryPrimitives.ReadUInt16BigEndian(_buffer.AsSpan(2)) != _nextMessageId[s])
                {
                    throw new InvalidOperationException($"Unexpected answer {Convert.ToHexString(_buffer, 0, length)} on socket {s}.");
                }

                return false;
            }
        }
    }

    private sealed class Settings
    {
        public IReadOnlyList<int> Delays { get; private set; } = [25, 50, 100, 200, 500, 1000];

        public int Sockets { get; private set; } = 256;

        public int Seconds { get; private set; } = 5;

        public IReadOnlyList<int> HandlerMicroseconds { get; private set; } = [0, 50];

        public int SlowRequests { get; private set; } = 10;

        public int SlowMs { get; private set; } = 1500;

        public static Settings Parse(string[] args)
        {
            Settings settings = new();
            CommandLine.Parse(args, Usage, [], (name, value) =>
            {
                switch (name)
                {
                    case "--delays":
                        settings.Delays = CommandLine.ParseCounts(name, value, 1);
                        return true;
                    case "--sockets":
                        settings.Sockets = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--seconds":
                        settings.Seconds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--handler-us":
                        settings.HandlerMicroseconds = CommandLine.ParseCounts(name, value, 0);
                        return true;
                    case "--slow-requests":
                        settings.SlowRequests = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--slow-ms":
                        settings.SlowMs = CommandLine.ParseCount(name, value, 0);
                        return true;
                    default:
                        return false;
                }
            });

            return settings;
        }
    }
}
