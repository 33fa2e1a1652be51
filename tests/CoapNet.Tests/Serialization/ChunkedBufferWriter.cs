using System.Buffers;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> that hands out the smallest span the contract allows (the size hint,
/// or <c>chunkSize</c> bytes without one), so that a payload is written across many buffers. It checks
/// that the writer never advances past the span it was given.
/// </summary>
internal sealed class ChunkedBufferWriter(int chunkSize) : IBufferWriter<byte>
{
    private readonly List<byte[]> _chunks = [];
    private readonly List<int> _used = [];
    private bool _spanOutstanding;

    public int WrittenCount => _used.Sum();

    public int ChunkCount => _chunks.Count;

    public void Advance(int count)
    {
        if (!_spanOutstanding || count < 0 || count > _chunks[^1].Length)
        {
            throw new InvalidOperationException($"Advance({count}) does not match the span handed out.");
        }

        _used.Add(count);
        _spanOutstanding = false;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        if (_spanOutstanding)
        {
            // A span asked for again without Advance is discarded, as the contract allows.
            _chunks.RemoveAt(_chunks.Count - 1);
        }

        byte[] chunk = new byte[Math.Max(sizeHint, chunkSize)];
        _chunks.Add(chunk);
        _spanOutstanding = true;
        return chunk;
    }

    public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;

    public byte[] ToArray()
    {
        byte[] result = new byte[WrittenCount];
        int offset = 0;
        for (int i = 0; i < _used.Count; i++)
        {
            _chunks[i].AsSpan(0, _used[i]).CopyTo(result.AsSpan(offset));
            offset += _used[i];
        }

        return result;
    }
}
