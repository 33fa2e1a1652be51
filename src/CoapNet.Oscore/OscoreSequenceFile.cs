using System.Globalization;
using System.Text;
using CoapNet.Oscore.Cose;

namespace CoapNet.Oscore;

/// <summary>
/// Keeps a context's Sender Sequence Number in a file (RFC 8613 section 7.5.1, Appendix B.1.1): the file holds the end
/// of the last range reserved, as decimal text, and each reservation replaces it whole (a temporary file beside it,
/// flushed to disk, then renamed over it), so a crash at any moment leaves either the old limit or the new one, and a
/// restart resumes at or above every number that may have been used.
/// </summary>
/// <remarks>
/// A file that does not exist is a context never used: it starts at 0. A file that exists but cannot be read as a limit
/// is refused (<see cref="InvalidDataException"/>), never taken as 0, which would reuse nonces. One context, in one
/// process, uses a file at a time: two that share one would each resume at the same number.
/// </remarks>
public sealed class OscoreSequenceFile : IOscoreSequenceStore
{
    /// <summary>A store in <paramref name="path"/>, created at the first reservation if it does not exist.</summary>
    /// <param name="path">The file; its folder must exist.</param>
    /// <exception cref="ArgumentException">The path is empty or its folder does not exist.</exception>
    public OscoreSequenceFile(string path)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        Path = System.IO.Path.GetFullPath(path);
        string? folder = System.IO.Path.GetDirectoryName(Path);
        if (folder is null || !Directory.Exists(folder))
        {
            throw new ArgumentException($"The OSCORE sequence file '{Path}' cannot be kept: its folder '{folder}' does not exist.", nameof(path));
        }
    }

    /// <summary>The file, as a full path.</summary>
    public string Path { get; }

    /// <inheritdoc/>
    /// <exception cref="InvalidDataException">The file holds no limit (it is empty, not a number, or out of range); the message names it.</exception>
    /// <exception cref="IOException">The file exists but cannot be read; the message names it.</exception>
    public long Load()
    {
        string text;
        try
        {
            if (!File.Exists(Path))
            {
                return 0;
            }

            text = File.ReadAllText(Path, Encoding.ASCII);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new IOException($"The OSCORE sequence file '{Path}' cannot be read ({e.Message}); the context cannot start without it, or it would reuse nonces (RFC 8613 section 7.5.1).", e);
        }

        if (!long.TryParse(text.AsSpan().Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out long limit) || limit > OscoreAlgorithm.MaxSequenceNumber + 1)
        {
            // Never a silent 0: the numbers below the lost limit may have gone out, and using them again reuses nonces.
            throw new InvalidDataException($"The OSCORE sequence file '{Path}' is corrupt: it holds no sequence number (0 to 2^40). The context cannot start from it without risking reused nonces (RFC 8613 section 7.5.1); derive a new context (new Master Secret, Salt or ID Context), then delete the file.");
        }

        return limit;
    }

    /// <inheritdoc/>
    /// <exception cref="IOException">The file cannot be written; nothing may be sent until it is.</exception>
    public void Reserve(long limit)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(limit);
        string temporary = Path + ".tmp";
        byte[] text = Encoding.ASCII.GetBytes(limit.ToString(CultureInfo.InvariantCulture) + "\n");
        try
        {
            using (FileStream file = new(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
            {
                file.Write(text);

                // On the disk before the rename makes it the file (fsync): the limit must be durable before any number
                // below it goes out.
                file.Flush(flushToDisk: true);
            }

            File.Move(temporary, Path, overwrite: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new IOException($"The OSCORE sequence file '{Path}' cannot be written ({e.Message}); no message is sent until it can (RFC 8613 section 7.5.1).", e);
        }
    }
}
