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
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    public static bool IsRecognizedCritical(CoapOptionNumber number)
        => (uint)number < 64 && ((RecognizedCritical >> (int)number) & 1) != 0;

    // One bit for each, by number: every option named above is below 64. A test (one shift) instead of a chain of
    // compares, on the walk over every request's options (issue 39).
    private const ulong RecognizedCritical = (1UL << (int)CoapOptionNumber.IfMatch) | (1UL << (int)CoapOptionNumber.UriHost)
        | (1UL << (int)CoapOptionNumber.IfNoneMatch) | (1UL << (int)CoapOptionNumber.UriPort) | (1UL << (int)CoapOptionNumber.UriPath)
        | (1UL << (int)CoapOptionNumber.UriQuery) | (1UL << (int)CoapOptionNumber.Accept) | (1UL << (int)CoapOptionNumber.ProxyUri)
        | (1UL << (int)CoapOptionNumber.ProxyScheme) | (1UL << (int)CoapOptionNumber.Block2) | (1UL << (int)CoapOptionNumber.Block1);
}
