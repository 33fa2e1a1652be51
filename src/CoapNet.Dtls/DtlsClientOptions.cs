using System.Net;

namespace CoapNet.Dtls;

/// <summary>How a <see cref="DtlsClientTransport"/> binds and which credentials it presents.</summary>
public sealed class DtlsClientOptions : DtlsOptions
{
    /// <summary>The local endpoint to bind; default [::]:0 (dual-stack, a free port).</summary>
    public IPEndPoint? LocalEndPoint { get; set; }

    /// <summary>
    /// The PSK identity to present (RFC 4279 section 2), as UTF-8 text; libcoap's <c>-u</c>. Null to offer no PSK
    /// suite: then the server is authenticated by raw public key or certificate, and the client needs
    /// <see cref="DtlsOptions.TrustedRawPublicKeys"/>, <see cref="DtlsOptions.TrustedRoots"/> or
    /// <see cref="DtlsOptions.CertificateValidator"/> to check it.
    /// </summary>
    public string? PskIdentity { get; set; }

    /// <summary>The pre-shared key of <see cref="PskIdentity"/>; libcoap's <c>-k</c>. Never logged.</summary>
    public byte[]? PskKey { get; set; }

    /// <summary>Checks the settings before a transport uses them.</summary>
    /// <exception cref="ArgumentException">A setting is missing or out of range; the message names it.</exception>
    internal void Validate()
    {
        ValidateShared();
        Require(PskIdentity is not null || TrustsRawPublicKeys || TrustsCertificates, nameof(PskIdentity), $"or a way to check the server's key ({nameof(TrustedRawPublicKeys)}, {nameof(TrustedRoots)}, {nameof(CertificateValidator)}) must be set");
        if (PskIdentity is not null)
        {
            Require(PskIdentity.Length > 0, nameof(PskIdentity), "must not be empty");
            Require(System.Text.Encoding.UTF8.GetByteCount(PskIdentity) <= ushort.MaxValue, nameof(PskIdentity), "must be at most 65535 bytes in UTF-8");
            Require(PskKey is { Length: > 0 }, nameof(PskKey), "must be a non-empty key");
        }
    }
}
