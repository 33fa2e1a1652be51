namespace CoapNet.Dtls.Sessions;

/// <summary>
/// The server refused the cookie it gave in its HelloVerifyRequest and asked for another (RFC 6347 section 4.2.1):
/// the client's handshake ends, and the client engine starts a new one rather than wait for the handshake timeout. An
/// <see cref="IOException"/>, so BouncyCastle aborts the handshake and passes it on unchanged.
/// </summary>
internal sealed class CookieRefusedException(string message) : IOException(message);
