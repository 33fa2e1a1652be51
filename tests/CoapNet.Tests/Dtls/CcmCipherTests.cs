using System.Security.Cryptography;
using CoapNet.Dtls.Records;

namespace CoapNet.Tests.Dtls;

/// <summary>Our AES-CCM (RFC 3610, 12-byte nonce) agrees with .NET's <see cref="AesCcm"/> both ways and refuses what was tampered with.</summary>
public sealed class CcmCipherTests
{
    public static TheoryData<int, int, int> Cases()
    {
        TheoryData<int, int, int> cases = [];
        foreach (int tag in new[] { 8, 16 })
        {
            foreach (int length in new[] { 0, 1, 15, 16, 17, 40, 1152 })
            {
                foreach (int associated in new[] { 13, 29 })
                {
                    cases.Add(tag, length, associated);
                }
            }
        }

        return cases;
    }

    [SkippableTheory]
    [MemberData(nameof(Cases))]
    public void AgreesWithDotNetsAesCcmBothWays(int tagLength, int length, int associatedLength)
    {
        Skip.IfNot(AesCcm.IsSupported, "this platform has no AesCcm to compare with");
        Random random = new(length * 31 + tagLength + associatedLength);
        byte[] key = Bytes(random, 16);
        byte[] nonce = Bytes(random, 12);
        byte[] associated = Bytes(random, associatedLength);
        byte[] plaintext = Bytes(random, length);
        CcmCipher ours = new(key, tagLength);
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

    [Fact]
    public void EncryptsInPlaceAndRefusesAFlippedBitAnywhere()
    {
        Random random = new(9);
        byte[] key = Bytes(random, 16);
        byte[] nonce = Bytes(random, 12);
        byte[] associated = Bytes(random, 13);
        byte[] plaintext = Bytes(random, 40);
        CcmCipher cipher = new(key, 8);
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
