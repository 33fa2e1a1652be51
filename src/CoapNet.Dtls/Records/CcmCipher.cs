using System.Buffers.Binary;
using System.Security.Cryptography;
using Org.BouncyCastle.Crypto;
using Org.BouncyCastle.Crypto.Parameters;

namespace CoapNet.Dtls.Records;

/// <summary>
/// AES-CCM (RFC 3610) with a 12-byte nonce (L = 3) and an 8- or 16-byte tag, the cipher of the CCM and CCM_8 suites
/// (RFC 6655), over one AES block cipher keyed once: its round keys are all it keeps. It is ours because both ready
/// implementations cost more per small record than CoAP can afford: .NET's <see cref="AesCcm"/> makes a native context
/// per call, and BouncyCastle's CcmBlockCipher buffers through two MemoryStreams per session. Allocation-free.
/// </summary>
/// <remarks>Thread-safe once made: the block cipher only reads its round keys.</remarks>
internal sealed class CcmCipher
{
    private const int Block = 16;
    private const int NonceLength = 12;
    private const int CounterLength = 15 - NonceLength;

    private readonly IBlockCipher _aes;
    private readonly int _tagLength;

    public CcmCipher(ReadOnlySpan<byte> key, int tagLength)
    {
        _aes = Org.BouncyCastle.Crypto.AesUtilities.CreateEngine();
        _aes.Init(true, new KeyParameter(key));
        _tagLength = tagLength;
    }

    /// <summary>Encrypts <paramref name="plaintext"/> into <paramref name="ciphertext"/> (the same span is allowed) and writes the tag.</summary>
    public void Encrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData)
    {
        Span<byte> mac = stackalloc byte[Block];
        Mac(nonce, plaintext, associatedData, mac);
        Span<byte> s0 = stackalloc byte[Block];
        Counter(nonce, 0, s0);
        for (int i = 0; i < _tagLength; i++)
        {
            tag[i] = (byte)(mac[i] ^ s0[i]);
        }

        Ctr(nonce, plaintext, ciphertext);
    }

    /// <summary>Decrypts and authenticates; false (and <paramref name="plaintext"/> cleared) when the tag does not match.</summary>
    public bool Decrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData)
    {
        if (tag.Length != _tagLength)
        {
            return false;
        }

        Ctr(nonce, ciphertext, plaintext);
        Span<byte> mac = stackalloc byte[Block];
        Mac(nonce, plaintext, associatedData, mac);
        Span<byte> s0 = stackalloc byte[Block];
        Counter(nonce, 0, s0);
        for (int i = 0; i < _tagLength; i++)
        {
            mac[i] ^= s0[i];
        }

        if (!CryptographicOperations.FixedTimeEquals(mac[.._tagLength], tag))
        {
            plaintext.Clear();
            return false;
        }

        return true;
    }

    // RFC 3610 section 2.2: CBC-MAC over B0 (flags, nonce, message length), the associated data with its 2-byte
    // length, and the message, each zero-padded to whole blocks.
    private void Mac(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> message, ReadOnlySpan<byte> associatedData, Span<byte> x)
    {
        Span<byte> b = stackalloc byte[Block];
        b[0] = (byte)((associatedData.IsEmpty ? 0 : 0x40) | (((_tagLength - 2) / 2) << 3) | (CounterLength - 1));
        nonce.CopyTo(b[1..]);
        b[13] = (byte)(message.Length >> 16);
        b[14] = (byte)(message.Length >> 8);
        b[15] = (byte)message.Length;
        _aes.ProcessBlock(b, x);
        if (!associatedData.IsEmpty)
        {
            // Associated data shorter than 2^16 - 2^8 bytes: its length in two bytes, then the data.
            b.Clear();
            BinaryPrimitives.WriteUInt16BigEndian(b, (ushort)associatedData.Length);
            int used = 2;
            foreach (byte value in associatedData)
            {
                b[used++] = value;
                if (used == Block)
                {
                    Absorb(x, b);
                    used = 0;
                }
            }

            if (used > 0)
            {
                b[used..].Clear();
                Absorb(x, b);
            }
        }

        for (int offset = 0; offset < message.Length; offset += Block)
        {
            ReadOnlySpan<byte> part = message[offset..Math.Min(message.Length, offset + Block)];
            b.Clear();
            part.CopyTo(b);
            Absorb(x, b);
        }
    }

    private void Absorb(Span<byte> x, Span<byte> block)
    {
        for (int i = 0; i < Block; i++)
        {
            block[i] ^= x[i];
        }

        _aes.ProcessBlock(block, x);
        block.Clear();
    }

    // RFC 3610 section 2.3: the key stream is E(A_i), A_i = flags, nonce, counter i; the message takes i = 1, 2, ...
    private void Ctr(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> input, Span<byte> output)
    {
        Span<byte> stream = stackalloc byte[Block];
        for (int offset = 0, counter = 1; offset < input.Length; offset += Block, counter++)
        {
            Counter(nonce, counter, stream);
            int length = Math.Min(Block, input.Length - offset);
            for (int i = 0; i < length; i++)
            {
                output[offset + i] = (byte)(input[offset + i] ^ stream[i]);
            }
        }
    }

    private void Counter(ReadOnlySpan<byte> nonce, int counter, Span<byte> stream)
    {
        Span<byte> a = stackalloc byte[Block];
        a[0] = CounterLength - 1;
        nonce.CopyTo(a[1..]);
        a[13] = (byte)(counter >> 16);
        a[14] = (byte)(counter >> 8);
        a[15] = (byte)counter;
        _aes.ProcessBlock(a, stream);
    }
}
