namespace CoapNet.Oscore;

/// <summary>What <see cref="OscoreContext.Accept"/> made of a verified request's Partial IV.</summary>
internal enum ReplayCheck
{
    /// <summary>Fresh: process the request.</summary>
    Accepted,

    /// <summary>Seen before, or older than the window: refuse it (4.01, RFC 8613 section 8.2).</summary>
    Replay,

    /// <summary>The window is unknown: answer a protected 4.01 with the Echo value, without processing (Appendix B.1.2).</summary>
    Challenge,
}
