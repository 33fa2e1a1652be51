using BenchmarkDotNet.Attributes;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Benchmarks;

/// <summary>
/// Parsing cost per Uri-Path option across the counts where a message's option table used to cross the
/// Large Object Heap threshold (about 3,540 entries of 24 B): the thesis matrix's 1,024 / 4,096 / 65,536 /
/// 131,072 plus 16,384 between them. Divide the mean by <see cref="AmountOfOptions"/> for ns per option.
/// </summary>
[IterationTime(100)]
public class OptionScalingBenchmarks
{
    private static readonly CoapMessageSerializer Serializer = BenchmarkMessages.UnboundedStream;

    private byte[] _frame = null!;
    private MemoryStream _readStream = null!;

    [Params(1024, 4096, 16384, 65536, 131072)]
    public int AmountOfOptions { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _frame = Serializer.Serialize(BenchmarkMessages.CreateThesisMessage(AmountOfOptions, 0));
        _readStream = new MemoryStream(_frame, writable: false);
    }

    [GlobalCleanup]
    public void Cleanup() => _readStream.Dispose();

    /// <summary>The copying parse: one array for the bytes after the header, plus the option table.</summary>
    [Benchmark(Baseline = true)]
    public CoapMessage Deserialize() => Serializer.Deserialize((ReadOnlySpan<byte>)_frame);

    /// <summary>Zero-copy: only the message and its option table are allocated.</summary>
    [Benchmark]
    public CoapMessage DeserializeMemory() => Serializer.Deserialize((ReadOnlyMemory<byte>)_frame);

    /// <summary>DeserializeAsync(Stream) over a MemoryStream, as in the thesis.</summary>
    [Benchmark]
    public ValueTask<CoapMessage?> DeserializeAsync()
    {
        _readStream.Position = 0;
        return Serializer.DeserializeAsync(_readStream);
    }
}
