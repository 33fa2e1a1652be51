using CoapNet.Cli.Requests;
using CoapNet.Messages;

namespace CoapNet.Tests.Cli;

/// <summary>libcoap's notations on the command line: -O NUM,VALUE, -b [NUM,]SIZE, and a key as text or hex.</summary>
public sealed class OptionValuesTests
{
    [Theory]
    [InlineData("2048,hello", 2048, "68656c6c6f")]
    [InlineData("2048,0x0A0b", 2048, "0a0b")]
    [InlineData("60,1024", 60, "0400")]
    [InlineData("14,0", 14, "")]
    [InlineData("Max-Age,70000", 14, "011170")]
    [InlineData("if-none-match", 5, "")]
    [InlineData("3,example.org", 3, "6578616d706c652e6f7267")]
    [InlineData("65535,", 65535, "")]
    public void ReadsAnOptionAsTextHexOrAUintByItsFormat(string text, int number, string value)
    {
        OptionValues.TryParseOption(text, out CoapOptionEntry option, out string? error).Should().BeTrue(error);

        ((int)option.Number).Should().Be(number);
        Convert.ToHexStringLower(option.Value.Span).Should().Be(value);
    }

    [Theory]
    [InlineData("65536,x", "not an option number")]
    [InlineData("Nonsense,x", "not an option number")]
    [InlineData("2048,0x123", "not hex bytes")]
    [InlineData("2048,0xzz", "not hex bytes")]
    [InlineData("14,soon", "Max-Age takes a number")]
    [InlineData("5,x", "If-None-Match (5) takes 0 to 0 bytes, not 1")]
    public void SaysWhatIsWrongWithAnOption(string text, string reason)
    {
        OptionValues.TryParseOption(text, out _, out string? error).Should().BeFalse();

        error.Should().Contain(reason);
    }

    [Theory]
    [InlineData("64", 0, 64)]
    [InlineData("3,256", 3, 256)]
    [InlineData("1024", 0, 1024)]
    public void ReadsABlockSizeAndTheBlockToStartAt(string text, int number, int size)
    {
        OptionValues.TryParseBlock(text, out (int Number, int Size) block, out string? error).Should().BeTrue(error);

        block.Should().Be((number, size));
    }

    [Theory]
    [InlineData("100")]
    [InlineData("2048")]
    [InlineData("8")]
    [InlineData("x,64")]
    [InlineData("1048576,64")]
    public void RefusesWhatIsNoBlock(string text) => OptionValues.TryParseBlock(text, out _, out _).Should().BeFalse();

    [Fact]
    public void ReadsAKeyAsTextOrHex()
    {
        OptionValues.TryParseTextOrHex("secret", out byte[] text).Should().BeTrue();
        OptionValues.TryParseTextOrHex("0x00ff", out byte[] hex).Should().BeTrue();
        OptionValues.TryParseTextOrHex("0xf", out _).Should().BeFalse();

        text.Should().Equal("secret"u8.ToArray());
        hex.Should().Equal(0x00, 0xff);
    }
}
