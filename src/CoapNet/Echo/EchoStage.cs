using System.Buffers.Binary;
using System.Net;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Freshness;

/// <summary>
/// The Echo option (RFC 9175 section 2) as one stage on both sides. On a server with <see cref="EchoOptions"/> enabled,
/// an unsafe request from a peer not verified within the freshness window is answered 4.01 Unauthorized with a fresh
/// Echo value instead of being processed (section 2.3), a request returning a good value verifies its peer, and over
/// UDP a response more than three times its request's size to an unverified peer is replaced by such a challenge
/// (section 2.4, item 3). On a client, a 4.01 carrying Echo is answered by repeating the request once with that value
/// (section 2.3); the caller sees the answer to the repetition only.
/// </summary>
/// <remarks>
/// An Echo value is 16 bytes: the server clock's timestamp when it was made (8 bytes, big-endian) and the first 8 bytes
/// of an HMAC-SHA256 under a random key of this stage over that timestamp and the peer's address and port (RFC 9175
/// appendix A, method 2). The server keeps no state per challenge, a value is good only from the address it was sent
/// to (what the amplification mitigation needs), and a restart makes every earlier value bad (the key is new; section
/// 2.3). The only state is the set of verified peers, bounded by <see cref="EchoOptions.MaxVerifiedPeers"/>, and only a
/// peer that returned a good value, so received at its address, can enter it.
/// </remarks>
internal sealed class EchoStage : CoapStage
{
    private const int TimestampLength = 8;
    private const int MacLength = 8;
    private const int MaxSchemeLength = 9;
    private const int ValueLength = TimestampLength + MacLength;

    // RFC 7252 section 5.3.1 and RFC 9175 section 2.4, item 3: "more than three times the size of the request".
    private const int AmplificationFactor = 3;

    private readonly EchoOptions _options;
    private readonly TimeProvider _time;
    private readonly long _window;
    private byte[]? _key;
    private readonly object _gate = new();

    // By peer and address: a DTLS session that its Connection ID moved is the same peer (RFC 9146), but its new address
    // has not shown that it receives there (RFC 9146 section 6, RFC 9175 section 2.4) until it returns an Echo value.
    private readonly Dictionary<CoapPeer, long> _verified = new(AddressedPeers.Instance);

    /// <param name="options">What the server requires; a client endpoint passes its (disabled) defaults.</param>
    /// <param name="time">The endpoint's clock: Echo values carry its timestamps.</param>
    public EchoStage(EchoOptions options, TimeProvider time)
    {
        _options = options;
        _time = time;
        _window = (long)(options.FreshnessWindow.TotalSeconds * time.TimestampFrequency);
    }

    /// <summary>
    /// The MAC key, made on first use: drawing it loads the platform's cryptography library (about 5 MB of a server's
    /// resident memory, measured with the sample server), which an endpoint that never challenges does not need.
    /// </summary>
    private byte[] Key => Volatile.Read(ref _key) ?? Interlocked.CompareExchange(ref _key, RandomNumberGenerator.GetBytes(32), null) ?? _key!;

    /// <summary>The number of verified peers remembered.</summary>
    public int VerifiedCount
    {
        get
        {
            lock (_gate)
            {
                return _verified.Count;
            }
        }
    }

    /// <inheritdoc/>
    /// <remarks>
    /// With freshness and the amplification mitigation both off (the default) it passes everything a server receives and
    /// sends; over a connection the mitigation has nothing to limit (RFC 9175 section 2.4, item 3: the handshake verified
    /// the address), so responses pass it by.
    /// </remarks>
    internal override ServerPaths UsedServerPaths(bool reliable)
        => (_options.Enabled ? ServerPaths.Requests : ServerPaths.None)
            | (_options.LimitAmplification && !reliable ? ServerPaths.Responses : ServerPaths.None);

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        if (!_options.Enabled)
        {
            next(exchange);
            return;
        }

        CoapMessage request = exchange.RequestAt(this);
        CoapPeer peer = exchange.Peer;
        long now = _time.GetTimestamp();

        // RFC 9175 section 2.3: a request with a good Echo value is fresh and its peer has shown it receives at its
        // address. A value that is stale, forged or from another address counts as none: the request is challenged
        // again when it needs to be, and processed as usual when it does not.
        if (request.HasOptions && request.Echo is { } echo && TryVerify(echo.Span, peer, now, out long madeAt))
        {
            Remember(peer, madeAt, now);
            next(exchange);
            return;
        }

