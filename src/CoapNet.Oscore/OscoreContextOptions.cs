namespace CoapNet.Oscore;

/// <summary>
/// The input parameters of an OSCORE security context (RFC 8613 section 3.2): what both endpoints agreed on beforehand.
/// From them <see cref="OscoreContext"/> derives the keys and the Common IV. One endpoint's Sender ID is the other's
/// Recipient ID.
/// </summary>
public sealed class OscoreContextOptions
{
    /// <summary>The Master Secret: at least 16 random bytes, shared by the two endpoints only (RFC 8613 section 12.3).</summary>
    public byte[] MasterSecret { get; set; } = [];

    /// <summary>The Master Salt; empty by default (RFC 8613 section 3.1).</summary>
    public byte[] MasterSalt { get; set; } = [];

    /// <summary>This endpoint's Sender ID (may be empty, at most 7 bytes with AES-CCM-16-64-128), the 'kid' of its requests.</summary>
    public byte[] SenderId { get; set; } = [];

    /// <summary>The other endpoint's Sender ID, this endpoint's Recipient ID (at most 7 bytes; different from <see cref="SenderId"/>).</summary>
    public byte[] RecipientId { get; set; } = [];

    /// <summary>The ID Context, or null for none (RFC 8613 section 3.1; an empty one is not the same as none).</summary>
    public byte[]? IdContext { get; set; }

    /// <summary>
    /// True to send the ID Context as 'kid context' in each request (RFC 8613 section 5.1), so a server that holds several
    /// contexts with one Recipient ID tells them apart. False by default.
    /// </summary>
    public bool SendIdContext { get; set; }

    /// <summary>
    /// Keeps the Sender Sequence Number across restarts (RFC 8613 section 7.5.1), so that no nonce is used twice; null
    /// keeps it in memory only, which is safe only for a context that is never used again after a restart.
    /// </summary>
    public IOscoreSequenceStore? SequenceStore { get; set; }

    /// <summary>
    /// False when this endpoint may have accepted requests under the context before and no longer knows which: a server
    /// that restarted without its replay window. It then processes no request until one proves fresh: it answers the first
    /// with a protected 4.01 carrying an Echo value, and the request repeated with that value starts the window, from
    /// which on nothing older is accepted (RFC 8613 Appendix B.1.2; our client repeats it by itself). True by default, for
    /// a new context. A <see cref="SequenceStore"/> holding a number from an earlier run makes the window unknown too.
    /// </summary>
    public bool ReplayWindowKnown { get; set; } = true;
}
