using System.Buffers.Binary;
using System.Net;
using System.Security.Cryptography;
using CoapNet.Blockwise;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.QBlock;
using CoapNet.Server;

namespace CoapNet.Simulation;

/// <summary>One block-wise download over a simulated link: what seed 002's experiment measures, for one seed.</summary>
public sealed record TransferSetup
{
    /// <summary>The resource's size in bytes (default 102,400, seed 002's firmware image).</summary>
    public int BodyBytes { get; init; } = 102_400;

    /// <summary>The Block2 block size both ends use (default 256).</summary>
    public int BlockSize { get; init; } = 256;

    /// <summary>How many Block2 requests the client keeps outstanding (<see cref="BlockwiseOptions.MaxBlocksInFlight"/>, default 1); <see cref="Parameters"/>' NSTART still bounds them.</summary>
    public int BlocksInFlight { get; init; } = 1;

    /// <summary>Both ends' RFC 7252 parameters (default: MAX_RETRANSMIT 20, as the seed; NSTART 1).</summary>
    public CoapTransmissionParameters Parameters { get; init; } = CoapTransmissionParameters.Default with { MaxRetransmit = 20 };

    /// <summary>Both ends' retransmission policy.</summary>
    public CoapRetransmissionPolicy Policy { get; init; } = CoapRetransmissionPolicy.Rfc7252;

    /// <summary>The client-to-server direction.</summary>
    public LinkProfile Uplink { get; init; } = new();

    /// <summary>The server-to-client direction.</summary>
    public LinkProfile Downlink { get; init; } = new();

    /// <summary>Both ends' Q-Block settings (RFC 9177; default: off, so the download uses Block2).</summary>
    public QBlockOptions QBlock { get; init; } = new();

    /// <summary>The run's seed: the links' loss and delay and the endpoints' jitter derive from it.</summary>
    public int Seed { get; init; }

    /// <summary>The virtual time after which a download still running counts as failed (default 6 hours).</summary>
    public TimeSpan TimeLimit { get; init; } = TimeSpan.FromHours(6);

    /// <summary>
    /// The MTU of the path both ends are configured with (<see cref="CoapPathOptions.Mtu"/>: the client's path to the server,
    /// the server's to the clients' network), so that no block fragments; null (the default) for none.
    /// </summary>
    public int? PathMtu { get; init; }

    /// <summary>The token length of the client's path to the server (<see cref="CoapPathOptions.TokenLength"/>); null (the default) for the endpoint's 8 bytes.</summary>
    public int? TokenLength { get; init; }

    /// <summary>The length of the ETag the server gives the body (<see cref="BlockwiseOptions.ETagLength"/>, default 4).</summary>
    public int ETagLength { get; init; } = new BlockwiseOptions().ETagLength;

    /// <summary>True to serve the resource as one that never changes (<see cref="CoapResponse.Immutable"/>: no ETag in its blocks).</summary>
    public bool Immutable { get; init; }

    /// <summary>How many clients fetch the resource through the one bottleneck (<see cref="InMemoryNetwork.Share"/>), each once (default 1).</summary>
    public int Clients { get; init; } = 1;

    /// <summary>The clients start at times drawn uniformly within this span from the start (default zero: all at once).</summary>
    public TimeSpan StartWithin { get; init; }

    /// <summary>A drop filter on the server's datagrams to the (first) client, before the link model (<see cref="NetworkLink.DropWhere"/>); null for none.</summary>
    public Func<Datagram, bool>? DropFromServer { get; init; }
}

/// <summary>How a download by each of several clients through one bottleneck went (<see cref="TransferSimulation.RunCell"/>).</summary>
/// <param name="CompletionTimes">Each client's flow completion time, from its first request to its last block; null for one that did not complete.</param>
/// <param name="Failures">Why each client that did not complete did not, or null.</param>
/// <param name="Uplink">What the shared direction toward the server carried.</param>
/// <param name="Downlink">What the shared direction toward the clients carried.</param>
/// <param name="Duration">From the simulation's start to the last completion, or to the last send of a client that failed when that is later.</param>
public sealed record CellOutcome(IReadOnlyList<TimeSpan?> CompletionTimes, IReadOnlyList<string?> Failures, LinkStatistics Uplink, LinkStatistics Downlink, TimeSpan Duration);

