using System.Runtime.CompilerServices;
using CoapNet.Messages;

namespace CoapNet.Server;

/// <summary>
/// What the server checks in a request before its handler may run, from the request and its route alone: critical
/// options (RFC 7252 section 5.4.1), conditions that cannot be evaluated (section 5.10.8), and Content-Formats
/// (sections 5.10.3, 5.10.4). Conditions against a resource's state are <see cref="ConditionalRequests"/>.
/// </summary>
/// <remarks>Stateless: every member reads only its arguments, so it is safe from any thread and allocates only an answer.</remarks>
internal static class RequestPreconditions
{
    /// <summary>
    /// RFC 7252 section 5.4.1: an unrecognized critical option in a request is 4.02 Bad Option; so is a
    /// recognized one with an invalid length or repeated when it may not be (sections 5.4.3, 5.4.5).
    /// Unrecognized elective options are ignored. Proxy-Uri and Proxy-Scheme get 5.05 (section 5.10.2).
    /// Block1 and Block2 are recognized (RFC 7959): the block-wise stage consumes them or the handler sees them.
    /// </summary>
    public static CoapResponse? CheckCriticalOptions(CoapMessage request, out bool preconditions, out bool etag)
    {
        preconditions = false;
        etag = false;
        if (!request.HasOptions)
        {
            return null;
        }

        // Read without building the request's options collection, which most handlers never ask for (issue 11), and
        // without an entry for each option: only numbers and lengths are judged here (issue 39).
        int previous = -1;
        CoapOptionReader options = request.ReadOptions();
        while (options.MoveNext())
        {
            CoapOptionNumber number = options.Number;
            bool sameNumberAsPrevious = (int)number == previous;
            previous = (int)number;
            preconditions |= number is CoapOptionNumber.IfMatch or CoapOptionNumber.IfNoneMatch;
            etag |= number == CoapOptionNumber.ETag;
            if (!number.IsCritical())
            {
                continue;
            }

            if (number is CoapOptionNumber.ProxyUri or CoapOptionNumber.ProxyScheme)
            {
                return NotAProxy();
            }

            if (!RecognizedOptions.IsRecognizedCritical(number))
            {
                return BadOption("Unrecognized", number);
            }

            // Block1 reaches a handler only when uploads are not joined (RFC 7959 section 2.5, non-atomic).
            if (!CoapOptionDefinition.IsValidLength(number, options.Length)
                || (sameNumberAsPrevious && !CoapOptionDefinition.IsRepeatableOrUnknown(number)))
            {
                return BadOption("Invalid", number);
            }
        }

        return null;
    }

    // The refusals, out of the line of the walk every request takes: formatting their text in it gave the walk a frame
    // to clear on every call (issue 39).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static CoapResponse NotAProxy() => CoapResponse.Diagnostic(CoapCode.ProxyingNotSupported, "This server is not a proxy.");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static CoapResponse BadOption(string what, CoapOptionNumber number)
    {
        string described = CoapOptionDefinition.TryGet(number, out CoapOptionDefinition? definition)
            ? $"{definition.Name} ({(ushort)number})"
            : ((ushort)number).ToString(System.Globalization.CultureInfo.InvariantCulture);
        return CoapResponse.Diagnostic(CoapCode.BadOption, $"{what} critical option {described}.");
    }

    /// <summary>RFC 7252 section 5.4.1: If-Match or If-None-Match on a target with no state to evaluate them against is 4.02, never ignored.</summary>
    public static CoapResponse? RefuseUnevaluable(CoapMessage request)
    {
        foreach (CoapOptionEntry option in request.ReadOptions())
        {
            if (option.Number is CoapOptionNumber.IfMatch or CoapOptionNumber.IfNoneMatch)
            {
                return CoapResponse.Diagnostic(CoapCode.BadOption, $"{option.Name} ({(ushort)option.Number}) is not supported here: {request.UriPath} exposes no state to evaluate it against (RFC 7252 section 5.10.8).");
            }

            if (option.Number > CoapOptionNumber.IfNoneMatch)
            {
                break;
            }
        }

        return null;
    }

    /// <summary>
    /// The representation checks against <paramref name="route"/>: an Accept the resource cannot satisfy is 4.06
    /// (RFC 7252 section 5.10.4), a payload in a format it does not take 4.15 (section 5.10.3); null when both pass.
    /// </summary>
    public static CoapResponse? CheckContentFormats(CoapMessage message, CoapRoute route)
    {
        // RFC 7252 section 5.10.4: an Accept the resource cannot satisfy is 4.06.
        if (message.Accept is ushort accept && route.ContentFormats.Count > 0 && !route.ContentFormats.Contains(accept))
        {
            return CoapResponse.Diagnostic(CoapCode.NotAcceptable, $"Content-Format {accept} is not available here.");
        }

        // RFC 7252 section 5.10.3: a payload in a format the resource does not take is 4.15.
        if (route.AcceptedContentFormats.Count > 0 && !message.Payload.IsEmpty
            && (message.ContentFormat is not ushort format || !route.AcceptedContentFormats.Contains(format)))
        {
            return CoapResponse.Diagnostic(CoapCode.UnsupportedContentFormat, "Accepted Content-Formats: " + string.Join(", ", route.AcceptedContentFormats));
        }

        return null;
    }
}
