using System.Diagnostics;
using System.Threading.Tasks.Dataflow;
using CoapNet.Diagnostics;
using CoapNet.Messages;
using CoapNet.Messaging;
using Microsoft.Extensions.Logging;

namespace CoapNet.Server;

// The request pipeline: admission (with load shedding), routing, content negotiation, the handler,
// and the answer back through the exchange's endpoint.
public sealed partial class CoapServer
{
    /// <summary>
    /// Admits a request, on an endpoint's receive path. Admission is a count of requests in progress
    /// (queued, routed, awaiting an async handler, or waiting for or running a synchronous one),
    /// bounded by MaxPendingRequests; past it the server sheds load at once.
    /// </summary>
    /// <remarks>
    /// On a transport's receive thread or a connection's read loop with nothing queued in the dispatch block, the request is
    /// routed right here (<see cref="RunsHere"/>), so an idle server wakes no other thread for it; otherwise it joins the
    /// dispatch block.
    /// </remarks>
    private void Enqueue(CoapExchange exchange)
    {
        // The arrival time serves only the duration metric: a clock reading per request is not paid while nobody listens.
        if (CoapInstrumentation.ServerDuration.Enabled)
        {
            exchange.MarkArrival();
        }

        if (Volatile.Read(ref _state) == 1 && TryAdmit())
        {
            // Checked again: a stop that began meanwhile may already have seen the count drain to zero.
            if (Volatile.Read(ref _state) == 1)
            {
                if (RunsHere())
                {
                    Dispatch(exchange, receiving: true);
                    return;
                }

                if (Post(exchange))
                {
                    return;
                }
            }

            Release();
        }

        Shed(exchange);
    }

    /// <summary>
    /// True when a request may be routed on the calling thread: it is a transport's receive thread or a stream connection's
    /// read loop (<see cref="Transports.ReceiveContext"/>), nothing waits in the dispatch block (the request must not
    /// overtake those), and the transport does not ask for a hand-off (more datagrams wait and another processor could run
    /// this one's work meanwhile). Under load the dispatch block spreads the work.
    /// </summary>
    private bool RunsHere()
        => Transports.ReceiveContext.Current is { } receiving
            && Volatile.Read(ref _queued) == 0
            && !receiving.HandOff;

    /// <summary>Queues an admitted request (or notification) in the dispatch block; false once the block is completed.</summary>
    private bool Post(CoapExchange exchange)
    {
        Interlocked.Increment(ref _queued);
        if (_dispatch!.Post(exchange))
        {
            return true;
        }

        Interlocked.Decrement(ref _queued);
        return false;
    }

    /// <summary>The dispatch block's step.</summary>
    private void DispatchQueued(CoapExchange exchange)
    {
        Interlocked.Decrement(ref _queued);
        Dispatch(exchange, receiving: false);
    }

    /// <summary>
    /// Makes one notification of <paramref name="observation"/>: its registering request goes through
    /// the pipeline again and the response goes back to the observer as a notification (RFC 7641
    /// section 4.2). Admitted past MaxPendingRequests: an observation has at most one notification in
    /// progress, so the observation bound is theirs.
    /// </summary>
    private void RunNotification(Observe.Observation observation)
    {
        if (Volatile.Read(ref _state) == 1)
        {
            // A further response to the registering request; its observation rides along as a feature, which the Observe
            // stage reads to number the notification and choose its type.
            CoapExchange exchange = observation.Registration.ForFurtherResponse(observation);
            exchange.Features.Set(observation);
            Interlocked.Increment(ref _counts);
            if (Volatile.Read(ref _state) == 1 && Post(exchange))
            {
                return;
            }

            Release();
        }

        observation.Abandon();
    }

    /// <summary>One answer being sent, in the high half of <see cref="_counts"/>.</summary>
    private const long OneAnswering = 1L << 32;

    /// <summary>The requests admitted and not yet answered, the low half of <paramref name="counts"/> (<see cref="_counts"/>).</summary>
    private static int Admitted(long counts) => (int)counts;

