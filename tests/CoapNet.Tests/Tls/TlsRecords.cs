namespace CoapNet.Tests.Tls;

/// <summary>Reads raw bytes as a sequence of TLS records (RFC 8446 section 5.1), to tell TLS on the wire from anything else.</summary>
internal static class TlsRecords
{
    /// <summary>
    /// True when <paramref name="bytes"/> is whole TLS records one after the other: each with a TLS content type
    /// (change_cipher_spec 20, alert 21, handshake 22, application_data 23), version 3.x and a length within bounds.
    /// </summary>
    public static bool AreAllRecords(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            if (bytes.Length < 5 || bytes[0] is < 20 or > 23 || bytes[1] != 3)
            {
                return false;
            }

            int length = (bytes[3] << 8) | bytes[4];
            if (length > (1 << 14) + 256 || bytes.Length < 5 + length)
            {
                return false;
            }

            bytes = bytes[(5 + length)..];
        }

        return true;
    }
}

/// <summary>A stream that keeps a copy of every byte read through it.</summary>
internal sealed class RecordingStream(Stream inner) : Stream
{
    private readonly MemoryStream _received = new();

    /// <summary>Everything read so far.</summary>
    public byte[] Received
    {
        get
        {
            lock (_received)
            {
                return _received.ToArray();
            }
        }
    }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        int count = await inner.ReadAsync(buffer, cancellationToken);
        lock (_received)
        {
            _received.Write(buffer.Span[..count]);
        }

        return count;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count)
    {
        int read = inner.Read(buffer, offset, count);
        lock (_received)
        {
            _received.Write(buffer, offset, read);
        }

        return read;
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => inner.WriteAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => inner.WriteAsync(buffer, offset, count, cancellationToken);

    public override void Write(byte[] buffer, int offset, int count) => inner.Write(buffer, offset, count);

    public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

    public override void Flush() => inner.Flush();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            inner.Dispose();
        }

        base.Dispose(disposing);
    }
}
