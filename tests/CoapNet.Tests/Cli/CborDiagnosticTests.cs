using CoapNet.Cli.Output;

namespace CoapNet.Tests.Cli;

/// <summary>CBOR in diagnostic notation: the examples of RFC 8949 Appendix A, the layout over lines, and bad input.</summary>
public sealed class CborDiagnosticTests
{
    [Theory]
    [InlineData("00", "0")]
    [InlineData("17", "23")]
    [InlineData("1818", "24")]
    [InlineData("1903e8", "1000")]
    [InlineData("1bffffffffffffffff", "18446744073709551615")]
    [InlineData("3bffffffffffffffff", "-18446744073709551616")]
    [InlineData("20", "-1")]
    [InlineData("3903e7", "-1000")]
    [InlineData("c249010000000000000000", "2(h'010000000000000000')")]
    [InlineData("f90000", "0.0")]
    [InlineData("f98000", "-0.0")]
    [InlineData("f93c00", "1.0")]
    [InlineData("fb3ff199999999999a", "1.1")]
    [InlineData("f93e00", "1.5")]
    [InlineData("f97bff", "65504.0")]
    [InlineData("fa47c35000", "100000.0")]
    [InlineData("fa7f7fffff", "3.4028234663852886e+38")]
    [InlineData("fb7e37e43c8800759c", "1.0e+300")]
    [InlineData("f90001", "5.960464477539063e-8")]
    [InlineData("f97c00", "Infinity")]
    [InlineData("f97e00", "NaN")]
    [InlineData("f9fc00", "-Infinity")]
    [InlineData("f4", "false")]
    [InlineData("f5", "true")]
    [InlineData("f6", "null")]
    [InlineData("f7", "undefined")]
    [InlineData("f0", "simple(16)")]
    [InlineData("f8ff", "simple(255)")]
    [InlineData("c074323031332d30332d32315432303a30343a30305a", "0(\"2013-03-21T20:04:00Z\")")]
    [InlineData("40", "h''")]
    [InlineData("4401020304", "h'01020304'")]
    [InlineData("60", "\"\"")]
    [InlineData("62225c", "\"\\\"\\\\\"")]
    [InlineData("62c3bc", "\"ü\"")]
    [InlineData("80", "[]")]
    [InlineData("8301820203820405", "[1, [2, 3], [4, 5]]")]
    [InlineData("a201020304", "{1: 2, 3: 4}")]
    [InlineData("a26161016162820203", "{\"a\": 1, \"b\": [2, 3]}")]
    [InlineData("5f42010243030405ff", "(_ h'0102', h'030405')")]
    [InlineData("7f657374726561646d696e67ff", "(_ \"strea\", \"ming\")")]
    [InlineData("9fff", "[_ ]")]
    [InlineData("9f018202039f0405ffff", "[_ 1, [2, 3], [_ 4, 5]]")]
    [InlineData("bf61610161629f0203ffff", "{_ \"a\": 1, \"b\": [_ 2, 3]}")]
    public void WritesTheExamplesOfRfc8949AppendixA(string hex, string expected)
    {
        CborDiagnostic.TryFormat(Convert.FromHexString(hex), out string diagnostic, out string? error).Should().BeTrue(error);

        diagnostic.Should().Be(expected);
    }

    [Fact]
    public void BreaksALongContainerOverIndentedLinesAndWritesASequenceOneItemALine()
    {
        // {"name": "a long enough text to push the map past one line", "values": [1, 2, 3]}, then 7 (RFC 8742 sequence)
        byte[] map = [0xa2, 0x64, .. "name"u8, 0x78, 0x33, .. "a long enough text to push the map past one line ok"u8, 0x66, .. "values"u8, 0x83, 0x01, 0x02, 0x03, 0x07];

        CborDiagnostic.TryFormat(map, out string diagnostic, out _).Should().BeTrue();

        diagnostic.Should().Be("{\n  \"name\": \"a long enough text to push the map past one line ok\",\n  \"values\": [1, 2, 3]\n}\n7");
    }

    [Theory]
    [InlineData("1a0102", "byte 0")]
    [InlineData("830102", "byte 0")]
    [InlineData("82011c", "byte 2")]
    [InlineData("ff", "byte 0")]
    public void SaysWhereBytesStopBeingCbor(string hex, string where)
    {
        CborDiagnostic.TryFormat(Convert.FromHexString(hex), out _, out string? error).Should().BeFalse();

        error.Should().StartWith("not well-formed CBOR at " + where);
    }

    [Fact]
    public void RefusesNestingDeeperThanItShowsRatherThanExhaustingTheStack()
    {
        byte[] deep = new byte[100_000];
        Array.Fill(deep, (byte)0x81);

        CborDiagnostic.TryFormat(deep, out _, out string? error).Should().BeFalse();

        error.Should().StartWith("not well-formed CBOR at byte 64").And.Contain("depth");
    }
}
