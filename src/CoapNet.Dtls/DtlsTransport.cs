using System.Net;
using CoapNet.Channels;
using CoapNet.Dtls.Sessions;
using CoapNet.Transports;

namespace CoapNet.Dtls;

/// <summary>
/// What the DTLS server and client transports share: one UDP socket under sessions, the "coaps" scheme, and sending
/// only in the session a message names.
/// </summary>
public abstract class DtlsTransport : IDatagramTransport
{
    private readonly DtlsEngine _engine;

    private protected DtlsTransport(DtlsEngine engine) => _engine = engine;

    /// <inheritdoc/>
    public IPEndPoint LocalEndPoint => _engine.Network.LocalEndPoint;

    /// <summary>"coaps": every peer heard through this transport is a coaps peer (RFC 7252 section 6.2).</summary>
    public string Scheme => CoapPeer.DtlsScheme;

    /// <summary>The established sessions now, for monitoring.</summary>
    public int SessionCount => _engine.SessionCount;

    /// <inheritdoc/>
    public void Start(IDatagramReceiver receiver) => _engine.Start(receiver);

    /// <summary>Not used on a secure transport: a datagram without a session is dropped, never sent in the clear.</summary>
    /// <param name="datagram">The bytes.</param>
    /// <param name="remote">The destination.</param>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote) => _engine.Send(datagram, null);

    /// <summary>Sends <paramref name="datagram"/> in the session <paramref name="securityContext"/>, or drops it when that session is gone (RFC 7252 section 9.1.1).</summary>
    /// <param name="datagram">The plaintext.</param>
    /// <param name="remote">The destination; the session's own address is used.</param>
    /// <param name="securityContext">The session.</param>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote, CoapSecurityContext? securityContext) => _engine.Send(datagram, securityContext);

    /// <summary>
    /// A confirmable message in <paramref name="securityContext"/> went unacknowledged after MAX_RETRANSMIT (RFC 7252
    /// section 4.2): a client takes it as the server having lost the session and ends it (reported to the receiver as a
    /// lost session); a server keeps it until it ages out or the client handshakes again.
    /// </summary>
    /// <param name="remote">The destination.</param>
    /// <param name="securityContext">The session.</param>
    void IDatagramTransport.OnUnacknowledged(IPEndPoint remote, CoapSecurityContext? securityContext) => _engine.OnUnacknowledged(securityContext);

    /// <summary>Not used on a secure transport: a datagram without a session is dropped, never sent in the clear.</summary>
    /// <param name="datagram">The bytes.</param>
    /// <param name="remote">The destination.</param>
    /// <param name="cancellationToken">Unused.</param>
    /// <returns>A completed task.</returns>
    public ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken = default)
    {
        _engine.Send(datagram.Span, null);
        return ValueTask.CompletedTask;
    }

    /// <summary>Sends close_notify in every session and closes the socket.</summary>
    public void Dispose()
    {
        _engine.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <inheritdoc cref="Dispose"/>
    /// <returns>A task that completes when the socket is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        await _engine.DisposeAsync().ConfigureAwait(false);
        GC.SuppressFinalize(this);
    }
}
