namespace CoapNet.Messages;

/// <summary>
/// The one list of critical options every endpoint of this library recognizes (RFC 7252 section 5.4.1): the
/// server's request check and the client's response check both read it, so they cannot disagree.
/// </summary>
internal static class RecognizedOptions
{
    /// <summary>
    /// True for the critical options of RFC 7252 section 5.10 (all of them request options; Proxy-Uri and
    /// Proxy-Scheme are recognized so that a server can answer them with 5.05 instead of 4.02) and for Block1 and
    /// Block2 (RFC 7959), which the block-wise stage joins and splits or, for a handler that takes blocks itself,
    /// passes up. A stage that processes another critical option says so through <c>CoapStage.Processes</c>.
    /// </summary>
    /// <param name="number">A critical option number.</param>
    /// <returns>True when the library knows what the option means.</returns>
    public static bool IsRecognizedCritical(CoapOptionNumber number)
        => number is CoapOptionNumber.IfMatch or CoapOptionNumber.UriHost or CoapOptionNumber.IfNoneMatch or CoapOptionNumber.UriPort
            or CoapOptionNumber.UriPath or CoapOptionNumber.UriQuery or CoapOptionNumber.Accept or CoapOptionNumber.ProxyUri
            or CoapOptionNumber.ProxyScheme or CoapOptionNumber.Block2 or CoapOptionNumber.Block1;
}
