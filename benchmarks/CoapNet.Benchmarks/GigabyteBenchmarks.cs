using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Engines;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Benchmarks;

/// <summary>
/// The thesis's extreme case: 100,000 Uri-Path options and a 1,000,000,000-byte payload (a ~1.0005 GB
/// frame). Opt-in (see <see cref="IsRequested"/>): setup holds the message, its frame and a
/// pre-sized output stream, about 3 GB, and the copying rows allocate another GB per call.
/// </summary>
/// <remarks>
/// One operation takes a large fraction of a second, so the job runs each method once per iteration
/// (monitoring strategy: no pilot, no unrolling) with 1 warmup and 3 measured iterations.
/// </remarks>
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 1, iterationCount: 3, id: "Gigabyte")]
public class GigabyteBenchmarks
{
    public const int AmountOfOptions = 100_000;
    public const int LengthOfPayload = 1_000_000_000;

    private static readonly CoapMessageSerializer Serializer = BenchmarkMessages.UnboundedStream;

    private CoapMessage _message = null!;
    private byte[] _frame = null!;
    private MemoryStream _readStream = null!;
    private MemoryStream _writeStream = null!;

    /// <summary>True when the command line names this class in a filter, or lists benchmarks.</summary>
    public static bool IsRequested(string[] args)
    {
        foreach (string arg in args)
        {
            if (arg.Contains("Gigabyte", StringComparison.OrdinalIgnoreCase) || arg.Equals("--list", StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    [GlobalSetup]
    public void Setup()
    {
        _message = BenchmarkMessages.CreateThesisMessage(AmountOfOptions, LengthOfPayload);
        _frame = Serializer.Serialize(_message);
        _readStream = new MemoryStream(_frame, writable: false);
        _writeStream = new MemoryStream(_frame.Length);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _readStream.Dispose();
        _writeStream.Dispose();
    }

    /// <summary>Copies the frame once into a new array owned by the message (1 GB allocated).</summary>
    [Benchmark]
    public CoapMessage Deserialize() => Serializer.Deserialize((ReadOnlySpan<byte>)_frame);

    /// <summary>Zero-copy over bytes already in memory: only the message and the option entries are allocated.</summary>
    [Benchmark]
    public CoapMessage DeserializeMemory() => Serializer.Deserialize((ReadOnlyMemory<byte>)_frame);

    /// <summary>Reads the frame from the stream into one exact-size array and parses it in place (1 GB allocated, once).</summary>
    [Benchmark]
    public ValueTask<CoapMessage?> DeserializeAsync()
    {
        _readStream.Position = 0;
        return Serializer.DeserializeAsync(_readStream);
    }

    /// <summary>Builds the whole frame in a new array (1 GB allocated).</summary>
    [Benchmark]
    public byte[] Serialize() => Serializer.Serialize(_message);

    /// <summary>Streams: the head from a pooled buffer, then the payload straight from the message's memory.</summary>
    [Benchmark]
    public ValueTask SerializeAsync()
    {
        _writeStream.Position = 0;
        return Serializer.SerializeAsync(_message, _writeStream);
    }
}
