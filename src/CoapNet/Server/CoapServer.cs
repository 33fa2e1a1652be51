using System.Net;
using System.Reflection;
using System.Threading.Tasks.Dataflow;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Transports;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CoapNet.Server;

/// <summary>
/// A CoAP server: endpoints of any transport (UDP, TCP, several of each) whose requests flow
/// through a bounded TPL Dataflow pipeline to the handlers of registered routes and resources,
/// with discovery at /.well-known/core (RFC 6690).
/// </summary>
/// <example>
/// <code>
/// await using var server = new CoapServer();
/// server.MapGet("/hello", request => CoapResponse.Content("Hello, CoAP"));
/// await server.StartAsync();
/// </code>
/// </example>
/// <remarks>
/// Map routes before starting. Each endpoint's messaging layer answers Empty messages (ACK, RST,
/// ping) and duplicates itself, before any queue, so they always have a route and never wait behind
/// requests; requests enter the pipeline, which is bounded: when it is full, a CON request gets 5.03
/// Service Unavailable with Max-Age and a NON request is dropped.
/// </remarks>
public sealed partial class CoapServer : IAsyncDisposable, IDisposable
{
    private readonly CoapServerOptions _options;
    private readonly ILogger _logger;
    private readonly CoapRouter _router = new();
    private readonly List<CoapEndpoint> _endpoints = [];
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _aborting = new();
    private readonly object _lifecycle = new();
    private readonly Observe.ObservationRegistry _observations;
    // The endpoint clock, and the inline gate's quick limit in its timestamp units: a call is timed with one reading and
    // a subtraction, not a TimeSpan made from a division (issue 39).
    private readonly TimeProvider _clock;
    private readonly long _quickTicks;
    private ActionBlock<CoapExchange>? _dispatch;
    private SynchronousLanes? _blocking;
    // Two counts in one word, so an answer moves both with one atomic add (see Finish): the requests admitted and not yet
    // answered in the low half (see Admitted), the answers being sent after their admission ended in the high half.
    private long _counts;
    private int _queued; // requests and notifications posted to the dispatch block and not yet taken
    private int _state; // 0 new, 1 running, 2 stopping or stopped

    /// <summary>Creates a server; map routes, then start it.</summary>
    /// <param name="options">Endpoints, limits, clock and logging; null for the defaults (coap://[::]:5683).</param>
    /// <exception cref="ArgumentException">An option is out of range; the message names it.</exception>
    public CoapServer(CoapServerOptions? options = null)
    {
        _options = options ?? new CoapServerOptions();
        _options.Validate();
        _logger = (_options.Endpoint.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CoapNet.Server.CoapServer");
        _clock = _options.Endpoint.TimeProvider;
        _quickTicks = (long)(InlineGate.QuickLimit.TotalSeconds * _clock.TimestampFrequency);
        _observations = new Observe.ObservationRegistry(_options.Observe, _clock, _logger, RunNotification);
        MapGet("/.well-known/core", new WellKnownCore(_router).Respond).Produces(CoapContentFormat.LinkFormat).HideFromDiscovery();
    }

    /// <summary>The endpoints the server listens on (with actual ports), once started.</summary>
    public IReadOnlyList<IPEndPoint> LocalEndPoints
    {
        get
        {
            lock (_lifecycle)
            {
                IPEndPoint[] endpoints = new IPEndPoint[_endpoints.Count];
                for (int i = 0; i < endpoints.Length; i++)
                {
                    endpoints[i] = _endpoints[i].LocalEndPoint;
                }

                return endpoints;
            }
        }
    }

    /// <summary>Where the server listens, as base URIs with their scheme ("coap://127.0.0.1:5683", "coap+tcp://[::]:5683"), once started.</summary>
    public IReadOnlyList<Uri> LocalUris
    {
        get
        {
            lock (_lifecycle)
            {
                Uri[] uris = new Uri[_endpoints.Count];
                for (int i = 0; i < uris.Length; i++)
                {
                    uris[i] = new Uri(new CoapAddress(_endpoints[i].Scheme, _endpoints[i].LocalEndPoint).ToString());
                }

                return uris;
            }
        }
    }

    /// <summary>True between a successful start and the beginning of a stop.</summary>
    public bool IsRunning => Volatile.Read(ref _state) == 1;

    /// <summary>The number of requests queued or being handled.</summary>
    public int PendingRequests => Admitted(Volatile.Read(ref _counts));

    /// <summary>The number of observations the server holds (RFC 7641), across all its endpoints.</summary>
    public int Observations => _observations.Count;

    /// <summary>The list of observers, for tests inside the library.</summary>
    internal Observe.ObservationRegistry ObservationRegistry => _observations;

    /// <summary>The templates of the mapped routes, in registration order.</summary>
    public IReadOnlyList<string> Routes
    {
        get
        {
            List<string> templates = [];
            foreach (CoapRoute route in _router.Routes)
            {
                templates.Add(route.Template);
            }

            return templates;
        }
    }

    /// <summary>Maps a synchronous handler for <paramref name="method"/> on a route template such as "/store/{name}" or "/files/{*path}".</summary>
    /// <param name="method">GET, POST, PUT, DELETE, FETCH, PATCH or iPATCH.</param>
    /// <param name="template">The route template; "{name}" captures one segment, a final "{*name}" the rest.</param>
    /// <param name="handler">The handler.</param>
    /// <returns>A builder for the route's discovery attributes.</returns>
    /// <exception cref="ArgumentException">The template is invalid, or the method is already mapped on it.</exception>
    /// <exception cref="InvalidOperationException">The server has started.</exception>
    public CoapRouteBuilder Map(CoapCode method, string template, Func<CoapRequest, CoapResponse> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return Map(method, template, new RouteHandler(handler, null));
    }

    /// <summary>Maps an asynchronous handler for <paramref name="method"/> on a route template.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder Map(CoapCode method, string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        return Map(method, template, new RouteHandler(null, handler));
    }

