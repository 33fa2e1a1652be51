using System.Runtime.CompilerServices;
using CoapNet.NoResponse;

namespace CoapNet.Messages;

// Typed accessors for the options users work with most. A getter decodes on access; a setter
// replaces every occurrence; null removes the option. An option whose value length is outside
// its registered bounds reads as absent, as RFC 7252 section 5.4.3 treats it as unrecognized.
public sealed partial class CoapMessage
{
    /// <summary>The default Max-Age when the option is absent: 60 seconds (RFC 7252 section 5.10.5).</summary>
    public const uint DefaultMaxAge = 60;

    /// <summary>The Uri-Path as text: "/" when there is no segment, else "/" before each segment ("/sensors/temp").</summary>
    /// <remarks>
    /// The setter splits on '/', ignoring one leading '/'; "/" and "" clear the path (RFC 7252 section 6.4 step 8).
    /// Segments are not percent-decoded here; use <see cref="SetUri(Uri)"/> for URI text. A segment that itself
    /// contains '/' needs <see cref="SetUriPathSegments(IEnumerable{string})"/>.
    /// </remarks>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public string UriPath
    {
        get => JoinStrings(CoapOptionNumber.UriPath, '/', "/", "/");
        set => SetSplit(CoapOptionNumber.UriPath, value, '/', trimLeading: true);
    }

    /// <summary>The Uri-Query options joined with '&amp;' ("a=1&amp;b=2"); empty when there is none. The setter splits on '&amp;'.</summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public string UriQuery
    {
        get => JoinStrings(CoapOptionNumber.UriQuery, '&', string.Empty, string.Empty);
        set => SetSplit(CoapOptionNumber.UriQuery, value, '&', trimLeading: false);
    }

    /// <summary>The Location-Path as text, like <see cref="UriPath"/> ("/" when absent).</summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public string LocationPath
    {
        get => JoinStrings(CoapOptionNumber.LocationPath, '/', "/", "/");
        set => SetSplit(CoapOptionNumber.LocationPath, value, '/', trimLeading: true);
    }

    /// <summary>The Location-Query options joined with '&amp;'; empty when there is none.</summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public string LocationQuery
    {
        get => JoinStrings(CoapOptionNumber.LocationQuery, '&', string.Empty, string.Empty);
        set => SetSplit(CoapOptionNumber.LocationQuery, value, '&', trimLeading: false);
    }

    /// <summary>The Uri-Host option, or null.</summary>
    public string? UriHost
    {
        get => GetString(CoapOptionNumber.UriHost);
        set => SetString(CoapOptionNumber.UriHost, value);
    }

