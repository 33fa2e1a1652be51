using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapMessageOptionAccessorTests
{
    private static byte[] Raw(CoapMessage message, CoapOptionNumber number)
    {
        message.Options.CountOf(number).Should().Be(1);
        message.Options.TryGet(number, out CoapOptionEntry entry).Should().BeTrue();
        return entry.Value.ToArray();
    }

    [Theory]
    [InlineData("/a/b", new[] { "a", "b" })]
    [InlineData("a/b", new[] { "a", "b" })]
    [InlineData("/temperature", new[] { "temperature" })]
    [InlineData("/a/", new[] { "a", "" })]
    [InlineData("//", new[] { "", "" })]
    [InlineData("/a//b", new[] { "a", "", "b" })]
    [InlineData("/~sensors/temp.xml", new[] { "~sensors", "temp.xml" })]
    public void SettingUriPathMakesOneUriPathOptionPerSegment(string path, string[] segments)
    {
        CoapMessage message = new() { UriPath = path };

        message.GetUriPathSegments().Should().Equal(segments);
        message.Options.GetStrings(CoapOptionNumber.UriPath).Should().Equal(segments);
    }

    [Theory]
    [InlineData("/a/b")]
    [InlineData("/temperature")]
    [InlineData("/a/")]
    [InlineData("//")]
    public void UriPathReadsBackWithALeadingSlash(string path)
    {
        new CoapMessage { UriPath = path }.UriPath.Should().Be(path);
    }

    [Theory]
    [InlineData("/")]
    [InlineData("")]
    public void SlashAndEmptyMeanNoUriPathOption(string path)
    {
        CoapMessage message = new() { UriPath = "/old/path" };

        message.UriPath = path;

        message.Options.Contains(CoapOptionNumber.UriPath).Should().BeFalse();
        message.GetUriPathSegments().Should().BeEmpty();
        message.UriPath.Should().Be("/");
    }

    [Fact]
    public void UriPathIsTheRootWhenThereIsNoUriPathOption()
    {
        CoapMessage message = new();

        message.UriPath.Should().Be("/");
        message.GetUriPathSegments().Should().BeEmpty();
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void SettingUriPathReplacesThePreviousSegmentsAndKeepsOtherOptions()
    {
        CoapMessage message = new() { UriPath = "/a/b/c", ContentFormat = CoapContentFormat.Json };

        message.UriPath = "/d";

        message.GetUriPathSegments().Should().Equal("d");
        message.ContentFormat.Should().Be(CoapContentFormat.Json);
    }

    [Fact]
    public void ASegmentContainingASlashIsSetWithSetUriPathSegments()
    {
        CoapMessage message = new();

        message.SetUriPathSegments(["a/b", "c"]);

        message.GetUriPathSegments().Should().Equal("a/b", "c");
        message.Options.CountOf(CoapOptionNumber.UriPath).Should().Be(2);
    }

    [Fact]
    public void SetUriPathSegmentsRejectsNull()
    {
        CoapMessage message = new();

        message.Invoking(m => m.SetUriPathSegments(null!)).Should().Throw<ArgumentNullException>();
        message.Invoking(m => m.SetUriPathSegments(["a", null!])).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void SettingAPathOrQueryToNullIsRejected()
    {
        CoapMessage message = new();

        message.Invoking(m => m.UriPath = null!).Should().Throw<ArgumentNullException>();
        message.Invoking(m => m.UriQuery = null!).Should().Throw<ArgumentNullException>();
        message.Invoking(m => m.LocationPath = null!).Should().Throw<ArgumentNullException>();
        message.Invoking(m => m.LocationQuery = null!).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void UriQueryIsOneOptionPerAmpersandSeparatedArgument()
    {
        CoapMessage message = new() { UriQuery = "a=1&b=2" };

        message.GetUriQueryArguments().Should().Equal("a=1", "b=2");
        message.UriQuery.Should().Be("a=1&b=2");

        message.UriQuery = "x&&y";
        message.GetUriQueryArguments().Should().Equal("x", string.Empty, "y");

        message.UriQuery = string.Empty;
        message.Options.Contains(CoapOptionNumber.UriQuery).Should().BeFalse();
        message.UriQuery.Should().BeEmpty();
    }

    [Fact]
    public void UriQueryKeepsALeadingSlashOrQuestionMarkAsPartOfTheArgument()
    {
        CoapMessage message = new() { UriQuery = "/x?y" };

        message.GetUriQueryArguments().Should().Equal("/x?y");
    }

    [Fact]
    public void LocationPathAndLocationQueryWorkLikeUriPathAndUriQuery()
    {
        CoapMessage message = new() { LocationPath = "/ps/topic/1", LocationQuery = "k=v&x" };

        message.Options.GetStrings(CoapOptionNumber.LocationPath).Should().Equal("ps", "topic", "1");
        message.Options.GetStrings(CoapOptionNumber.LocationQuery).Should().Equal("k=v", "x");
        message.LocationPath.Should().Be("/ps/topic/1");
        message.LocationQuery.Should().Be("k=v&x");

        message.LocationPath = "/";
        message.LocationQuery = string.Empty;
        message.HasOptions.Should().BeFalse();
        message.LocationPath.Should().Be("/");
        message.LocationQuery.Should().BeEmpty();
    }

    [Fact]
    public void UriHostIsAStringOptionAndNullRemovesIt()
    {
        CoapMessage message = new() { UriHost = "example.com" };

        Raw(message, CoapOptionNumber.UriHost).Should().Equal("example.com"u8.ToArray());
        message.UriHost.Should().Be("example.com");

        message.UriHost = null;
        message.UriHost.Should().BeNull();
        message.Options.Contains(CoapOptionNumber.UriHost).Should().BeFalse();
    }

    [Fact]
    public void UriPortIsAnUnsignedIntegerOptionAndNullRemovesIt()
    {
        CoapMessage message = new() { UriPort = 61616 };

        Raw(message, CoapOptionNumber.UriPort).Should().Equal(0xF0, 0xB0);
        message.UriPort.Should().Be(61616);

        message.UriPort = 0;
        Raw(message, CoapOptionNumber.UriPort).Should().BeEmpty();
        message.UriPort.Should().Be(0);

        message.UriPort = null;
        message.UriPort.Should().BeNull();
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void ContentFormatZeroIsAnEmptyOptionThatStillReadsAsTextPlain()
    {
        CoapMessage message = new() { ContentFormat = CoapContentFormat.TextPlain };

        Raw(message, CoapOptionNumber.ContentFormat).Should().BeEmpty();
        message.ContentFormat.Should().Be(CoapContentFormat.TextPlain);
    }

    [Theory]
    [InlineData(CoapContentFormat.Json, new byte[] { 50 })]
    [InlineData(CoapContentFormat.LinkFormat, new byte[] { 40 })]
    [InlineData(CoapContentFormat.SenmlCbor, new byte[] { 112 })]
    [InlineData((ushort)11542, new byte[] { 0x2D, 0x16 })]
    [InlineData(ushort.MaxValue, new byte[] { 0xFF, 0xFF })]
    public void ContentFormatAndAcceptAreUnsignedIntegerOptions(ushort format, byte[] expected)
    {
        CoapMessage message = new() { ContentFormat = format, Accept = format };

        Raw(message, CoapOptionNumber.ContentFormat).Should().Equal(expected);
        Raw(message, CoapOptionNumber.Accept).Should().Equal(expected);
        message.ContentFormat.Should().Be(format);
        message.Accept.Should().Be(format);

        message.ContentFormat = null;
        message.Accept = null;
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void TheContentFormatConstantsAreTheRegisteredNumbers()
    {
        // IANA "CoAP Content-Formats" (RFC 7252 section 12.3 and later registrations).
        CoapContentFormat.TextPlain.Should().Be(0);
        CoapContentFormat.CoseEncrypt0.Should().Be(16);
        CoapContentFormat.LinkFormat.Should().Be(40);
        CoapContentFormat.Xml.Should().Be(41);
        CoapContentFormat.OctetStream.Should().Be(42);
        CoapContentFormat.Exi.Should().Be(47);
        CoapContentFormat.Json.Should().Be(50);
        CoapContentFormat.JsonPatchJson.Should().Be(51);
        CoapContentFormat.MergePatchJson.Should().Be(52);
        CoapContentFormat.Cbor.Should().Be(60);
        CoapContentFormat.Cwt.Should().Be(61);
        CoapContentFormat.SenmlJson.Should().Be(110);
        CoapContentFormat.SenmlCbor.Should().Be(112);
    }

    [Fact]
    public void MaxAgeIsAbsentByDefaultAndTheDefaultIsSixtySeconds()
    {
        CoapMessage message = new();

        message.MaxAge.Should().BeNull();
        CoapMessage.DefaultMaxAge.Should().Be(60);

        message.MaxAge = uint.MaxValue;
        Raw(message, CoapOptionNumber.MaxAge).Should().Equal(0xFF, 0xFF, 0xFF, 0xFF);
        message.MaxAge.Should().Be(uint.MaxValue);

        message.MaxAge = 0;
        Raw(message, CoapOptionNumber.MaxAge).Should().BeEmpty();
        message.MaxAge.Should().Be(0);

        message.MaxAge = null;
        message.MaxAge.Should().BeNull();
    }

    [Theory]
    [InlineData(0u, new byte[0])]
    [InlineData(1u, new byte[] { 1 })]
    [InlineData(0x1234u, new byte[] { 0x12, 0x34 })]
    [InlineData(0xFFFFFFu, new byte[] { 0xFF, 0xFF, 0xFF })]
    public void ObserveHoldsUpToTwentyFourBits(uint value, byte[] expected)
    {
        CoapMessage message = new() { Observe = value };

        Raw(message, CoapOptionNumber.Observe).Should().Equal(expected);
        message.Observe.Should().Be(value);
    }

    [Theory]
    [InlineData(0x1000000u)]
    [InlineData(uint.MaxValue)]
    public void ObserveRejectsAValueOfMoreThanTwentyFourBits(uint value)
    {
        CoapMessage message = new() { Observe = 7 };

        message.Invoking(m => m.Observe = value).Should().Throw<ArgumentOutOfRangeException>();
        message.Observe.Should().Be(7);
    }

    [Fact]
    public void SettingObserveToNullRemovesIt()
    {
        CoapMessage message = new() { Observe = 0 };

        message.Observe = null;

        message.Observe.Should().BeNull();
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void Block1AndBlock2AreStoredAsTheirEncodedValue()
    {
        CoapMessage message = new()
        {
            Block1 = new CoapBlock(2, more: true, sizeExponent: 2),
            Block2 = new CoapBlock(0x12345, more: false, sizeExponent: 6),
        };

        Raw(message, CoapOptionNumber.Block1).Should().Equal(0x2A);
        Raw(message, CoapOptionNumber.Block2).Should().Equal(0x12, 0x34, 0x56);
        message.Block1.Should().Be(new CoapBlock(2, true, 2));
        message.Block2.Should().Be(new CoapBlock(0x12345, false, 6));

        message.Block1 = null;
        message.Block2 = null;
        message.Block1.Should().BeNull();
        message.Block2.Should().BeNull();
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void TheFirstBlockOfSixteenBytesIsAnEmptyOption()
    {
        CoapMessage message = new() { Block2 = new CoapBlock(0, false, 0) };

        Raw(message, CoapOptionNumber.Block2).Should().BeEmpty();
        message.Block2.Should().Be(new CoapBlock(0, false, 0));
    }

    [Fact]
    public void Size1AndSize2AreUnsignedIntegerOptions()
    {
        CoapMessage message = new() { Size1 = 1280, Size2 = uint.MaxValue };

        Raw(message, CoapOptionNumber.Size1).Should().Equal(0x05, 0x00);
        Raw(message, CoapOptionNumber.Size2).Should().Equal(0xFF, 0xFF, 0xFF, 0xFF);
        message.Size1.Should().Be(1280);
        message.Size2.Should().Be(uint.MaxValue);

        message.Size1 = null;
        message.Size2 = null;
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void ETagIsNullWhenThereIsNone()
    {
        CoapMessage message = new();
        message.ETag.Should().BeNull();

        message.UriPath = "/a";
        message.ETag.HasValue.Should().BeFalse();
    }

    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    [InlineData(8)]
    public void AnETagOfOneToEightBytesIsAccepted(int length)
    {
        byte[] tag = Enumerable.Range(1, length).Select(i => (byte)i).ToArray();

        CoapMessage message = new() { ETag = tag };

        message.ETag!.Value.ToArray().Should().Equal(tag);
        Raw(message, CoapOptionNumber.ETag).Should().Equal(tag);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(9)]
    [InlineData(64)]
    public void AnETagThatIsEmptyOrLongerThanEightBytesIsRejected(int length)
    {
        CoapMessage message = new() { ETag = new byte[] { 7 } };

        message.Invoking(m => m.ETag = new byte[length]).Should().Throw<ArgumentException>();
        message.ETag!.Value.ToArray().Should().Equal(7);
    }

    [Fact]
    public void SettingETagReplacesEveryETagAndNullRemovesThem()
    {
        CoapMessage message = new();
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 2 });

        message.ETag = new byte[] { 3 };
        message.GetETags().Select(t => t.ToArray()).Should().BeEquivalentTo(new[] { new byte[] { 3 } });

        message.ETag = null;
        message.ETag.Should().BeNull();
        message.GetETags().Should().BeEmpty();
    }

    [Fact]
    public void GetETagsReturnsEveryETagInOrder()
    {
        CoapMessage message = new();
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 2, 2 });
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 3, 3, 3 });

        message.GetETags().Select(t => t.ToArray()).Should().BeEquivalentTo(
            new[] { new byte[] { 1 }, new byte[] { 2, 2 }, new byte[] { 3, 3, 3 } },
            o => o.WithStrictOrdering());
        message.ETag!.Value.ToArray().Should().Equal(1);
        new CoapMessage().GetETags().Should().BeEmpty();
    }

    [Fact]
    public void GetETagsSkipsAnETagOfInvalidLength()
    {
        CoapMessage message = new();
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        message.Options.Add(CoapOptionNumber.ETag, ReadOnlyMemory<byte>.Empty);
        message.Options.Add(CoapOptionNumber.ETag, new byte[9]);
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 4 });

        message.GetETags().Select(t => t.ToArray()).Should().BeEquivalentTo(
            new[] { new byte[] { 1 }, new byte[] { 4 } },
            o => o.WithStrictOrdering());
    }

    [Fact]
    public void IfNoneMatchIsAnEmptyOptionThatIsPresentOrNot()
    {
        CoapMessage message = new();
        message.IfNoneMatch.Should().BeFalse();

        message.IfNoneMatch = true;
        Raw(message, CoapOptionNumber.IfNoneMatch).Should().BeEmpty();
        message.IfNoneMatch.Should().BeTrue();

        message.IfNoneMatch = true;
        message.Options.CountOf(CoapOptionNumber.IfNoneMatch).Should().Be(1);

        message.IfNoneMatch = false;
        message.IfNoneMatch.Should().BeFalse();
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void ATypedSetterReplacesEveryOccurrenceOfTheOption()
    {
        CoapMessage message = new();
        message.Options.Add(CoapOptionNumber.ContentFormat, 0u);
        message.Options.Add(CoapOptionNumber.ContentFormat, 41u);
        message.Options.Add(CoapOptionNumber.UriHost, "a");
        message.Options.Add(CoapOptionNumber.UriHost, "b");

        message.ContentFormat = CoapContentFormat.Cbor;
        message.UriHost = "c";

        message.Options.GetAll(CoapOptionNumber.ContentFormat).Length.Should().Be(1);
        message.ContentFormat.Should().Be(CoapContentFormat.Cbor);
        message.Options.GetStrings(CoapOptionNumber.UriHost).Should().Equal("c");
    }

    [Fact]
    public void ATypedGetterReadsTheFirstOccurrence()
    {
        CoapMessage message = new();
        message.Options.Add(CoapOptionNumber.MaxAge, 10u);
        message.Options.Add(CoapOptionNumber.MaxAge, 20u);

        message.MaxAge.Should().Be(10);
    }

    [Fact]
    public void SettingNullOnAMessageWithoutOptionsCreatesNoOptions()
    {
        CoapMessage message = new()
        {
            UriHost = null,
            UriPort = null,
            ContentFormat = null,
            Accept = null,
            MaxAge = null,
            Observe = null,
            Block1 = null,
            Block2 = null,
            Size1 = null,
            Size2 = null,
        };

        message.HasOptions.Should().BeFalse();
        message.Options.Count.Should().Be(0);
    }

    // RFC 7252 section 5.4.3: a value outside the option's length bounds is treated like an unrecognized option,
    // so the typed accessor reads it as absent.
    [Theory]
    [InlineData(CoapOptionNumber.UriHost, 0)]
    [InlineData(CoapOptionNumber.UriHost, 256)]
    [InlineData(CoapOptionNumber.UriPort, 3)]
    [InlineData(CoapOptionNumber.ContentFormat, 3)]
    [InlineData(CoapOptionNumber.Accept, 3)]
    [InlineData(CoapOptionNumber.MaxAge, 5)]
    [InlineData(CoapOptionNumber.Observe, 4)]
    [InlineData(CoapOptionNumber.Block1, 4)]
    [InlineData(CoapOptionNumber.Block2, 4)]
    [InlineData(CoapOptionNumber.Size1, 5)]
    [InlineData(CoapOptionNumber.Size2, 5)]
    [InlineData(CoapOptionNumber.ETag, 0)]
    [InlineData(CoapOptionNumber.ETag, 9)]
    [InlineData(CoapOptionNumber.IfNoneMatch, 1)]
    public void AValueOutsideTheLengthBoundsReadsAsAbsent(CoapOptionNumber number, int length)
    {
        CoapMessage message = new();
        message.Options.Add(number, Enumerable.Repeat((byte)'a', length).ToArray());

        object? value = number switch
        {
            CoapOptionNumber.UriHost => message.UriHost,
            CoapOptionNumber.UriPort => message.UriPort,
            CoapOptionNumber.ContentFormat => message.ContentFormat,
            CoapOptionNumber.Accept => message.Accept,
            CoapOptionNumber.MaxAge => message.MaxAge,
            CoapOptionNumber.Observe => message.Observe,
            CoapOptionNumber.Block1 => message.Block1,
            CoapOptionNumber.Block2 => message.Block2,
            CoapOptionNumber.Size1 => message.Size1,
            CoapOptionNumber.Size2 => message.Size2,
            CoapOptionNumber.ETag => message.ETag,
            CoapOptionNumber.IfNoneMatch => message.IfNoneMatch ? true : null,
            _ => throw new ArgumentOutOfRangeException(nameof(number)),
        };

        value.Should().BeNull();
        message.Options.Contains(number).Should().BeTrue();
    }

    [Theory]
    [InlineData(CoapOptionNumber.UriHost, 1)]
    [InlineData(CoapOptionNumber.UriHost, 255)]
    [InlineData(CoapOptionNumber.UriPort, 2)]
    [InlineData(CoapOptionNumber.MaxAge, 4)]
    [InlineData(CoapOptionNumber.Observe, 3)]
    [InlineData(CoapOptionNumber.Block2, 3)]
    [InlineData(CoapOptionNumber.Size1, 4)]
    [InlineData(CoapOptionNumber.ETag, 8)]
    public void AValueAtTheLengthBoundsIsRead(CoapOptionNumber number, int length)
    {
        CoapMessage message = new();
        message.Options.Add(number, Enumerable.Repeat((byte)'a', length).ToArray());

        object? value = number switch
        {
            CoapOptionNumber.UriHost => message.UriHost,
            CoapOptionNumber.UriPort => message.UriPort,
            CoapOptionNumber.MaxAge => message.MaxAge,
            CoapOptionNumber.Observe => message.Observe,
            CoapOptionNumber.Block2 => message.Block2,
            CoapOptionNumber.Size1 => message.Size1,
            CoapOptionNumber.ETag => message.ETag,
            _ => throw new ArgumentOutOfRangeException(nameof(number)),
        };

        value.Should().NotBeNull();
    }
}
