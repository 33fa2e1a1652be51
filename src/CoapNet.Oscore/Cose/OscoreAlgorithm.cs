using System.Security.Cryptography;

namespace CoapNet.Oscore.Cose;

/// <summary>
/// The AEAD algorithm and key derivation of an OSCORE context (RFC 8613 section 3.1): AES-CCM-16-64-128 (COSE algorithm
/// 10: a 16-byte key, a 13-byte nonce, an 8-byte tag, RFC 8152 section 10.2) and HKDF-SHA-256, the defaults.
/// </summary>
internal static class OscoreAlgorithm
{
    /// <summary>The COSE algorithm number of AES-CCM-16-64-128.</summary>
    public const int AesCcm16_64_128 = 10;

    public const int KeyLength = 16;

    public const int NonceLength = 13;

    public const int TagLength = 8;

    /// <summary>The longest Sender ID the nonce has room for: nonce length minus 6 (RFC 8613 section 3.3).</summary>
    public const int MaxIdLength = NonceLength - 6;

    /// <summary>The largest Sender Sequence Number: 2^40 - 1, five bytes of Partial IV (RFC 8613 section 7.2.1).</summary>
    public const long MaxSequenceNumber = (1L << 40) - 1;

    /// <summary>
    /// Derives a key or the Common IV (RFC 8613 section 3.2.1): HKDF-SHA-256 of the Master Secret and Salt with
    /// info = [id, id_context or nil, alg_aead, type ("Key" or "IV"), L].
    /// </summary>
    public static byte[] Derive(ReadOnlySpan<byte> masterSecret, ReadOnlySpan<byte> masterSalt, ReadOnlySpan<byte> id, byte[]? idContext, string type, int length)
    {
        Span<byte> info = stackalloc byte[64 + (idContext?.Length ?? 0)];
        int written = Info(info, id, idContext, type, length);
        byte[] output = new byte[length];
        HKDF.DeriveKey(HashAlgorithmName.SHA256, masterSecret, output, masterSalt, info[..written]);
        return output;
    }

    /// <summary>Writes the info array of a derivation and returns its length.</summary>
    public static int Info(Span<byte> destination, ReadOnlySpan<byte> id, byte[]? idContext, string type, int length)
    {
        Cbor cbor = new(destination);
        cbor.WriteArray(5);
        cbor.WriteBytes(id);
        if (idContext is null)
        {
            cbor.WriteNull();
        }
        else
        {
            cbor.WriteBytes(idContext);
        }

        cbor.WriteUInt(AesCcm16_64_128);
        cbor.WriteAscii(type);
        cbor.WriteUInt((ulong)length);
        return cbor.Length;
    }

    /// <summary>
    /// The AEAD nonce (RFC 8613 section 5.2): the length of ID_PIV, ID_PIV left-padded to 7 bytes and the Partial IV
    /// left-padded to 5 bytes, XORed with the Common IV.
    /// </summary>
    public static void Nonce(ReadOnlySpan<byte> commonIv, ReadOnlySpan<byte> idPiv, ReadOnlySpan<byte> partialIv, Span<byte> nonce)
    {
        nonce[..NonceLength].Clear();
        nonce[0] = (byte)idPiv.Length;
        idPiv.CopyTo(nonce[(1 + MaxIdLength - idPiv.Length)..]);
        partialIv.CopyTo(nonce[(NonceLength - partialIv.Length)..]);
        for (int i = 0; i < NonceLength; i++)
        {
            nonce[i] ^= commonIv[i];
        }
    }

    /// <summary>
    /// The AAD (RFC 8613 section 5.4): Enc_structure ["Encrypt0", h'', external_aad], where external_aad is the byte
    /// string of [oscore_version 1, [alg_aead], request_kid, request_piv, options h''] (no Class I options exist).
    /// </summary>
    /// <returns>The number of bytes written.</returns>
    public static int Aad(Span<byte> destination, ReadOnlySpan<byte> requestKid, ReadOnlySpan<byte> requestPiv)
    {
        Span<byte> external = stackalloc byte[16 + MaxIdLength + 8];
        Cbor inner = new(external);
        inner.WriteArray(5);
        inner.WriteUInt(1);
        inner.WriteArray(1);
        inner.WriteUInt(AesCcm16_64_128);
        inner.WriteBytes(requestKid);
        inner.WriteBytes(requestPiv);
        inner.WriteBytes([]);

        Cbor outer = new(destination);
        outer.WriteArray(3);
        outer.WriteAscii("Encrypt0");
        outer.WriteBytes([]);
        outer.WriteBytes(external[..inner.Length]);
        return outer.Length;
    }

    /// <summary>The longest AAD: its fixed part and a kid and Partial IV of the longest kind.</summary>
    public const int MaxAadLength = 64;

    /// <summary>The Partial IV of a sequence number: its shortest big-endian bytes, 0 as one zero byte (RFC 8613 section 6.1).</summary>
    /// <returns>The number of bytes written (1 to 5).</returns>
    public static int PartialIv(long sequenceNumber, Span<byte> destination)
    {
        int length = 1;
        while (length < 5 && sequenceNumber >> (8 * length) != 0)
        {
            length++;
        }

        for (int i = 0; i < length; i++)
        {
            destination[i] = (byte)(sequenceNumber >> (8 * (length - 1 - i)));
        }

        return length;
    }

    /// <summary>The sequence number a Partial IV of at most 5 bytes carries.</summary>
    public static long SequenceNumber(ReadOnlySpan<byte> partialIv)
    {
        long value = 0;
        foreach (byte b in partialIv)
        {
            value = (value << 8) | b;
        }

        return value;
    }
}