/// <summary>How one simulated download went.</summary>
/// <param name="Completed">True when the whole body arrived, identical to the resource.</param>
/// <param name="CompletionTime">The flow completion time: from the first request to the arrival of the last block; null when it did not complete.</param>
/// <param name="Failure">Why it did not complete, or null.</param>
/// <param name="Uplink">What the client-to-server direction carried.</param>
/// <param name="Downlink">What the server-to-client direction carried.</param>
/// <param name="Requests">The request datagrams the client sent, retransmissions included.</param>
/// <param name="Trace">Every datagram, in send order.</param>
/// <param name="TraceDigest">SHA-256 over the trace (times, addresses, fates and bytes; token bytes, which come from the system's CSPRNG by design, masked).</param>
public sealed record TransferOutcome(bool Completed, TimeSpan? CompletionTime, string? Failure, LinkStatistics Uplink, LinkStatistics Downlink, int Requests, IReadOnlyList<Datagram> Trace, string TraceDigest);

/// <summary>
/// Runs the real CoapNet server and client over an <see cref="InMemoryNetwork"/> whose two directions are simulated
/// links, in virtual time on one thread: the server's dispatch runs on a <see cref="ManualTaskScheduler"/>, every timer
/// (retransmissions, deliveries) on a <see cref="ManualTimeProvider"/> that jumps from one event to the next. Nothing
/// above the transport is replaced, so what it measures is the stack's own behaviour; a run takes milliseconds of real
/// time for minutes of virtual time, and is the same for the same seed.
/// </summary>
public static class TransferSimulation
{
    /// <summary>The client's address on the simulated network.</summary>
    public static readonly IPEndPoint ClientAddress = new(IPAddress.Parse("10.0.0.1"), 5683);

    /// <summary>The server's address on the simulated network.</summary>
    public static readonly IPEndPoint ServerAddress = new(IPAddress.Parse("10.0.0.2"), 5683);

    /// <summary>Downloads the resource once.</summary>
    /// <param name="setup">The body, the block size, the parameters, the policy, the links and the seed; one client.</param>
    /// <returns>The outcome.</returns>
    /// <exception cref="ArgumentException">The setup is out of range, or has more than one client (<see cref="RunCell"/> runs those).</exception>
    public static TransferOutcome Run(TransferSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        if (setup.Clients != 1)
        {
            throw new ArgumentException($"Run carries one client, not {setup.Clients}: RunCell carries several.", nameof(setup));
        }

        (Cell cell, InMemoryNetwork network) = Simulate(setup, record: true);
        IReadOnlyList<Datagram> trace = network.Sent;
        int requests = 0;
        foreach (Datagram datagram in trace)
        {
            requests += datagram.From.Equals(ClientAddress) && datagram.Message is { Code.IsRequest: true } ? 1 : 0;
        }

        // A failure has no completion time: when the client gave up is known only to its task, whose completion runs on
        // the thread pool, so any time read here would depend on the machine, not on the seed.
        string? failure = cell.Failures[0];
        return new TransferOutcome(failure is null, failure is null ? cell.Times[0] : null, failure, cell.Uplink.Statistics, cell.Downlink.Statistics, requests, trace, Digest(trace));
    }

    /// <summary>
    /// Downloads the resource once with each of <see cref="TransferSetup.Clients"/> clients, all through one bottleneck
    /// (<see cref="InMemoryNetwork.Share"/>): the many devices of one cell. Datagrams are not recorded, only counted.
    /// </summary>
    /// <param name="setup">The setup; <see cref="TransferSetup.Clients"/> clients, starting within <see cref="TransferSetup.StartWithin"/>.</param>
    /// <returns>Each client's completion time, and what the shared links carried.</returns>
    /// <exception cref="ArgumentException">The setup is out of range.</exception>
    public static CellOutcome RunCell(TransferSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        (Cell cell, _) = Simulate(setup, record: false);
        return new CellOutcome(cell.Times, cell.Failures, cell.Uplink.Statistics, cell.Downlink.Statistics, cell.Duration);
    }

    /// <summary>The address of client <paramref name="index"/> of a cell: <see cref="ClientAddress"/> for the first, 10.1.x.y for the rest.</summary>
    /// <param name="index">From 0.</param>
    /// <returns>The address.</returns>
    public static IPEndPoint ClientAddressOf(int index)
        => index == 0 ? ClientAddress : new IPEndPoint(new IPAddress([10, 1, (byte)(index >> 8), (byte)index]), 5683);

