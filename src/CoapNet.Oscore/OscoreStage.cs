using System.Runtime.CompilerServices;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore.Cose;
using CoapNet.Oscore.Protection;

namespace CoapNet.Oscore;

/// <summary>
/// OSCORE (RFC 8613) as a stage: below Observe and between the inner block-wise stage (the built-in one, on plaintext)
/// and an outer one (on OSCORE messages), section 4.1.3.4. A client protects each request to a server it has a context
/// for and verifies its responses; a server verifies each protected request, hands the decrypted one up with the
/// client's identity, and protects the responses to it.
/// </summary>
internal sealed class OscoreStage : CoapStage
{
    private readonly OscoreOptions _options;

    // A notification goes out on an exchange of its own (CoapExchange.ForFurtherResponse), whose features start empty; it
    // sees the protected registration request as this stage did (CoapExchange.RequestAt), which keys its binding here for
    // as long as the observation holds it.
    private readonly ConditionalWeakTable<CoapMessage, RequestBinding> _observations = new();

    public OscoreStage(OscoreOptions options) => _options = options;

    /// <inheritdoc/>
    public override bool Processes(CoapOptionNumber number) => number == CoapOptionNumber.Oscore;

    /// <inheritdoc/>
    public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
    {
        if (_options.ForServer(call.Peer.EndPoint) is not { } context || request.HasOption(CoapOptionNumber.Oscore))
        {
            next(call, request);
            return;
        }

        if (Protect(call, context, request, out RequestBinding? binding) is { } outer)
        {
            call.Features.Set(binding);
            next(call, outer);
        }
    }

    /// <summary>The OSCORE message of <paramref name="request"/> and its binding; null when the call failed.</summary>
    private static CoapMessage? Protect(CoapClientCall call, OscoreContext context, CoapMessage request, out RequestBinding? binding)
    {
        try
        {
            CoapMessage outer = OscoreProtection.ProtectRequest(context, request, out RequestBinding made);
            made.Request = request;
            binding = made;
            return outer;
        }
        catch (InvalidOperationException e)
        {
            // The sequence numbers are used up (section 7.2.1): nothing may go out under this context.
            call.Fail(e);
            binding = null;
            return null;
        }
    }

    /// <inheritdoc/>
    public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
    {
        if (call.Features.Get<RequestBinding>() is not { } binding)
        {
            next(call, response);
            return;
        }

        if (Open(call, binding, response) is not { } inner)
        {
            return;
        }

        if (inner.Code == CoapCode.Unauthorized && binding.Request is { } sent && call.ExpectedResponses != CoapExpectedResponses.Several)
        {
            if (inner.Echo is { } echo && sent.Echo is null)
            {
                // Appendix B.1.2: the server does not know its replay window and asks for the request again with its Echo
                // value (Class E, inside the plaintext), under a new Partial IV. Once: the repetition's answer goes up
                // whatever it is. An observation is not repeated (its notifications would come for the repetition's
                // token); its caller sees the 4.01.
                Repeat(call, binding, sent, echo, next);
                return;
            }

            if (!response.HasOption(CoapOptionNumber.Oscore) && IsIdempotent(sent.Code))
            {
                // Section 7.4: a request that reached the server after more than its replay window of later ones (a busy
                // client whose thread was preempted between protecting it and sending it) is refused with a plain 4.01,
                // unprocessed. An idempotent one is sent once more under a new Partial IV; a non-idempotent one is not,
                // since a plain 4.01 is not authenticated and an attacker could forge one for a request that did run.
                Repeat(call, binding, sent, echo: null, next);
                return;
            }
        }

        next(call, inner);
    }

    /// <summary>RFC 7252 section 5.1 and RFC 8132 section 2: GET, FETCH, PUT, DELETE and iPATCH may be repeated.</summary>
    private static bool IsIdempotent(CoapCode code)
        => code == CoapCode.Get || code == CoapCode.Fetch || code == CoapCode.Put || code == CoapCode.Delete || code == CoapCode.IPatch;

    /// <summary>
    /// Sends <paramref name="sent"/> (the plaintext request) once more, protected under a new Partial IV, with
    /// <paramref name="echo"/> when the server asked for it; the repetition's answer goes up whatever it is.
    /// </summary>
    private void Repeat(CoapClientCall call, RequestBinding binding, CoapMessage sent, ReadOnlyMemory<byte>? echo, Action<CoapClientCall, CoapMessage> next)
    {
        CoapMessage again = new() { Type = sent.Type, Code = sent.Code, Payload = sent.Payload };
        foreach (CoapOptionEntry option in sent.Options)
        {
            again.Options.Add(option);
        }

        if (echo is { } value)
        {
            again.Echo = value;
        }

        if (Protect(call, binding.Context, again, out RequestBinding? repeated) is { } outer)
        {
            call.SendFollowUp(this, outer, answer =>
            {
                if (Open(call, repeated!, answer) is { } opened)
                {
                    next(call, opened);
                }
            });
        }
    }

