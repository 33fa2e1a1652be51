using BenchmarkDotNet.Attributes;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Benchmarks;

/// <summary>
/// The messages a server handles all day, in both framings, through the synchronous and asynchronous
/// entry points. Stream rows use a MemoryStream, so sync and async do the same work and differ only in
/// the I/O call; the span rows are the cost without any stream.
/// </summary>
public class EverydayMessageBenchmarks
{
    private CoapMessageSerializer _serializer = null!;
    private CoapMessage _message = null!;
    private byte[] _bytes = null!;
    private byte[] _destination = null!;
    private MemoryStream _readStream = null!;
    private MemoryStream _writeStream = null!;

    [ParamsAllValues]
    public EverydayMessage Message { get; set; }

    [ParamsAllValues]
    public CoapFraming Framing { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _serializer = Framing == CoapFraming.Datagram ? CoapMessageSerializer.Udp : CoapMessageSerializer.Tcp;
        _message = BenchmarkMessages.CreateEveryday(Message);
        _bytes = _serializer.Serialize(_message);
        _destination = new byte[_bytes.Length];
        _readStream = new MemoryStream(_bytes, writable: false);
        _writeStream = new MemoryStream(_bytes.Length);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _readStream.Dispose();
        _writeStream.Dispose();
    }

    [Benchmark]
    public CoapMessage Deserialize() => _serializer.Deserialize((ReadOnlySpan<byte>)_bytes);

    [Benchmark]
    public CoapMessage DeserializeMemory() => _serializer.Deserialize((ReadOnlyMemory<byte>)_bytes);

    [Benchmark]
    public CoapMessage? DeserializeStream()
    {
        _readStream.Position = 0;
        return _serializer.Deserialize(_readStream);
    }

    [Benchmark]
    public ValueTask<CoapMessage?> DeserializeAsync()
    {
        _readStream.Position = 0;
        return _serializer.DeserializeAsync(_readStream);
    }

    [Benchmark]
    public byte[] Serialize() => _serializer.Serialize(_message);

    [Benchmark]
    public int SerializeSpan() => _serializer.Serialize(_message, _destination.AsSpan());

    [Benchmark]
    public void SerializeStream()
    {
        _writeStream.Position = 0;
        _serializer.Serialize(_message, _writeStream);
    }

    [Benchmark]
    public ValueTask SerializeAsync()
    {
        _writeStream.Position = 0;
        return _serializer.SerializeAsync(_message, _writeStream);
    }
}
