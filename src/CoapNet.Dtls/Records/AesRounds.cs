using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace CoapNet.Dtls.Records;

/// <summary>
/// AES-128 and AES-256 encryption of single blocks with the processor's AES instructions (x86 AES-NI), for
/// <see cref="CcmCipher"/>: the round keys expanded once (FIPS-197 section 5.2, with AESKEYGENASSIST doing SubWord and
/// RotWord), then ten or fourteen rounds a block, one instruction each. Two blocks can go through the rounds together,
/// so a CBC-MAC step and a counter block of CCM overlap in the processor's pipeline instead of waiting on each other.
/// </summary>
/// <remarks>
/// Only encryption: CCM uses the forward cipher both ways (RFC 3610 section 2). Constant time, as the instructions are.
/// Thread-safe once made: the round keys are only read.
/// </remarks>
internal sealed class AesRounds
{
    private readonly Vector128<byte>[] _keys;

    /// <summary>Expands a 16- or 32-byte key.</summary>
    /// <exception cref="ArgumentException">The key is neither 16 nor 32 bytes long.</exception>
    /// <exception cref="PlatformNotSupportedException">The processor has no AES instructions (<see cref="IsSupported"/>).</exception>
    public AesRounds(ReadOnlySpan<byte> key)
    {
        if (!IsSupported)
        {
            throw new PlatformNotSupportedException("This processor has no AES instructions; use the portable AES engine.");
        }

        _keys = key.Length switch
        {
            16 => Expand128(Vector128.Create(key)),
            32 => Expand256(Vector128.Create(key[..16]), Vector128.Create(key[16..])),
            _ => throw new ArgumentException($"An AES key for CCM is 16 or 32 bytes, not {key.Length}.", nameof(key)),
        };
    }

    /// <summary>True where the processor has the AES and SSE2 instructions this uses.</summary>
    public static bool IsSupported => Aes.IsSupported && Sse2.IsSupported;

    /// <summary>One block encrypted.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Vector128<byte> Encrypt(Vector128<byte> block)
    {
        Vector128<byte>[] keys = _keys;
        block ^= keys[0];
        int last = keys.Length - 1;
        for (int round = 1; round < last; round++)
        {
            block = Aes.Encrypt(block, keys[round]);
        }

        return Aes.EncryptLast(block, keys[last]);
    }

    /// <summary>Two independent blocks encrypted together, round by round, so each round's latency hides the other's.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Encrypt(ref Vector128<byte> first, ref Vector128<byte> second)
    {
        Vector128<byte>[] keys = _keys;
        Vector128<byte> a = first ^ keys[0];
        Vector128<byte> b = second ^ keys[0];
        int last = keys.Length - 1;
        for (int round = 1; round < last; round++)
        {
            a = Aes.Encrypt(a, keys[round]);
            b = Aes.Encrypt(b, keys[round]);
        }

        first = Aes.EncryptLast(a, keys[last]);
        second = Aes.EncryptLast(b, keys[last]);
    }

    // FIPS-197 section 5.2 for Nk = 4: each round key's first word is the previous one's, xored with SubWord(RotWord) of
    // its last word and the round constant (AESKEYGENASSIST's fourth word, spread by the shuffle); each later word is
    // the previous round key's word xored with the word before it, which the three shifted xors compute for all four.
    private static Vector128<byte>[] Expand128(Vector128<byte> key)
    {
        Vector128<byte>[] keys = new Vector128<byte>[11];
        keys[0] = key;
        keys[1] = key = Next(key, Aes.KeygenAssist(key, 0x01));
        keys[2] = key = Next(key, Aes.KeygenAssist(key, 0x02));
        keys[3] = key = Next(key, Aes.KeygenAssist(key, 0x04));
        keys[4] = key = Next(key, Aes.KeygenAssist(key, 0x08));
        keys[5] = key = Next(key, Aes.KeygenAssist(key, 0x10));
        keys[6] = key = Next(key, Aes.KeygenAssist(key, 0x20));
        keys[7] = key = Next(key, Aes.KeygenAssist(key, 0x40));
        keys[8] = key = Next(key, Aes.KeygenAssist(key, 0x80));
        keys[9] = key = Next(key, Aes.KeygenAssist(key, 0x1B));
        keys[10] = Next(key, Aes.KeygenAssist(key, 0x36));
        return keys;
    }

    // FIPS-197 section 5.2 for Nk = 8: round keys alternate between the rule above (from the odd key before, with the
    // round constant) and SubWord alone, without RotWord or a constant (AESKEYGENASSIST's third word, NextOdd).
    private static Vector128<byte>[] Expand256(Vector128<byte> low, Vector128<byte> high)
    {
        Vector128<byte>[] keys = new Vector128<byte>[15];
        keys[0] = low;
        keys[1] = high;
        keys[2] = low = Next(low, Aes.KeygenAssist(high, 0x01));
        keys[3] = high = NextOdd(high, Aes.KeygenAssist(low, 0x00));
        keys[4] = low = Next(low, Aes.KeygenAssist(high, 0x02));
        keys[5] = high = NextOdd(high, Aes.KeygenAssist(low, 0x00));
        keys[6] = low = Next(low, Aes.KeygenAssist(high, 0x04));
        keys[7] = high = NextOdd(high, Aes.KeygenAssist(low, 0x00));
        keys[8] = low = Next(low, Aes.KeygenAssist(high, 0x08));
        keys[9] = high = NextOdd(high, Aes.KeygenAssist(low, 0x00));
        keys[10] = low = Next(low, Aes.KeygenAssist(high, 0x10));
        keys[11] = high = NextOdd(high, Aes.KeygenAssist(low, 0x00));
        keys[12] = low = Next(low, Aes.KeygenAssist(high, 0x20));
        keys[13] = NextOdd(high, Aes.KeygenAssist(low, 0x00));
        keys[14] = Next(low, Aes.KeygenAssist(keys[13], 0x40));
        return keys;
    }

    // The previous round key's words, each xored with all the words before it (three shifted xors), and the assist's
    // word spread to all four.
    private static Vector128<byte> Next(Vector128<byte> previous, Vector128<byte> assist)
        => Chain(previous) ^ Sse2.Shuffle(assist.AsInt32(), 0xFF).AsByte();

    private static Vector128<byte> NextOdd(Vector128<byte> previous, Vector128<byte> assist)
        => Chain(previous) ^ Sse2.Shuffle(assist.AsInt32(), 0xAA).AsByte();

    private static Vector128<byte> Chain(Vector128<byte> previous)
    {
        previous ^= Sse2.ShiftLeftLogical128BitLane(previous, 4);
        previous ^= Sse2.ShiftLeftLogical128BitLane(previous, 4);
        return previous ^ Sse2.ShiftLeftLogical128BitLane(previous, 4);
    }
}
