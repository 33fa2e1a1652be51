using Org.BouncyCastle.Security;
using Org.BouncyCastle.Tls.Crypto;
using Org.BouncyCastle.Tls.Crypto.Impl.BC;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// BouncyCastle's crypto for one handshake: the engine's, with the session's record cipher wrapped in a
/// <see cref="WatchedCipher"/>. One small object per handshake, sharing the engine's random source.
/// </summary>
internal sealed class HandshakeCrypto(SecureRandom random, DtlsSession session) : BcTlsCrypto(random)
{
    public override TlsCipher CreateCipher(TlsCryptoParameters cryptoParams, int encryptionAlgorithm, int macAlgorithm)
        => new WatchedCipher(base.CreateCipher(cryptoParams, encryptionAlgorithm, macAlgorithm), session);
}
