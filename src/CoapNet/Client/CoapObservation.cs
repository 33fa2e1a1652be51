using CoapNet.Messaging;

namespace CoapNet.Client;

/// <summary>
/// An observation started with <see cref="CoapClient.Observe(Uri, Action{Messages.CoapResponse}, Action{Exception}?, CancellationToken)"/> (or the overload with a request message):
/// dispose it to deregister (RFC 7641 section 3.6). The callbacks run one at a time, in the order the
/// notifications arrived, on a thread of the pool.
/// </summary>
public sealed class CoapObservation : IDisposable
{
    private readonly ClientObservation _observation;
    private readonly Task _pump;

    internal CoapObservation(ClientObservation observation, Task pump)
    {
        _observation = observation;
        _pump = pump;
    }

    /// <summary>True while notifications may still arrive: the server accepted the registration and it has not ended.</summary>
    public bool IsActive => _observation.IsActive;

    /// <summary>A task that completes when the observation ends (disposed, or ended by the server or a failure).</summary>
    public Task Completion => _pump;

    /// <summary>Deregisters: the server is told with a GET carrying Observe=1, and any later notification is rejected. Idempotent.</summary>
    public void Dispose() => _observation.Dispose();

    /// <summary>
    /// Deregisters as <see cref="Dispose"/> does, then waits for the server's answer to the GET with Observe=1
    /// (RFC 7641 section 3.6), so a program about to exit knows the server has let go of it rather than learning
    /// it later from a RST. Safe to call after <see cref="Dispose"/>: it waits for the deregistration that sent.
    /// </summary>
    /// <param name="cancellationToken">Stops the wait; the deregistration is sent all the same.</param>
    /// <returns>
    /// The server's answer (a response without Observe: the server no longer observes for us, section 3.6), or null
    /// when there was nothing to deregister: the server had ended the observation, it failed, or it was never accepted.
    /// </returns>
    /// <exception cref="CoapTimeoutException">The deregistration was not answered in time.</exception>
    /// <exception cref="CoapResetException">The server answered the deregistration with RST.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled first.</exception>
    public async Task<Messages.CoapResponse?> DeregisterAsync(CancellationToken cancellationToken = default)
    {
        _observation.Dispose();
        Task<Messages.CoapMessage>? sent = await _observation.Deregistration.WaitAsync(cancellationToken).ConfigureAwait(false);
        return sent is null ? null : new Messages.CoapResponse(await sent.WaitAsync(cancellationToken).ConfigureAwait(false), _observation.Peer.EndPoint);
    }
}
