using CoapNet.Blockwise;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Client;

// The streamed transfers and the observation of a request built by hand, for callers that set options a URI cannot
// carry (Accept, an early Block2, any option by number): the same machinery as the URI forms, given a message and a peer.
public sealed partial class CoapClient
{
    /// <summary>
    /// Sends a request built by hand and writes a successful response's body to <paramref name="destination"/> block
    /// by block as it arrives (RFC 7959 section 3.1), as <see cref="Download(Uri, Stream, IProgress{CoapTransferProgress}?, CancellationToken)"/>
    /// does. An early Block2 option in the request chooses the block size and the block to start from (section 2.4).
    /// </summary>
    /// <param name="request">The request, typically a GET or FETCH; its options are sent as they are.</param>
    /// <param name="peer">The server; a coaps peer is sent to in its DTLS session.</param>
    /// <param name="destination">A writable stream; written on the thread that receives each block.</param>
    /// <param name="progress">Told after each block received; null for none.</param>
    /// <param name="cancellationToken">Cancels the transfer, between blocks too.</param>
    /// <returns>The response, without the body (an error response keeps its diagnostic payload).</returns>
    /// <exception cref="ArgumentException">The stream cannot be written, or the message is not a request.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    public CoapResponse Download(CoapMessage request, CoapPeer peer, Stream destination, IProgress<CoapTransferProgress>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(peer);
        BlockTransfer transfer = DownloadTo(destination, progress);
        CoapPeer target = InSession(peer, cancellationToken);

