using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapOptionTests
{
    // A value of valid length for each registered format.
    private static byte[] SampleValue(CoapOptionDefinition definition) => definition.Format switch
    {
        CoapOptionFormat.Empty => [],
        CoapOptionFormat.UInt => new byte[definition.MaxLength].Select((_, i) => (byte)(i + 1)).ToArray(),
        CoapOptionFormat.String => Enumerable.Repeat((byte)'s', Math.Max(1, definition.MinLength)).ToArray(),
        _ => Enumerable.Repeat((byte)0x5A, Math.Max(1, definition.MinLength)).ToArray(),
    };

    [Fact]
    public void CreateGivesTheTypedViewOfEveryRegisteredFormat()
    {
        foreach (CoapOptionDefinition definition in CoapOptionDefinition.All)
        {
            byte[] value = SampleValue(definition);

            CoapOption option = CoapOption.Create(definition.Number, value);

            Type expected = definition.Format switch
            {
                CoapOptionFormat.Empty => typeof(EmptyOption),
                CoapOptionFormat.UInt => typeof(UIntOption),
                CoapOptionFormat.String => typeof(StringOption),
                _ => typeof(OpaqueOption),
            };
            option.Should().BeOfType(expected, "{0} is {1}", definition.Name, definition.Format);
            option.Format.Should().Be(definition.Format);
            option.Number.Should().Be(definition.Number);
            option.Name.Should().Be(definition.Name);
            option.Encode().ToArray().Should().Equal(value);
        }
    }

    [Theory]
    [InlineData(CoapOptionNumber.IfNoneMatch, typeof(EmptyOption))]
    [InlineData(CoapOptionNumber.Edhoc, typeof(EmptyOption))]
    [InlineData(CoapOptionNumber.UriHost, typeof(StringOption))]
    [InlineData(CoapOptionNumber.UriPath, typeof(StringOption))]
    [InlineData(CoapOptionNumber.ProxyUri, typeof(StringOption))]
    [InlineData(CoapOptionNumber.ContentFormat, typeof(UIntOption))]
    [InlineData(CoapOptionNumber.Block2, typeof(UIntOption))]
    [InlineData(CoapOptionNumber.NoResponse, typeof(UIntOption))]
    [InlineData(CoapOptionNumber.IfMatch, typeof(OpaqueOption))]
    [InlineData(CoapOptionNumber.ETag, typeof(OpaqueOption))]
    [InlineData(CoapOptionNumber.Oscore, typeof(OpaqueOption))]
    [InlineData(CoapOptionNumber.Echo, typeof(OpaqueOption))]
    [InlineData(CoapOptionNumber.RequestTag, typeof(OpaqueOption))]
    public void ToOptionOfAnEntryGivesTheTypeItsFormatCallsFor(CoapOptionNumber number, Type expected)
    {
        byte[] value = expected == typeof(EmptyOption) ? [] : [0x31];

        new CoapOptionEntry(number, value).ToOption().Should().BeOfType(expected);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(2)]
    [InlineData(13)]
    [InlineData(2048)]
    [InlineData(65535)]
    public void AnUnregisteredNumberIsAnOpaqueOption(ushort number)
    {
        CoapOption option = new CoapOptionEntry((CoapOptionNumber)number, new byte[] { 0xAB }).ToOption();

        option.Should().BeOfType<OpaqueOption>().Which.Value.ToArray().Should().Equal(0xAB);
        option.Format.Should().Be(CoapOptionFormat.Opaque);
        option.ToString().Should().Be(number + ": 0xAB");
    }

    [Fact]
    public void AValueThatDoesNotFitItsFormatIsShownAsOpaque()
    {
        CoapOption.Create(CoapOptionNumber.IfNoneMatch, new byte[] { 1 }).Should().BeOfType<OpaqueOption>();
        CoapOption.Create(CoapOptionNumber.MaxAge, new byte[] { 1, 2, 3, 4, 5 }).Should().BeOfType<OpaqueOption>();
    }

    [Theory]
    [InlineData(0u, new byte[0])]
    [InlineData(255u, new byte[] { 0xFF })]
    [InlineData(256u, new byte[] { 0x01, 0x00 })]
    [InlineData(0x1000000u, new byte[] { 0x01, 0x00, 0x00, 0x00 })]
    public void AUIntOptionEncodesInTheFewestBytesAndDecodesBack(uint value, byte[] expected)
    {
        UIntOption option = new(CoapOptionNumber.MaxAge, value);

        option.Encode().ToArray().Should().Equal(expected);
        CoapOption.Create(CoapOptionNumber.MaxAge, option.Encode()).Should().BeOfType<UIntOption>().Which.Value.Should().Be(value);
    }

    [Fact]
    public void AStringOptionEncodesAsUtf8AndDecodesBack()
    {
        StringOption option = new(CoapOptionNumber.UriPath, "température");

        option.Encode().ToArray().Should().Equal("température"u8.ToArray());
        CoapOption.Create(CoapOptionNumber.UriPath, option.Encode()).Should().BeOfType<StringOption>().Which.Value.Should().Be("température");
    }

    [Fact]
    public void AnOpaqueOptionEncodesItsBytesUnchanged()
    {
        byte[] tag = [0xDE, 0xAD, 0xBE, 0xEF];
        OpaqueOption option = new(CoapOptionNumber.ETag, tag);

        option.Encode().ToArray().Should().Equal(tag);
        CoapOption.Create(CoapOptionNumber.ETag, option.Encode()).Should().BeOfType<OpaqueOption>().Which.Value.ToArray().Should().Equal(tag);
    }

    [Fact]
    public void AnEmptyOptionEncodesToNoBytes()
    {
        EmptyOption option = new(CoapOptionNumber.IfNoneMatch);

        option.Encode().IsEmpty.Should().BeTrue();
        CoapOption.Create(CoapOptionNumber.IfNoneMatch, option.Encode()).Should().BeOfType<EmptyOption>();
    }

    [Fact]
    public void TheTypedValueIsReachableThroughTheGenericBase()
    {
        CoapOption<uint> number = new UIntOption(CoapOptionNumber.Size1, 42);
        CoapOption<string> text = new StringOption(CoapOptionNumber.UriQuery, "a=b");

        number.Value.Should().Be(42);
        text.Value.Should().Be("a=b");
    }

    [Fact]
    public void AStringOptionRejectsNull()
    {
        FluentActions.Invoking(() => new StringOption(CoapOptionNumber.UriPath, null!)).Should().Throw<ArgumentNullException>();
    }

    [Theory]
    [InlineData(CoapOptionNumber.UriPath, new byte[] { 0x74, 0x65, 0x6D, 0x70, 0x65, 0x72, 0x61, 0x74, 0x75, 0x72, 0x65 }, "Uri-Path: temperature")]
    [InlineData(CoapOptionNumber.ContentFormat, new byte[] { 50 }, "Content-Format: 50")]
    [InlineData(CoapOptionNumber.ContentFormat, new byte[0], "Content-Format: 0")]
    [InlineData(CoapOptionNumber.MaxAge, new byte[] { 0x01, 0x00 }, "Max-Age: 256")]
    [InlineData(CoapOptionNumber.IfNoneMatch, new byte[0], "If-None-Match: (empty)")]
    [InlineData(CoapOptionNumber.ETag, new byte[] { 0x01, 0x2A }, "ETag: 0x012A")]
    [InlineData(CoapOptionNumber.IfMatch, new byte[0], "If-Match: (empty)")]
    public void ToStringIsTheNameAndTheValueInItsFormat(CoapOptionNumber number, byte[] value, string expected)
    {
        new CoapOptionEntry(number, value).ToString().Should().Be(expected);
        CoapOption.Create(number, value).ToString().Should().Be(expected);
    }

    [Fact]
    public void ATypedOptionReportsTheBitPropertiesOfItsNumber()
    {
        CoapOption uriHost = new StringOption(CoapOptionNumber.UriHost, "h");
        CoapOption size1 = new UIntOption(CoapOptionNumber.Size1, 1);
        CoapOption etag = new OpaqueOption(CoapOptionNumber.ETag, new byte[] { 1 });

        uriHost.IsCritical.Should().BeTrue();
        uriHost.IsUnsafe.Should().BeTrue();
        uriHost.IsNoCacheKey.Should().BeFalse();
        size1.IsCritical.Should().BeFalse();
        size1.IsUnsafe.Should().BeFalse();
        size1.IsNoCacheKey.Should().BeTrue();
        etag.IsCritical.Should().BeFalse();
        etag.IsUnsafe.Should().BeFalse();
        etag.IsNoCacheKey.Should().BeFalse();
    }

    [Fact]
    public void AddingATypedOptionStoresItsEncodedValue()
    {
        CoapOptionCollection options = new();

        options.Add(new UIntOption(CoapOptionNumber.Block2, new CoapBlock(1, false, 6).Encoded));
        options.Add(new StringOption(CoapOptionNumber.UriPath, "a"));
        options.Add(new EmptyOption(CoapOptionNumber.IfNoneMatch));

        options.Select(e => (e.Number, e.Value.ToArray())).Should().BeEquivalentTo(
            new[]
            {
                (CoapOptionNumber.IfNoneMatch, Array.Empty<byte>()),
                (CoapOptionNumber.UriPath, new byte[] { (byte)'a' }),
                (CoapOptionNumber.Block2, new byte[] { 0x16 }),
            },
            o => o.WithStrictOrdering());
    }

    [Fact]
    public void EntriesAreEqualWhenTheirNumbersAndValueBytesAre()
    {
        CoapOptionEntry a = new(CoapOptionNumber.ETag, new byte[] { 1, 2 });
        CoapOptionEntry b = new(CoapOptionNumber.ETag, new byte[] { 1, 2 });
        CoapOptionEntry otherValue = new(CoapOptionNumber.ETag, new byte[] { 1, 3 });
        CoapOptionEntry otherNumber = new(CoapOptionNumber.IfMatch, new byte[] { 1, 2 });

        (a == b).Should().BeTrue();
        a.Equals((object)b).Should().BeTrue();
        a.GetHashCode().Should().Be(b.GetHashCode());
        (a != otherValue).Should().BeTrue();
        (a == otherNumber).Should().BeFalse();
        a.Equals("ETag").Should().BeFalse();
    }

    [Fact]
    public void AnEntryReportsWhetherItIsRecognizedCriticalAndOfValidLength()
    {
        CoapOptionEntry uriHost = new(CoapOptionNumber.UriHost, "example.com"u8.ToArray());
        CoapOptionEntry emptyUriHost = new(CoapOptionNumber.UriHost, ReadOnlyMemory<byte>.Empty);
        CoapOptionEntry unknown = new((CoapOptionNumber)2049, new byte[] { 1 });

        uriHost.Name.Should().Be("Uri-Host");
        uriHost.IsRecognized.Should().BeTrue();
        uriHost.IsCritical.Should().BeTrue();
        uriHost.HasValidLength.Should().BeTrue();
        uriHost.GetString().Should().Be("example.com");
        emptyUriHost.HasValidLength.Should().BeFalse();
        unknown.IsRecognized.Should().BeFalse();
        unknown.IsCritical.Should().BeTrue();
        unknown.HasValidLength.Should().BeTrue();
    }
}
