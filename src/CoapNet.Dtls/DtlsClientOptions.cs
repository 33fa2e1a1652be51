namespace CoapNet.Dtls;

/// <summary>
/// Which credentials a <see cref="DtlsClientTransport"/> presents and how it bounds its sessions; a client's coaps
/// transport gets them with <c>clientOptions.UseDtls(dtlsOptions)</c>.
/// </summary>
public sealed class DtlsClientOptions : DtlsOptions
{
    /// <summary>
    /// The PSK identity to present (RFC 4279 section 2), as UTF-8 text; libcoap's <c>-u</c>. Null to offer no PSK
    /// suite: then the server is authenticated by raw public key or certificate, and the client needs
    /// <see cref="DtlsOptions.TrustedRawPublicKeys"/>, <see cref="DtlsOptions.TrustedRoots"/> or
    /// <see cref="DtlsOptions.CertificateValidator"/> to check it.
    /// </summary>
    public string? PskIdentity { get; set; }

    /// <summary>The pre-shared key of <see cref="PskIdentity"/>; libcoap's <c>-k</c>. Never logged.</summary>
    /// <remarks>
    /// Configuration names the key as text ("PskKey", as libcoap's <c>-k</c> takes it), hexadecimal ("PskKeyHex") or a
    /// file ("PskKeyFile"), all read by <c>DtlsConfiguration</c>, whose messages never quote it. The configuration binder
    /// never sets it: its key name is moved out of the way of "PskKey" (which the binder would read as base64, and quote
    /// when it is not), and bytes are not a setting, so that name is refused as unknown.
    /// </remarks>
    [Microsoft.Extensions.Configuration.ConfigurationKeyName("PskKeyBytes")]
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