    /// <summary>
    /// The plaintext of <paramref name="response"/> to the request of <paramref name="binding"/> (RFC 8613 section 8.4), with
    /// the response's type, Message ID and token; a plain error passed as it is (section 8: an OSCORE error carries nothing
    /// of the resource). Null when the response is refused (the call fails, or an observation drops it) or is a stale
    /// notification.
    /// </summary>
    private static CoapMessage? Open(CoapClientCall call, RequestBinding binding, CoapMessage response)
    {
        if (!response.TryGetOption(CoapOptionNumber.Oscore, out CoapOptionEntry entry))
        {
            // Section 8: an OSCORE error (unknown context, replay, decryption) comes back as a plain error response; it
            // carries no content of the resource, so the caller may see it. Anything else unprotected is refused.
            if (response.Code.IsClientError || response.Code.IsServerError)
            {
                return response;
            }

            Refuse(call, $"{call.Peer.EndPoint} answered a protected request with an unprotected {response.Code}; it is not accepted (RFC 8613 section 8.4).");
            return null;
        }

        if (!OscoreOptionValue.TryRead(entry.Value, out OscoreOptionValue value)
            || OscoreProtection.OpenResponse(binding, response, value) is not { } inner)
        {
            Refuse(call, $"The response from {call.Peer.EndPoint} failed OSCORE verification (RFC 8613 section 8.4).");
            return null;
        }

        bool notification = inner.HasOption(CoapOptionNumber.Observe);
        if (notification && !binding.Observe)
        {
            Refuse(call, $"{call.Peer.EndPoint} sent a notification for a request that did not observe (RFC 8613 section 4.1.3.5.2).");
            return null;
        }

        long partialIv = value.PartialIv.IsEmpty ? -1 : OscoreAlgorithm.SequenceNumber(value.PartialIv.Span);
        if (binding.Observe && partialIv >= 0 && !binding.TryAdvanceNotification(partialIv))
        {
            // Section 7.4.1: a notification no newer than the Notification Number is a replay or stale; dropped.
            return null;
        }

        inner.Type = response.Type;
        inner.MessageId = response.MessageId;
        inner.Token = response.Token;
        if (notification)
        {
            // Section 4.1.3.5.2: the order is the Partial IV's; the Observe stage above orders by its three low bytes,
            // and a notification without one is the oldest.
            inner.Options.RemoveAll(CoapOptionNumber.Observe);
            inner.Options.Add(CoapOptionNumber.Observe, (uint)(Math.Max(partialIv, 0) & 0xFFFFFF));
        }

        return inner;
    }

    /// <inheritdoc/>
    public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
    {
        CoapMessage request = exchange.RequestAt(this);
        if (!request.TryGetOption(CoapOptionNumber.Oscore, out CoapOptionEntry entry))
        {
            next(exchange);
            return;
        }

        // Section 8.2: each failure is answered with a plain, unprotected error that tells nothing of the resource.
        if (!OscoreOptionValue.TryRead(entry.Value, out OscoreOptionValue value) || value.Kid is not { } kid || value.PartialIv.IsEmpty)
        {
            Fail(exchange, CoapCode.BadOption, "Malformed OSCORE option");
            return;
        }

        if (_options.ForClient(kid.Span, value.KidContext) is not { } context)
        {
            Fail(exchange, CoapCode.Unauthorized, "Security context not found");
            return;
        }

        long partialIv = OscoreAlgorithm.SequenceNumber(value.PartialIv.Span);
        if (!context.IsFresh(partialIv))
        {
            Fail(exchange, CoapCode.Unauthorized, "Replay detected");
            return;
        }

        if (OscoreProtection.OpenRequest(context, request, kid.Span, value.PartialIv.Span) is not { } inner)
        {
            Fail(exchange, CoapCode.BadRequest, "Decryption failed");
            return;
        }

        ReplayCheck check = context.Accept(partialIv, inner.Echo, out byte[]? challenge);
        if (check == ReplayCheck.Replay)
        {
            Fail(exchange, CoapCode.Unauthorized, "Replay detected");
            return;
        }

        RequestBinding binding = new(context, kid.ToArray(), value.PartialIv.ToArray(), inner.HasOption(CoapOptionNumber.Observe));
        if (check == ReplayCheck.Challenge)
        {
            // Appendix B.1.2: the window is unknown, so this request may be a replay; it is not processed. A 4.01 with the
            // Echo value, protected with a Partial IV of this endpoint's own (the request's may have been used before),
            // asks the client to send it again with that value.
            CoapMessage unauthorized = new() { Code = CoapCode.Unauthorized };
            unauthorized.Echo = challenge;
            exchange.RespondFrom(this, OscoreProtection.ProtectResponse(binding, unauthorized, withPartialIv: true));
            return;
        }

        exchange.ReplaceRequest(this, inner, context.PeerSecurityContext);
        exchange.Features.Set(binding);
        if (binding.Observe)
        {
            _observations.AddOrUpdate(request, binding);
        }

        next(exchange);
    }

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        RequestBinding? binding = exchange.Features.Get<RequestBinding>();
        if (binding is null && exchange.IsFurtherResponse && _observations.TryGetValue(exchange.RequestAt(this), out RequestBinding? observed))
        {
            binding = observed;
        }

        if (binding is null)
        {
            next(exchange, response);
            return;
        }

        // Section 4.1.3.5: every response to an Observe registration has a Partial IV of its own, so the client orders
        // them; any other response reuses the request's nonce (section 8.3).
        next(exchange, OscoreProtection.ProtectResponse(binding, response, withPartialIv: binding.Observe));
    }

    private void Fail(CoapExchange exchange, CoapCode code, string diagnostic)
    {
        CoapMessage error = exchange.RequestAt(this).CreateResponse(code);

        // Section 4.1.3.1: an outer Max-Age of 0, so no proxy caches the error.
        error.Options.Add(CoapOptionNumber.MaxAge, 0u);
        error.SetPayload(diagnostic);
        exchange.RespondFrom(this, error);
    }

    private static void Refuse(CoapClientCall call, string reason)
    {
        if (call.ExpectedResponses == CoapExpectedResponses.Several)
        {
            // An observation goes on: one bad notification is dropped, as a replay would be (section 8.4).
            return;
        }

        call.Fail(new CoapException(reason, call.Peer.EndPoint));
    }
}