    /// <summary>Maps GET to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapGet(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.Get, template, handler);

    /// <summary>Maps GET to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapGet(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.Get, template, handler);

    /// <summary>Maps POST to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapPost(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.Post, template, handler);

    /// <summary>Maps POST to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapPost(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.Post, template, handler);

    /// <summary>Maps PUT to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapPut(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.Put, template, handler);

    /// <summary>Maps PUT to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapPut(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.Put, template, handler);

    /// <summary>Maps DELETE to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapDelete(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.Delete, template, handler);

    /// <summary>Maps DELETE to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapDelete(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.Delete, template, handler);

    /// <summary>Maps FETCH (RFC 8132) to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapFetch(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.Fetch, template, handler);

    /// <summary>Maps FETCH (RFC 8132) to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapFetch(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.Fetch, template, handler);

    /// <summary>Maps PATCH (RFC 8132) to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapPatch(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.Patch, template, handler);

    /// <summary>Maps PATCH (RFC 8132) to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapPatch(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.Patch, template, handler);

    /// <summary>Maps iPATCH (RFC 8132) to a synchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapIPatch(string template, Func<CoapRequest, CoapResponse> handler) => Map(CoapCode.IPatch, template, handler);

    /// <summary>Maps iPATCH (RFC 8132) to an asynchronous handler.</summary>
    /// <inheritdoc cref="Map(CoapCode, string, Func{CoapRequest, CoapResponse})"/>
    public CoapRouteBuilder MapIPatch(string template, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> handler) => Map(CoapCode.IPatch, template, handler);

