using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Server;
using Microsoft.Extensions.DependencyInjection;

namespace CoapNet.Endpoints;

/// <summary>
/// One request to an endpoint with bound parameters, as its filters, its results and the generated binding code see
/// it: the request, its cancellation, and the service scope its parameters are resolved from.
/// </summary>
public sealed class CoapEndpointContext
{
    private readonly CoapEndpointInvoker _endpoint;
    private AsyncServiceScope? _scope;

    internal CoapEndpointContext(CoapRequest request, CoapEndpointInvoker endpoint, CancellationToken cancellationToken)
    {
        Request = request;
        _endpoint = endpoint;
        CancellationToken = cancellationToken;
    }

    /// <summary>The request.</summary>
    public CoapRequest Request { get; }

    /// <summary>
    /// Canceled when the server stops without waiting further for in-flight requests. A synchronous handler (one that
    /// returns no task) gets <see cref="CancellationToken.None"/>: it runs to completion on its blocking lane.
    /// </summary>
    public CancellationToken CancellationToken { get; }

    /// <summary>Who the peer proved to be on a secured transport (DTLS, TLS); null on an unsecured one.</summary>
    public CoapPeerIdentity? Identity => Request.Peer.Identity;

    /// <summary>The endpoint's route template, such as "/lamps/{id:int}".</summary>
    public string Template => _endpoint.Template;

    /// <summary>The request's service scope, made at first use and disposed once the response is made.</summary>
    /// <exception cref="InvalidOperationException">The server has no <see cref="CoapHandlerOptions.Services"/>.</exception>
    public IServiceProvider RequestServices
    {
        get
        {
            _scope ??= (_endpoint.ScopeFactory ?? throw new InvalidOperationException(
                $"{Template} asks for a service, but CoapServerOptions.Handlers.Services is not set (Hosting sets it to the host's services).")).CreateAsyncScope();
            return _scope.Value.ServiceProvider;
        }
    }

    /// <summary>The 4.00 response of the last binding that failed, for the generated code to answer with.</summary>
    [System.ComponentModel.EditorBrowsable(System.ComponentModel.EditorBrowsableState.Never)]
    public CoapResponse? BindingFailure { get; internal set; }

    /// <summary>
    /// What the generated code passes to ConfigureAwait: false, as library code awaits, except under the task scheduler a
    /// test gives the server, where a continuation must stay on it (ConfigureAwait(false) would move it to the thread
    /// pool, past the test's pump) as the server's own await does.
    /// </summary>
    [System.ComponentModel.EditorBrowsable(System.ComponentModel.EditorBrowsableState.Never)]
    public bool ContinueOnCapturedContext => _endpoint.ContinueOnCapturedContext;

    internal CoapEndpointInvoker Endpoint => _endpoint;

    internal CoapHandlerOptions Options => _endpoint.Options;

    /// <summary>Disposes the service scope, if one was made; synchronously for a synchronous handler.</summary>
    internal void DisposeScope()
    {
        if (_scope is { } scope)
        {
            _scope = null;
            ((IDisposable)scope).Dispose();
        }
    }

    internal ValueTask DisposeScopeAsync()
    {
        if (_scope is { } scope)
        {
            _scope = null;
            return scope.DisposeAsync();
        }

        return ValueTask.CompletedTask;
    }
}