    private static (Cell Cell, InMemoryNetwork Network) Simulate(TransferSetup setup, bool record)
    {
        if (setup.BodyBytes < 1)
        {
            throw new ArgumentException("BodyBytes must be positive.", nameof(setup));
        }

        if (setup.Clients is < 1 or > 60_000)
        {
            throw new ArgumentException("Clients must be from 1 to 60,000.", nameof(setup));
        }

        ManualTimeProvider time = new();
        ManualTaskScheduler scheduler = new();
        InMemoryNetwork network = new(time) { RecordsDatagrams = record };
        IPEndPoint[] addresses = new IPEndPoint[setup.Clients];
        for (int i = 0; i < addresses.Length; i++)
        {
            addresses[i] = ClientAddressOf(i);
        }

        (SimulatedLink uplink, SimulatedLink downlink) = network.Share(addresses, ServerAddress, setup.Uplink, setup.Downlink, setup.Seed);
        if (setup.DropFromServer is { } drop)
        {
            network.Link(ServerAddress, addresses[0]).DropWhere(drop);
        }

        byte[] body = Body(setup.BodyBytes);
        CoapServer server = new(new CoapServerOptions
        {
            Scheduler = scheduler,
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = time,
                Random = new Random(Seeds.Derive(setup.Seed, 3)),
                TransmissionParameters = setup.Parameters,
                RetransmissionPolicy = setup.Policy,
                Blockwise = new BlockwiseOptions { BlockSize = setup.BlockSize, ETagLength = setup.ETagLength },
                QBlock = setup.QBlock,
                Paths = setup.PathMtu is int mtu ? [new CoapPathOptions { Network = "10.0.0.0/8", Mtu = mtu }] : [],
            },
        }.Listen(network.CreateTransport(ServerAddress)));
        server.MapGet("/large", _ => new CoapResponse(CoapCode.Content, body, CoapContentFormat.OctetStream) { Immutable = setup.Immutable });
        server.Start();

        Random starts = new(Seeds.Derive(setup.Seed, 4));
        Download[] downloads = new Download[setup.Clients];
        for (int i = 0; i < downloads.Length; i++)
        {
            TimeSpan start = i == 0 && setup.Clients == 1 ? TimeSpan.Zero : setup.StartWithin * starts.NextDouble();
            downloads[i] = new Download(setup, network.CreateTransport(addresses[i]), time, i, start);
        }

        try
        {
            // The discrete-event loop: run what the events queued, then jump to the next event.
            while (true)
            {
                scheduler.RunUntilIdle();
                if (Array.TrueForAll(downloads, d => d.Done))
                {
                    break;
                }

                if (time.Elapsed > setup.TimeLimit || !time.AdvanceToNext())
                {
                    // A client that gave up completes its task on the thread pool (continuations run asynchronously), which
                    // the virtual clock does not wait for: with no timer left to tick (an idle endpoint arms none), the clock
                    // may reach the limit before that completion runs. Give it a moment of real time before calling it lost.
                    foreach (Download download in downloads)
                    {
                        download.Settle(TimeSpan.FromSeconds(5), time.Elapsed);
                    }

                    break;
                }
            }

            // The response tasks complete on the thread pool (their continuations run asynchronously); nothing virtual is
            // left to wait for.
            scheduler.RunUntilIdle();
            foreach (Download download in downloads)
            {
                download.Check(body);
            }
        }
        finally
        {
            scheduler.RunUntilIdle();
            foreach (Download download in downloads)
            {
                download.Dispose();
            }

            server.Dispose();
        }

        TimeSpan duration = TimeSpan.Zero;
        foreach (Download download in downloads)
        {
            if (download.EndedAt is TimeSpan end && end > duration)
            {
                duration = end;
            }
        }

