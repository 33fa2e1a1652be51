using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;

namespace CoapNet.Dtls.Sessions;

/// <summary>
/// The record cipher of a session's first epoch as BouncyCastle made it, telling the session what it authenticated and
/// what it could not. BouncyCastle's DTLS record layer drops a record that fails authentication without a word (RFC
/// 6347 section 4.1.2.7), which is right for an established session but leaves a handshake whose peer holds another key
/// waiting for a Finished that can never come; a session handed over to our own record protection must know the last
/// record BouncyCastle read; and a server keeps the Finished it wrote, to send again after the hand-over. Everything
/// else passes through unchanged.
/// </summary>
internal sealed class WatchedCipher(TlsCipher inner, DtlsSession session) : TlsCipher, TlsCipherExt
{
    public bool UsesOpaqueRecordType => inner.UsesOpaqueRecordType;

    public int GetCiphertextDecodeLimit(int plaintextLimit) => inner.GetCiphertextDecodeLimit(plaintextLimit);

    public int GetCiphertextEncodeLimit(int plaintextLength, int plaintextLimit) => inner.GetCiphertextEncodeLimit(plaintextLength, plaintextLimit);

    public int GetPlaintextLimit(int ciphertextLimit) => inner.GetPlaintextLimit(ciphertextLimit);

    public int GetPlaintextDecodeLimit(int ciphertextLimit)
        => inner is TlsCipherExt ext ? ext.GetPlaintextDecodeLimit(ciphertextLimit) : inner.GetPlaintextLimit(ciphertextLimit);

    public int GetPlaintextEncodeLimit(int ciphertextLimit)
        => inner is TlsCipherExt ext ? ext.GetPlaintextEncodeLimit(ciphertextLimit) : inner.GetPlaintextLimit(ciphertextLimit);

    public TlsEncodeResult EncodePlaintext(long seqNo, short contentType, ProtocolVersion recordVersion, int headerAllocation, byte[] plaintext, int offset, int len)
    {
        session.NoteEncrypted(contentType, plaintext.AsSpan(offset, len));
        return inner.EncodePlaintext(seqNo, contentType, recordVersion, headerAllocation, plaintext, offset, len);
    }

    public TlsEncodeResult EncodePlaintext(long seqNo, short contentType, ProtocolVersion recordVersion, int headerAllocation, ReadOnlySpan<byte> plaintext)
    {
        session.NoteEncrypted(contentType, plaintext);
        return inner.EncodePlaintext(seqNo, contentType, recordVersion, headerAllocation, plaintext);
    }

    public TlsDecodeResult DecodeCiphertext(long seqNo, short recordType, ProtocolVersion recordVersion, byte[] ciphertext, int offset, int len)
    {
        TlsDecodeResult result;
        try
        {
            result = inner.DecodeCiphertext(seqNo, recordType, recordVersion, ciphertext, offset, len);
        }
        catch (TlsFatalAlert alert) when (alert.AlertDescription == AlertDescription.bad_record_mac)
        {
            session.NoteUnauthenticated();
            throw;
        }

        session.NoteAuthenticated(seqNo);
        return result;
    }

    public void RekeyDecoder() => inner.RekeyDecoder();

    public void RekeyEncoder() => inner.RekeyEncoder();
}
