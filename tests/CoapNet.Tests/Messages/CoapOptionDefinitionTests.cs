using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapOptionDefinitionTests
{
    // The IANA "CoAP Option Numbers" registry entries that an RFC defines, as the RFCs' tables give them:
    // number, name, format, length range, repeatable (RFC 7252 section 5.10 table 4, RFC 7641 section 2,
    // RFC 7959 sections 2.1 and 4, RFC 8613 section 2, RFC 8768 section 3, RFC 9177 section 4,
    // RFC 9175 sections 2.2 and 3.2, RFC 7967 section 2, RFC 9668 section 3.1).
    public static TheoryData<ushort, string, CoapOptionFormat, int, int, bool> Registry => new()
    {
        { 1, "If-Match", CoapOptionFormat.Opaque, 0, 8, true },
        { 3, "Uri-Host", CoapOptionFormat.String, 1, 255, false },
        { 4, "ETag", CoapOptionFormat.Opaque, 1, 8, true },
        { 5, "If-None-Match", CoapOptionFormat.Empty, 0, 0, false },
        { 6, "Observe", CoapOptionFormat.UInt, 0, 3, false },
        { 7, "Uri-Port", CoapOptionFormat.UInt, 0, 2, false },
        { 8, "Location-Path", CoapOptionFormat.String, 0, 255, true },
        { 9, "OSCORE", CoapOptionFormat.Opaque, 0, 255, false },
        { 11, "Uri-Path", CoapOptionFormat.String, 0, 255, true },
        { 12, "Content-Format", CoapOptionFormat.UInt, 0, 2, false },
        { 14, "Max-Age", CoapOptionFormat.UInt, 0, 4, false },
        { 15, "Uri-Query", CoapOptionFormat.String, 0, 255, true },
        { 16, "Hop-Limit", CoapOptionFormat.UInt, 1, 1, false },
        { 17, "Accept", CoapOptionFormat.UInt, 0, 2, false },
        { 19, "Q-Block1", CoapOptionFormat.UInt, 0, 3, false },
        { 20, "Location-Query", CoapOptionFormat.String, 0, 255, true },
        { 21, "EDHOC", CoapOptionFormat.Empty, 0, 0, false },
        { 23, "Block2", CoapOptionFormat.UInt, 0, 3, false },
        { 27, "Block1", CoapOptionFormat.UInt, 0, 3, false },
        { 28, "Size2", CoapOptionFormat.UInt, 0, 4, false },
        { 31, "Q-Block2", CoapOptionFormat.UInt, 0, 3, true },
        { 35, "Proxy-Uri", CoapOptionFormat.String, 1, 1034, false },
        { 39, "Proxy-Scheme", CoapOptionFormat.String, 1, 255, false },
        { 60, "Size1", CoapOptionFormat.UInt, 0, 4, false },
        { 252, "Echo", CoapOptionFormat.Opaque, 1, 40, false },
        { 258, "No-Response", CoapOptionFormat.UInt, 0, 1, false },
        { 292, "Request-Tag", CoapOptionFormat.Opaque, 0, 8, true },
    };

    // The C, U and N columns of the same tables (N is "-" for unsafe options, shown here as false).
    public static TheoryData<ushort, bool, bool, bool> Properties => new()
    {
        { 1, true, false, false },
        { 3, true, true, false },
        { 4, false, false, false },
        { 5, true, false, false },
        { 6, false, true, false },
        { 7, true, true, false },
        { 8, false, false, false },
        { 9, true, false, false },
        { 11, true, true, false },
        { 12, false, false, false },
        { 14, false, true, false },
        { 15, true, true, false },
        { 16, false, false, false },
        { 17, true, false, false },
        { 19, true, true, false },
        { 20, false, false, false },
        { 21, true, false, false },
        { 23, true, true, false },
        { 27, true, true, false },
        { 28, false, false, true },
        { 31, true, true, false },
        { 35, true, true, false },
        { 39, true, true, false },
        { 60, false, false, true },
        { 252, false, false, true },
        { 258, false, true, false },
        { 292, false, false, false },
    };

    [Theory]
    [MemberData(nameof(Registry))]
    public void EachRegisteredOptionHasTheFormatLengthAndRepeatabilityOfItsRfc(
        ushort number, string name, CoapOptionFormat format, int minLength, int maxLength, bool repeatable)
    {
        CoapOptionDefinition.TryGet((CoapOptionNumber)number, out CoapOptionDefinition? definition).Should().BeTrue();

        definition!.Number.Should().Be((CoapOptionNumber)number);
        definition.Name.Should().Be(name);
        definition.Format.Should().Be(format);
        definition.MinLength.Should().Be(minLength);
        definition.MaxLength.Should().Be(maxLength);
        definition.IsRepeatable.Should().Be(repeatable);
        definition.ToString().Should().Be($"{name} ({number})");
        CoapOptionDefinition.GetName((CoapOptionNumber)number).Should().Be(name);
    }

    [Theory]
    [MemberData(nameof(Properties))]
    public void EachRegisteredOptionIsCriticalUnsafeAndNoCacheKeyAsItsRfcTableSays(ushort number, bool critical, bool unsafeToForward, bool noCacheKey)
    {
        CoapOptionNumber option = (CoapOptionNumber)number;
        CoapOptionDefinition.TryGet(option, out CoapOptionDefinition? definition).Should().BeTrue();

        option.IsCritical().Should().Be(critical);
        option.IsUnsafe().Should().Be(unsafeToForward);
        option.IsNoCacheKey().Should().Be(noCacheKey);
        definition!.IsCritical.Should().Be(critical);
        definition.IsUnsafe.Should().Be(unsafeToForward);
        definition.IsNoCacheKey.Should().Be(noCacheKey);
    }

    [Fact]
    public void TheRegistryListsExactlyTheRfcOptionsInAscendingOrder()
    {
        ushort[] expected = Registry.Select(row => (ushort)row[0]).ToArray();

        CoapOptionDefinition.All.Select(d => (ushort)d.Number).Should().Equal(expected);
        expected.Should().BeInAscendingOrder();
    }

    [Fact]
    public void EveryEnumMemberIsRegisteredUnderTheSameNumber()
    {
        CoapOptionNumber[] members = Enum.GetValues<CoapOptionNumber>();

        members.Should().HaveCount(CoapOptionDefinition.All.Count);
        foreach (CoapOptionNumber member in members)
        {
            CoapOptionDefinition.TryGet(member, out CoapOptionDefinition? definition).Should().BeTrue("{0} is an enum member", member);
            definition!.Number.Should().Be(member);
        }
    }

    [Fact]
    public void OnlyRegisteredNumbersHaveADefinition()
    {
        HashSet<ushort> registered = Registry.Select(row => (ushort)row[0]).ToHashSet();
        List<int> wrong = [];

        for (int n = 0; n <= ushort.MaxValue; n++)
        {
            bool found = CoapOptionDefinition.TryGet((CoapOptionNumber)n, out CoapOptionDefinition? definition);
            if (found != registered.Contains((ushort)n) || found != (definition is not null))
            {
                wrong.Add(n);
            }
        }

        wrong.Should().BeEmpty();
    }

    [Theory]
    [InlineData(0, "0")]
    [InlineData(2, "2")]
    [InlineData(13, "13")]
    [InlineData(128, "128")]
    [InlineData(2049, "2049")]
    [InlineData(65535, "65535")]
    public void AnUnregisteredNumberIsNamedByItsDecimalValue(ushort number, string expected)
    {
        CoapOptionDefinition.GetName((CoapOptionNumber)number).Should().Be(expected);
    }

    [Fact]
    public void CriticalUnsafeAndNoCacheKeyFollowTheBitsOfEveryOptionNumber()
    {
        // RFC 7252 section 5.4.6, figure 11: bit 0 is Critical, bit 1 is UnSafe, and bits 2-4 all set
        // mark NoCacheKey, a property that only exists for safe-to-forward options.
        List<int> mismatches = [];
        for (int n = 0; n <= ushort.MaxValue; n++)
        {
            CoapOptionNumber number = (CoapOptionNumber)n;
            bool critical = n % 2 == 1;
            bool unsafeToForward = n / 2 % 2 == 1;
            bool noCacheKey = !unsafeToForward && n / 4 % 8 == 7;

            if (number.IsCritical() != critical || number.IsUnsafe() != unsafeToForward || number.IsNoCacheKey() != noCacheKey)
            {
                mismatches.Add(n);
            }
        }

        mismatches.Should().BeEmpty();
    }

    [Theory]
    [InlineData(0x1C, true)]
    [InlineData(0x1D, true)]
    [InlineData(0x1E, false)]
    [InlineData(0x1F, false)]
    [InlineData(0x3C, true)]
    [InlineData(0x0C, false)]
    [InlineData(0x18, false)]
    [InlineData(0x14, false)]
    public void NoCacheKeyNeedsBitsTwoToFourSetAndTheOptionSafeToForward(ushort number, bool expected)
    {
        ((CoapOptionNumber)number).IsNoCacheKey().Should().Be(expected);
    }

    [Fact]
    public void LengthBoundsAreCheckedOnlyForRegisteredOptions()
    {
        CoapOptionDefinition.IsValidLength(CoapOptionNumber.UriHost, 0).Should().BeFalse();
        CoapOptionDefinition.IsValidLength(CoapOptionNumber.UriHost, 1).Should().BeTrue();
        CoapOptionDefinition.IsValidLength(CoapOptionNumber.UriHost, 255).Should().BeTrue();
        CoapOptionDefinition.IsValidLength(CoapOptionNumber.UriHost, 256).Should().BeFalse();
        CoapOptionDefinition.IsValidLength((CoapOptionNumber)2, 65804).Should().BeTrue();
        CoapOptionDefinition.IsRepeatableOrUnknown(CoapOptionNumber.ContentFormat).Should().BeFalse();
        CoapOptionDefinition.IsRepeatableOrUnknown(CoapOptionNumber.UriPath).Should().BeTrue();
        CoapOptionDefinition.IsRepeatableOrUnknown((CoapOptionNumber)2).Should().BeTrue();
    }
}