    private bool TryAdmit()
    {
        long current;
        do
        {
            current = Volatile.Read(ref _counts);
            if (Admitted(current) >= _options.MaxPendingRequests)
            {
                return false;
            }
        }
        while (Interlocked.CompareExchange(ref _counts, current + 1, current) != current);
        return true;
    }

    /// <summary>A request is answered (or its answer is on its way, see <see cref="Finish"/>): its admission ends, and a stopping server may be drained.</summary>
    private void Release()
    {
        // The admitted count never goes below zero (each release follows its admission), so the low half never borrows.
        if (Interlocked.Decrement(ref _counts) == 0)
        {
            CheckDrained();
        }
    }

    /// <summary>A stopping server is drained once nothing is admitted and no answer is still being sent.</summary>
    private void CheckDrained()
    {
        if (Volatile.Read(ref _state) == 2 && Volatile.Read(ref _counts) == 0)
        {
            _drained.TrySetResult();
        }
    }

    /// <summary>
    /// Sends a request's answer and ends its admission, the admission first: a client that sends its next request as
    /// soon as this answer arrives finds the slot free. With the release after the send, a client that kept exactly
    /// MaxPendingRequests in flight was shed now and then (5.03 with Max-Age, RFC 7252 section 5.9.3.4: a real
    /// client then waits Max-Age) for a request the server had room for (issue 25). A stop still waits for the
    /// send (<see cref="CheckDrained"/>).
    /// </summary>
    private void Finish(CoapExchange exchange, CoapResponse response)
    {
        // The admission ends and the answer starts in one atomic add (issue 39: one fewer a request). With an answer
        // counted, the total is not zero, so there is no drain to check here.
        Interlocked.Add(ref _counts, OneAnswering - 1);
        try
        {
            Answer(exchange, response);
        }
        finally
        {
            if (Interlocked.Add(ref _counts, -OneAnswering) == 0)
            {
                CheckDrained();
            }
        }
    }

    /// <summary>RFC 7252 section 5.9.3.4: 5.03 with Max-Age tells a CON client when to retry; a NON request is simply dropped.</summary>
    private void Shed(CoapExchange exchange)
    {
        CoapInstrumentation.ShedCounter.Add(1, new KeyValuePair<string, object?>("url.scheme", exchange.Peer.Scheme));
        if (!exchange.IsConfirmable && !exchange.IsReliable)
        {
            Log.Shed(_logger, exchange.Peer, "dropped");
            return;
        }

        Log.Shed(_logger, exchange.Peer, "5.03");
        CoapResponse busy = new(CoapCode.ServiceUnavailable);
        busy.Message.MaxAge = (uint)_options.LoadSheddingMaxAge.TotalSeconds;
        Answer(exchange, busy);
    }

