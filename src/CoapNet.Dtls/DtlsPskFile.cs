using System.Globalization;
using Microsoft.Extensions.Logging;

namespace CoapNet.Dtls;

/// <summary>
/// The pre-shared keys of a fleet, read from a file and read again when it changes: UTF-8 text, one device a line,
/// <c>identity key</c> (the identity, one space, the key in hexadecimal); blank lines and lines that start with
/// <c>#</c> are ignored.
/// </summary>
/// <remarks>
/// <para>
/// An identity is 1 to 128 printable ASCII characters without whitespace; a key is 1 to 64 bytes, as 2 to 128 hexadecimal
/// digits in either case. A line that is neither, or an identity named twice, fails the whole file with a
/// <see cref="FormatException"/> naming the file, the line and the problem (never the key): a device is never skipped
/// without a word.
/// </para>
/// <para>
/// The file is looked at again at most once a second, when a handshake asks for a key: a changed modification time or
/// length reads it anew on that handshake's thread and swaps the new keys in whole, so a handshake sees either the old
/// file or the new one. Established sessions are left alone: a device whose key changed, or that was removed, keeps its
/// session until it ends (idle timeout, eviction, its own new handshake), and its next handshake needs the new key. A
/// file that fails to read keeps the keys in use (<see cref="ReloadError"/> says why, and a warning is logged) until it
/// changes again. Write the new file beside it and rename it over the old one, so a reader never meets half a file.
/// </para>
/// </remarks>
public sealed partial class DtlsPskFile : DtlsPskStore
{
    private const int MaxIdentityLength = 128;
    private const int MaxKeyLength = 64;

    private readonly TimeProvider _time;
    private readonly ILogger? _logger;
    private DtlsPskTable _table;
    private (long Written, long Length) _stamp;
    private long _nextCheck;
    private int _checking;
    private Exception? _reloadError;