        // Not sync-over-async: the completion is signaled by the receive loop or a timer on pool threads.
        return new(RouteFor(target.Scheme).Endpoint.SendRequestAsync(request, target, transfer, cancellationToken).GetAwaiter().GetResult(), target.EndPoint);
    }

    /// <inheritdoc cref="Download(CoapMessage, CoapPeer, Stream, IProgress{CoapTransferProgress}?, CancellationToken)"/>
    public async Task<CoapResponse> DownloadAsync(CoapMessage request, CoapPeer peer, Stream destination, IProgress<CoapTransferProgress>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(peer);
        BlockTransfer transfer = DownloadTo(destination, progress);
        CoapPeer target = await InSessionAsync(peer, cancellationToken).ConfigureAwait(false);
        return await SendToAsync(request, target, transfer, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Sends a request built by hand with a body read from <paramref name="body"/> one block at a time as the server
    /// asks for it (RFC 7959 Block1, with Size1 when the stream can tell its length), as
    /// <see cref="Upload(Uri, Stream, ushort?, IProgress{CoapTransferProgress}?, CoapCode?, CancellationToken)"/> does.
    /// The request's own options (Content-Format among them) go with every block.
    /// </summary>
    /// <param name="request">A PUT, POST, FETCH, PATCH or iPATCH without a payload of its own.</param>
    /// <param name="peer">The server; a coaps peer is sent to in its DTLS session.</param>
    /// <param name="body">A readable stream, read from its current position, on the thread that receives each 2.31 Continue.</param>
    /// <param name="progress">Told after each block the server acknowledged; null for none.</param>
    /// <param name="cancellationToken">Cancels the upload, between blocks too.</param>
    /// <returns>The final response.</returns>
    /// <exception cref="ArgumentException">The stream cannot be read, the method carries no body, or the request has a payload already.</exception>
    /// <exception cref="CoapTimeoutException">No acknowledgement or response in time.</exception>
    /// <exception cref="CoapResetException">The server answered with RST.</exception>
    public CoapResponse Upload(CoapMessage request, CoapPeer peer, Stream body, IProgress<CoapTransferProgress>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(peer);
        BlockTransfer transfer = UploadOf(request, body, progress);
        CoapPeer target = InSession(peer, cancellationToken);

        // Not sync-over-async: the completion is signaled by the receive loop or a timer on pool threads.
        return new(RouteFor(target.Scheme).Endpoint.SendRequestAsync(request, target, transfer, cancellationToken).GetAwaiter().GetResult(), target.EndPoint);
    }

    /// <inheritdoc cref="Upload(CoapMessage, CoapPeer, Stream, IProgress{CoapTransferProgress}?, CancellationToken)"/>
    public async Task<CoapResponse> UploadAsync(CoapMessage request, CoapPeer peer, Stream body, IProgress<CoapTransferProgress>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(peer);
        BlockTransfer transfer = UploadOf(request, body, progress);
        CoapPeer target = await InSessionAsync(peer, cancellationToken).ConfigureAwait(false);
        return await SendToAsync(request, target, transfer, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Observes with a request built by hand (RFC 7641), with a callback, as <see cref="Observe(Uri, Action{CoapResponse}, Action{Exception}?, CancellationToken)"/>
    /// does: its options (Accept, Uri-Query, any other) go with the registration, every re-registration and the
    /// deregistration; the client sets Observe and the token.
    /// </summary>
    /// <param name="request">A GET or FETCH (RFC 8132 section 2.4).</param>
    /// <param name="peer">The server; a coaps peer is observed in its DTLS session.</param>
    /// <param name="onNotification">Gets each response, one at a time, in order.</param>
    /// <param name="onError">Gets the failure that ends the observation after the first response (or an exception <paramref name="onNotification"/> threw); null to ignore it.</param>
    /// <param name="cancellationToken">Ends the observation.</param>
    /// <returns>The observation; <see cref="CoapObservation.IsActive"/> is false when the server did not accept it.</returns>
    /// <exception cref="ArgumentException">The request is not a GET or FETCH.</exception>
    /// <exception cref="CoapTimeoutException">The registration was not answered in time.</exception>
    /// <exception cref="CoapResetException">The server answered the registration with RST.</exception>
    /// <exception cref="OperationCanceledException">The token was canceled before the first response.</exception>
    public CoapObservation Observe(CoapMessage request, CoapPeer peer, Action<CoapResponse> onNotification, Action<Exception>? onError = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(peer);
        ArgumentNullException.ThrowIfNull(onNotification);
        if (request.Code != CoapCode.Get && request.Code != CoapCode.Fetch)
        {
            // RFC 7641 section 2 (GET) and RFC 8132 section 2.4 (FETCH): no other method registers an observer.
            throw new ArgumentException($"Only GET and FETCH can observe a resource, not {request.Code}.", nameof(request));
        }

        CoapMessage registration = request.CopyWithout(CoapOptionNumber.Observe);
        registration.Observe = 0;
        return ObserveCore(registration, peer, onNotification, onError, cancellationToken);
    }

    /// <summary>Starts an observation with <paramref name="request"/> (Observe=0 set) and returns once its first response was handled.</summary>
    private CoapObservation ObserveCore(CoapMessage request, CoapPeer peer, Action<CoapResponse> onNotification, Action<Exception>? onError, CancellationToken cancellationToken)
    {
        ClientObservation observation = CreateObservation(request, peer);
        TaskCompletionSource first = new(TaskCreationOptions.RunContinuationsAsynchronously);
        CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(static state => ((ClientObservation)state!).Dispose(), observation);
        observation.Start();
        Task pump = PumpAsync(observation, onNotification, onError, first, registration);

        // Not sync-over-async: the first response is signaled by the receive loop or a timer on pool threads.
        try
        {
            first.Task.GetAwaiter().GetResult();
        }
        catch (System.Threading.Channels.ChannelClosedException) when (cancellationToken.IsCancellationRequested)
        {
            throw new OperationCanceledException(cancellationToken);
        }

        return new CoapObservation(observation, pump);
    }

    private static BlockTransfer UploadOf(CoapMessage request, Stream body, IProgress<CoapTransferProgress>? progress)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (!CarriesBody(request.Code))
        {
            throw NoBody(request.Code, nameof(request));
        }

        if (!request.Payload.IsEmpty)
        {
            throw new ArgumentException("The request has a payload already; the body to upload comes from the stream.", nameof(request));
        }

        return UploadFrom(body, progress);
    }
}