    /// <summary>
    /// Routes, then answers at once, starts an async handler (which holds no worker while it awaits), or runs or queues a
    /// synchronous one: on the dispatch block, or on the receiving thread (<paramref name="receiving"/>). A handler runs
    /// where it was routed only once its <see cref="InlineGate"/> trusts it to return quickly; otherwise a synchronous
    /// one goes to its lane, and an async one routed on the receiving thread goes to the dispatch block.
    /// </summary>
    private void Dispatch(CoapExchange exchange, bool receiving)
    {
        bool done = true;
        Activity? outer = Activity.Current;
        bool traced = true;
        if (ServerRequestFeature.Of(exchange)?.Activity is { } started)
        {
            // Routed once on the receiving thread and handed on: the request keeps its activity.
            Activity.Current = started;
        }
        else if (CoapInstrumentation.StartRequestActivity(exchange.Request, exchange.Peer, ActivityKind.Server) is { } activity)
        {
            ServerRequestFeature.For(exchange).Activity = activity;
        }
        else
        {
            // No listener: Activity.Current was not changed, so it is not written back (an ExecutionContext lookup a request).
            traced = false;
        }

        try
        {
            (CoapResponse? immediate, RouteHandler? handler, Func<CoapRequest, CoapResourceState?>? conditions) = Route(exchange);
            if (immediate is not null)
            {
                done = false;
                Finish(exchange, immediate);
            }
            else if (handler!.Sync is { } sync)
            {
                SyncWork work = new(exchange, sync, conditions, handler.Gate);
                if (handler.Gate.TryEnterInline(_options.MaxDegreeOfParallelism))
                {
                    done = false;
                    RunSynchronous(work, inline: true);
                }
                else
                {
                    handler.Gate.Queued();
                    done = !_blocking!.Post(handler, work);
                    if (done)
                    {
                        handler.Gate.Dequeued();
                        Shed(exchange);
                    }
                }
            }
            else if (receiving && !handler.Gate.TryEnterInline(_options.MaxDegreeOfParallelism))
            {
                // Not yet trusted to return quickly: its start runs on the dispatch block, as it would under load.
                done = !Post(exchange);
                if (done)
                {
                    Shed(exchange);
                }
            }
            else
            {
                done = false;
                StartAsync(exchange, handler, conditions, inline: receiving);
            }
        }
        finally
        {
            // The activity flows into the async handler; this worker goes on without it.
            if (traced)
            {
                Activity.Current = outer;
            }

            if (done)
            {
                Release();
            }
        }
    }

    /// <summary>
    /// Starts an async handler and answers when it completed synchronously, or else leaves the answer to
    /// <see cref="AwaitHandlerAsync"/>; either way the request's admission ends with its answer. <paramref name="inline"/>:
    /// it holds an inline slot.
    /// </summary>
    private void StartAsync(CoapExchange exchange, RouteHandler handler, Func<CoapRequest, CoapResourceState?>? conditions, bool inline)
    {
        long started = StartTimed(inline);
        CoapResponse? answer = null;
        ValueTask<CoapResponse> pending = default;
        try
        {
            if (conditions is not null && EvaluateConditions(exchange, conditions) is { } answered)
            {
                answer = answered;
            }
            else
            {
                try
                {
                    pending = handler.Async!(new CoapRequest(exchange), _aborting.Token);
                }
                catch (Exception e) when (e is not OutOfMemoryException)
                {
                    answer = Failed(exchange, e);
                }
            }
        }
        finally
        {
            EndTimed(handler.Gate, started, inline);
        }

        if (answer is not null)
        {
            Finish(exchange, answer);
        }
        else if (pending.IsCompleted)
        {
            Finish(exchange, Complete(exchange, pending));
        }
        else
        {
            _ = AwaitHandlerAsync(exchange, pending);
        }
    }

    /// <summary>
    /// Awaits an async handler off any worker, then answers: on whatever thread completes the handler, or, under an
    /// injected scheduler (tests), back on that scheduler (Dispatch runs on it, so it is TaskScheduler.Current here),
    /// so a handler completed from another thread still answers when the test runs the scheduler, not at a random time.
    /// </summary>
    private async Task AwaitHandlerAsync(CoapExchange exchange, ValueTask<CoapResponse> pending)
    {
        CoapResponse response;
        try
        {
            response = await pending.ConfigureAwait(continueOnCapturedContext: _options.Scheduler is not null) ?? throw NoResponse(exchange);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            response = Failed(exchange, e);
        }

        Finish(exchange, response);
    }

    /// <summary>The blocking lane's step: a synchronous handler, on one of at most MaxDegreeOfParallelism threads of its route.</summary>
    private void RunQueued(SyncWork work)
    {
        work.Gate.Dequeued();
        RunSynchronous(work, inline: false);
    }