        return (new Cell([.. downloads.Select(d => d.Failure is null ? d.CompletionTime : null)], [.. downloads.Select(d => d.Failure)], uplink, downlink, duration), network);
    }

    /// <summary>The resource: byte i is i mod 251, as the sample server's /large.</summary>
    private static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }

    private static string Digest(IReadOnlyList<Datagram> trace)
    {
        using IncrementalHash hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        Span<byte> fields = stackalloc byte[8];
        foreach (Datagram datagram in trace)
        {
            BinaryPrimitives.WriteInt64LittleEndian(fields, datagram.Time.Ticks);
            hash.AppendData(fields);
            BinaryPrimitives.WriteInt64LittleEndian(fields, datagram.ArrivesAt?.Ticks ?? -1);
            hash.AppendData(fields);
            BinaryPrimitives.WriteInt32LittleEndian(fields, (datagram.From.Port << 8) ^ (int)datagram.Drop);
            hash.AppendData(fields[..4]);
            byte[] bytes = (byte[])datagram.Bytes.Clone();
            if (bytes.Length >= 4)
            {
                // RFC 7252 section 3: the token follows the 4-byte header, TKL bytes long.
                bytes.AsSpan(4, Math.Min(bytes[0] & 0x0F, bytes.Length - 4)).Clear();
            }

            hash.AppendData(bytes);
        }

        return Convert.ToHexString(hash.GetHashAndReset());
    }

    /// <summary>What a simulation of one cell gives back: each client's outcome and the shared links.</summary>
    private sealed record Cell(TimeSpan?[] Times, string?[] Failures, SimulatedLink Uplink, SimulatedLink Downlink, TimeSpan Duration);

    /// <summary>
    /// One client's download: its endpoint, started at its time by a timer on the virtual clock, and the virtual time it has
    /// the whole body, reported synchronously from the block that completes it.
    /// </summary>
    private sealed class Download : IProgress<CoapTransferProgress>, IDisposable
    {
        private readonly long _total;
        private readonly ManualTimeProvider _time;
        private readonly CoapClient _client;
        private readonly ITimer _start;
        private long _startedAt;
        private TimeSpan _lastSentAt;
        private Task<CoapResponse>? _response;

        public Download(TransferSetup setup, InMemoryTransport transport, ManualTimeProvider time, int index, TimeSpan start)
        {
            _total = setup.BodyBytes;
            _time = time;

            // Sends happen in virtual time, on the event loop: the last one is when a download that fails stopped using the
            // link, where the moment its task is seen to fail depends on the thread pool (see Settle).
            transport.OnSending = (_, _) => _lastSentAt = time.Elapsed;
            _client = new CoapClient(transport, new CoapClientOptions
            {
                Endpoint = new CoapEndpointOptions
                {
                    TimeProvider = time,
                    Random = new Random(Seeds.Derive(setup.Seed, index == 0 ? 2 : 100 + index)),
                    TransmissionParameters = setup.Parameters,
                    RetransmissionPolicy = setup.Policy,
                    Blockwise = new BlockwiseOptions { BlockSize = setup.BlockSize, MaxBlocksInFlight = setup.BlocksInFlight },
                    QBlock = setup.QBlock,
                    Paths = setup.PathMtu is not null || setup.TokenLength is not null
                        ? [new CoapPathOptions { Network = ServerAddress.Address.ToString(), Mtu = setup.PathMtu, TokenLength = setup.TokenLength }]
                        : [],
                },
            });

            // Started from the clock, so a client that starts later is a timer like any other event (at zero: the first advance).
            _start = time.CreateTimer(static state => ((Download)state!).Begin(), this, start, Timeout.InfiniteTimeSpan);
        }

        /// <summary>When the whole body had arrived, since the client's first request.</summary>
        public TimeSpan? CompletionTime { get; private set; }

        /// <summary>When the client had the whole body, or, when it failed, when it last sent, since the simulation began.</summary>
        public TimeSpan? EndedAt { get; private set; }

        /// <summary>Why the download did not complete, or null.</summary>
        public string? Failure { get; private set; }

        /// <summary>True once the body is complete or the download has ended without it.</summary>
        public bool Done => CompletionTime is not null || Failure is not null || _response is { IsCompleted: true };

        public void Report(CoapTransferProgress value)
        {
            if (value.BytesTransferred >= _total && CompletionTime is null)
            {
                CompletionTime = _time.GetElapsedTime(_startedAt);
                EndedAt = _time.Elapsed;
            }
        }

        /// <summary>At the end of the run: a download still going is lost, after a moment of real time for a task completing on the thread pool.</summary>
        public void Settle(TimeSpan grace, TimeSpan now)
        {
            if (CompletionTime is not null || Failure is not null)
            {
                return;
            }

            try
            {
                _response?.Wait(grace);
            }
            catch (AggregateException)
            {
                // Read below.
            }

            Failure = _response is { IsCompleted: true } done
                ? done.Exception?.InnerException?.Message ?? "the download ended before its last block arrived"
                : $"not done after {now.TotalSeconds:0} s of virtual time";
            EndedAt ??= _lastSentAt;
        }

        /// <summary>After the run: a download that completed must have the resource's bytes; one that ended early failed.</summary>
        public void Check(byte[] body)
        {
            if (Failure is not null)
            {
                return;
            }

            if (CompletionTime is null)
            {
                Failure = _response?.Exception?.InnerException?.Message ?? "the download ended before its last block arrived";
                EndedAt ??= _lastSentAt;
                return;
            }

            if (_response is null || !_response.Wait(TimeSpan.FromSeconds(30)) || !_response.Result.Payload.Span.SequenceEqual(body))
            {
                Failure = "the body arrived different from the resource";
            }
        }

        public void Dispose()
        {
            _start.Dispose();
            _client.Dispose();
        }

        private void Begin()
        {
            _startedAt = _time.GetTimestamp();
            _response = _client.GetAsync(new Uri($"coap://{ServerAddress}/large"), this);
        }
    }
}
