using System.Net;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// A request received by a <see cref="CoapEndpoint"/>, and the way to answer it: a piggybacked
/// response in the ACK, or (after <see cref="Accept"/>) a separate response (RFC 7252 section 5.2).
/// </summary>
/// <remarks>Thread-safe: the handler may answer from any thread, once.</remarks>
public sealed class CoapExchange
{
    private readonly CoapEndpoint _endpoint;
    private readonly DeduplicationCache.Entry _entry;
    private int _state; // 0 new, 1 accepted (empty ACK sent), 2 responded

    internal CoapExchange(CoapEndpoint endpoint, CoapMessage request, IPEndPoint remote, DeduplicationCache.Entry entry)
    {
        _endpoint = endpoint;
        Request = request;
        RemoteEndPoint = remote;
        _entry = entry;
    }

    /// <summary>The request.</summary>
    public CoapMessage Request { get; }

    /// <summary>Who sent it.</summary>
    public IPEndPoint RemoteEndPoint { get; }

    /// <summary>True when the request was confirmable.</summary>
    public bool IsConfirmable => Request.Type == CoapMessageType.Confirmable;

    /// <summary>True once an empty ACK was sent, so the response will be separate.</summary>
    public bool IsAccepted => Volatile.Read(ref _state) == 1;

    /// <summary>True once a response was sent.</summary>
    public bool HasResponded => Volatile.Read(ref _state) == 2;

    /// <summary>
    /// Acknowledges a confirmable request now with an empty ACK, so the client stops retransmitting
    /// while a slow handler works; the response then goes out as a separate confirmable message
    /// (RFC 7252 section 5.2.2). Does nothing for a non-confirmable request or when already accepted or answered.
    /// </summary>
    public void Accept()
    {
        if (!IsConfirmable || Interlocked.CompareExchange(ref _state, 1, 0) != 0)
        {
            return;
        }

        byte[] ack = CoapEndpoint.SerializeEmpty(CoapMessageType.Acknowledgement, Request.MessageId);
        _endpoint.RecordReply(_entry, ack);
        _endpoint.SendRaw(ack, RemoteEndPoint, null);
    }

    /// <summary>
    /// Sends the response; <paramref name="response"/> itself is not modified. The endpoint sets the type, Message ID and token on the wire: piggybacked in the ACK of
    /// a confirmable request not yet accepted; otherwise a separate CON (retransmitted until
    /// acknowledged) for a confirmable request, or a NON for a non-confirmable one (RFC 7252 section 5.2.3).
    /// </summary>
    /// <param name="response">The response; its code must be a response code.</param>
    /// <exception cref="ArgumentException">The code is not a response code, or the message cannot be serialized.</exception>
    /// <exception cref="InvalidOperationException">A response was already sent.</exception>
    public void Respond(CoapMessage response)
    {
        ArgumentNullException.ThrowIfNull(response);
        if (!response.Code.IsResponse)
        {
            throw new ArgumentException($"{response.Code} is not a response code.", nameof(response));
        }

        int previous = Interlocked.Exchange(ref _state, 2);
        if (previous == 2)
        {
            throw new InvalidOperationException("This exchange was already answered.");
        }

        try
        {
            // The caller's message is not modified (a handler may return a shared, cached response):
            // the header fields go into a shallow copy that shares options and payload.
            bool piggybacked = IsConfirmable && previous == 0;
            CoapMessageType type = piggybacked ? CoapMessageType.Acknowledgement : IsConfirmable ? CoapMessageType.Confirmable : CoapMessageType.NonConfirmable;
            CoapMessage wire = new(type, response.Code, piggybacked ? Request.MessageId : (ushort)0, Request.Token, response.HasOptions ? response.Options : null, response.Payload);
            if (piggybacked)
            {
                byte[] bytes = _endpoint.SerializeForSend(wire);
                _endpoint.RecordReply(_entry, bytes);
                _endpoint.SendRaw(bytes, RemoteEndPoint, wire);
            }
            else
            {
                _endpoint.SendSeparateResponse(wire, RemoteEndPoint);
            }
        }
        catch (ArgumentException)
        {
            // Nothing was sent: the handler (or the endpoint's 5.00 fallback) may still answer.
            Volatile.Write(ref _state, previous);
            throw;
        }
    }
}