    /// <summary>A synchronous handler, on its lane or inline (holding an inline slot of its gate), timed for the gate; then the answer.</summary>
    private void RunSynchronous(SyncWork work, bool inline)
    {
        Activity? outer = Activity.Current;
        Activity? request = ServerRequestFeature.Of(work.Exchange)?.Activity;
        bool swapped = !ReferenceEquals(outer, request);
        if (swapped)
        {
            Activity.Current = request;
        }

        bool finished = false;
        try
        {
            CoapResponse response;
            long started = StartTimed(inline);
            try
            {
                if (work.Conditions is not null && EvaluateConditions(work.Exchange, work.Conditions) is { } answered)
                {
                    response = answered;
                }
                else
                {
                    try
                    {
                        response = work.Handler(new CoapRequest(work.Exchange)) ?? throw NoResponse(work.Exchange);
                    }
                    catch (Exception e) when (e is not OutOfMemoryException)
                    {
                        response = Failed(work.Exchange, e);
                    }
                }
            }
            finally
            {
                EndTimed(work.Gate, started, inline);
            }

            finished = true;
            Finish(work.Exchange, response);
        }
        finally
        {
            if (swapped)
            {
                Activity.Current = outer;
            }

            if (!finished)
            {
                Release();
            }
        }
    }

    /// <summary>
    /// The start of a handler call, by the endpoint clock: for an inline call in a receive loop's batch, the end of the call
    /// before it (<see cref="Transports.ReceiveContext.TryGetBatchClock"/>), so a quick call reads the clock once, not twice.
    /// </summary>
    private long StartTimed(bool inline)
        => inline && Transports.ReceiveContext.TryGetBatchClock(_clock, out long previous) ? previous : _clock.GetTimestamp();

    /// <summary>A handler call that began at <paramref name="started"/> (the endpoint clock's timestamp) returned: tells its gate whether it was quick.</summary>
    private void EndTimed(InlineGate gate, long started, bool inline)
    {
        long now = _clock.GetTimestamp();
        bool quick = now - started <= _quickTicks;
        if (inline)
        {
            // In a batch, the next inline call starts here.
            Transports.ReceiveContext.SetBatchClock(_clock, now);
            gate.ExitInline(quick);
        }
        else
        {
            gate.Record(quick);
        }
    }

    private CoapResponse Complete(CoapExchange exchange, ValueTask<CoapResponse> completed)
    {
        try
        {
            return completed.Result ?? throw NoResponse(exchange);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            return Failed(exchange, e);
        }
    }

    /// <summary>
    /// A conditional request's answer when its conditions decide it (4.12, 2.03), or null to run the handler; asked where
    /// the handler runs, just before it (RFC 7252 section 5.10.8: when a precondition fails the method is not performed).
    /// </summary>
    private CoapResponse? EvaluateConditions(CoapExchange exchange, Func<CoapRequest, CoapResourceState?> conditions)
    {
        CoapResourceState? current;
        try
        {
            current = conditions(new CoapRequest(exchange));
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            return Failed(exchange, e);
        }

        if (current is not { } state)
        {
            // This target exposes no state, so If-Match or If-None-Match cannot be honoured; an ETag alone is elective and ignored.
            return RequestPreconditions.RefuseUnevaluable(exchange.Request) is { } refused ? refused : null;
        }

        return ConditionalRequests.Evaluate(exchange.Request, state);
    }

    private static InvalidOperationException NoResponse(CoapExchange exchange)
        => new($"The handler for {exchange.Request.Code} {exchange.Request.UriPath} returned no response.");

    /// <summary>A handler's failure is the client's 5.00 and a log line, never a faulted pipeline.</summary>
    private CoapResponse Failed(CoapExchange exchange, Exception e)
    {
        Log.HandlerFailed(_logger, e, exchange.Request.Code, exchange.Request.UriPath, exchange.Peer);
        return new CoapResponse(CoapCode.InternalServerError);
    }

