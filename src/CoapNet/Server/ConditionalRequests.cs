using CoapNet.Messages;

namespace CoapNet.Server;

/// <summary>
/// Conditional requests against a resource's <see cref="CoapResourceState"/>: If-Match and If-None-Match (RFC 7252
/// section 5.10.8), and the ETag of a GET (section 5.10.6.2). One evaluation serves the server's pipeline, which runs
/// it before a route's handler, and handlers that run it themselves under their own lock
/// (<see cref="CoapRequest.EvaluateConditions(CoapResourceState)"/>).
/// </summary>
internal static class ConditionalRequests
{
    /// <summary>
    /// The answer that replaces the method's, or null when the method may be performed: 4.12 Precondition Failed
    /// when an If-Match or If-None-Match does not hold (the server MUST NOT perform the method, sections 5.10.8.1 and
    /// 5.10.8.2), else 2.03 Valid for a GET whose ETag is the current representation's (section 5.10.6.2).
    /// </summary>
    public static CoapResponse? Evaluate(CoapMessage request, CoapResourceState current)
    {
        if (!request.HasOptions)
        {
            return null;
        }

        bool ifMatch = false, ifMatchHolds = false, ifNoneMatch = false, observe = false;
        ReadOnlyMemory<byte>? valid = null;
        foreach (CoapOptionEntry option in request.ReadOptions())
        {
            switch (option.Number)
            {
                case CoapOptionNumber.IfMatch:
                    // Section 5.10.8.1: any current representation satisfies an empty value; an ETag must be the current one.
                    ifMatch = true;
                    ifMatchHolds |= current.Exists && (option.Value.IsEmpty || current.Matches(option.Value.Span));
                    break;
                case CoapOptionNumber.ETag when option.HasValidLength && valid is null && current.Matches(option.Value.Span):
                    valid = option.Value;
                    break;
                case CoapOptionNumber.IfNoneMatch:
                    ifNoneMatch = true;
                    break;
                case CoapOptionNumber.Observe:
                    observe = true;
                    break;
            }

            if (option.Number > CoapOptionNumber.Observe)
            {
                break;
            }
        }

        if (ifMatch && !ifMatchHolds)
        {
            return CoapResponse.Diagnostic(
                CoapCode.PreconditionFailed,
                current.Exists ? "If-Match: no ETag given is the current one." : "If-Match: the resource does not exist.");
        }

        if (ifNoneMatch && current.Exists)
        {
            return CoapResponse.Diagnostic(CoapCode.PreconditionFailed, "If-None-Match: the resource exists.");
        }

        // A registration or notification (RFC 7641) always carries the representation: 2.03 notifications would leave an
        // observer with nothing to show, so an Observe request gets 2.05 whatever its ETags.
        if (valid is { } etag && request.Code == CoapCode.Get && !observe)
        {
            // Section 5.9.1.3: 2.03 carries the ETag that is valid and no payload.
            CoapResponse response = new(CoapCode.Valid);
            response.Message.ETag = etag;
            response.Message.MaxAge = current.MaxAge;
            return response;
        }

        return null;
    }
}
