using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Diagnostics;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Scenarios;

/// <summary>
/// A fleet whose devices change address between reports (issue 41): the fleet generator speaks OpenSSL 3.0's DTLS,
/// which has no Connection ID (RFC 9146), so this covers the moves at a smaller size with our own client. N devices,
/// each a <see cref="DtlsClientTransport"/> with its own pre-shared key from the fleet's key file, handshake once; then
/// in every round each device moves its socket to a new port (as a NAT rebinding or an NB-IoT reattach does) and POSTs a
/// reading to /fleet/{identity} of the sample server started with --psk-file. With a Connection ID every report must
/// be answered in the session it had, with no new handshake. Measures and prints; asserts nothing.
/// </summary>
internal static class FleetMovesScenario
{
    public const string Usage = """
        fleet-moves --server coaps://127.0.0.1:PORT --keys FILE [--devices 1000] [--rounds 5] [--concurrency 64] [--server-pid PID] [--no-cid]
          --server        the sample server's coaps URI (CoapNet.Samples.Server --dtls-port PORT --psk-file FILE)
          --keys          the fleet's key file (coap-fleet --write-keys FILE N): dev-000001 ... dev-N's keys
          --devices       devices, each a DTLS session from its own socket (sources 127.3.0.1 and up, 250 an address)
          --rounds        rounds of reports after the handshakes: in each, every device moves to a new port, then reports
          --concurrency   devices at work at once
          --server-pid    the server's process, for its CPU time per report
          --no-cid        the devices offer no Connection ID: a moved device is not heard in its session (for contrast)
        Pin the server to one core (taskset -c 0) and this process to the other (taskset -c 1).
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        FleetTarget target = new();
        int devices = 1000, rounds = 5, concurrency = 64;
        int? serverPid = null;
        bool connectionId = true;
        CommandLine.Parse(args, Usage, ["--no-cid"], (name, value) =>
        {
            if (target.TryApply(name, value))
            {
                return true;
            }

            switch (name)
            {
                case "--devices":
                    devices = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--rounds":
                    rounds = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--concurrency":
                    concurrency = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--server-pid":
                    serverPid = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--no-cid":
                    connectionId = false;
                    return true;
                default:
                    return false;
            }
        });
        target.Load(Usage);
        if (devices > 250 * 250)
        {
            throw new ArgumentException("--devices takes at most 62,500 (250 a source address, 127.3.0.1 to 127.3.250.250).");
        }

        using HandshakeCounter handshakes = new();
        List<Device> fleet = [];
        try
        {
            for (int i = 0; i < devices; i++)
            {
                string identity = string.Create(CultureInfo.InvariantCulture, $"dev-{i + 1:D6}");
                byte[] key = target.KeyOf(identity, $"coap-fleet --write-keys FILE {devices}");
                IPAddress source = IPAddress.Parse(string.Create(CultureInfo.InvariantCulture, $"127.3.{(i / 250) % 250}.{(i % 250) + 1}"));
                fleet.Add(new Device(identity, new Uri(target.Server, "/fleet/" + identity), source, new DtlsClientOptions { PskIdentity = identity, PskKey = key, UseConnectionId = connectionId }));
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"fleet-moves: {devices} devices, Connection ID {(connectionId ? "offered" : "not offered")}, {rounds} rounds, {concurrency} at once; {Environment.ProcessorCount} core(s) for this process, .NET {Environment.Version}"));
            Stopwatch setup = Stopwatch.StartNew();
            (long[] first, int firstFailed) = await RoundAsync(fleet, concurrency, move: false);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"setup devices={devices} handshakes={handshakes.Count} failed={firstFailed} seconds={setup.Elapsed.TotalSeconds:F1} p50_ms={Milliseconds(first, 0.5):F2} p99_ms={Milliseconds(first, 0.99):F2}"));

            long handshakesBefore = handshakes.Count;
            long cpuBefore = serverPid is int pid ? ProcessCpu.Ticks(pid) : 0;
            List<long> all = [];
            int failed = 0;
            Stopwatch run = Stopwatch.StartNew();
            for (int round = 1; round <= rounds; round++)
            {
                (long[] latencies, int roundFailed) = await RoundAsync(fleet, concurrency, move: true);
                all.AddRange(latencies);
                failed += roundFailed;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"round {round}: moved={devices} answered={latencies.Length} failed={roundFailed} new_handshakes={handshakes.Count - handshakesBefore} p50_ms={Milliseconds(latencies, 0.5):F2} p99_ms={Milliseconds(latencies, 0.99):F2}"));
            }

            long[] sorted = [.. all];
            Array.Sort(sorted);
            string cpu = serverPid is int p && sorted.Length > 0
                ? string.Create(CultureInfo.InvariantCulture, $" server_cpu_us_per_report={(ProcessCpu.Ticks(p) - cpuBefore) * ProcessCpu.MicrosecondsPerTick / sorted.Length:F0}")
                : string.Empty;
            int sessions = 0;
            foreach (Device device in fleet)
            {
                sessions += device.Transport.SessionCount;
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"summary devices={devices} rounds={rounds} reports={sorted.Length} failed={failed} new_handshakes={handshakes.Count - handshakesBefore} sessions={sessions} seconds={run.Elapsed.TotalSeconds:F1} p50_ms={Milliseconds(sorted, 0.5):F2} p99_ms={Milliseconds(sorted, 0.99):F2}{cpu}"));
        }
        finally
        {
            foreach (Device device in fleet)
            {
                await device.Client.DisposeAsync();
            }
        }

        return 0;
    }

    private static double Milliseconds(long[] sorted, double p) => sorted.Length == 0 ? double.NaN : Stats.ToMicroseconds(Stats.Percentile(sorted, p)) / 1000;

    /// <summary>Every device reports once (after moving, when <paramref name="move"/>), <paramref name="concurrency"/> at a time; the answered reports' latencies, sorted, and the failures.</summary>
    private static async Task<(long[] Latencies, int Failed)> RoundAsync(List<Device> fleet, int concurrency, bool move)
    {
        List<long> latencies = new(fleet.Count);
        int failed = 0, next = -1;
        async Task WorkAsync()
        {
            for (int i = Interlocked.Increment(ref next); i < fleet.Count; i = Interlocked.Increment(ref next))
            {
                Device device = fleet[i];
                if (move)
                {
                    device.Network.Move();
                }

                long start = Stopwatch.GetTimestamp();
                bool answered;
                try
                {
                    // A reading as a device sends it; a Confirmable POST, retransmitted per RFC 7252 section 4.2.
                    using CancellationTokenSource bound = new(TimeSpan.FromSeconds(30));
                    CoapResponse response = await device.Client.PostAsync(device.Uri, device.Reading(), CoapContentFormat.SenmlJson, bound.Token);
                    answered = response.Code == CoapCode.Changed;
                }
                catch (Exception e) when (e is OperationCanceledException or CoapException or System.Security.Authentication.AuthenticationException)
                {
                    answered = false;
                }

                long elapsed = Stopwatch.GetTimestamp() - start;
                lock (latencies)
                {
                    if (answered)
                    {
                        latencies.Add(elapsed);
                    }
                    else
                    {
                        failed++;
                    }
                }
            }
        }

        Task[] workers = new Task[Math.Min(concurrency, fleet.Count)];
        for (int w = 0; w < workers.Length; w++)
        {
            workers[w] = Task.Run(WorkAsync);
        }

        await Task.WhenAll(workers);
        long[] sorted = [.. latencies];
        Array.Sort(sorted);
        return (sorted, failed);
    }

    /// <summary>One simulated device: its moving socket, its DTLS transport and client, and its reading.</summary>
    private sealed class Device
    {
        private int _reports;

        public Device(string identity, Uri uri, IPAddress source, DtlsClientOptions options)
        {
            Identity = identity;
            Uri = uri;
            Network = new MovingUdpTransport(source);
            Transport = new DtlsClientTransport(Network, options);
            Client = new CoapClient(Transport);
        }

        public string Identity { get; }

        public Uri Uri { get; }

        public MovingUdpTransport Network { get; }

        public DtlsClientTransport Transport { get; }

        public CoapClient Client { get; }

        /// <summary>A SenML reading of one value (RFC 8428), about 60 bytes, as the fleet generator sends.</summary>
        public byte[] Reading()
            => Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"[{{\"bn\":\"{Identity}/\",\"n\":\"t\",\"v\":{20 + (Interlocked.Increment(ref _reports) % 10)}}}]"));
    }

    /// <summary>
    /// A device's UDP socket on a loopback address that moves to a new port on <see cref="Move"/>, as a NAT rebinding
    /// does; it receives on an awaited loop, since a thread per device would cost the fleet a thousand threads.
    /// </summary>
    private sealed class MovingUdpTransport(IPAddress address) : IDatagramTransport
    {
        private Socket _socket = Open(address);
        private IDatagramReceiver? _receiver;

        public IPEndPoint LocalEndPoint => (IPEndPoint)Volatile.Read(ref _socket).LocalEndPoint!;

        public void Start(IDatagramReceiver receiver)
        {
            _receiver = receiver;
            _ = ReceiveAsync(_socket);
        }

        /// <summary>Moves to a new socket (a new port); what the old one had not read is lost, as in a rebinding.</summary>
        public void Move()
        {
            Socket moved = Open(address);
            Socket old = Interlocked.Exchange(ref _socket, moved);
            _ = ReceiveAsync(moved);
            old.Dispose();
        }

        public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
            try
            {
                Volatile.Read(ref _socket).SendTo(datagram, SocketFlags.None, remote);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // Lost, as a datagram may be: DTLS or CoAP retransmits.
            }
        }

        public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
        {
            Send(datagram.Span, remote);
            return ValueTask.CompletedTask;
        }

        public void Dispose() => Volatile.Read(ref _socket).Dispose();

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }

        private static Socket Open(IPAddress address)
        {
            Socket socket = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            socket.Bind(new IPEndPoint(address, 0));
            return socket;
        }

        private async Task ReceiveAsync(Socket socket)
        {
            byte[] buffer = new byte[2048];
            EndPoint any = new IPEndPoint(IPAddress.Any, 0);
            while (true)
            {
                SocketReceiveFromResult received;
                try
                {
                    received = await socket.ReceiveFromAsync(buffer, SocketFlags.None, any);
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }

                _receiver!.OnDatagram(buffer.AsSpan(0, received.ReceivedBytes), (IPEndPoint)received.RemoteEndPoint);
            }
        }
    }

    /// <summary>Counts this process's DTLS handshakes (every outcome) from CoapNet's meter.</summary>
    private sealed class HandshakeCounter : IDisposable
    {
        private readonly MeterListener _listener = new();
        private long _count;

        public HandshakeCounter()
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == CoapInstrumentation.MeterName && instrument.Name == CoapInstrumentation.DtlsHandshakes)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref _count, value));
            _listener.Start();
        }

        public long Count => Interlocked.Read(ref _count);

        public void Dispose() => _listener.Dispose();
    }
}