    /// <summary>
    /// Registers a resource class under a route template: every method it overrides (synchronous or
    /// asynchronous form) is mapped, and its properties become its discovery attributes.
    /// </summary>
    /// <param name="template">The route template.</param>
    /// <param name="resource">The resource.</param>
    /// <returns>A builder for further attributes.</returns>
    /// <exception cref="ArgumentException">The template is invalid, a method is already mapped on it, or the resource overrides no method.</exception>
    /// <exception cref="InvalidOperationException">The server has started.</exception>
    public CoapRouteBuilder MapResource(string template, CoapResource resource)
    {
        ArgumentNullException.ThrowIfNull(resource);
        (CoapCode Method, string Sync, string Async, Func<CoapRequest, CoapResponse> SyncHandler, Func<CoapRequest, CancellationToken, ValueTask<CoapResponse>> AsyncHandler)[] methods =
        [
            (CoapCode.Get, nameof(CoapResource.Get), nameof(CoapResource.GetAsync), resource.Get, resource.GetAsync),
            (CoapCode.Post, nameof(CoapResource.Post), nameof(CoapResource.PostAsync), resource.Post, resource.PostAsync),
            (CoapCode.Put, nameof(CoapResource.Put), nameof(CoapResource.PutAsync), resource.Put, resource.PutAsync),
            (CoapCode.Delete, nameof(CoapResource.Delete), nameof(CoapResource.DeleteAsync), resource.Delete, resource.DeleteAsync),
            (CoapCode.Fetch, nameof(CoapResource.Fetch), nameof(CoapResource.FetchAsync), resource.Fetch, resource.FetchAsync),
            (CoapCode.Patch, nameof(CoapResource.Patch), nameof(CoapResource.PatchAsync), resource.Patch, resource.PatchAsync),
            (CoapCode.IPatch, nameof(CoapResource.IPatch), nameof(CoapResource.IPatchAsync), resource.IPatch, resource.IPatchAsync),
        ];

        CoapRouteBuilder? builder = null;
        foreach (var method in methods)
        {
            // Registration-time reflection (never per request): the overridden methods are the ones the resource declares.
            if (IsOverridden(resource, method.Async, typeof(CancellationToken)))
            {
                builder = Map(method.Method, template, new RouteHandler(null, method.AsyncHandler));
            }
            else if (IsOverridden(resource, method.Sync))
            {
                builder = Map(method.Method, template, new RouteHandler(method.SyncHandler, null));
            }
        }

        if (builder is null)
        {
            throw new ArgumentException($"{resource.GetType().Name} overrides no method (Get, GetAsync, Put, ...), so it would answer nothing.", nameof(resource));
        }

        if (resource.Title is string title)
        {
            builder.WithTitle(title);
        }

        builder.WithResourceType([.. resource.ResourceTypes]).WithInterface([.. resource.InterfaceDescriptions])
            .Produces([.. resource.ContentFormats]).Accepts([.. resource.AcceptedContentFormats]);
        if (resource.IsObservable)
        {
            builder.Observable();
        }

        if (IsOverridden(resource, nameof(CoapResource.GetState)))
        {
            builder.WithState(resource.GetState);
        }

        resource.Attach(builder);
        return builder;
    }

    /// <summary>
    /// Tells the observers of a resource that its state changed (RFC 7641 section 4.2): each gets a
    /// notification made by running its GET handler again. <paramref name="path"/> is either a route
    /// template ("/sensors/{id}": every observer of the route) or a request path ("/sensors/7": only
    /// the observers of that path). Each observer has at most one notification in progress; changes
    /// meanwhile yield one more notification with the latest state (section 4.5.2), so a slow
    /// observer never delays the others nor makes the server queue without bound.
    /// </summary>
    /// <param name="path">A route template or a request path, starting with '/'.</param>
    /// <returns>The number of observations notified.</returns>
    /// <exception cref="ArgumentException">The path does not start with '/'.</exception>
    public int NotifyObservers(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (path.Length == 0 || path[0] != '/')
        {
            throw new ArgumentException($"'{path}' is not a path: it must start with '/'.", nameof(path));
        }

        foreach (CoapRoute route in _router.Routes)
        {
            if (string.Equals(route.Template, path, StringComparison.Ordinal))
            {
                return _observations.Notify(route, null);
            }
        }

        string[] segments = path == "/" ? [] : path[1..].Split('/');
        return _router.Match(segments, out _) is { } matched ? _observations.Notify(matched, path) : 0;
    }

    /// <summary>Notifies every observer of <paramref name="route"/>.</summary>
    internal int NotifyObservers(CoapRoute route) => _observations.Notify(route, null);

