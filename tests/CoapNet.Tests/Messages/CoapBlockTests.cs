using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapBlockTests
{
    // RFC 7959 section 2.2: the value is NUM << 4 | M << 3 | SZX, and the block size is 2^(SZX + 4).
    [Theory]
    [InlineData(0, false, 0, 0x00u)]
    [InlineData(0, true, 0, 0x08u)]
    [InlineData(0, false, 6, 0x06u)]
    [InlineData(0, true, 6, 0x0Eu)]
    [InlineData(1, false, 6, 0x16u)]
    [InlineData(2, true, 2, 0x2Au)]
    [InlineData(15, true, 7, 0xFFu)]
    [InlineData(16, false, 0, 0x100u)]
    [InlineData(0xFFFFF, true, 6, 0xFFFFFEu)]
    public void EncodesNumMoreAndSzxIntoTheOptionValue(int number, bool more, int sizeExponent, uint encoded)
    {
        CoapBlock block = new(number, more, sizeExponent);

        block.Encoded.Should().Be(encoded);
        CoapBlock.FromEncoded(encoded).Should().Be(block);
        CoapBlock decoded = CoapBlock.FromEncoded(encoded);
        decoded.Number.Should().Be(number);
        decoded.More.Should().Be(more);
        decoded.SizeExponent.Should().Be(sizeExponent);
    }

    [Fact]
    public void EveryThreeByteValueDecodesAndEncodesBackUnchanged()
    {
        List<uint> wrong = [];
        for (uint value = 0; value <= 0xFFFFFF; value += 0x3F1)
        {
            if (CoapBlock.FromEncoded(value).Encoded != value)
            {
                wrong.Add(value);
            }
        }

        CoapBlock.FromEncoded(0xFFFFFF).Encoded.Should().Be(0xFFFFFF);
        wrong.Should().BeEmpty();
    }

    [Theory]
    [InlineData(0x1000000u)]
    [InlineData(uint.MaxValue)]
    public void AValueNeedingMoreThanThreeBytesIsNotABlock(uint value)
    {
        FluentActions.Invoking(() => CoapBlock.FromEncoded(value)).Should().Throw<ArgumentOutOfRangeException>();
    }

    [Theory]
    [InlineData(0, 16)]
    [InlineData(1, 32)]
    [InlineData(2, 64)]
    [InlineData(3, 128)]
    [InlineData(4, 256)]
    [InlineData(5, 512)]
    [InlineData(6, 1024)]
    [InlineData(7, 1024)]
    public void TheSizeIsTwoToTheSzxPlusFourAndBertBlocksAreMultiplesOf1024(int sizeExponent, int size)
    {
        CoapBlock block = new(3, false, sizeExponent);

        block.Size.Should().Be(size);
        block.Offset.Should().Be(3L * size);
    }

    [Fact]
    public void TheOffsetOfTheLastBlockNumberDoesNotOverflow()
    {
        new CoapBlock(CoapBlock.MaxNumber, false, 6).Offset.Should().Be(0xFFFFFL * 1024);
    }

    [Theory]
    [InlineData(16, 0)]
    [InlineData(32, 1)]
    [InlineData(64, 2)]
    [InlineData(128, 3)]
    [InlineData(256, 4)]
    [InlineData(512, 5)]
    [InlineData(1024, 6)]
    public void GetSizeExponentMapsABlockSizeToItsSzx(int size, int sizeExponent)
    {
        CoapBlock.GetSizeExponent(size).Should().Be(sizeExponent);
        new CoapBlock(0, false, sizeExponent).Size.Should().Be(size);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(8)]
    [InlineData(15)]
    [InlineData(17)]
    [InlineData(48)]
    [InlineData(1000)]
    [InlineData(2048)]
    [InlineData(-16)]
    [InlineData(int.MinValue)]
    public void GetSizeExponentRejectsAnythingButAPowerOfTwoFrom16To1024(int size)
    {
        FluentActions.Invoking(() => CoapBlock.GetSizeExponent(size)).Should().Throw<ArgumentOutOfRangeException>();
    }

    [Theory]
    [InlineData(-1, 0)]
    [InlineData(0x100000, 0)]
    [InlineData(0, -1)]
    [InlineData(0, 8)]
    public void TheConstructorRejectsANumberOrSzxOutOfRange(int number, int sizeExponent)
    {
        FluentActions.Invoking(() => new CoapBlock(number, false, sizeExponent)).Should().Throw<ArgumentOutOfRangeException>();
    }

    [Fact]
    public void BlocksAreEqualWhenTheirEncodedValuesAre()
    {
        CoapBlock a = new(5, true, 3);
        CoapBlock b = CoapBlock.FromEncoded(a.Encoded);

        (a == b).Should().BeTrue();
        (a != b).Should().BeFalse();
        a.Equals((object)b).Should().BeTrue();
        a.GetHashCode().Should().Be(b.GetHashCode());
        (a == new CoapBlock(5, false, 3)).Should().BeFalse();
        a.Equals((object)a.Encoded).Should().BeFalse();
    }

    [Theory]
    [InlineData(2, true, 2, "2/1/64")]
    [InlineData(0, false, 6, "0/0/1024")]
    [InlineData(1, false, 7, "1/0/BERT")]
    public void ToStringIsNumMoreSize(int number, bool more, int sizeExponent, string expected)
    {
        new CoapBlock(number, more, sizeExponent).ToString().Should().Be(expected);
    }
}
