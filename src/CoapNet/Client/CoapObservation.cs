namespace CoapNet.Client;

/// <summary>
/// An observation started with <see cref="CoapClient.Observe"/>:
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
}
