using System.Buffers.Binary;
using System.Runtime.Intrinsics;
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
/// <remarks>
/// Where the processor has AES instructions, the blocks go through <see cref="AesRounds"/> as vectors, and each CBC-MAC
/// step runs beside the counter block the next step needs: a coaps request's two records cost about half of what
/// BouncyCastle's engine block by block cost (issue 39). Elsewhere BouncyCastle's portable engine does the blocks.
/// Thread-safe once made: the block cipher only reads its round keys.
/// </remarks>
internal sealed class CcmCipher
{
    private const int Block = 16;
    private const int NonceLength = 12;
    private const int CounterLength = 15 - NonceLength;

    private readonly AesRounds? _rounds;
    private readonly IBlockCipher? _aes;
    private readonly int _tagLength;

    public CcmCipher(ReadOnlySpan<byte> key, int tagLength)
        : this(key, tagLength, AesRounds.IsSupported)
    {
    }

    /// <param name="key">The AES key.</param>
    /// <param name="tagLength">8 or 16.</param>
    /// <param name="hardware">The processor's AES instructions (only where <see cref="AesRounds.IsSupported"/>), or the portable engine.</param>
    internal CcmCipher(ReadOnlySpan<byte> key, int tagLength, bool hardware)
    {
        if (hardware)
        {
            _rounds = new AesRounds(key);
        }
        else
        {
            _aes = Org.BouncyCastle.Crypto.AesUtilities.CreateEngine();
            _aes.Init(true, new KeyParameter(key.ToArray()));
        }

        _tagLength = tagLength;
    }

    /// <summary>Encrypts <paramref name="plaintext"/> into <paramref name="ciphertext"/> (the same span is allowed) and writes the tag.</summary>
    public void Encrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData)
    {
        if (_rounds is { } rounds)
        {
            Span<byte> full = stackalloc byte[Block];
            Process(rounds, nonce, plaintext, ciphertext, associatedData, decrypt: false).CopyTo(full);
            full[.._tagLength].CopyTo(tag);
            return;
        }

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

        Span<byte> mac = stackalloc byte[Block];
        if (_rounds is { } rounds)
        {
            Process(rounds, nonce, ciphertext, plaintext, associatedData, decrypt: true).CopyTo(mac);
        }
        else
        {
            Ctr(nonce, ciphertext, plaintext);
            Mac(nonce, plaintext, associatedData, mac);
            Span<byte> s0 = stackalloc byte[Block];
            Counter(nonce, 0, s0);
            for (int i = 0; i < _tagLength; i++)
            {
                mac[i] ^= s0[i];
            }
        }

        if (!CryptographicOperations.FixedTimeEquals(mac[.._tagLength], tag))
        {
            plaintext.Clear();
            return false;
        }

        return true;
    }

    /// <summary>Byte i of this vector is i: a partial block's mask is the bytes below its length.</summary>
    private static readonly Vector128<byte> Indices = Vector128.Create((byte)0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

    /// <summary>
    /// RFC 3610 sections 2.2 and 2.3 in one pass with the processor's AES: <paramref name="input"/> through the key stream
    /// into <paramref name="output"/> (the same span is allowed), the plaintext (the input when encrypting, the output
    /// when decrypting) through the CBC-MAC. Returns the MAC encrypted with the first key-stream block, S_0: the whole
    /// tag, of which the first 8 or 16 bytes are sent.
    /// </summary>
    private Vector128<byte> Process(AesRounds aes, ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> input, Span<byte> output, ReadOnlySpan<byte> associatedData, bool decrypt)
    {
        Span<byte> block = stackalloc byte[Block];

        // A_0 (section 2.3): the flags (L - 1), the nonce, counter 0; the counter blocks A_i differ in the last three bytes.
        block[0] = CounterLength - 1;
        nonce.CopyTo(block[1..]);
        Vector128<byte> counter = Vector128.Create((ReadOnlySpan<byte>)block);

        // B_0 (section 2.2): the flags (associated data, tag length, L - 1), the nonce, the message length; E(B_0) and
        // S_0 = E(A_0) go through the rounds together.
        block[0] = (byte)((associatedData.IsEmpty ? 0 : 0x40) | (((_tagLength - 2) / 2) << 3) | (CounterLength - 1));
        block[13] = (byte)(input.Length >> 16);
        block[14] = (byte)(input.Length >> 8);
        block[15] = (byte)input.Length;
        Vector128<byte> x = Vector128.Create((ReadOnlySpan<byte>)block);
        Vector128<byte> s0 = counter;
        aes.Encrypt(ref x, ref s0);

        if (!associatedData.IsEmpty)
        {
            // Associated data shorter than 2^16 - 2^8 bytes: its length in two bytes, then the data, zero-padded.
            BinaryPrimitives.WriteUInt16BigEndian(block, (ushort)associatedData.Length);
            int used = 2;
            for (int offset = 0; ;)
            {
                int take = Math.Min(Block - used, associatedData.Length - offset);
                associatedData.Slice(offset, take).CopyTo(block[used..]);
                offset += take;
                used += take;
                block[used..].Clear();
                x = aes.Encrypt(x ^ Vector128.Create((ReadOnlySpan<byte>)block));
                if (offset == associatedData.Length)
                {
                    break;
                }

                used = 0;
            }
        }

        int blocks = (input.Length + Block - 1) / Block;
        Vector128<byte> stream = blocks == 0 ? default : aes.Encrypt(WithCounter(counter, 1));
        for (int i = 0; i < blocks; i++)
        {
            int offset = i * Block;
            int length = Math.Min(Block, input.Length - offset);
            Vector128<byte> read;
            Vector128<byte> written;
            if (length == Block)
            {
                read = Vector128.Create(input.Slice(offset, Block));
                written = read ^ stream;
                written.CopyTo(output.Slice(offset, Block));
            }
            else
            {
                // The last, partial block: zero-padded for the MAC, and only its own bytes written.
                block.Clear();
                input.Slice(offset, length).CopyTo(block);
                read = Vector128.Create((ReadOnlySpan<byte>)block);
                written = (read ^ stream) & Vector128.LessThan(Indices, Vector128.Create((byte)length));
                written.CopyTo(block);
                block[..length].CopyTo(output.Slice(offset, length));
            }

            x ^= decrypt ? written : read;
            if (i + 1 < blocks)
            {
                // This block's MAC step beside the next block's key stream.
                stream = WithCounter(counter, i + 2);
                aes.Encrypt(ref x, ref stream);
            }
            else
            {
                x = aes.Encrypt(x);
            }
        }

        return x ^ s0;
    }

    private static Vector128<byte> WithCounter(Vector128<byte> a, int counter)
        => a.WithElement(13, (byte)(counter >> 16)).WithElement(14, (byte)(counter >> 8)).WithElement(15, (byte)counter);

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
        _aes!.ProcessBlock(b, x);
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

        _aes!.ProcessBlock(block, x);
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
        _aes!.ProcessBlock(a, stream);
    }
}
