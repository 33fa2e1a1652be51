using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.NoResponse;

/// <summary>
/// No-Response (RFC 7967) as one stage on both sides. On a server, a response whose class the request's
/// No-Response option suppresses (section 2.1) is not sent: a confirmable request still gets its empty
/// ACK, so the client stops retransmitting (RFC 7252 section 4.2), and a notification of an observation
/// whose registration carried the option is suppressed the same way (RFC 7967 section 2). On a client,
/// a request that suppresses every class completes once it is delivered instead of awaiting a response
/// that will not come; one that suppresses some classes waits as usual, and its timeout says why none
/// may have come.
/// </summary>
/// <remarks>
/// Over a connection (RFC 8323) a suppressed response is not written either; the connection layer stops counting
/// the request as in flight (its MaxRequestsInFlight, and a Release that waits for them) as a written response
/// would, through <see cref="CoapExchange.EndWithoutResponse"/>.
/// </remarks>
internal sealed class NoResponseStage : CoapStage
{
    /// <inheritdoc/>
    /// <remarks>It looks only at what goes down: received requests pass it by.</remarks>
    internal override ServerPaths UsedServerPaths(bool reliable) => ServerPaths.Responses;

    /// <inheritdoc/>
    public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
    {
        // RFC 7959 section 2.3: 2.31 Continue asks for the next Block1 block; without it an upload cannot
        // go on, so it is part of the transfer rather than the response the client declined.
        if (response.Code == CoapCode.Continue || !Suppresses(exchange.RequestAt(this), response.Code))
        {
            next(exchange, response);
            return;
        }

        // RFC 7967 section 2.1: the response is suppressed. The layer below ends the request without one: over UDP a CON
        // not yet acknowledged gets its empty ACK, recorded for its duplicates; over a connection the request stops
        // counting as in flight, as a written response would have made it. Section 2: the option of an Observe
        // registration covers its notifications; a dropped one tells its observation, which sends the next change again.
        exchange.EndWithoutResponse();
    }

    /// <inheritdoc/>
    public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
    {
        if (request.HasOptions && request.NoResponse is CoapNoResponse classes && classes != CoapNoResponse.None)
        {
            // A first Block1 block needs its 2.31 Continue (RFC 7959 section 2.5): such a call waits for its response.
            if ((classes & CoapNoResponse.All) == CoapNoResponse.All && request.Block1 is not { More: true })
            {
                // RFC 7967 section 2.1, value 26: no response of any class will come; the call ends once the request
                // is delivered (a NON sent, a CON acknowledged) with a 0.00 message that says so.
                call.ExpectedResponses = CoapExpectedResponses.None;
            }
            else
            {
                call.TimeoutNote = $"The request's No-Response option ({(byte)classes}, RFC 7967) asked the server not to send {Describe(classes)} responses, so a request it handled that way gets none.";
            }
        }

        next(call, request);
    }

    /// <summary>True when <paramref name="request"/>'s No-Response option suppresses responses of <paramref name="code"/>'s class (RFC 7967 section 2.1).</summary>
    internal static bool Suppresses(CoapMessage request, CoapCode code)
    {
        // Read with the allocation-free option reader; most requests carry no No-Response and cost one pass.
        if (!request.HasOptions || request.NoResponse is not CoapNoResponse classes)
        {
            return false;
        }

        CoapNoResponse bit = code.Class switch
        {
            2 => CoapNoResponse.Success,
            4 => CoapNoResponse.ClientError,
            5 => CoapNoResponse.ServerError,
            _ => CoapNoResponse.None,
        };
        return (classes & bit) != 0;
    }

    /// <summary>The suppressed classes as text: "2.xx and 5.xx".</summary>
    private static string Describe(CoapNoResponse classes)
    {
        List<string> names = new(3);
        if ((classes & CoapNoResponse.Success) != 0)
        {
            names.Add("2.xx");
        }

        if ((classes & CoapNoResponse.ClientError) != 0)
        {
            names.Add("4.xx");
        }

        if ((classes & CoapNoResponse.ServerError) != 0)
        {
            names.Add("5.xx");
        }

        return string.Join(" and ", names);
    }
}
