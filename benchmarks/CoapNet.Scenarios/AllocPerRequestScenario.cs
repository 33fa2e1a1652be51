using System.Buffers.Binary;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Scenarios;

/// <summary>
/// Bytes the server allocates per request in steady state (issue 11 target: at most 200): a CoapServer in this
/// process answers GET /hello on loopback UDP, driven by raw sockets from one thread that allocates nothing per
/// request; <c>GC.GetTotalAllocatedBytes(precise: true)</c> across N answered requests, minus what the driving
/// thread allocated (printed, expected 0), divided by N. With --types, the runtime's allocation sampling
/// (GCAllocationTick, about one event per 100 KB) names what the bytes were. With --shared-response the handler
/// returns one response built at start, as a handler with a cached answer may (CoapExchange.Respond does not modify
/// it), so only the library's own bytes are counted; without it the handler builds its response each time, as the
/// sample's does. Measures and prints; asserts nothing.
/// </summary>
internal static class AllocPerRequestScenario
{
    public const string Usage = """
        alloc-per-request [--requests 200000] [--warmup 20000] [--sockets 64] [--rounds 3] [--types] [--shared-response]
          --requests  requests answered per measured round
          --warmup    requests before the first round (JIT, tiering, caches filled)
          --sockets   client sockets, one request in flight on each; each socket counts its own Message IDs
                      up from a random start and never repeats one in a run (warmup + rounds x requests / sockets
                      must stay below 65536), so no request is taken for a duplicate
          --rounds    measured rounds, printed one by one
          --types     also print the allocated types the runtime sampled during the rounds
          --shared-response
                      the handler returns one response built once (the library's bytes alone), instead of
                      CoapResponse.Content("Hello, CoAP!") built per request (the library's and a handler's)
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        (int requests, int warmup, int sockets, int rounds, bool types, bool shared) = Parse(args);
        if (warmup + ((long)rounds * requests) > (long)sockets * ushort.MaxValue)
        {
            throw new ArgumentException("More requests per socket than there are Message IDs: raise --sockets.");
        }

        await using CoapServer server = new(new CoapServerOptions().Listen("coap", new IPEndPoint(IPAddress.Loopback, 0)));
        CoapResponse hello = CoapResponse.Content("Hello, CoAP!");
        server.MapGet("/hello", shared ? _ => hello : _ => CoapResponse.Content("Hello, CoAP!"));
        await server.StartAsync();
        IPEndPoint target = new(IPAddress.Loopback, server.LocalEndPoints[0].Port);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"alloc-per-request: GET /hello (CON, piggybacked 2.05, {(shared ? "one shared response" : "a response built per request")}) from {sockets} raw sockets, one in flight each; {warmup} warm-up, {rounds} x {requests} measured; "
            + $"{Environment.ProcessorCount} cores, .NET {Environment.Version}, {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")} GC"));

        using Driver driver = new(target, sockets);
        using AllocationSampler? sampler = types ? new AllocationSampler() : null;
        Thread thread = new(() => driver.Run(warmup, rounds, requests)) { Name = "alloc-per-request driver" };
        thread.Start();
        thread.Join();
        foreach (string line in driver.Lines)
        {
            Console.WriteLine(line);
        }

        sampler?.Print();
        return 0;
    }

    private static (int Requests, int Warmup, int Sockets, int Rounds, bool Types, bool Shared) Parse(string[] args)
    {
        int requests = 200_000, warmup = 20_000, sockets = 64, rounds = 3;
        bool types = false, shared = false;
        CommandLine.Parse(args, Usage, ["--types", "--shared-response"], (name, value) =>
        {
            switch (name)
            {
                case "--types":
                    types = true;
                    return true;
                case "--shared-response":
                    shared = true;
                    return true;
                case "--requests":
                    requests = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--warmup":
                    warmup = CommandLine.ParseCount(name, value, 0);
                    return true;
                case "--sockets":
                    sockets = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--rounds":
                    rounds = CommandLine.ParseCount(name, value, 1);
                    return true;
                default:
                    return false;
            }
        });

        return (requests, warmup, sockets, rounds, types, shared);
    }

    /// <summary>Connected UDP sockets with a prebuilt CON GET /hello each; only the Message ID changes between sends.</summary>
    private sealed class Driver : IDisposable
    {
        private static readonly TimeSpan Patience = TimeSpan.FromSeconds(5);

        private readonly Socket[] _sockets;
        private readonly byte[][] _requests;
        private readonly ushort[] _nextMessageId;
        private readonly byte[] _response = new byte[2048];
        private int _lost;

        public Driver(IPEndPoint server, int count)
        {
            _sockets = new Socket[count];
            _requests = new byte[count][];
            _nextMessageId = new ushort[count];
            Random random = new(1125);
            for (int s = 0; s < count; s++)
            {
                _sockets[s] = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp) { ReceiveTimeout = (int)Patience.TotalMilliseconds };
                _sockets[s].Connect(server);
                CoapMessage request = new()
                {
                    Type = CoapMessageType.Confirmable,
                    Code = CoapCode.Get,
                    Token = BitConverter.GetBytes(random.Next()),
                    UriPath = "hello",
                };
                _requests[s] = Serialization.CoapMessageSerializer.Udp.Serialize(request);
                _nextMessageId[s] = (ushort)random.Next(ushort.MaxValue + 1);
            }
        }

        public List<string> Lines { get; } = [];

        public void Run(int warmup, int rounds, int requests)
        {
            Exchange(warmup);
            Lines.Add("round  requests  seconds  req/s     allocated B   driver thread B  B/request  gen0/1/2 collections");
            for (int round = 1; round <= rounds; round++)
            {
                int[] collections = [GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2)];
                long thread = GC.GetAllocatedBytesForCurrentThread();
                long total = GC.GetTotalAllocatedBytes(precise: true);
                long start = Stopwatch.GetTimestamp();
                Exchange(requests);
                double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
                long allocated = GC.GetTotalAllocatedBytes(precise: true) - total;
                long driver = GC.GetAllocatedBytesForCurrentThread() - thread;
                Lines.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{round,-6} {requests,-9} {seconds,-8:0.00} {requests / seconds,-9:0} {allocated,-13:N0} {driver,-16:N0} {(double)(allocated - driver) / requests,-10:0.0} "
                    + $"{GC.CollectionCount(0) - collections[0]}/{GC.CollectionCount(1) - collections[1]}/{GC.CollectionCount(2) - collections[2]}"));
            }

            Lines.Add(string.Create(CultureInfo.InvariantCulture, $"lost (no answer within {Patience.TotalSeconds:0} s, resent): {_lost}"));
        }

        public void Dispose()
        {
            foreach (Socket socket in _sockets)
            {
                socket.Dispose();
            }
        }

        // Keeps one request in flight per socket until `count` are answered: send on every socket, then collect every answer.
        private void Exchange(int count)
        {
            int answered = 0;
            while (answered < count)
            {
                int batch = Math.Min(_sockets.Length, count - answered);
                for (int s = 0; s < batch; s++)
                {
                    Send(s);
                }

                for (int s = 0; s < batch; s++)
                {
                    while (!TryReceive(s))
                    {
                        _lost++;
                        Send(s);
                    }
                }

                answered += batch;
            }
        }

        private void Send(int s)
        {
            byte[] request = _requests[s];
            BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(2), ++_nextMessageId[s]);
            _sockets[s].Send(request);
        }

        // The piggybacked answer: an ACK with the request's Message ID and 2.05 Content.
        private bool TryReceive(int s)
        {
            int length;
            try
            {
                length = _sockets[s].Receive(_response);
            }
            catch (SocketException exception) when (exception.SocketErrorCode == SocketError.TimedOut)
            {
                return false;
            }

            ushort messageId = BinaryPrimitives.ReadUInt16BigEndian(_response.AsSpan(2));
            if (length < 4 || (_response[0] & 0x30) != 0x20 || _response[1] != CoapCode.Content.Value || messageId != _nextMessageId[s])
            {
                throw new InvalidOperationException($"Unexpected answer {Convert.ToHexString(_response, 0, length)} on socket {s}.");
            }

            return true;
        }
    }

    /// <summary>The runtime's allocation sampling (GCAllocationTick: a type name about every 100 KB allocated), summed by type.</summary>
    private sealed class AllocationSampler : EventListener
    {
        private readonly Dictionary<string, long> _bytesByType = [];
        private long _total;

        public void Print()
        {
            KeyValuePair<string, long>[] rows;
            lock (_bytesByType)
            {
                rows = [.. _bytesByType.OrderByDescending(r => r.Value).Take(25)];
            }

            Console.WriteLine();
            Console.WriteLine($"sampled allocations by type (GCAllocationTick, {_total:N0} B sampled in all):");
            foreach (KeyValuePair<string, long> row in rows)
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {100.0 * row.Value / _total,5:0.0}%  {row.Key}"));
            }
        }

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
            {
                EnableEvents(eventSource, EventLevel.Verbose, (EventKeywords)0x1); // GC keyword
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.EventName is not { } name || !name.StartsWith("GCAllocationTick", StringComparison.Ordinal) || eventData.Payload is null)
            {
                return;
            }

            int typeIndex = eventData.PayloadNames!.IndexOf("TypeName");
            int amountIndex = eventData.PayloadNames.IndexOf("AllocationAmount64");
            string type = typeIndex >= 0 ? eventData.Payload[typeIndex] as string ?? "?" : "?";
            long amount = amountIndex >= 0 ? Convert.ToInt64(eventData.Payload[amountIndex], CultureInfo.InvariantCulture) : 0;
            lock (_bytesByType)
            {
                _bytesByType[type] = _bytesByType.GetValueOrDefault(type) + amount;
                _total += amount;
            }
        }
    }
}
