using System.Buffers;

namespace CoapNet.Samples.Transport;

/// <summary>
/// SLIP (RFC 1055): a frame is its bytes with END (0xC0) and ESC (0xDB) escaped as ESC ESC_END (0xDC) and ESC ESC_ESC
/// (0xDD), then END. A reader skips empty frames, so a sender may start with END to flush line noise.
/// </summary>
internal static class SlipFraming
{
    private const byte End = 0xC0;
    private const byte Esc = 0xDB;
    private const byte EscEnd = 0xDC;
    private const byte EscEsc = 0xDD;

    /// <summary>Writes <paramref name="frame"/> to <paramref name="output"/>, escaped and ended.</summary>
    public static void Write(ReadOnlySpan<byte> frame, IBufferWriter<byte> output)
    {
        Span<byte> span = output.GetSpan((frame.Length * 2) + 2);
        int n = 0;
        span[n++] = End;
        foreach (byte b in frame)
        {
            if (b == End)
            {
                span[n++] = Esc;
                span[n++] = EscEnd;
            }
            else if (b == Esc)
            {
                span[n++] = Esc;
                span[n++] = EscEsc;
            }
            else
            {
                span[n++] = b;
            }
        }

        span[n++] = End;
        output.Advance(n);
    }

    /// <summary>
    /// Takes the next whole frame from <paramref name="buffer"/> into <paramref name="frame"/>, unescaped; false when no
    /// END has come yet (nothing is consumed then).
    /// </summary>
    public static bool TryRead(ref ReadOnlySequence<byte> buffer, List<byte> frame)
    {
        while (true)
        {
            SequenceReader<byte> reader = new(buffer);
            if (!reader.TryReadTo(out ReadOnlySequence<byte> escaped, End))
            {
                return false;
            }

            buffer = buffer.Slice(reader.Position);
            if (escaped.IsEmpty)
            {
                continue;
            }

            frame.Clear();
            bool escaping = false;
            foreach (ReadOnlyMemory<byte> segment in escaped)
            {
                foreach (byte b in segment.Span)
                {
                    if (escaping)
                    {
                        frame.Add(b == EscEnd ? End : b == EscEsc ? Esc : b);
                        escaping = false;
                    }
                    else if (b == Esc)
                    {
                        escaping = true;
                    }
                    else
                    {
                        frame.Add(b);
                    }
                }
            }

            return true;
        }
    }
}
