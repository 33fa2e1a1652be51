using CoapNet.Channels;
using CoapNet.Messages;

namespace CoapNet.Messaging;

/// <summary>
/// One stage of the stack above the exchange layer, on the client and the server side at once, as
/// block-wise transfer (RFC 7959), Observe (RFC 7641) and OSCORE (RFC 8613) will be: each sees
/// requests and responses pass and may split, join, answer or hold them, without touching the
/// layers below. The default of every member passes the message on unchanged.
/// </summary>
/// <remarks>
/// Stages are ordered from the application down: on the way out (a client request, a server
/// response) the first stage sees a message first; on the way in (a server request) the last
/// stage sees it first.
/// </remarks>
internal abstract class CoapStage
{
    /// <summary>
    /// True when this stage processes critical option <paramref name="number"/> in responses, so the
    /// exchange layer does not reject a response for carrying it (RFC 7252 section 5.4.1).
    /// </summary>
    public virtual bool Processes(CoapOptionNumber number) => false;

    /// <summary>A client request on its way down; completes with the response the caller gets.</summary>
    /// <param name="request">The request.</param>
    /// <param name="peer">The server.</param>
    /// <param name="next">The stages below, then the exchange layer; may be called several times (one per block).</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    public virtual Task<CoapMessage> SendRequestAsync(CoapMessage request, CoapPeer peer, Func<CoapMessage, CoapPeer, CancellationToken, Task<CoapMessage>> next, CancellationToken cancellationToken)
        => next(request, peer, cancellationToken);

    /// <summary>A received request on its way up to the handler; a stage may answer it itself instead of calling <paramref name="next"/>.</summary>
    public virtual void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next) => next(exchange);

    /// <summary>A response on its way down to the layer below.</summary>
    public virtual void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next) => next(exchange, response);
}
