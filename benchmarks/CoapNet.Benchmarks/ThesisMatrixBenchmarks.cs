using System.Buffers;
using System.IO.Pipelines;
using BenchmarkDotNet.Attributes;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Benchmarks;

/// <summary>
/// The thesis matrix (section 3.2): AmountOfOptions x LengthOfPayload in the RFC 8323 stream framing,
/// read and written through every entry point, beside a plain copy of the same number of bytes.
/// </summary>
/// <remarks>
/// <para>
/// The thesis built a fresh message per run; here the message and its bytes are built once per cell in
/// <see cref="Setup"/>, because an iteration setup would dominate the sub-microsecond cells. Nothing the
/// codec does depends on that: it never mutates its input.
/// </para>
/// <para>
/// Iterations last 100 ms instead of BenchmarkDotNet's 500 ms: 300 cases on 2 cores would otherwise take
/// the short job past 20 minutes, and 100 ms (BenchmarkDotNet's recommended minimum) still averages
/// millions of calls in the fastest cells and a few dozen in the slowest (a few ms each).
/// </para>
/// </remarks>
[IterationTime(100)]
public class ThesisMatrixBenchmarks
{
    private static readonly CoapMessageSerializer Serializer = BenchmarkMessages.UnboundedStream;

    private CoapMessage _message = null!;
    private byte[] _frame = null!;
    private byte[] _destination = null!;
    private MemoryStream _readStream = null!;
    private MemoryStream _writeStream = null!;
    private Pipe _pipe = null!;

    [Params(0, 1024, 4096, 65536, 131072)]
    public int AmountOfOptions { get; set; }

    [Params(0, 1024, 4096, 65536, 131072)]
    public int LengthOfPayload { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _message = BenchmarkMessages.CreateThesisMessage(AmountOfOptions, LengthOfPayload);
        _frame = Serializer.Serialize(_message);
        _destination = new byte[_frame.Length];
        _readStream = new MemoryStream(_frame, writable: false);

        // Pre-sized, so SerializeAsync measures writing into the stream and not the stream growing.
        _writeStream = new MemoryStream(_frame.Length);

        // No back-pressure (the benchmark drains the pipe after each message) and inline continuations,
        // so the pipe rows measure the codec and the pipe's buffer handling, not thread-pool hops.
        _pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0, readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, useSynchronizationContext: false));
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _readStream.Dispose();
        _writeStream.Dispose();
    }

    /// <summary>memcpy of the frame's size: the floor for any codec that copies the bytes once.</summary>
    [Benchmark(Baseline = true)]
    public void Copy() => _frame.AsSpan().CopyTo(_destination);

    /// <summary>Allocate an array of the frame's size and copy into it: the floor for an entry point that returns owned bytes.</summary>
    [Benchmark]
    public byte[] CopyToNewArray()
    {
        byte[] copy = GC.AllocateUninitializedArray<byte>(_frame.Length);
        _frame.AsSpan().CopyTo(copy);
        return copy;
    }

    /// <summary>The thesis's Deserialize(ReadOnlySpan): the message owns one copy of the bytes after the header.</summary>
    [Benchmark]
    public CoapMessage Deserialize() => Serializer.Deserialize((ReadOnlySpan<byte>)_frame);

    /// <summary>Zero-copy: token, options and payload are slices of the frame.</summary>
    [Benchmark]
    public CoapMessage DeserializeMemory() => Serializer.Deserialize((ReadOnlyMemory<byte>)_frame);

    /// <summary>Deserialize(Stream), the synchronous twin of <see cref="DeserializeAsync"/>: same reads, same single array.</summary>
    [Benchmark]
    public CoapMessage? DeserializeStream()
    {
        _readStream.Position = 0;
        return Serializer.Deserialize(_readStream);
    }

    /// <summary>The thesis's DeserializeAsync(Stream) over a MemoryStream: one frame-sized array, parsed in place.</summary>
    [Benchmark]
    public ValueTask<CoapMessage?> DeserializeAsync()
    {
        _readStream.Position = 0;
        return Serializer.DeserializeAsync(_readStream);
    }

    /// <summary>DeserializeAsync(PipeReader) over the frame as one segment (the reader object is the only extra allocation).</summary>
    [Benchmark]
    public ValueTask<CoapMessage?> DeserializeAsyncPipe() => Serializer.DeserializeAsync(PipeReader.Create(new ReadOnlySequence<byte>(_frame)));

    /// <summary>The thesis's Serialize: a new array holding the frame.</summary>
    [Benchmark]
    public byte[] Serialize() => Serializer.Serialize(_message);

    /// <summary>Serialize into a caller's buffer: no allocation, the payload copied once.</summary>
    [Benchmark]
    public int SerializeSpan() => Serializer.Serialize(_message, _destination.AsSpan());

    /// <summary>Serialize(message, Stream), the synchronous twin of <see cref="SerializeAsync"/>.</summary>
    [Benchmark]
    public void SerializeStream()
    {
        _writeStream.Position = 0;
        Serializer.Serialize(_message, _writeStream);
    }

    /// <summary>The thesis's SerializeAsync(Stream) into a MemoryStream.</summary>
    [Benchmark]
    public ValueTask SerializeAsync()
    {
        _writeStream.Position = 0;
        return Serializer.SerializeAsync(_message, _writeStream);
    }

    /// <summary>SerializeAsync(PipeWriter) into a Pipe, then the reader consumes the bytes so the pipe's segments are reused.</summary>
    [Benchmark]
    public async ValueTask SerializeAsyncPipe()
    {
        await Serializer.SerializeAsync(_message, _pipe.Writer).ConfigureAwait(false);
        _pipe.Reader.TryRead(out ReadResult result);
        _pipe.Reader.AdvanceTo(result.Buffer.End);
    }
}
