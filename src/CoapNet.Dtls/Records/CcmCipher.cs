using System.Buffers.Binary;
using System.Runtime.CompilerServices;
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
/// One pass does both halves (<see cref="Process"/>), each CBC-MAC step beside the counter block the next step needs.
/// Where the processor has AES instructions, the two go through <see cref="AesRounds"/> together, which costs a coaps
/// request's two records about half of what BouncyCastle's engine block by block cost (issue 39); elsewhere BouncyCastle's
/// portable engine encrypts the blocks one at a time.
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
        Span<byte> full = stackalloc byte[Block];
        Process(nonce, plaintext, ciphertext, associatedData, decrypt: false).CopyTo(full);
        full[.._tagLength].CopyTo(tag);
    }

    /// <summary>Decrypts and authenticates; false (and <paramref name="plaintext"/> cleared) when the tag does not match.</summary>
    public bool Decrypt(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData)
    {
        if (tag.Length != _tagLength)
        {
            return false;
        }

        Span<byte> mac = stackalloc byte[Block];
        Process(nonce, ciphertext, plaintext, associatedData, decrypt: true).CopyTo(mac);

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
    /// RFC 3610 sections 2.2 and 2.3 in one pass: <paramref name="input"/> through the key stream
    /// into <paramref name="output"/> (the same span is allowed), the plaintext (the input when encrypting, the output
    /// when decrypting) through the CBC-MAC. Returns the MAC encrypted with the first key-stream block, S_0: the whole
    /// tag, of which the first 8 or 16 bytes are sent.
    /// </summary>
    private Vector128<byte> Process(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> input, Span<byte> output, ReadOnlySpan<byte> associatedData, bool decrypt)
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
        EncryptBlocks(ref x, ref s0);

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
                x = EncryptBlock(x ^ Vector128.Create((ReadOnlySpan<byte>)block));
                if (offset == associatedData.Length)
                {
                    break;
                }

                used = 0;
            }
        }

        int blocks = (input.Length + Block - 1) / Block;
        Vector128<byte> stream = blocks == 0 ? default : EncryptBlock(WithCounter(counter, 1));
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
                EncryptBlocks(ref x, ref stream);
            }
            else
            {
                x = EncryptBlock(x);
            }
        }

        return x ^ s0;
    }

    private static Vector128<byte> WithCounter(Vector128<byte> a, int counter)
        => a.WithElement(13, (byte)(counter >> 16)).WithElement(14, (byte)(counter >> 8)).WithElement(15, (byte)counter);

    /// <summary>One block through AES: the processor's rounds, or the portable engine.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private Vector128<byte> EncryptBlock(Vector128<byte> block) => _rounds is { } rounds ? rounds.Encrypt(block) : Portable(block);

    /// <summary>Two independent blocks through AES: together through the processor's rounds, one after the other in the portable engine.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EncryptBlocks(ref Vector128<byte> first, ref Vector128<byte> second)
    {
        if (_rounds is { } rounds)
        {
            rounds.Encrypt(ref first, ref second);
        }
        else
        {
            first = Portable(first);
            second = Portable(second);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private Vector128<byte> Portable(Vector128<byte> block)
    {
        Span<byte> input = stackalloc byte[Block];
        Span<byte> output = stackalloc byte[Block];
        block.CopyTo(input);
        _aes!.ProcessBlock(input, output);
        return Vector128.Create((ReadOnlySpan<byte>)output);
    }
}
