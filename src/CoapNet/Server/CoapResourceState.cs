namespace CoapNet.Server;

/// <summary>
/// What a resource is now, as conditional requests see it (RFC 7252 section 5.10.8): whether it has a current
/// representation, and that representation's entity-tag (section 5.10.6) when it has one. A route gives it with
/// <see cref="CoapRouteBuilder.WithState(Func{CoapRequest, CoapResourceState?})"/>, a resource class with
/// <see cref="CoapResource.GetState(CoapRequest)"/>; the server then answers If-Match and If-None-Match with 4.12
/// Precondition Failed when they do not hold, and a GET whose ETag is the current one with 2.03 Valid.
/// </summary>
public readonly struct CoapResourceState : IEquatable<CoapResourceState>
{
    private readonly byte[]? _etag;

    private CoapResourceState(bool exists, byte[]? etag, uint? maxAge)
    {
        Exists = exists;
        _etag = etag;
        MaxAge = maxAge;
    }

    /// <summary>The resource has no current representation: If-Match fails, If-None-Match holds.</summary>
    public static CoapResourceState Missing => default;

    /// <summary>The resource has a current representation whose entity-tag is not known: an empty If-Match holds, one with an ETag fails, If-None-Match fails.</summary>
    public static CoapResourceState Present => new(exists: true, etag: null, maxAge: null);

    /// <summary>True when the resource has a current representation.</summary>
    public bool Exists { get; }

    /// <summary>The current representation's entity-tag (1 to 8 bytes), or null when it has none or the resource is missing.</summary>
    // The cast matters: a null array converts to an empty ReadOnlyMemory, which would read as an ETag of no bytes.
    public ReadOnlyMemory<byte>? ETag => _etag is null ? null : (ReadOnlyMemory<byte>?)_etag;

    /// <summary>
    /// The Max-Age a 2.03 Valid answer carries (RFC 7252 section 5.9.1.3: a cache refreshes its stored response with it,
    /// and without one takes the default of 60 seconds); null for none.
    /// </summary>
    public uint? MaxAge { get; }

    /// <summary>The resource has a current representation with entity-tag <paramref name="etag"/>.</summary>
    /// <param name="etag">The entity-tag, 1 to 8 bytes (RFC 7252 section 5.10.6); copied.</param>
    /// <param name="maxAge">The Max-Age of a 2.03 Valid answer (the freshness the representation's 2.05 would carry), or null for the default of 60 seconds.</param>
    /// <returns>The state.</returns>
    /// <exception cref="ArgumentException"><paramref name="etag"/> is empty or longer than 8 bytes.</exception>
    public static CoapResourceState WithETag(ReadOnlySpan<byte> etag, uint? maxAge = null)
    {
        if (etag.Length is < 1 or > 8)
        {
            throw new ArgumentException($"An ETag holds 1 to 8 bytes (RFC 7252 section 5.10.6); this one has {etag.Length}.", nameof(etag));
        }

        return new CoapResourceState(exists: true, etag.ToArray(), maxAge);
    }

    /// <summary>Compares two states: existence, entity-tag bytes and Max-Age.</summary>
    /// <param name="left">A state.</param>
    /// <param name="right">Another.</param>
    /// <returns>True when they are equal.</returns>
    public static bool operator ==(CoapResourceState left, CoapResourceState right) => left.Equals(right);

    /// <summary>Compares two states.</summary>
    /// <param name="left">A state.</param>
    /// <param name="right">Another.</param>
    /// <returns>True when they differ.</returns>
    public static bool operator !=(CoapResourceState left, CoapResourceState right) => !left.Equals(right);

    /// <inheritdoc/>
    public bool Equals(CoapResourceState other)
        => Exists == other.Exists && MaxAge == other.MaxAge && _etag.AsSpan().SequenceEqual(other._etag) && (_etag is null) == (other._etag is null);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is CoapResourceState other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode()
    {
        HashCode hash = default;
        hash.Add(Exists);
        hash.Add(MaxAge);
        hash.AddBytes(_etag);
        return hash.ToHashCode();
    }

    /// <summary>"missing", "present", or "present, ETag 0A0B".</summary>
    /// <returns>The text.</returns>
    public override string ToString() => !Exists ? "missing" : _etag is null ? "present" : "present, ETag " + Convert.ToHexString(_etag);

    /// <summary>True when <paramref name="etag"/> is this state's entity-tag.</summary>
    internal bool Matches(ReadOnlySpan<byte> etag) => _etag is not null && etag.SequenceEqual(_etag);
}
