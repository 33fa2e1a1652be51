using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Oscore.Cose;

namespace CoapNet.Oscore;

/// <summary>
/// An OSCORE security context (RFC 8613 section 3): the Common Context (Common IV, algorithms, ID Context), this
/// endpoint's Sender Context (Sender ID, Sender Key, Sender Sequence Number) and its Recipient Context for the other
/// endpoint (Recipient ID, Recipient Key, replay window), derived once from <see cref="OscoreContextOptions"/>.
/// </summary>
/// <remarks>
/// Thread-safe: requests and responses of several exchanges use it at once. A context belongs to one pair of endpoints;
/// two servers, or two clients, never share one (RFC 8613 section 3.3), and it must not be used again after a restart
/// unless its <see cref="OscoreContextOptions.SequenceStore"/> keeps the sequence number.
/// </remarks>
public sealed class OscoreContext
{
    /// <summary>How many sequence numbers a store reserves at once (K_SSN, RFC 8613 section 7.5.1).</summary>
    internal const long ReservationStep = 100;

    private readonly object _senderLock = new();
    private readonly object _recipientLock = new();
    /// <summary>The Replay Window's size (RFC 8613 section 7.4).</summary>
    private const int ReplayWindowSize = 32;

    private readonly IOscoreSequenceStore? _store;

    // The Recipient Context's replay window (section 7.4), guarded by _recipientLock: null while unknown (Appendix B.1.2),
    // until a verified request echoes _echo, the value this endpoint last sent in a 4.01 for that purpose.
    private CoapReplayWindow? _window;
    private byte[]? _echo;
    private long _sequenceNumber;
    private long _reservedUntil;

    /// <summary>Derives the context from its parameters (RFC 8613 section 3.2.1).</summary>
    /// <param name="options">The Master Secret and Salt, the two IDs and any ID Context.</param>
    /// <exception cref="ArgumentException">The Master Secret is empty, an ID is longer than 7 bytes, or the two IDs are equal.</exception>
    /// <exception cref="PlatformNotSupportedException">This platform has no AES-CCM (<see cref="AesCcm.IsSupported"/>).</exception>
    public OscoreContext(OscoreContextOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (options.MasterSecret is not { Length: > 0 })
        {
            throw new ArgumentException("An OSCORE context needs a Master Secret (RFC 8613 section 3.1).", nameof(options));
        }

        if (options.SenderId is null || options.RecipientId is null || options.MasterSalt is null)
        {
            throw new ArgumentException("The Sender ID, Recipient ID and Master Salt may be empty, not null.", nameof(options));
        }

        if (options.SenderId.Length > OscoreAlgorithm.MaxIdLength || options.RecipientId.Length > OscoreAlgorithm.MaxIdLength)
        {
            throw new ArgumentException($"Sender and Recipient IDs are at most {OscoreAlgorithm.MaxIdLength} bytes with AES-CCM-16-64-128 (RFC 8613 section 3.3).", nameof(options));
        }

        if (options.SenderId.AsSpan().SequenceEqual(options.RecipientId))
        {
            throw new ArgumentException("The Sender ID and the Recipient ID must differ (RFC 8613 section 3.3).", nameof(options));
        }

        if (!AesCcm.IsSupported)
        {
            throw new PlatformNotSupportedException("OSCORE needs AES-CCM, which this platform's cryptography does not provide.");
        }

        SenderId = options.SenderId.ToArray();
        RecipientId = options.RecipientId.ToArray();
        IdContext = options.IdContext?.ToArray();
        SendsIdContext = options.SendIdContext && IdContext is not null;
        SenderKey = OscoreAlgorithm.Derive(options.MasterSecret, options.MasterSalt, options.SenderId, IdContext, "Key", OscoreAlgorithm.KeyLength);
        RecipientKey = OscoreAlgorithm.Derive(options.MasterSecret, options.MasterSalt, options.RecipientId, IdContext, "Key", OscoreAlgorithm.KeyLength);
        CommonIv = OscoreAlgorithm.Derive(options.MasterSecret, options.MasterSalt, [], IdContext, "IV", OscoreAlgorithm.NonceLength);
        Sealer = new AesCcm(SenderKey);
        Opener = new AesCcm(RecipientKey);
        PeerIdentity = IdContext is null ? CoapPeerIdentity.FromOscore(options.RecipientId) : CoapPeerIdentity.FromOscore(options.RecipientId, IdContext);
        PeerSecurityContext = new CoapSecurityContext("OSCORE", PeerIdentity);
        _store = options.SequenceStore;
        if (_store is not null)
        {
            _sequenceNumber = _store.Load();
            if (_sequenceNumber is < 0 or > OscoreAlgorithm.MaxSequenceNumber)
            {
                throw new ArgumentException($"The sequence store holds {_sequenceNumber}, which is no Sender Sequence Number (0 to 2^40 - 1).", nameof(options));
            }

            _reservedUntil = _sequenceNumber;
        }

        // Appendix B.1.2: a context that sent messages in an earlier run (its store holds a number past 0) may have
        // accepted requests then too, which a window made now would take again.
        bool usedBefore = _sequenceNumber > 0;
        _window = options.ReplayWindowKnown && !usedBefore ? new CoapReplayWindow(ReplayWindowSize) : null;
    }

