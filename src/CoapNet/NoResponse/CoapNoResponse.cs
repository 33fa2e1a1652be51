namespace CoapNet.NoResponse;

/// <summary>
/// The value of the No-Response option (258, RFC 7967): the classes of response a client says it is
/// not interested in, so that a server may suppress them (section 2.1). Values combine with OR;
/// <see cref="All"/> (26) asks for no response at all.
/// </summary>
/// <remarks>
/// Set it on a request with <see cref="Messages.CoapMessage.NoResponse"/>. A request carrying
/// <see cref="All"/> completes once it is delivered (a NON sent, a CON acknowledged) instead of awaiting
/// a response: the client returns a response whose <see cref="Messages.CoapResponse.IsSuppressed"/> is
/// true. A request that suppresses only some classes waits as usual, and its response timeout says
/// which classes it suppressed.
/// </remarks>
[Flags]
public enum CoapNoResponse : byte
{
    /// <summary>Value 0: the client is interested in every response, nothing is suppressed (RFC 7967 section 2.1).</summary>
    None = 0,

    /// <summary>Value 2: not interested in 2.xx success responses.</summary>
    Success = 2,

    /// <summary>Value 8: not interested in 4.xx client error responses.</summary>
    ClientError = 8,

    /// <summary>Value 16: not interested in 5.xx server error responses.</summary>
    ServerError = 16,

    /// <summary>Value 26: not interested in any response (2.xx, 4.xx and 5.xx).</summary>
    All = Success | ClientError | ServerError,
}