        // Section 2.4, item 1: an unsafe method acts, so it must be fresh. With the amplification mitigation an unsafe
        // request from an unproven UDP address is challenged before it acts too: replacing its response afterwards
        // (section 2.4, item 3) would make the client's repetition act a second time.
        bool needsProof = !IsSafe(request.Code)
            && (_options.RequireFreshness || (_options.LimitAmplification && !exchange.IsReliable));
        if (needsProof && !IsVerified(peer, now))
        {
            exchange.RespondFrom(this, Challenge(peer, now));
            return;
        }

        next(exchange);
    }

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        // RFC 9175 section 2.4, item 3 (and section 2.6, updating RFC 7252 section 11.3): over UDP a server verifies the
        // client's address before sending it more than three times what it received. Over a connection the handshake
        // has done that. Observe registrations and notifications (whose exchange carries the registering request) are left
        // out: a 4.01 in place of a registration's response would leave the observer registered above this stage, and our
        // client does not repeat a registration.
        if (!_options.LimitAmplification || exchange.IsReliable || response.Code == CoapCode.Unauthorized
            || exchange.RequestAt(this).Observe is not null)
        {
            next(exchange, response);
            return;
        }

        CoapMessage request = exchange.RequestAt(this);
        int tokenLength = request.Token.Length;

        // The request as it is now: after block-wise joined an upload, its whole body, which the client did send.
        long requestSize = Serialization.CoapMessageSerializer.Udp.GetSerializedLength(request, tokenLength);
        if (Serialization.CoapMessageSerializer.Udp.GetSerializedLength(response, tokenLength) <= AmplificationFactor * requestSize)
        {
            next(exchange, response);
            return;
        }

        // A request with a good value was fresh even when the bound on verified peers kept its peer out of the set.
        long now = _time.GetTimestamp();
        if (IsVerified(exchange.Peer, now) || (request.Echo is { } echo && TryVerify(echo.Span, exchange.Peer, now, out _)))
        {
            next(exchange, response);
            return;
        }

        // Only safe requests get here unverified (ReceiveRequest challenged the unsafe ones), so the client's repetition
        // with the Echo value runs the handler again without acting twice.
        next(exchange, Challenge(exchange.Peer, now));
    }

    /// <inheritdoc/>
    public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        // RFC 9175 section 2.3: a 4.01 with Echo asks for the request again with that value. The repetition is a follow-up
        // through the stages below this one, and its response goes to the caller whatever it is: one repetition per
        // request, never a loop. An Observe registration is not repeated: its notifications would come for the
        // repetition's token, which a follow-up does not keep; its caller sees the 4.01.
        if (response.Code != CoapCode.Unauthorized || !response.HasOptions || response.Echo is not { } echo
            || call.RequestAt(this).Observe is not null)
        {
            next(call, response);
            return;
        }

        CoapMessage again = call.RequestAt(this).CopyWithout(CoapOptionNumber.Echo);

        // A new token (section 2.3 allows it; the exchange layer draws one): the challenged request's is still in use.
        again.Token = default;
        again.Echo = echo;
        call.SendFollowUp(this, again, answer => next(call, answer));
    }

    /// <inheritdoc/>
    public override void OnPeerLost(CoapPeer peer)
    {
        lock (_gate)
        {
            _verified.Remove(peer);
        }
    }

    /// <summary>GET and FETCH are safe (RFC 7252 section 5.8, RFC 8132 section 2); POST, PUT, DELETE, PATCH and iPATCH act.</summary>
    internal static bool IsSafe(CoapCode code) => code == CoapCode.Get || code == CoapCode.Fetch;

    /// <summary>A 4.01 Unauthorized with a fresh Echo value for <paramref name="peer"/> (RFC 9175 section 2.3), small enough not to amplify.</summary>
    /// <remarks>
    /// Not inlined, nor is <see cref="TryVerify"/>: each reaches the platform's cryptography, and inlined into the request
    /// path they made compiling it (at tier 1, under load) load System.Security.Cryptography, about 1 MB of resident
    /// memory, in every server, Echo enabled or not (issue 25).
    /// </remarks>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private CoapMessage Challenge(CoapPeer peer, long now)
    {
        byte[] value = new byte[ValueLength];
        BinaryPrimitives.WriteInt64BigEndian(value, now);
        Mac(value.AsSpan(0, TimestampLength), peer, value.AsSpan(TimestampLength, MacLength));
        CoapMessage challenge = new() { Code = CoapCode.Unauthorized };
        challenge.Echo = value;
        return challenge;
    }

    /// <summary>True when <paramref name="echo"/> is a value this stage made for <paramref name="peer"/> within the window.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool TryVerify(ReadOnlySpan<byte> echo, CoapPeer peer, long now, out long madeAt)
    {
        madeAt = 0;
        if (echo.Length != ValueLength)
        {
            return false;
        }

        Span<byte> expected = stackalloc byte[MacLength];
        Mac(echo[..TimestampLength], peer, expected);
        if (!CryptographicOperations.FixedTimeEquals(expected, echo[TimestampLength..]))
        {
            return false;
        }

        madeAt = BinaryPrimitives.ReadInt64BigEndian(echo);
        return madeAt <= now && now - madeAt <= _window;
    }

    /// <summary>The first <see cref="MacLength"/> bytes of HMAC-SHA256(key, timestamp | address | port), without allocating.</summary>
    private void Mac(ReadOnlySpan<byte> timestamp, CoapPeer peer, Span<byte> destination)
    {
        // Timestamp, an IPv6 address at most, a port and the transport's scheme (ASCII, "coaps+tcp" at most): 8 + 16 + 2 + 9
        // bytes, so an Echo value made for one transport is not accepted on another from the same address.
        Span<byte> input = stackalloc byte[TimestampLength + 16 + 2 + MaxSchemeLength];
        timestamp.CopyTo(input);
        IPEndPoint endPoint = peer.EndPoint;
        endPoint.Address.TryWriteBytes(input[TimestampLength..], out int written);
        int length = TimestampLength + written;
        BinaryPrimitives.WriteUInt16BigEndian(input[length..], (ushort)endPoint.Port);
        length += 2;
        length += System.Text.Encoding.ASCII.GetBytes(peer.Scheme.AsSpan(0, Math.Min(peer.Scheme.Length, MaxSchemeLength)), input[length..]);
        Span<byte> hash = stackalloc byte[HMACSHA256.HashSizeInBytes];
        HMACSHA256.HashData(Key, input[..length], hash);
        hash[..destination.Length].CopyTo(destination);
    }

    private bool IsVerified(CoapPeer peer, long now)
    {
        lock (_gate)
        {
            return _verified.TryGetValue(peer, out long madeAt) && now - madeAt <= _window;
        }
    }

    /// <summary>Remembers <paramref name="peer"/> as verified by a value made at <paramref name="madeAt"/>; bounded, see <see cref="EchoOptions.MaxVerifiedPeers"/>.</summary>
    private void Remember(CoapPeer peer, long madeAt, long now)
    {
        lock (_gate)
        {
            if (_verified.TryGetValue(peer, out long known))
            {
                _verified[peer] = Math.Max(known, madeAt);
                return;
            }

            if (_verified.Count >= _options.MaxVerifiedPeers)
            {
                // Full: drop the peers whose window has passed (at most once per peer verified past the bound).
                List<CoapPeer>? expired = null;
                foreach (KeyValuePair<CoapPeer, long> pair in _verified)
                {
                    if (now - pair.Value > _window)
                    {
                        (expired ??= []).Add(pair.Key);
                    }
                }

                if (expired is null)
                {
                    // Still full of live peers: this one is not remembered, and is challenged again when it needs to be.
                    return;
                }

                foreach (CoapPeer gone in expired)
                {
                    _verified.Remove(gone);
                }
            }

            _verified[peer] = madeAt;
        }
    }

    /// <summary>
    /// Peers equal as <see cref="CoapPeer"/>s are and at the same address. Entries a lost session left at its earlier
    /// addresses are dropped as they expire, within <see cref="EchoOptions.MaxVerifiedPeers"/>.
    /// </summary>
    private sealed class AddressedPeers : IEqualityComparer<CoapPeer>
    {
        public static readonly AddressedPeers Instance = new();

        public bool Equals(CoapPeer? x, CoapPeer? y) => x is null ? y is null : x.Equals(y) && x.EndPoint.Equals(y!.EndPoint);

        public int GetHashCode(CoapPeer peer) => HashCode.Combine(peer, peer.EndPoint);
    }
}
