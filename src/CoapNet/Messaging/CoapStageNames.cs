namespace CoapNet.Messaging;

/// <summary>
/// The names of the built-in stages, from the application down, to place a stage of your own relative to them
/// (<see cref="CoapStagePosition.Above"/>, <see cref="CoapStagePosition.Below"/>). Each name is taken on every endpoint,
/// even where its stage is off (Q-Block unless enabled): a stage placed by it sits where that stage would.
/// </summary>
public static class CoapStageNames
{
    /// <summary>Q-Block1 and Q-Block2 (RFC 9177), first when enabled: it sees whole bodies before block-wise would cut them.</summary>
    public const string QBlock = "QBlock";

    /// <summary>Block-wise transfer (RFC 7959, BERT RFC 8323 section 6): joins and splits bodies; Request-Tag on uploads (RFC 9175 section 3).</summary>
    public const string Blockwise = "Blockwise";

    /// <summary>Observe (RFC 7641): registers observers and numbers notifications; drops stale notifications on a client.</summary>
    public const string Observe = "Observe";

    /// <summary>No-Response (RFC 7967): drops declined responses; completes a client call that expects none on delivery.</summary>
    public const string NoResponse = "NoResponse";

    /// <summary>Echo (RFC 9175 section 2), last, nearest the wire: freshness and amplification mitigation.</summary>
    public const string Echo = "Echo";
}