    /// <summary>Binds the endpoints and starts serving.</summary>
    /// <exception cref="CoapBindException">Endpoints cannot be bound: every one of them, each named by its address and name (<see cref="CoapBindException.Failures"/>); none is left open.</exception>
    /// <exception cref="InvalidOperationException">
    /// The server was already started; or an endpoint's scheme has no transport, or a coaps or coaps+tcp endpoint is not
    /// secured (no <c>UseDtls</c>, no <c>UseTls</c>); the message says what to add. None is left open.
    /// </exception>
    public void Start()
    {
        lock (_lifecycle)
        {
            if (_state != 0)
            {
                throw new InvalidOperationException("The server was already started.");
            }

            // Dispatch: routing and the start of async handlers, which then await on no worker at all;
            // its parallelism only spreads that short work over the cores. Admission (Enqueue) bounds
            // what it holds, so it needs no capacity of its own.
            _dispatch = new ActionBlock<CoapExchange>(
                DispatchQueued,
                new ExecutionDataflowBlockOptions
                {
                    MaxDegreeOfParallelism = Environment.ProcessorCount,
                    EnsureOrdered = false,
                    TaskScheduler = _options.Scheduler ?? TaskScheduler.Default,
                });

            // Blocking: synchronous handlers, which may block their thread, on at most MaxDegreeOfParallelism
            // threads of their own per route, so they never take a pool thread from the receive loops and async
            // handlers, and a route that blocks never stalls another route.
            _blocking = new SynchronousLanes(RunQueued, _options.MaxDegreeOfParallelism, _options.Scheduler);

            try
            {
                foreach (CoapEndpoint endpoint in CreateEndpoints())
                {
                    _endpoints.Add(endpoint);
                    endpoint.RequestHandler = Enqueue;
                    endpoint.Start();
                }
            }
            catch
            {
                foreach (CoapEndpoint endpoint in _endpoints)
                {
                    endpoint.Dispose();
                }

                _endpoints.Clear();
                _dispatch.Complete();
                _blocking.Complete();
                throw;
            }

            _state = 1;
        }

        foreach (CoapEndpoint endpoint in _endpoints)
        {
            _logger.LogInformation("CoAP server listening on {Scheme}://{EndPoint}", endpoint.Scheme, endpoint.LocalEndPoint);
        }
    }

    /// <inheritdoc cref="Start"/>
    /// <param name="cancellationToken">Not used: binding completes at once; present for symmetry with hosting APIs.</param>
    /// <returns>A completed task once the server listens.</returns>
    public Task StartAsync(CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Start();
        return Task.CompletedTask;
    }

    /// <summary>
    /// Stops accepting requests (new ones get 5.03), waits for the requests in flight to be answered,
    /// then closes the endpoints. When <paramref name="cancellationToken"/> fires first, the handlers'
    /// tokens are canceled and the endpoints close without waiting further.
    /// </summary>
    /// <param name="cancellationToken">Ends the wait for in-flight requests.</param>
    /// <returns>A task that completes when the server is stopped.</returns>
    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        if (!BeginStop())
        {
            return;
        }

        try
        {
            await _drained.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            await _aborting.CancelAsync().ConfigureAwait(false);
        }

        CompleteBlocks();
        foreach (CoapEndpoint endpoint in _endpoints)
        {
            await endpoint.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Stops accepting requests (new ones get 5.03), waits for the requests in flight to be answered,
    /// then closes the endpoints, synchronously: the calling thread blocks until then. When
    /// <paramref name="cancellationToken"/> fires first, the handlers' tokens are canceled and the endpoints
    /// close without waiting further. For a bounded wait, pass the token of a
    /// <c>new CancellationTokenSource(timeout)</c>.
    /// </summary>
    /// <param name="cancellationToken">Ends the wait for in-flight requests.</param>
    public void Stop(CancellationToken cancellationToken = default)
    {
        if (!BeginStop())
        {
            return;
        }

        // Not sync-over-async: the wait is for the in-flight count to reach zero, which handlers signal on their own threads.
        try
        {
            _drained.Task.Wait(cancellationToken);
        }
        catch (OperationCanceledException)
        {
            _aborting.Cancel();
        }

        CompleteBlocks();
        foreach (CoapEndpoint endpoint in _endpoints)
        {
            endpoint.Dispose();
        }
    }

    /// <summary>Stops the server (see <see cref="Stop"/>), waiting for in-flight requests.</summary>
    public void Dispose()
    {
        Stop();
        _aborting.Dispose();
    }

    /// <summary>Stops the server (see <see cref="StopAsync"/>), waiting for in-flight requests.</summary>
    /// <returns>A task that completes when the server is stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        await StopAsync().ConfigureAwait(false);
        _aborting.Dispose();
    }

