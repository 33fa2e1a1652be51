using System.Collections;
using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapOptionCollectionTests
{
    private static ushort[] Numbers(CoapOptionCollection options)
        => options.Select(e => (ushort)e.Number).ToArray();

    [Fact]
    public void ANewCollectionIsEmpty()
    {
        CoapOptionCollection options = new();

        options.Count.Should().Be(0);
        options.AsSpan().IsEmpty.Should().BeTrue();
        options.Should().BeEmpty();
        options.ToString().Should().BeEmpty();
    }

    [Fact]
    public void AddingOutOfOrderKeepsTheOptionsSortedByNumber()
    {
        CoapOptionCollection options = new();

        options.Add(CoapOptionNumber.Size1, 1024u);
        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.UriHost, "example.com");
        options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        options.Add(CoapOptionNumber.IfMatch, ReadOnlyMemory<byte>.Empty);
        options.Add(CoapOptionNumber.Accept, 50u);

        Numbers(options).Should().Equal(1, 3, 4, 11, 17, 60);
    }

    [Fact]
    public void OptionsWithTheSameNumberKeepTheOrderTheyWereAddedIn()
    {
        CoapOptionCollection options = new();

        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.ContentFormat, 0u);
        options.Add(CoapOptionNumber.UriPath, "b");
        options.Add(CoapOptionNumber.UriHost, "h");
        options.Add(CoapOptionNumber.UriPath, "c");

        options.GetStrings(CoapOptionNumber.UriPath).Should().Equal("a", "b", "c");
        Numbers(options).Should().Equal(3, 11, 11, 11, 12);
    }

    [Fact]
    public void AnOptionAddedOutOfOrderGoesAfterTheOthersWithItsNumber()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriHost, "h");
        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.UriPath, "b");
        options.Add(CoapOptionNumber.UriQuery, "q");

        options.Add(CoapOptionNumber.UriPath, "c");

        options.Select(e => e.GetString()).Should().Equal("h", "a", "b", "c", "q");
    }

    [Fact]
    public void AnyInsertionOrderGivesAStableSortByNumber()
    {
        // A fixed seed keeps the test deterministic; LINQ's OrderBy is a stable sort.
        Random random = new(7252);
        List<CoapOptionEntry> added = [];
        CoapOptionCollection options = new();

        for (int i = 0; i < 500; i++)
        {
            CoapOptionEntry entry = new((CoapOptionNumber)random.Next(0, 40), BitConverter.GetBytes(i));
            added.Add(entry);
            options.Add(entry);
        }

        options.Should().Equal(added.OrderBy(e => e.Number));
    }

    [Fact]
    public void TheHighestOptionNumberIsKeptInOrder()
    {
        CoapOptionCollection options = new();
        options.Add((CoapOptionNumber)ushort.MaxValue, new byte[] { 1 });
        options.Add((CoapOptionNumber)0, new byte[] { 2 });
        options.Add((CoapOptionNumber)(ushort.MaxValue - 1), new byte[] { 3 });
        options.Add((CoapOptionNumber)ushort.MaxValue, new byte[] { 4 });

        Numbers(options).Should().Equal(0, 65534, 65535, 65535);
        options[2].Value.ToArray().Should().Equal(1);
        options[3].Value.ToArray().Should().Equal(4);
    }

    [Fact]
    public void UnknownOptionNumbersAreKeptWithTheirValues()
    {
        CoapOptionCollection options = new();
        options.Add((CoapOptionNumber)65000, new byte[] { 0xAB, 0xCD });
        options.Add((CoapOptionNumber)2, ReadOnlyMemory<byte>.Empty);
        options.Add(CoapOptionNumber.UriPath, "x");

        Numbers(options).Should().Equal(2, 11, 65000);
        options.TryGet((CoapOptionNumber)65000, out CoapOptionEntry entry).Should().BeTrue();
        entry.Value.ToArray().Should().Equal(0xAB, 0xCD);
        entry.IsRecognized.Should().BeFalse();
        entry.HasValidLength.Should().BeTrue();
        entry.Name.Should().Be("65000");
        options.TryGetFirstInvalid(out _).Should().BeFalse();
    }

    [Fact]
    public void RemoveAllRemovesEveryOptionWithTheNumberAndNothingElse()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriHost, "h");
        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.UriPath, "b");
        options.Add(CoapOptionNumber.UriQuery, "q");

        options.RemoveAll(CoapOptionNumber.UriPath).Should().Be(2);

        options.Select(e => e.GetString()).Should().Equal("h", "q");
        options.Contains(CoapOptionNumber.UriPath).Should().BeFalse();
        options.RemoveAll(CoapOptionNumber.UriPath).Should().Be(0);
        options.RemoveAll(CoapOptionNumber.Accept).Should().Be(0);
        options.Count.Should().Be(2);
    }

    [Fact]
    public void RemovingTheFirstAndLastNumbersKeepsTheRestInOrder()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.IfMatch, new byte[] { 1 });
        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.Size1, 5u);

        options.RemoveAll(CoapOptionNumber.IfMatch).Should().Be(1);
        options.RemoveAll(CoapOptionNumber.Size1).Should().Be(1);
        options.Add(CoapOptionNumber.UriHost, "h");

        Numbers(options).Should().Equal(3, 11);
    }

    [Fact]
    public void ContainsCountOfTryGetAndGetAllLookUpByNumber()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        options.Add(CoapOptionNumber.ETag, new byte[] { 2 });
        options.Add(CoapOptionNumber.ETag, new byte[] { 3 });
        options.Add(CoapOptionNumber.Observe, 0u);

        options.Contains(CoapOptionNumber.ETag).Should().BeTrue();
        options.Contains(CoapOptionNumber.Observe).Should().BeTrue();
        options.Contains(CoapOptionNumber.IfMatch).Should().BeFalse();
        options.Contains(CoapOptionNumber.Size1).Should().BeFalse();
        options.CountOf(CoapOptionNumber.ETag).Should().Be(3);
        options.CountOf(CoapOptionNumber.Observe).Should().Be(1);
        options.CountOf(CoapOptionNumber.UriPath).Should().Be(0);

        options.TryGet(CoapOptionNumber.ETag, out CoapOptionEntry first).Should().BeTrue();
        first.Value.ToArray().Should().Equal(1);
        options.TryGet(CoapOptionNumber.UriPath, out CoapOptionEntry missing).Should().BeFalse();
        missing.Should().Be(default(CoapOptionEntry));

        options.GetAll(CoapOptionNumber.ETag).ToArray().Select(e => e.Value.Span[0]).Should().Equal(1, 2, 3);
        options.GetAll(CoapOptionNumber.UriPath).IsEmpty.Should().BeTrue();
    }

    [Fact]
    public void GetStringsDecodesEveryValueAsUtf8()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriQuery, "a=1");
        options.Add(CoapOptionNumber.UriQuery, "ünïcödé");
        options.Add(CoapOptionNumber.UriQuery, string.Empty);

        options.GetStrings(CoapOptionNumber.UriQuery).Should().Equal("a=1", "ünïcödé", string.Empty);
        options.GetStrings(CoapOptionNumber.UriPath).Should().BeEmpty();
    }

    [Fact]
    public void SetReplacesEveryOptionWithTheNumber()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriHost, "h");
        options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        options.Add(CoapOptionNumber.ETag, new byte[] { 2 });
        options.Add(CoapOptionNumber.MaxAge, 5u);

        options.Set(CoapOptionNumber.ETag, new byte[] { 9, 9 });

        options.CountOf(CoapOptionNumber.ETag).Should().Be(1);
        options.GetAll(CoapOptionNumber.ETag)[0].Value.ToArray().Should().Equal(9, 9);
        Numbers(options).Should().Equal(3, 4, 14);
    }

    [Fact]
    public void ClearRemovesEveryOptionAndTheCollectionStaysUsable()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.UriQuery, "b");

        options.Clear();

        options.Count.Should().Be(0);
        options.Contains(CoapOptionNumber.UriPath).Should().BeFalse();
        options.Add(CoapOptionNumber.UriPath, "c");
        options.GetStrings(CoapOptionNumber.UriPath).Should().Equal("c");
    }

    [Fact]
    public void EveryWayOfEnumeratingGivesTheWireOrder()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriQuery, "q");
        options.Add(CoapOptionNumber.UriPath, "p");
        options.Add(CoapOptionNumber.UriHost, "h");

        List<string> viaSpan = [];
        foreach (CoapOptionEntry entry in options)
        {
            viaSpan.Add(entry.GetString());
        }

        List<string> viaNonGeneric = [];
        foreach (object entry in (IEnumerable)options)
        {
            viaNonGeneric.Add(((CoapOptionEntry)entry).GetString());
        }

        List<string> viaIndexer = [];
        for (int i = 0; i < options.Count; i++)
        {
            viaIndexer.Add(options[i].GetString());
        }

        viaSpan.Should().Equal("h", "p", "q");
        ((IEnumerable<CoapOptionEntry>)options).Select(e => e.GetString()).Should().Equal("h", "p", "q");
        viaNonGeneric.Should().Equal("h", "p", "q");
        viaIndexer.Should().Equal("h", "p", "q");
        options.AsSpan().ToArray().Select(e => e.GetString()).Should().Equal("h", "p", "q");
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(2)]
    [InlineData(int.MaxValue)]
    public void TheIndexerRejectsAPositionOutsideTheCollection(int index)
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriPath, "a");
        options.Add(CoapOptionNumber.UriPath, "b");

        Func<CoapOptionEntry> read = () => options[index];

        read.Should().Throw<ArgumentOutOfRangeException>();
    }

    [Fact]
    public void AValueOfUpTo65804BytesIsAccepted()
    {
        CoapOptionCollection options = new();

        options.Add((CoapOptionNumber)2, new byte[CoapOptionEntry.MaxValueLength]);

        CoapOptionEntry.MaxValueLength.Should().Be(65804);
        options[0].Value.Length.Should().Be(65804);
    }

    [Fact]
    public void AValueLongerThan65804BytesIsRejected()
    {
        CoapOptionCollection options = new();
        byte[] tooLong = new byte[65805];

        options.Invoking(o => o.Add((CoapOptionNumber)2, tooLong)).Should().Throw<ArgumentException>();
        options.Invoking(o => o.Add(CoapOptionNumber.ProxyUri, new string('a', 65805))).Should().Throw<ArgumentException>();
        options.Invoking(o => o.Add(CoapOptionNumber.ProxyUri, new string('é', 32903))).Should().Throw<ArgumentException>();
        options.Invoking(o => o.Add(new OpaqueOption((CoapOptionNumber)2, tooLong))).Should().Throw<ArgumentException>();
        options.Invoking(o => o.Set((CoapOptionNumber)2, tooLong)).Should().Throw<ArgumentException>();
        FluentActions.Invoking(() => new CoapOptionEntry((CoapOptionNumber)2, tooLong)).Should().Throw<ArgumentException>();
        options.Count.Should().Be(0);
    }

    [Fact]
    public void AddingANullStringOrOptionIsRejected()
    {
        CoapOptionCollection options = new();

        options.Invoking(o => o.Add(CoapOptionNumber.UriPath, (string)null!)).Should().Throw<ArgumentNullException>();
        options.Invoking(o => o.Add((CoapOption)null!)).Should().Throw<ArgumentNullException>();
    }

    [Theory]
    [InlineData(0u, new byte[0])]
    [InlineData(1u, new byte[] { 0x01 })]
    [InlineData(255u, new byte[] { 0xFF })]
    [InlineData(256u, new byte[] { 0x01, 0x00 })]
    [InlineData(65535u, new byte[] { 0xFF, 0xFF })]
    [InlineData(65536u, new byte[] { 0x01, 0x00, 0x00 })]
    [InlineData(0xFFFFFFu, new byte[] { 0xFF, 0xFF, 0xFF })]
    [InlineData(0x1000000u, new byte[] { 0x01, 0x00, 0x00, 0x00 })]
    [InlineData(uint.MaxValue, new byte[] { 0xFF, 0xFF, 0xFF, 0xFF })]
    public void AnUnsignedIntegerIsStoredInItsShortestBigEndianForm(uint value, byte[] expected)
    {
        CoapOptionCollection options = new();

        options.Add(CoapOptionNumber.MaxAge, value);

        options[0].Value.ToArray().Should().Equal(expected);
        options[0].GetUInt().Should().Be(value);
        options[0].TryGetUInt(out uint read).Should().BeTrue();
        read.Should().Be(value);
    }

    [Theory]
    [InlineData(new byte[] { 0x00 }, 0u)]
    [InlineData(new byte[] { 0x00, 0x05 }, 5u)]
    [InlineData(new byte[] { 0x00, 0x00, 0x01 }, 1u)]
    [InlineData(new byte[] { 0x00, 0x00, 0x00, 0x02 }, 2u)]
    [InlineData(new byte[] { 0x12, 0x34, 0x56 }, 0x123456u)]
    public void AnUnsignedIntegerWithLeadingZeroBytesIsStillRead(byte[] value, uint expected)
    {
        CoapOptionEntry entry = new(CoapOptionNumber.MaxAge, value);

        entry.GetUInt().Should().Be(expected);
    }

    [Fact]
    public void AnUnsignedIntegerOfMoreThanFourBytesCannotBeRead()
    {
        CoapOptionEntry entry = new((CoapOptionNumber)2, new byte[] { 0, 0, 0, 0, 1 });

        entry.TryGetUInt(out uint value).Should().BeFalse();
        value.Should().Be(0);
        entry.Invoking(e => e.GetUInt()).Should().Throw<FormatException>();
    }

    [Fact]
    public void TryGetFirstInvalidFindsNothingInAWellFormedCollection()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriHost, "example.com");
        options.Add(CoapOptionNumber.ETag, new byte[] { 1 });
        options.Add(CoapOptionNumber.ETag, new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 });
        options.Add(CoapOptionNumber.UriPath, string.Empty);
        options.Add(CoapOptionNumber.UriPath, new string('p', 255));
        options.Add(CoapOptionNumber.HopLimit, 16u);
        options.Add(CoapOptionNumber.ProxyUri, new string('u', 1034));
        options.Add(CoapOptionNumber.Echo, new byte[40]);
        options.Add(CoapOptionNumber.RequestTag, ReadOnlyMemory<byte>.Empty);
        options.Add(CoapOptionNumber.RequestTag, new byte[8]);
        options.Add((CoapOptionNumber)2, new byte[300]);
        options.Add((CoapOptionNumber)2, new byte[300]);

        options.TryGetFirstInvalid(out CoapOptionEntry entry).Should().BeFalse();
        entry.Should().Be(default(CoapOptionEntry));
        new CoapOptionCollection().TryGetFirstInvalid(out _).Should().BeFalse();
    }

    [Theory]
    [InlineData(CoapOptionNumber.IfMatch, 9)]
    [InlineData(CoapOptionNumber.UriHost, 0)]
    [InlineData(CoapOptionNumber.UriHost, 256)]
    [InlineData(CoapOptionNumber.ETag, 0)]
    [InlineData(CoapOptionNumber.ETag, 9)]
    [InlineData(CoapOptionNumber.IfNoneMatch, 1)]
    [InlineData(CoapOptionNumber.Observe, 4)]
    [InlineData(CoapOptionNumber.UriPort, 3)]
    [InlineData(CoapOptionNumber.LocationPath, 256)]
    [InlineData(CoapOptionNumber.Oscore, 256)]
    [InlineData(CoapOptionNumber.UriPath, 256)]
    [InlineData(CoapOptionNumber.ContentFormat, 3)]
    [InlineData(CoapOptionNumber.MaxAge, 5)]
    [InlineData(CoapOptionNumber.UriQuery, 256)]
    [InlineData(CoapOptionNumber.HopLimit, 0)]
    [InlineData(CoapOptionNumber.HopLimit, 2)]
    [InlineData(CoapOptionNumber.Accept, 3)]
    [InlineData(CoapOptionNumber.QBlock1, 4)]
    [InlineData(CoapOptionNumber.LocationQuery, 256)]
    [InlineData(CoapOptionNumber.Edhoc, 1)]
    [InlineData(CoapOptionNumber.Block2, 4)]
    [InlineData(CoapOptionNumber.Block1, 4)]
    [InlineData(CoapOptionNumber.Size2, 5)]
    [InlineData(CoapOptionNumber.QBlock2, 4)]
    [InlineData(CoapOptionNumber.ProxyUri, 0)]
    [InlineData(CoapOptionNumber.ProxyUri, 1035)]
    [InlineData(CoapOptionNumber.ProxyScheme, 0)]
    [InlineData(CoapOptionNumber.ProxyScheme, 256)]
    [InlineData(CoapOptionNumber.Size1, 5)]
    [InlineData(CoapOptionNumber.Echo, 0)]
    [InlineData(CoapOptionNumber.Echo, 41)]
    [InlineData(CoapOptionNumber.NoResponse, 2)]
    [InlineData(CoapOptionNumber.RequestTag, 9)]
    public void TryGetFirstInvalidFindsAValueLengthOutsideTheRegisteredBounds(CoapOptionNumber number, int length)
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.IfMatch, new byte[] { 1 });
        options.Add(number, new byte[length]);
        options.Add(CoapOptionNumber.Size1, 1u);

        options.TryGetFirstInvalid(out CoapOptionEntry entry).Should().BeTrue();

        entry.Number.Should().Be(number);
        entry.Value.Length.Should().Be(length);
        entry.HasValidLength.Should().BeFalse();
    }

    [Theory]
    [InlineData(CoapOptionNumber.UriHost)]
    [InlineData(CoapOptionNumber.IfNoneMatch)]
    [InlineData(CoapOptionNumber.Observe)]
    [InlineData(CoapOptionNumber.UriPort)]
    [InlineData(CoapOptionNumber.Oscore)]
    [InlineData(CoapOptionNumber.ContentFormat)]
    [InlineData(CoapOptionNumber.MaxAge)]
    [InlineData(CoapOptionNumber.Accept)]
    [InlineData(CoapOptionNumber.QBlock1)]
    [InlineData(CoapOptionNumber.Edhoc)]
    [InlineData(CoapOptionNumber.Block2)]
    [InlineData(CoapOptionNumber.Block1)]
    [InlineData(CoapOptionNumber.Size2)]
    [InlineData(CoapOptionNumber.ProxyScheme)]
    [InlineData(CoapOptionNumber.Size1)]
    [InlineData(CoapOptionNumber.NoResponse)]
    public void TryGetFirstInvalidFindsTheSecondOccurrenceOfANonRepeatableOption(CoapOptionNumber number)
    {
        CoapOptionDefinition.TryGet(number, out CoapOptionDefinition? definition).Should().BeTrue();
        byte[] first = new byte[definition!.MinLength];
        byte[] second = new byte[definition.MinLength];
        if (second.Length > 0)
        {
            first[0] = 1;
            second[0] = 2;
        }

        CoapOptionCollection options = new();
        options.Add(number, first);
        options.Add(number, second);

        options.TryGetFirstInvalid(out CoapOptionEntry entry).Should().BeTrue();

        entry.Number.Should().Be(number);
        entry.Value.ToArray().Should().Equal(second);
    }

    [Fact]
    public void TryGetFirstInvalidReportsTheEarliestProblemInWireOrder()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.ContentFormat, 0u);
        options.Add(CoapOptionNumber.ContentFormat, 50u);
        options.Add(CoapOptionNumber.UriHost, string.Empty);

        options.TryGetFirstInvalid(out CoapOptionEntry entry).Should().BeTrue();

        entry.Number.Should().Be(CoapOptionNumber.UriHost);
    }

    [Fact]
    public void ToStringListsTheOptionsInWireOrder()
    {
        CoapOptionCollection options = new();
        options.Add(CoapOptionNumber.UriPath, "temperature");
        options.Add(CoapOptionNumber.UriHost, "example.com");

        options.ToString().Should().Be("Uri-Host: example.com, Uri-Path: temperature");
    }
}
