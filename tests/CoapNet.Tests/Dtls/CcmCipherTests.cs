using System.Runtime.Intrinsics;
using System.Security.Cryptography;
using CoapNet.Dtls.Records;

namespace CoapNet.Tests.Dtls;

/// <summary>Our AES-CCM (RFC 3610, 12-byte nonce) agrees with .NET's <see cref="AesCcm"/> both ways and refuses what was tampered with.</summary>
public sealed class CcmCipherTests
{
    public static TheoryData<bool, int, int, int, int> Cases()
    {
        TheoryData<bool, int, int, int, int> cases = [];
        foreach (bool hardware in new[] { true, false })
        {
            foreach (int keyLength in new[] { 16, 32 })
            {
                foreach (int tag in new[] { 8, 16 })
                {
                    foreach (int length in new[] { 0, 1, 15, 16, 17, 40, 1152 })
                    {
                        foreach (int associated in new[] { 0, 13, 14, 29 })
                        {
                            cases.Add(hardware, keyLength, tag, length, associated);
                        }
                    }
                }
            }
        }

        return cases;
    }

    [SkippableTheory]
    [MemberData(nameof(Cases))]
    public void AgreesWithDotNetsAesCcmBothWays(bool hardware, int keyLength, int tagLength, int length, int associatedLength)
    {
        Skip.IfNot(AesCcm.IsSupported, "this platform has no AesCcm to compare with");
        Skip.If(hardware && !AesRounds.IsSupported, "this processor has no AES instructions");
        Random random = new(length * 31 + tagLength + associatedLength + keyLength);
        byte[] key = Bytes(random, keyLength);
        byte[] nonce = Bytes(random, 12);
        byte[] associated = Bytes(random, associatedLength);
        byte[] plaintext = Bytes(random, length);
        CcmCipher ours = new(key, tagLength, hardware);
        using AesCcm theirs = new(key);

        byte[] ciphertext = new byte[length];
        byte[] tag = new byte[tagLength];
        ours.Encrypt(nonce, plaintext, ciphertext, tag, associated);
        byte[] decrypted = new byte[length];
        theirs.Decrypt(nonce, ciphertext, tag, decrypted, associated);

        byte[] theirCiphertext = new byte[length];
        byte[] theirTag = new byte[tagLength];
        theirs.Encrypt(nonce, plaintext, theirCiphertext, theirTag, associated);
        byte[] ourDecrypted = new byte[length];

        decrypted.Should().Equal(plaintext);
        ours.Decrypt(nonce, theirCiphertext, theirTag, ourDecrypted, associated).Should().BeTrue();
        ourDecrypted.Should().Equal(plaintext);
        theirCiphertext.Should().Equal(ciphertext);
    }

    /// <summary>FIPS-197 Appendix C.1 and C.3: one block under a 128-bit and a 256-bit key, with the processor's instructions.</summary>
    [SkippableTheory]
    [InlineData("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a")]
    [InlineData("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089")]
    public void TheProcessorsRoundsGiveTheStandardsExampleCiphertexts(string key, string expected)
    {
        Skip.IfNot(AesRounds.IsSupported, "this processor has no AES instructions");
        AesRounds rounds = new(Convert.FromHexString(key));
        Vector128<byte> block = Vector128.Create(Convert.FromHexString("00112233445566778899aabbccddeeff"));
        byte[] single = new byte[16];
        rounds.Encrypt(block).CopyTo(single);
        Vector128<byte> first = block;
        Vector128<byte> second = block;
        rounds.Encrypt(ref first, ref second);
        byte[] paired = new byte[16];
        second.CopyTo(paired);

        Convert.ToHexString(single).Should().BeEquivalentTo(expected);
        first.Should().Be(second);
        Convert.ToHexString(paired).Should().BeEquivalentTo(expected);
    }

    [SkippableTheory]
    [InlineData(true)]
    [InlineData(false)]
    public void EncryptsInPlaceAndRefusesAFlippedBitAnywhere(bool hardware)
    {
        Skip.If(hardware && !AesRounds.IsSupported, "this processor has no AES instructions");
        Random random = new(9);
        byte[] key = Bytes(random, 16);
        byte[] nonce = Bytes(random, 12);
        byte[] associated = Bytes(random, 13);
        byte[] plaintext = Bytes(random, 40);
        CcmCipher cipher = new(key, 8, hardware);
        byte[] buffer = (byte[])plaintext.Clone();
        byte[] tag = new byte[8];
        cipher.Encrypt(nonce, buffer, buffer, tag, associated);
        byte[] output = new byte[40];

        cipher.Decrypt(nonce, buffer, tag, output, associated).Should().BeTrue();
        output.Should().Equal(plaintext);
        foreach (byte[] tampered in new[] { buffer, tag, associated, nonce })
        {
            tampered[3] ^= 0x10;
            cipher.Decrypt(nonce, buffer, tag, output, associated).Should().BeFalse();
            output.Should().OnlyContain(b => b == 0, "nothing of a record that fails authentication is handed out");
            tampered[3] ^= 0x10;
        }
    }

    private static byte[] Bytes(Random random, int length)
    {
        byte[] bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }
}