    private static bool IsOverridden(CoapResource resource, string name, params Type[] extra)
    {
        Type[] parameters = [typeof(CoapRequest), .. extra];
        MethodInfo? method = resource.GetType().GetMethod(name, BindingFlags.Public | BindingFlags.Instance, parameters);
        return method is not null && method.GetBaseDefinition().DeclaringType != method.DeclaringType;
    }

    private CoapRouteBuilder Map(CoapCode method, string template, RouteHandler handler)
    {
        lock (_lifecycle)
        {
            if (_state != 0)
            {
                throw new InvalidOperationException("Routes are mapped before the server starts.");
            }

            CoapRoute route = _router.GetOrAdd(template);
            route.SetHandler(method, handler);
            return new CoapRouteBuilder(route, this);
        }
    }

    /// <summary>Moves to stopping; returns false when the server was not running. New requests now get 5.03 (Enqueue checks the state).</summary>
    private bool BeginStop()
    {
        lock (_lifecycle)
        {
            bool running = _state == 1;
            _state = 2;
            if (!running)
            {
                return false;
            }
        }

        // Observations end with the server; their observers re-register with whoever serves next (RFC 7641 section 3.3.1).
        _observations.Clear();
        CheckDrained();

        return true;
    }

    /// <summary>Every admitted request is answered (or abandoned on a canceled stop): the blocks have nothing left.</summary>
    private void CompleteBlocks()
    {
        _dispatch?.Complete();
        _blocking?.Complete();
    }

    /// <summary>
    /// The endpoints the options list (coap://[::]:5683 when they list none), each bound with its transport and middleware.
    /// Every endpoint is tried, so that one start reports each address in use; then either all are returned or none is
    /// left bound.
    /// </summary>
    /// <exception cref="CoapBindException">Endpoints could not be bound: every one of them.</exception>
    /// <exception cref="InvalidOperationException">An endpoint's scheme has no transport, or its middleware does not fit it (see <see cref="CoapListenOptions"/>).</exception>
    private List<CoapEndpoint> CreateEndpoints()
    {
        IReadOnlyList<CoapListenOptions> listeners = _options.ListenOptions.Count > 0
            ? _options.ListenOptions
            : [new CoapListenOptions(new CoapAddress(CoapNet.Channels.CoapPeer.UdpScheme, new IPEndPoint(IPAddress.IPv6Any, UdpTransportOptions.DefaultPort)))];
        foreach (CoapListenOptions listener in listeners)
        {
            // A scheme without a transport is a mistake to report before any socket is bound.
            listener.Find(_options);
        }

        List<CoapEndpoint> endpoints = [];
        List<CoapBindException> failures = [];
        try
        {
            // The stages take the server's routing (to refuse an upload at its first block) and observers in their constructors.
            foreach (CoapListenOptions listener in listeners)
            {
                CoapEndpointOptions endpointOptions = (listener.Endpoint ?? _options.Endpoint).ForServer(RefuseUpload, _observations);
                try
                {
                    endpoints.Add(listener.CreateEndpoint(_options, endpointOptions));
                }
                catch (CoapBindException e)
                {
                    failures.Add(e);
                }
            }

            if (failures.Count > 0)
            {
                throw failures.Count == 1 ? failures[0] : new CoapBindException(failures);
            }

            return endpoints;
        }
        catch
        {
            foreach (CoapEndpoint endpoint in endpoints)
            {
                endpoint.Dispose();
            }

            throw;
        }
    }
}
