namespace CoapNet.Dtls;

/// <summary>
/// Decides whether a peer's raw public key (RFC 7250; RFC 7252 section 9.1.3.2) is trusted: a device is known by its
/// key, provisioned out of band, so the application says which keys it accepts. Runs on a handshake thread, after the
/// peer proved it holds the matching private key.
/// </summary>
/// <param name="subjectPublicKeyInfo">The peer's key as its DER SubjectPublicKeyInfo (what
/// <c>ECDsa.ExportSubjectPublicKeyInfo</c> gives, and <c>CoapPeerIdentity.Value</c> holds afterwards).</param>
/// <returns>True to accept the key; false fails the handshake with a bad_certificate alert and nothing is answered.</returns>
public delegate bool DtlsRawPublicKeyValidator(ReadOnlySpan<byte> subjectPublicKeyInfo);
