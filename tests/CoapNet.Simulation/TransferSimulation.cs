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
}

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
    /// <param name="setup">The body, the block size, the parameters, the policy, the links and the seed.</param>
    /// <returns>The outcome.</returns>
    /// <exception cref="ArgumentException">The setup is out of range.</exception>
    public static TransferOutcome Run(TransferSetup setup)
    {
        ArgumentNullException.ThrowIfNull(setup);
        if (setup.BodyBytes < 1)
        {
            throw new ArgumentException("BodyBytes must be positive.", nameof(setup));
        }

        ManualTimeProvider time = new();
        ManualTaskScheduler scheduler = new();
        InMemoryNetwork network = new(time);
        (SimulatedLink uplink, SimulatedLink downlink) = network.Connect(ClientAddress, ServerAddress, setup.Uplink, setup.Downlink, setup.Seed);
        byte[] body = Body(setup.BodyBytes);
        BlockwiseOptions blocks = new() { BlockSize = setup.BlockSize };

        CoapServer server = new(new CoapServerOptions
        {
            Scheduler = scheduler,
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = time,
                Random = new Random(Seeds.Derive(setup.Seed, 3)),
                TransmissionParameters = setup.Parameters,
                RetransmissionPolicy = setup.Policy,
                Blockwise = blocks,
                QBlock = setup.QBlock,
            },
        }.Listen(network.CreateTransport(ServerAddress)));
        server.MapGet("/large", _ => CoapResponse.Content(body, CoapContentFormat.OctetStream));
        server.Start();

        CoapClient client = new(network.CreateTransport(ClientAddress), new CoapClientOptions
        {
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = time,
                Random = new Random(Seeds.Derive(setup.Seed, 2)),
                TransmissionParameters = setup.Parameters,
                RetransmissionPolicy = setup.Policy,
                Blockwise = new BlockwiseOptions { BlockSize = setup.BlockSize, MaxBlocksInFlight = setup.BlocksInFlight },
                QBlock = setup.QBlock,
            },
        });

        LastBlock last = new(setup.BodyBytes, time);
        string? failure = null;
        Task<CoapResponse> download = client.GetAsync(new Uri($"coap://{ServerAddress}/large"), last);
        try
        {
            // The discrete-event loop: run what the events queued, then jump to the next event.
            while (last.At is null)
            {
                scheduler.RunUntilIdle();
                if (last.At is not null)
                {
                    break;
                }

                if (download.IsCompleted)
                {
                    failure = download.Exception?.InnerException?.Message ?? "the download ended before its last block arrived";
                    break;
                }

                if (time.Elapsed > setup.TimeLimit || !time.AdvanceToNext())
                {
                    // A client that gave up completes its task on the thread pool (continuations run asynchronously), which
                    // the virtual clock does not wait for: with no timer left to tick (an idle endpoint arms none), the clock
                    // may reach the limit before that completion runs. Give it a moment of real time before calling it lost.
                    try
                    {
                        download.Wait(TimeSpan.FromSeconds(5));
                    }
                    catch (AggregateException)
                    {
                        // Read below.
                    }

                    failure = download.IsCompleted
                        ? download.Exception?.InnerException?.Message ?? "the download ended before its last block arrived"
                        : $"not done after {time.Elapsed.TotalSeconds:0} s of virtual time";
                    break;
                }
            }

            if (failure is null)
            {
                // The response task completes on the thread pool (its continuations run asynchronously); nothing virtual is left to wait for.
                scheduler.RunUntilIdle();
                if (!download.Wait(TimeSpan.FromSeconds(30)) || !download.Result.Payload.Span.SequenceEqual(body))
                {
                    failure = "the body arrived different from the resource";
                }
            }
        }
        finally
        {
            scheduler.RunUntilIdle();
            client.Dispose();
            server.Dispose();
        }

        IReadOnlyList<Datagram> trace = network.Sent;
        int requests = 0;
        foreach (Datagram datagram in trace)
        {
            requests += datagram.From.Equals(ClientAddress) && datagram.Message is { Code.IsRequest: true } ? 1 : 0;
        }

        // A failure has no completion time: when the client gave up is known only to its task, whose completion runs on
        // the thread pool, so any time read here would depend on the machine, not on the seed.
        return new TransferOutcome(failure is null, failure is null ? last.At : null, failure, uplink.Statistics, downlink.Statistics, requests, trace, Digest(trace));
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

    /// <summary>Notes the virtual time the client has the whole body, reported synchronously from the block that completes it.</summary>
    private sealed class LastBlock(long total, TimeProvider time) : IProgress<CoapTransferProgress>
    {
        private readonly long _start = time.GetTimestamp();

        public TimeSpan? At { get; private set; }

        public void Report(CoapTransferProgress value)
        {
            if (value.BytesTransferred >= total && At is null)
            {
                At = time.GetElapsedTime(_start);
            }
        }
    }
}
