using CoapNet.QBlock;

namespace CoapNet.Tests.QBlocks;

/// <summary>The payload of a 4.08 listing missing blocks: a CBOR sequence of unsigned integers, ascending (RFC 9177 section 5).</summary>
public sealed class MissingBlocksTests
{
    [Fact]
    public void EachNumberTakesItsShortestCborForm()
    {
        byte[] encoded = MissingBlocks.Encode([0, 23, 24, 255, 256, 65535, 65536, 1048575]);

        // RFC 8949 section 3.1: 0-23 in the initial byte, then one, two or four bytes after 0x18, 0x19, 0x1a.
        Convert.ToHexString(encoded).Should().Be("00" + "17" + "1818" + "18FF" + "190100" + "19FFFF" + "1A00010000" + "1A000FFFFF");
        MissingBlocks.TryDecode(encoded, 1048575, out List<int> decoded).Should().BeTrue();
        decoded.Should().Equal(0, 23, 24, 255, 256, 65535, 65536, 1048575);
    }

    [Theory]
    [InlineData("0201", "not ascending")]
    [InlineData("0505", "a duplicate")]
    [InlineData("20", "a negative integer (major type 1)")]
    [InlineData("18", "a truncated number")]
    [InlineData("1B0000000000000001", "an eight-byte number")]
    [InlineData("0A", "a block past the body's end")]
    public void AListThatBreaksTheRulesIsRefused(string hex, string why)
    {
        MissingBlocks.TryDecode(Convert.FromHexString(hex), limit: 9, out _).Should().BeFalse(why);
    }
}