    private void Answer(CoapExchange exchange, CoapResponse response)
    {
        // A stream body is read by the block-wise stage (or Q-Block's), block by block, on the way down.
        if (response.BodyStream is not null || response.BlockSize is not null || response.Immutable)
        {
            exchange.Features.Set(new Blockwise.ResponseBody(response.BodyStream, response.BlockSize, response.Immutable));
        }

        try
        {
            exchange.Respond(response.Message);
            Record(exchange, response.Code);
        }
        catch (ArgumentException e) when (!exchange.HasResponded)
        {
            // Too large for a datagram (until block-wise transfer exists) or otherwise unserializable: say so, never truncate.
            Log.ResponseRejected(_logger, e, exchange.Request.Code, exchange.Request.UriPath);

            // The diagnostic has no body of its own; a refused stream body was closed where it was refused.
            exchange.Features.Set<Blockwise.ResponseBody>(null);
            string reason = e.ParamName is null ? e.Message : e.Message.Replace($" (Parameter '{e.ParamName}')", string.Empty, StringComparison.Ordinal);
            exchange.Respond(CoapResponse.Diagnostic(CoapCode.InternalServerError, "The response cannot be sent: " + reason).Message);
            Record(exchange, CoapCode.InternalServerError);
        }
        catch (InvalidOperationException) when (exchange.HasResponded)
        {
            // Already answered (for example shed while stopping); nothing more to send.
        }
    }

    /// <summary>The request's count, duration and activity, once answered; nothing when nobody listens.</summary>
    private static void Record(CoapExchange exchange, CoapCode code)
    {
        ServerRequestFeature? known = ServerRequestFeature.Of(exchange);
        Activity? activity = known?.Activity;
        if (exchange.IsFurtherResponse)
        {
            // A notification is not a request: it is not counted as one.
            activity?.Stop();
            return;
        }

        bool counting = CoapInstrumentation.ServerRequestCounter.Enabled;
        if (!counting && !CoapInstrumentation.ServerDuration.Enabled && activity is null)
        {
            return;
        }

        string codeName = CoapInstrumentation.CodeName(code);
        string route = known?.Route ?? CoapInstrumentation.UnmatchedRoute;
        TagList tags = new()
        {
            { "coap.method", CoapInstrumentation.MethodName(exchange.Request.Code) },
            { "coap.response.code", codeName },
            { "coap.route", route },
            { "url.scheme", exchange.Peer.Scheme },
        };
        CoapInstrumentation.ServerRequestCounter.Add(1, tags);
        if (exchange.ArrivedAt != 0)
        {
            // Not marked when the listener came after the request arrived (or, once in 4 billion, marked at 0 µs).
            CoapInstrumentation.ServerDuration.Record(exchange.ElapsedSinceArrival.TotalSeconds, tags);
        }

        if (activity is not null)
        {
            activity.SetTag("coap.response.code", codeName);
            activity.SetTag("coap.route", route);
            if (code.Class == 5)
            {
                activity.SetStatus(ActivityStatusCode.Error);
            }

            activity.Stop();
        }
    }

    /// <summary>
    /// Checks options and finds the handler; returns an immediate response when the request cannot reach one, and the
    /// route's state when the request carries conditions to evaluate against it before the handler.
    /// </summary>
    private (CoapResponse? Immediate, RouteHandler? Handler, Func<CoapRequest, CoapResourceState?>? Conditions) Route(CoapExchange exchange)
    {
        CoapMessage message = exchange.Request;
        CoapResponse? immediate = Resolve(message, out CoapRoute? route, out RouteHandler? handler, out Dictionary<string, string>? values, out bool conditional);
        if (route is not null && (ServerRequestFeature.Of(exchange)?.Activity is not null || CoapInstrumentation.ServerRequestCounter.Enabled || CoapInstrumentation.ServerDuration.Enabled))
        {
            // Only metrics and traces read it (a 4.05 or 4.15 on a route is counted under it too), and it would
            // cost every other request a side object.
            ServerRequestFeature.For(exchange).Route = route.Template;
        }

        if (immediate is not null)
        {
            return (immediate, null, null);
        }

        if (values is not null)
        {
            ServerRequestFeature.For(exchange).RouteValues = values;
        }

        if (route!.IsObservable && message.Code == CoapCode.Get && message.Observe == 0 && !exchange.IsFurtherResponse)
        {
            // RFC 7641 section 4.1: a GET with Observe=0 on an observable resource may register; the Observe stage decides.
            exchange.Features.Set(new Observe.ObserveTarget(route));
        }

        return (null, handler, conditional ? route.State : null);
    }

