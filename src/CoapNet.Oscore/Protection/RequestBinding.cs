using CoapNet.Messages;

namespace CoapNet.Oscore.Protection;

/// <summary>
/// What binds a response to its protected request (RFC 8613 section 7.1): the context, the request's kid and Partial IV
/// (both in the AAD of every response, and the nonce of a response without a Partial IV of its own), and, for an Observe
/// registration, the highest Partial IV of its notifications so far (the Notification Number, section 7.4.1).
/// </summary>
internal sealed class RequestBinding
{
    private long _notificationNumber = -1;

    public RequestBinding(OscoreContext context, ReadOnlyMemory<byte> requestKid, byte[] requestPiv, bool observe)
    {
        Context = context;
        RequestKid = requestKid;
        RequestPiv = requestPiv;
        Observe = observe;
    }

    public OscoreContext Context { get; }

    public ReadOnlyMemory<byte> RequestKid { get; }

    public byte[] RequestPiv { get; }

    /// <summary>On a client, the request as the stages above passed it, before protection: what Appendix B.1.2 repeats with an Echo value.</summary>
    public CoapMessage? Request { get; set; }

    /// <summary>True when the request carried an (inner) Observe option.</summary>
    public bool Observe { get; }

    /// <summary>
    /// On a client, takes a notification's Partial IV when it is newer than every one before (RFC 8613 section 7.4.1);
    /// false for a replayed or older notification, which is dropped.
    /// </summary>
    public bool TryAdvanceNotification(long partialIv)
    {
        while (true)
        {
            long current = Volatile.Read(ref _notificationNumber);
            if (partialIv <= current)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _notificationNumber, partialIv, current) == current)
            {
                return true;
            }
        }
    }
}