    /// <summary>This endpoint's Sender ID.</summary>
    public ReadOnlyMemory<byte> SenderId { get; }

    /// <summary>The other endpoint's Sender ID: this endpoint's Recipient ID.</summary>
    public ReadOnlyMemory<byte> RecipientId { get; }

    /// <summary>The ID Context, or null for none.</summary>
    public byte[]? IdContext { get; }

    /// <summary>The identity the other endpoint has once a message of its verified: "oscore:" and its kid in hexadecimal, after the ID Context where there is one.</summary>
    public CoapPeerIdentity PeerIdentity { get; }

    /// <summary>The next Sender Sequence Number this endpoint will use.</summary>
    public long SenderSequenceNumber
    {
        get
        {
            lock (_senderLock)
            {
                return _sequenceNumber;
            }
        }
    }

    /// <summary>True when requests carry the ID Context as 'kid context'.</summary>
    internal bool SendsIdContext { get; }

    internal byte[] SenderKey { get; }

    internal byte[] RecipientKey { get; }

    internal byte[] CommonIv { get; }

    /// <summary>Encrypts with the Sender Key; used under <see cref="Sealer"/>'s own lock.</summary>
    internal AesCcm Sealer { get; }

    /// <summary>Decrypts with the Recipient Key; used under <see cref="Opener"/>'s own lock.</summary>
    internal AesCcm Opener { get; }

    /// <summary>What the server's handlers see of a peer that used this context: one object, so peers compare equal across requests.</summary>
    internal CoapSecurityContext PeerSecurityContext { get; }

    /// <summary>
    /// Takes the next Sender Sequence Number (RFC 8613 section 7.2.1), reserving a range ahead in the store first when it
    /// has one (section 7.5.1).
    /// </summary>
    /// <exception cref="InvalidOperationException">The numbers are used up: the context must be renewed (section 7.2.1); or the store cannot reserve more.</exception>
    internal long NextSequenceNumber()
    {
        lock (_senderLock)
        {
            long number = _sequenceNumber;
            if (number > OscoreAlgorithm.MaxSequenceNumber)
            {
                throw new InvalidOperationException("The OSCORE context has used every Sender Sequence Number (2^40); a new context is needed (RFC 8613 section 7.2.1).");
            }

            if (_store is not null && number >= _reservedUntil)
            {
                // Durable before the number is used: a crash after this line resumes at the reserved limit (section 7.5.1).
                // The limit moves only once the store has it, so a failed write leaves nothing sent unreserved.
                long limit = Math.Min(number + ReservationStep, OscoreAlgorithm.MaxSequenceNumber + 1);
                try
                {
                    _store.Reserve(limit);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    throw new InvalidOperationException($"The OSCORE context cannot reserve sequence numbers, so nothing is sent under it: {e.Message}", e);
                }

                _reservedUntil = limit;
            }

            _sequenceNumber = number + 1;
            return number;
        }
    }

    /// <summary>
    /// True when <paramref name="partialIv"/> is not a replay (RFC 8613 section 7.4); checked before decryption. While the
    /// window is unknown (Appendix B.1.2) any number may be fresh: <see cref="Accept"/> decides once the request verified.
    /// </summary>
    internal bool IsFresh(long partialIv)
    {
        lock (_recipientLock)
        {
            return _window?.IsFresh(partialIv) ?? true;
        }
    }

    /// <summary>
    /// Accepts <paramref name="partialIv"/> after its request verified, unless another copy of it got in first. While the
    /// replay window is unknown (RFC 8613 Appendix B.1.2) it accepts only a request that echoes the value of the last
    /// challenge, and starts the window at its Partial IV, so that nothing sent before it is accepted; any other request is
    /// not processed and gets <paramref name="challenge"/>, the Echo value to answer it with in a protected 4.01.
    /// </summary>
    /// <param name="partialIv">The request's Partial IV as a number.</param>
    /// <param name="echo">The request's (inner) Echo option, or null.</param>
    /// <param name="challenge">The Echo value to send when the result is <see cref="ReplayCheck.Challenge"/>.</param>
    /// <returns>Whether the request is accepted, a replay, or to be challenged.</returns>
    internal ReplayCheck Accept(long partialIv, ReadOnlyMemory<byte>? echo, out byte[]? challenge)
    {
        challenge = null;
        lock (_recipientLock)
        {
            if (_window is { } window)
            {
                if (!window.IsFresh(partialIv))
                {
                    return ReplayCheck.Replay;
                }

                window.Accept(partialIv);
                return ReplayCheck.Accepted;
            }

            if (echo is { } echoed && _echo is { } sent && echoed.Span.SequenceEqual(sent))
            {
                // Appendix B.1.2, step 3: this request is fresh, and it is the oldest this context accepts from now on.
                _window = new CoapReplayWindow(ReplayWindowSize, partialIv);
                _echo = null;
                return ReplayCheck.Accepted;
            }

            // One value until a request echoes it: every request in flight meanwhile is challenged with the same.
            challenge = _echo ??= RandomNumberGenerator.GetBytes(EchoLength);
            return ReplayCheck.Challenge;
        }
    }

    /// <summary>The length of the Echo values of Appendix B.1.2: 8 random bytes, which no one can guess (RFC 9175 section 2.2).</summary>
    private const int EchoLength = 8;
}