    /// <summary>Reads the keys of <paramref name="path"/>.</summary>
    /// <param name="path">The file.</param>
    /// <param name="logger">Where a failed reload is logged (the file's error, never a key), or null.</param>
    /// <param name="timeProvider">The clock that spaces the checks for changes (default <see cref="TimeProvider.System"/>).</param>
    /// <exception cref="FormatException">A line is malformed, or an identity is named twice; the message names the file and line.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public DtlsPskFile(string path, ILogger? logger = null, TimeProvider? timeProvider = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        Path = System.IO.Path.GetFullPath(path);
        _logger = logger;
        _time = timeProvider ?? TimeProvider.System;
        _stamp = Stamp();
        _table = Read(Path);
        _nextCheck = _time.GetTimestamp() + _time.TimestampFrequency;
    }

    /// <summary>The file, as a full path.</summary>
    public string Path { get; }

    /// <summary>How many identities the keys in use hold.</summary>
    public int Count => Volatile.Read(ref _table).Count;

    /// <summary>Why the last reload on a change failed (the keys before it are still in use), or null when it succeeded.</summary>
    public Exception? ReloadError => Volatile.Read(ref _reloadError);

    /// <inheritdoc/>
    public override bool TryGetKey(ReadOnlySpan<byte> identity, out ReadOnlyMemory<byte> key)
    {
        if (_time.GetTimestamp() >= Volatile.Read(ref _nextCheck))
        {
            CheckForChange();
        }

        return Volatile.Read(ref _table).TryGetKey(identity, out key);
    }

    /// <summary>Reads the file now, whether or not it changed, and uses its keys from the next handshake on.</summary>
    /// <exception cref="FormatException">A line is malformed; the keys in use stay.</exception>
    /// <exception cref="IOException">The file cannot be read; the keys in use stay.</exception>
    public void Reload()
    {
        (long, long) stamp = Stamp();
        Volatile.Write(ref _table, Read(Path));
        _stamp = stamp;
        Volatile.Write(ref _reloadError, null);
    }

    /// <summary>
    /// Reads the keys of <paramref name="path"/> into a table once (no reloading): for a table changed in code from there on.
    /// </summary>
    /// <param name="path">The file.</param>
    /// <returns>A new table.</returns>
    /// <exception cref="FormatException">A line is malformed, or an identity is named twice; the message names the file and line.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    public static DtlsPskTable Read(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        string[] lines = File.ReadAllLines(path, System.Text.Encoding.UTF8);
        DtlsPskTable table = new(lines.Length);
        Span<byte> identity = stackalloc byte[MaxIdentityLength];
        Span<byte> key = stackalloc byte[MaxKeyLength];
        for (int i = 0; i < lines.Length; i++)
        {
            string line = lines[i];
            if (line.Length == 0 || line[0] == '#' || string.IsNullOrWhiteSpace(line))
            {
                continue;
            }

            int space = line.IndexOf(' ', StringComparison.Ordinal);
            if (space < 0)
            {
                throw Malformed(path, i, "expected an identity, one space and the key in hexadecimal");
            }

            ReadOnlySpan<char> name = line.AsSpan(0, space);
            if (name.Length is 0 or > MaxIdentityLength || !IsPrintableAscii(name))
            {
                throw Malformed(path, i, $"the identity must be 1 to {MaxIdentityLength} printable ASCII characters without whitespace");
            }

            ReadOnlySpan<char> hex = line.AsSpan(space + 1);
            if (hex.Length is 0 or > 2 * MaxKeyLength || !TryReadHex(hex, key, out int written))
            {
                throw Malformed(path, i, $"the key of '{name}' must be 1 to {MaxKeyLength} bytes as hexadecimal digits (2 to {2 * MaxKeyLength}, nothing after them)");
            }

            for (int c = 0; c < name.Length; c++)
            {
                identity[c] = (byte)name[c];
            }

            if (table.TryGetKey(identity[..name.Length], out _))
            {
                throw Malformed(path, i, $"the identity '{name}' is already on an earlier line");
            }

            table.Set(identity[..name.Length], key[..written]);
        }

        return table;
    }

    private static bool TryReadHex(ReadOnlySpan<char> hex, Span<byte> bytes, out int written)
    {
        written = hex.Length / 2;
        if (hex.Length % 2 != 0)
        {
            return false;
        }

        for (int i = 0; i < written; i++)
        {
            int high = HexDigit(hex[2 * i]);
            int low = HexDigit(hex[(2 * i) + 1]);
            if ((high | low) < 0)
            {
                return false;
            }

            bytes[i] = (byte)((high << 4) | low);
        }

        return true;
    }

    private static int HexDigit(char c) => c switch
    {
        >= '0' and <= '9' => c - '0',
        >= 'a' and <= 'f' => c - 'a' + 10,
        >= 'A' and <= 'F' => c - 'A' + 10,
        _ => -1,
    };

    private static bool IsPrintableAscii(ReadOnlySpan<char> text)
    {
        foreach (char c in text)
        {
            if (c is < '!' or > '~')
            {
                return false;
            }
        }

        return true;
    }

    private static FormatException Malformed(string path, int index, string problem)
        => new(string.Create(CultureInfo.InvariantCulture, $"{path}, line {index + 1}: {problem}."));

    private (long Written, long Length) Stamp()
    {
        FileInfo info = new(Path);
        return info.Exists ? (info.LastWriteTimeUtc.Ticks, info.Length) : (0, -1);
    }

    // One handshake thread looks, at most once a second; the others go on with the keys in use meanwhile.
    private void CheckForChange()
    {
        if (Interlocked.Exchange(ref _checking, 1) != 0)
        {
            return;
        }

        try
        {
            Volatile.Write(ref _nextCheck, _time.GetTimestamp() + _time.TimestampFrequency);
            (long, long) stamp = Stamp();
            if (stamp == _stamp)
            {
                return;
            }

            try
            {
                Reload();
            }
            catch (Exception e) when (e is FormatException or IOException or UnauthorizedAccessException)
            {
                // Not read again until it changes again: a broken file costs one attempt, not one a second.
                _stamp = stamp;
                Volatile.Write(ref _reloadError, e);
                if (_logger is not null)
                {
                    Log.ReloadFailed(_logger, Path, e.Message);
                }
            }
        }
        finally
        {
            Volatile.Write(ref _checking, 0);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(30, LogLevel.Warning, "The PSK file {Path} changed and could not be read; the keys read before stay in use: {Error}")]
        public static partial void ReloadFailed(ILogger logger, string path, string error);
    }
}
