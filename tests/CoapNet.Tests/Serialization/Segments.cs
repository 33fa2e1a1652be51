using System.Buffers;

namespace CoapNet.Tests.Serialization;

/// <summary>Builds a <see cref="ReadOnlySequence{T}"/> out of many small segments, as a pipe hands them out.</summary>
internal static class Segments
{
    /// <summary>Splits <paramref name="bytes"/> into segments of <paramref name="segmentSize"/> bytes (the last may be shorter).</summary>
    /// <param name="bytes">The bytes.</param>
    /// <param name="segmentSize">The segment size.</param>
    /// <param name="ends">The end position of each segment, in order: the prefix of the first k segments ends at ends[k - 1].</param>
    public static ReadOnlySequence<byte> Split(byte[] bytes, int segmentSize, out SequencePosition[] ends)
    {
        if (bytes.Length == 0)
        {
            ends = [];
            return ReadOnlySequence<byte>.Empty;
        }

        int count = (bytes.Length + segmentSize - 1) / segmentSize;
        ends = new SequencePosition[count];
        Segment first = new(bytes.AsMemory(0, Math.Min(segmentSize, bytes.Length)), 0);
        Segment last = first;
        ends[0] = new SequencePosition(first, first.Memory.Length);
        for (int i = 1; i < count; i++)
        {
            int start = i * segmentSize;
            last = last.Append(bytes.AsMemory(start, Math.Min(segmentSize, bytes.Length - start)));
            ends[i] = new SequencePosition(last, last.Memory.Length);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    /// <inheritdoc cref="Split(byte[], int, out SequencePosition[])"/>
    public static ReadOnlySequence<byte> Split(byte[] bytes, int segmentSize) => Split(bytes, segmentSize, out _);

    /// <summary>A sequence of exactly the given segments (empty ones included).</summary>
    public static ReadOnlySequence<byte> Of(params byte[][] parts)
    {
        Segment first = new(parts[0], 0);
        Segment last = first;
        for (int i = 1; i < parts.Length; i++)
        {
            last = last.Append(parts[i]);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            Segment next = new(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