    /// <summary>The Uri-Port option, or null.</summary>
    public ushort? UriPort
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => (ushort?)GetUInt(CoapOptionNumber.UriPort);
        set => SetUInt(CoapOptionNumber.UriPort, value);
    }

    /// <summary>The Content-Format option (see <see cref="CoapContentFormat"/>), or null.</summary>
    public ushort? ContentFormat
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => (ushort?)GetUInt(CoapOptionNumber.ContentFormat);
        set => SetUInt(CoapOptionNumber.ContentFormat, value);
    }

    /// <summary>The Accept option (see <see cref="CoapContentFormat"/>), or null.</summary>
    public ushort? Accept
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => (ushort?)GetUInt(CoapOptionNumber.Accept);
        set => SetUInt(CoapOptionNumber.Accept, value);
    }

    /// <summary>The Max-Age option in seconds, or null (which means <see cref="DefaultMaxAge"/>).</summary>
    public uint? MaxAge
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => GetUInt(CoapOptionNumber.MaxAge);
        set => SetUInt(CoapOptionNumber.MaxAge, value);
    }

    /// <summary>The Observe option (RFC 7641), a 24-bit value, or null.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value exceeds 2^24 - 1.</exception>
    public uint? Observe
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => GetUInt(CoapOptionNumber.Observe);
        set
        {
            if (value > 0xFFFFFF)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "Observe is a 24-bit value (RFC 7641 section 2).");
            }

            SetUInt(CoapOptionNumber.Observe, value);
        }
    }

    /// <summary>The Block1 option (RFC 7959), or null.</summary>
    public CoapBlock? Block1
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => MayHaveOption(CoapOptionNumber.Block1) ? GetBlock(CoapOptionNumber.Block1) : null;
        set => SetUInt(CoapOptionNumber.Block1, value?.Encoded);
    }

    /// <summary>The Block2 option (RFC 7959), or null.</summary>
    public CoapBlock? Block2
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => MayHaveOption(CoapOptionNumber.Block2) ? GetBlock(CoapOptionNumber.Block2) : null;
        set => SetUInt(CoapOptionNumber.Block2, value?.Encoded);
    }

    /// <summary>The Size1 option (RFC 7959 section 4), or null.</summary>
    public uint? Size1
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => GetUInt(CoapOptionNumber.Size1);
        set => SetUInt(CoapOptionNumber.Size1, value);
    }

    /// <summary>
    /// The No-Response option (RFC 7967 section 2): the response classes the client asks the server to
    /// suppress, or null when absent (no suppression). <see cref="CoapNoResponse.None"/> (value 0) says
    /// the client is interested in every response.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value has a bit other than 2, 8 and 16 (RFC 7967 section 2.1).</exception>
    public CoapNoResponse? NoResponse
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => MayHaveOption(CoapOptionNumber.NoResponse) && GetUIntPresent(CoapOptionNumber.NoResponse) is uint v ? (CoapNoResponse)v : null;
        set
        {
            if (value is CoapNoResponse classes && (classes & ~CoapNoResponse.All) != 0)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, "No-Response has bits 2 (2.xx), 8 (4.xx) and 16 (5.xx) only (RFC 7967 section 2.1).");
            }

            SetUInt(CoapOptionNumber.NoResponse, (uint?)value);
        }
    }

    /// <summary>The Size2 option (RFC 7959 section 4), or null.</summary>
    public uint? Size2
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => GetUInt(CoapOptionNumber.Size2);
        set => SetUInt(CoapOptionNumber.Size2, value);
    }

    /// <summary>The first ETag option, or null. A response carries at most one; a request may carry several (see <see cref="GetETags"/>).</summary>
    /// <exception cref="ArgumentException">The value is empty or longer than 8 bytes (RFC 7252 section 5.10.6).</exception>
    public ReadOnlyMemory<byte>? ETag
    {
        get => GetOpaque(CoapOptionNumber.ETag);
        set => SetOpaque(CoapOptionNumber.ETag, value, "RFC 7252 section 5.10.6");
    }

    /// <summary>
    /// The Echo option (RFC 9175 section 2.2), or null: an opaque value of 1 to 40 bytes a server sends to check a
    /// request's freshness or the client's address, and the client returns in its next request.
    /// </summary>
    /// <exception cref="ArgumentException">The value is empty or longer than 40 bytes (RFC 9175 section 2.2.1).</exception>
    public ReadOnlyMemory<byte>? Echo
    {
        get => GetOpaque(CoapOptionNumber.Echo);
        set => SetOpaque(CoapOptionNumber.Echo, value, "RFC 9175 section 2.2.1");
    }

    /// <summary>
    /// The first Request-Tag option (RFC 9175 section 3.2), or null: 0 to 8 bytes that tell apart the block-wise
    /// operations of one client on one resource. Setting it replaces every Request-Tag option; null removes them.
    /// </summary>
    /// <exception cref="ArgumentException">The value is longer than 8 bytes (RFC 9175 section 3.2.1).</exception>
    public ReadOnlyMemory<byte>? RequestTag
    {
        get => GetOpaque(CoapOptionNumber.RequestTag);
        set => SetOpaque(CoapOptionNumber.RequestTag, value, "RFC 9175 section 3.2.1");
    }

    /// <summary>True when the If-None-Match option is present with its empty value (RFC 7252 section 5.10.8.2).</summary>
    public bool IfNoneMatch
    {
        get => TryGetValid(CoapOptionNumber.IfNoneMatch, out _);
        set => SetOrRemove(CoapOptionNumber.IfNoneMatch, value ? ReadOnlyMemory<byte>.Empty : (ReadOnlyMemory<byte>?)null);
    }

    /// <summary>The Uri-Path segments, in order.</summary>
    /// <returns>The segments; empty for the root path.</returns>
    public string[] GetUriPathSegments() => GetStrings(CoapOptionNumber.UriPath);

    /// <summary>Replaces the Uri-Path with <paramref name="segments"/>, each one Uri-Path option, taken literally.</summary>
    /// <param name="segments">The segments.</param>
    /// <exception cref="ArgumentNullException"><paramref name="segments"/> or one of them is null.</exception>
    public void SetUriPathSegments(IEnumerable<string> segments)
    {
        ArgumentNullException.ThrowIfNull(segments);
        Options.RemoveAll(CoapOptionNumber.UriPath);
        foreach (string segment in segments)
        {
            Options.Add(CoapOptionNumber.UriPath, segment);
        }
    }

    /// <summary>The Uri-Query arguments, in order.</summary>
    /// <returns>The arguments; empty when there is none.</returns>
    public string[] GetUriQueryArguments() => GetStrings(CoapOptionNumber.UriQuery);

    /// <summary>Every ETag option value of valid length (1 to 8 bytes), in order.</summary>
    /// <returns>The ETags.</returns>
    public ReadOnlyMemory<byte>[] GetETags()
    {
        // RFC 7252 section 5.4.3: an ETag of invalid length is an unrecognized elective option, so it is skipped.
        List<ReadOnlyMemory<byte>>? tags = null;
        foreach (CoapOptionEntry entry in ReadOptions())
        {
            if (entry.Number == CoapOptionNumber.ETag && entry.HasValidLength)
            {
                (tags ??= []).Add(entry.Value);
            }
            else if (entry.Number > CoapOptionNumber.ETag)
            {
                break;
            }
        }

        return tags is null ? [] : [.. tags];
    }

    /// <summary>
    /// Finds the first option with <paramref name="number"/>, of any value length, without building <see cref="Options"/>:
    /// a parsed message reads its options' wire bytes, so a stage or handler that looks for an option most requests do
    /// not carry (OSCORE, Q-Block2, a custom one) costs no allocation.
    /// </summary>
    /// <param name="number">The option number.</param>
    /// <param name="entry">The option, when found.</param>
    /// <returns>True when the message has the option.</returns>
    public bool TryGetOption(CoapOptionNumber number, out CoapOptionEntry entry) => TryGetFirst(number, out entry);

    /// <summary>True when the message has at least one option with <paramref name="number"/>, read as <see cref="TryGetOption"/> reads it.</summary>
    /// <param name="number">The option number.</param>
    /// <returns>True when present.</returns>
    public bool HasOption(CoapOptionNumber number) => TryGetFirst(number, out _);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryGetValid(CoapOptionNumber number, out CoapOptionEntry entry)
    {
        if (TryGetFirst(number, out entry) && entry.HasValidLength)
        {
            return true;
        }

        entry = default;
        return false;
    }

    /// <summary>The first option with <paramref name="number"/>, read without creating the collection.</summary>
    /// <remarks>
    /// Inlined, so the common answer, a message that surely lacks the option (<see cref="MayHaveOption"/>), costs two field
    /// reads and no further call (issue 39); the unsigned and block getters make the same check in their callers.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryGetFirst(CoapOptionNumber number, out CoapOptionEntry entry)
    {
        if (!MayHaveOption(number))
        {
            entry = default;
            return false;
        }

        return TryGetFirstPresent(number, out entry);
    }

    /// <summary><see cref="TryGetFirst"/> once the option may be present: from the collection, or by walking the wire bytes.</summary>
    private bool TryGetFirstPresent(CoapOptionNumber number, out CoapOptionEntry entry)
    {
        if (_options is { } options)
        {
            return options.TryGet(number, out entry);
        }

        CoapOptionReader wire = ReadOptions();
        while (wire.MoveNext())
        {
            if (wire.Number == number)
            {
                entry = wire.Current;
                return true;
            }

            if (wire.Number > number)
            {
                break;
            }
        }

        entry = default;
        return false;
    }

    /// <summary>The bit of <paramref name="number"/> in a message's summary of its wire options (see _lowWireOptions): one for each number below 16, none above.</summary>
    internal static ushort LowOptionBit(int number) => number < 16 ? (ushort)(1 << number) : (ushort)0;

    /// <summary>False when the wire bytes surely do not hold the option (see _lowWireOptions); true when they may.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool MayHaveWireOption(CoapOptionNumber number)
        => (int)number < 16 ? (_lowWireOptions & LowOptionBit((int)number)) != 0 : (int)number <= _lastWireOption || _lastWireOption == byte.MaxValue;

    /// <summary>The values of every option with <paramref name="number"/> as UTF-8 strings, read without creating the collection.</summary>
    private string[] GetStrings(CoapOptionNumber number)
    {
        if (_options is { } options)
        {
            return options.GetStrings(number);
        }

        if (!MayHaveWireOption(number))
        {
            return [];
        }

        int count = 0;
        foreach (CoapOptionEntry option in ReadOptions())
        {
            if (option.Number == number)
            {
                count++;
            }
            else if (option.Number > number)
            {
                break;
            }
        }

        if (count == 0)
        {
            return [];
        }

        string[] strings = new string[count];
        int i = 0;
        foreach (CoapOptionEntry option in ReadOptions())
        {
            if (option.Number == number)
            {
                strings[i++] = option.GetString();
                if (i == count)
                {
                    break;
                }
            }
        }

        return strings;
    }

    /// <summary>
    /// An unsigned option's value, or null. Inlined with its getter into the caller, so a request that surely lacks the
    /// option answers without a call: the stages read Block1, Block2, Observe, Accept and No-Response of every request,
    /// and a call each (with its frame and its nullable result zeroed) was 2.6 % of a pipelined TCP request (issue 39).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private uint? GetUInt(CoapOptionNumber number) => MayHaveOption(number) ? GetUIntPresent(number) : null;

    /// <summary><see cref="GetUInt"/> once the option may be present; kept out of line so the callers stay small.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private uint? GetUIntPresent(CoapOptionNumber number)
        => TryGetValid(number, out CoapOptionEntry e) && e.TryGetUInt(out uint v) ? v : null;

    /// <summary>A Block1 or Block2 option (RFC 7959 section 2.2) once it may be present.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private CoapBlock? GetBlock(CoapOptionNumber number) => GetUIntPresent(number) is uint v ? CoapBlock.FromEncoded(v) : null;

    /// <summary>False when the message surely lacks the option: no option collection yet, and its wire bytes' summary rules it out.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool MayHaveOption(CoapOptionNumber number) => _options is not null || MayHaveWireOption(number);

    private string? GetString(CoapOptionNumber number)
        => TryGetValid(number, out CoapOptionEntry e) ? e.GetString() : null;

    private void SetUInt(CoapOptionNumber number, uint? value)
        => SetOrRemove(number, value is uint v ? UIntCodec.Encode(v) : (ReadOnlyMemory<byte>?)null);

    private void SetString(CoapOptionNumber number, string? value)
        => SetOrRemove(number, value is null ? (ReadOnlyMemory<byte>?)null : System.Text.Encoding.UTF8.GetBytes(value));

    // One occurrence of the option with this value, or none (null); removing creates no collection. A bare null
    // in a conditional converts through byte[] to an empty ReadOnlyMemory, not to null: callers cast it explicitly.
    // The cast matters: a bare null converts to ReadOnlyMemory<byte> (through byte[]) and would read as an empty value.
    private ReadOnlyMemory<byte>? GetOpaque(CoapOptionNumber number)
        => TryGetValid(number, out CoapOptionEntry e) ? e.Value : (ReadOnlyMemory<byte>?)null;

    /// <summary>Sets (or, for null, removes) an opaque option after checking its registered length bounds, which <paramref name="source"/> states.</summary>
    private void SetOpaque(CoapOptionNumber number, ReadOnlyMemory<byte>? value, string source)
    {
        if (value is { } v && !CoapOptionDefinition.IsValidLength(number, v.Length))
        {
            CoapOptionDefinition.TryGet(number, out CoapOptionDefinition? d);
            throw new ArgumentException($"{d!.Name} holds {d.MinLength} to {d.MaxLength} bytes ({source}).", nameof(value));
        }

        SetOrRemove(number, value);
    }

    private void SetOrRemove(CoapOptionNumber number, ReadOnlyMemory<byte>? value)
    {
        if (value is { } v)
        {
            Options.Set(number, v);
        }
        else if (TryGetFirst(number, out _))
        {
            Options.RemoveAll(number);
        }
    }

    private string JoinStrings(CoapOptionNumber number, char separator, string prefix, string whenAbsent)
    {
        string[] parts = GetStrings(number);
        return parts.Length == 0 ? whenAbsent : prefix + string.Join(separator, parts);
    }

    private void SetSplit(CoapOptionNumber number, string value, char separator, bool trimLeading)
    {
        ArgumentNullException.ThrowIfNull(value);
        Options.RemoveAll(number);
        string rest = trimLeading && value.Length > 0 && value[0] == separator ? value[1..] : value;
        if (rest.Length == 0)
        {
            return;
        }

        foreach (string part in rest.Split(separator))
        {
            Options.Add(number, part);
        }
    }
}
