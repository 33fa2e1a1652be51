using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Serialization;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// Checks at every send of an endpoint whether the endpoint's lock is free, by asking another thread
/// to take it (through <see cref="CoapEndpoint.DeduplicationCount"/>). Only a violation waits out the bound.
/// </summary>
internal sealed class LockProbe
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(5);
    private readonly List<string> _underLock = [];
    private int _sends;

    public int Sends => _sends;

    /// <summary>The messages that were sent while the endpoint's lock was held.</summary>
    public IReadOnlyList<string> SendsUnderLock => _underLock;

    /// <summary>Hooks the probe into the transport of <paramref name="endpoint"/>.</summary>
    public static LockProbe Attach(CoapEndpoint endpoint, InMemoryTransport transport)
    {
        LockProbe probe = new();
        transport.OnSending = (bytes, remote) =>
        {
            Interlocked.Increment(ref probe._sends);
            Task<int> other = Task.Factory.StartNew(() => endpoint.DeduplicationCount, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            if (!other.Wait(Bound))
            {
                string what = CoapMessageSerializer.Udp.TryDeserialize(bytes.Span, out CoapMessage? message, out _) ? message.ToString() : Convert.ToHexString(bytes.Span);
                lock (probe._underLock)
                {
                    probe._underLock.Add($"{what} to {remote}");
                }
            }
        };
        return probe;
    }
}
