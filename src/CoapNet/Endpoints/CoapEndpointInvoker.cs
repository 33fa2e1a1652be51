using System.ComponentModel;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Endpoints;

/// <summary>
/// The binding and invocation code of one mapped handler, which CoapNet's source generator writes as a subclass for
/// each <c>MapGet(template, Delegate)</c> call: it reads each parameter from where <see cref="CoapParameterInfo"/> says
/// with code written for its type (no reflection on the request path), calls the handler, and turns what it returns into
/// a response. The runtime around it authorizes, runs the filters and owns the service scope. Applications do not
/// derive from it.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class CoapEndpointInvoker
{
    private readonly CoapParameterInfo[] _parameters;
    private readonly object _building = new();
    private readonly bool _isAsync;
    private readonly Type? _resultType;
    private bool[] _fromRoute = [];
    private bool[] _isService = [];
    private CoapEndpointBuilder? _builder;
    private Pipeline? _pipeline;

    /// <summary>Describes the handler; called by the generated subclass.</summary>
    /// <param name="handler">The application's delegate, as it was passed to <c>MapX</c>.</param>
    /// <param name="parameters">Its parameters, in order.</param>
    /// <param name="isAsync">True when it returns a task: the endpoint then runs as an asynchronous handler.</param>
    /// <param name="resultType">The type of the object it returns when that is content to negotiate (JSON or CBOR), else null.</param>
    /// <exception cref="ArgumentNullException">The handler or the parameters are null.</exception>
    protected CoapEndpointInvoker(Delegate handler, CoapParameterInfo[] parameters, bool isAsync, Type? resultType)
    {
        Handler = handler ?? throw new ArgumentNullException(nameof(handler));
        _parameters = parameters ?? throw new ArgumentNullException(nameof(parameters));
        _isAsync = isAsync;
        _resultType = resultType;
    }

    /// <summary>The application's delegate.</summary>
    protected Delegate Handler { get; }

    internal string Template { get; private set; } = string.Empty;

    internal CoapHandlerOptions Options { get; private set; } = new();

    internal IServiceScopeFactory? ScopeFactory { get; private set; }

    /// <summary>True under a test's task scheduler (CoapServerOptions.Scheduler), as the server's own await is; see <see cref="CoapEndpointContext.ContinueOnCapturedContext"/>.</summary>
    internal bool ContinueOnCapturedContext { get; private set; }

    internal CoapParameterInfo Parameter(int index) => _parameters[index];

    /// <summary>True when a simple parameter is read from the route values rather than the Uri-Query.</summary>
    internal bool FromRoute(int index) => _fromRoute[index];

    /// <summary>True when a complex parameter without attribute is a service rather than the payload.</summary>
    internal bool IsService(int index) => _isService[index];

    /// <summary>Binds the parameters, calls the handler and makes the response: the generated code.</summary>
    /// <param name="context">The request's context.</param>
    /// <returns>The response; completed at once for a handler that returns no task.</returns>
    protected abstract ValueTask<CoapResponse> InvokeAsync(CoapEndpointContext context);

    /// <summary>
    /// Fixes where each parameter comes from now that the full template and the options are known, so a handler that
    /// cannot be bound fails when it is mapped, never at its first request; and declares the formats the endpoint
    /// produces and accepts, so the router answers 4.06 and 4.15 itself (RFC 7252 sections 5.10.4, 5.10.3) and
    /// discovery lists them ("ct", RFC 7252 section 7.2.1).
    /// </summary>
    internal RouteHandler Attach(CoapRoute route, CoapHandlerOptions options, CoapEndpointBuilder builder, bool continueOnCapturedContext)
    {
        if (_builder is not null)
        {
            throw new InvalidOperationException("This handler's generated invoker is already mapped; each MapX call makes its own.");
        }

        _builder = builder;
        ContinueOnCapturedContext = continueOnCapturedContext;
        Template = route.Template;
        Options = options;
        ScopeFactory = options.Services?.GetService<IServiceScopeFactory>();
        IServiceProviderIsService? services = options.Services?.GetService<IServiceProviderIsService>();
        _fromRoute = new bool[_parameters.Length];
        _isService = new bool[_parameters.Length];
        string? body = null;
        for (int i = 0; i < _parameters.Length; i++)
        {
            CoapParameterInfo parameter = _parameters[i];
            bool captured = Captures(route, parameter.Name);
            bool readsBody = false;
            switch (parameter.Source)
            {
                case CoapParameterSource.Route when !captured:
                    throw new ArgumentException($"The parameter '{parameter.Name}' is [FromRoute], but the template '{route.Template}' captures no '{{{parameter.Name}}}'.", nameof(route));
                case CoapParameterSource.Route or CoapParameterSource.RouteOrQuery:
                    _fromRoute[i] = captured;
                    break;
                case CoapParameterSource.Services when ScopeFactory is null:
                    throw new InvalidOperationException($"The parameter '{parameter.Name}' of {route.Template} is [FromServices], but CoapServerOptions.Handlers.Services is not set.");
                case CoapParameterSource.ServicesOrBody:
                    _isService[i] = services?.IsService(parameter.Type) == true;
                    readsBody = !_isService[i];
                    break;
                case CoapParameterSource.Body:
                    readsBody = true;
                    break;
            }

            if (readsBody)
            {
                if (body is not null)
                {
                    throw new ArgumentException($"The parameters '{body}' and '{parameter.Name}' of {route.Template} both read the payload, and a request has one. Mark services [FromServices].", nameof(route));
                }

                body = parameter.Name;
                if (!IsRawBody(parameter.Type))
                {
                    AddMissing(route.AcceptedContentFormats, Formats(parameter.Type, options, $"The payload parameter '{parameter.Name}' of {route.Template}"));
                }
            }
        }

        if (_resultType is not null)
        {
            AddMissing(route.ContentFormats, Formats(_resultType, options, $"The result of {route.Template}"));
        }

        return _isAsync ? new RouteHandler(null, HandleAsync) : new RouteHandler(HandleSync, null);
    }

    private static bool Captures(CoapRoute route, string name)
    {
        foreach (RouteSegment segment in route.Segments)
        {
            if (segment.Kind != RouteSegmentKind.Literal && string.Equals(segment.Value, name, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    private static void AddMissing(List<ushort> formats, ushort[] added)
    {
        foreach (ushort format in added)
        {
            if (!formats.Contains(format))
            {
                formats.Add(format);
            }
        }
    }

    private static bool IsRawBody(Type type)
        => type == typeof(byte[]) || type == typeof(ReadOnlyMemory<byte>) || type == typeof(Stream) || type == typeof(string);

    /// <summary>The formats <paramref name="type"/> has metadata for, the default one first; none is a mapping error.</summary>
    private static ushort[] Formats(Type type, CoapHandlerOptions options, string what)
    {
        bool json = options.GetJsonTypeInfo(type) is not null;
        bool cbor = CoapCbor.IsRegistered(type);
        if (!json && !cbor)
        {
            throw new InvalidOperationException(
                $"{what} is a {type.Name}, which has neither JSON metadata (the source generator writes it for a type with public properties; "
                + $"else add [JsonSerializable(typeof({type.Name}))] to a JsonSerializerContext and set CoapServerOptions.Handlers.JsonTypeInfoResolver to it) "
                + $"nor a CBOR contract (the source generator writes one too; else call CoapCbor.Register).");
        }

        if (json && cbor)
        {
            return options.DefaultContentFormat == CoapContentFormat.Json ? [CoapContentFormat.Json, CoapContentFormat.Cbor] : [CoapContentFormat.Cbor, CoapContentFormat.Json];
        }

        return json ? [CoapContentFormat.Json] : [CoapContentFormat.Cbor];
    }

    private CoapResponse HandleSync(CoapRequest request)
    {
        Pipeline pipeline = _pipeline ?? BuildPipeline();
        if (pipeline.Authorize(request) is { } refused)
        {
            return refused;
        }

        CoapEndpointContext context = new(request, this, CancellationToken.None);
        try
        {
            ValueTask<CoapResponse> pending = pipeline.Invoke(context);

            // A synchronous handler's chain completes at once unless a filter awaits; then this thread waits for it as it
            // would for a blocking handler: it is one of the route's blocking lane's, which exist for work that may block.
            return pending.IsCompletedSuccessfully ? pending.Result : pending.AsTask().GetAwaiter().GetResult();
        }
        finally
        {
            context.DisposeScope();
        }
    }

    private async ValueTask<CoapResponse> HandleAsync(CoapRequest request, CancellationToken cancellationToken)
    {
        Pipeline pipeline = _pipeline ?? BuildPipeline();
        if (pipeline.Authorize(request) is { } refused)
        {
            return refused;
        }

        CoapEndpointContext context = new(request, this, cancellationToken);
        try
        {
            return await pipeline.Invoke(context).ConfigureAwait(ContinueOnCapturedContext);
        }
        finally
        {
            await context.DisposeScopeAsync().ConfigureAwait(ContinueOnCapturedContext);
        }
    }

    /// <summary>The filters and authorization of the endpoint and its groups, fixed at the first request.</summary>
    private Pipeline BuildPipeline()
    {
        lock (_building)
        {
            if (_pipeline is { } built)
            {
                return built;
            }

            List<ICoapEndpointFilter> filters = [];
            List<Func<CoapPeerIdentity, CoapRequest, bool>> policies = [];
            bool requireIdentity = _builder!.Collect(filters, policies);
            CoapEndpointFilterDelegate invoke = InvokeAsync;
            for (int i = filters.Count - 1; i >= 0; i--)
            {
                ICoapEndpointFilter filter = filters[i];
                CoapEndpointFilterDelegate next = invoke;
                invoke = context => filter.InvokeAsync(context, next);
            }

            Pipeline pipeline = new(invoke, requireIdentity, [.. policies]);
            Volatile.Write(ref _pipeline, pipeline);
            return pipeline;
        }
    }

    private sealed class Pipeline(CoapEndpointFilterDelegate invoke, bool requireIdentity, Func<CoapPeerIdentity, CoapRequest, bool>[] policies)
    {
        public CoapEndpointFilterDelegate Invoke { get; } = invoke;

        /// <summary>
        /// RFC 7252 section 5.9.2.2: 4.01 Unauthorized to a peer with no authenticated identity (it may retry over a secured
        /// transport); section 5.9.2.4: 4.03 Forbidden to one a policy refuses. Null when the request may proceed.
        /// </summary>
        public CoapResponse? Authorize(CoapRequest request)
        {
            if (!requireIdentity)
            {
                return null;
            }

            if (request.Peer.Identity is not { } identity)
            {
                return CoapResponse.Diagnostic(CoapCode.Unauthorized, "This resource needs an authenticated peer (coaps:// or coaps+tcp://).");
            }

            foreach (Func<CoapPeerIdentity, CoapRequest, bool> policy in policies)
            {
                if (!policy(identity, request))
                {
                    return CoapResponse.Diagnostic(CoapCode.Forbidden, $"{identity} may not {request.Method.Name ?? request.Method.ToString()} {request.Path}.");
                }
            }

            return null;
        }
    }
}
