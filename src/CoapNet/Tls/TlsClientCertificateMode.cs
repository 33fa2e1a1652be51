namespace CoapNet.Tls;

/// <summary>Whether a coaps+tcp server asks its clients for a certificate (RFC 8323 section 9.1, the Certificate mode of RFC 7252 section 9).</summary>
public enum TlsClientCertificateMode
{
    /// <summary>Clients are not asked for one; handlers see no identity (<c>request.Peer.Identity</c> is null).</summary>
    None,

    /// <summary>Clients are asked; one that sends none is served without an identity, one that sends an untrusted one is refused.</summary>
    Allowed,

    /// <summary>Clients must send a certificate that passes validation, or the handshake fails.</summary>
    Required,
}