    /// <summary>
    /// The block-wise stage asks this before it starts joining an upload (its block 0): a path, method, option or
    /// Content-Format no handler takes is answered now (4.04, 4.05, 4.02, 4.15...), which RFC 7959 section 2.5
    /// allows for any block, instead of after the client has sent, and the server has held, the whole body.
    /// </summary>
    private CoapMessage? RefuseUpload(CoapMessage firstBlock) => Resolve(firstBlock, out _, out _, out _, out _)?.Message;

    /// <summary>
    /// What routing decides from the request alone: an immediate response, or the route and its handler for the method,
    /// and whether the request carries conditions (If-Match, If-None-Match, or a GET's ETag) for the route's state.
    /// </summary>
    private CoapResponse? Resolve(CoapMessage message, out CoapRoute? route, out RouteHandler? handler, out Dictionary<string, string>? values, out bool conditional)
    {
        route = null;
        handler = null;
        values = null;
        if (RequestPreconditions.CheckCriticalOptions(message, out bool preconditions, out bool etag) is { } rejected)
        {
            conditional = false;
            return rejected;
        }

        conditional = preconditions || (etag && message.Code == CoapCode.Get);
        route = _router.Match(message, out values);
        if (route is null)
        {
            return NotFound(message);
        }

        handler = route.GetHandler(message.Code);
        if (handler is null)
        {
            return CoapResponse.Diagnostic(CoapCode.MethodNotAllowed, "Allowed: " + route.AllowedMethods());
        }

        if (route.State is null)
        {
            conditional = false;
            if (preconditions)
            {
                return RequestPreconditions.RefuseUnevaluable(message);
            }
        }

        return RequestPreconditions.CheckContentFormats(message, route);
    }

    /// <summary>
    /// 4.04 Not Found; for a path with a trailing slash ("/lamps/", an empty last Uri-Path) whose route matches without
    /// it, with a diagnostic payload naming that route. RFC 7252 section 6.4 makes the two URIs different resources, so
    /// the request is not served by it; the payload says what the client likely meant (section 5.5.2), naming only the
    /// route, nothing of the request, so its size stays bounded.
    /// </summary>
    private CoapResponse NotFound(CoapMessage message)
    {
        string[] path = message.GetUriPathSegments();
        if (path is [.., ""] && _router.Match(path[..^1], out _) is { } near)
        {
            return CoapResponse.Diagnostic(CoapCode.NotFound, $"Not found with the trailing slash: the route {near.Template} matches this path without it (RFC 7252 section 6.4 makes them two resources).");
        }

        return new CoapResponse(CoapCode.NotFound);
    }

    /// <summary>A synchronous handler's call, waiting for its lane.</summary>
    /// <remarks>
    /// <paramref name="Conditions"/> is the route's state when the request carries conditions to evaluate first, else null;
    /// <paramref name="Gate"/> the handler's, which times the call.
    /// </remarks>
    internal readonly record struct SyncWork(CoapExchange Exchange, Func<CoapRequest, CoapResponse> Handler, Func<CoapRequest, CoapResourceState?>? Conditions, InlineGate Gate);

    private static partial class Log
    {
        [LoggerMessage(101, LogLevel.Warning, "Shed a request from {Peer} ({Reaction}): the pipeline is full or stopping")]
        public static partial void Shed(ILogger logger, CoapNet.Channels.CoapPeer peer, string reaction);

        [LoggerMessage(102, LogLevel.Error, "The handler for {Method} {Path} from {Peer} failed; answered 5.00")]
        public static partial void HandlerFailed(ILogger logger, Exception exception, CoapCode method, string path, CoapNet.Channels.CoapPeer peer);

        [LoggerMessage(103, LogLevel.Error, "The response to {Method} {Path} cannot be sent; answered 5.00 with a diagnostic")]
        public static partial void ResponseRejected(ILogger logger, Exception exception, CoapCode method, string path);
    }
}
