using System.Globalization;
using System.Reflection;
using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapCodeTests
{
    // Every code registered by RFC 7252 (section 12.1), RFC 7959, RFC 8132, RFC 8323, RFC 8516 and RFC 8768:
    // the static member, its class and detail, and its registered name.
    public static TheoryData<string, int, int, string> RegisteredCodes => new()
    {
        { nameof(CoapCode.Empty), 0, 0, "Empty" },
        { nameof(CoapCode.Get), 0, 1, "GET" },
        { nameof(CoapCode.Post), 0, 2, "POST" },
        { nameof(CoapCode.Put), 0, 3, "PUT" },
        { nameof(CoapCode.Delete), 0, 4, "DELETE" },
        { nameof(CoapCode.Fetch), 0, 5, "FETCH" },
        { nameof(CoapCode.Patch), 0, 6, "PATCH" },
        { nameof(CoapCode.IPatch), 0, 7, "iPATCH" },
        { nameof(CoapCode.Created), 2, 1, "Created" },
        { nameof(CoapCode.Deleted), 2, 2, "Deleted" },
        { nameof(CoapCode.Valid), 2, 3, "Valid" },
        { nameof(CoapCode.Changed), 2, 4, "Changed" },
        { nameof(CoapCode.Content), 2, 5, "Content" },
        { nameof(CoapCode.Continue), 2, 31, "Continue" },
        { nameof(CoapCode.BadRequest), 4, 0, "Bad Request" },
        { nameof(CoapCode.Unauthorized), 4, 1, "Unauthorized" },
        { nameof(CoapCode.BadOption), 4, 2, "Bad Option" },
        { nameof(CoapCode.Forbidden), 4, 3, "Forbidden" },
        { nameof(CoapCode.NotFound), 4, 4, "Not Found" },
        { nameof(CoapCode.MethodNotAllowed), 4, 5, "Method Not Allowed" },
        { nameof(CoapCode.NotAcceptable), 4, 6, "Not Acceptable" },
        { nameof(CoapCode.RequestEntityIncomplete), 4, 8, "Request Entity Incomplete" },
        { nameof(CoapCode.Conflict), 4, 9, "Conflict" },
        { nameof(CoapCode.PreconditionFailed), 4, 12, "Precondition Failed" },
        { nameof(CoapCode.RequestEntityTooLarge), 4, 13, "Request Entity Too Large" },
        { nameof(CoapCode.UnsupportedContentFormat), 4, 15, "Unsupported Content-Format" },
        { nameof(CoapCode.UnprocessableEntity), 4, 22, "Unprocessable Entity" },
        { nameof(CoapCode.TooManyRequests), 4, 29, "Too Many Requests" },
        { nameof(CoapCode.InternalServerError), 5, 0, "Internal Server Error" },
        { nameof(CoapCode.NotImplemented), 5, 1, "Not Implemented" },
        { nameof(CoapCode.BadGateway), 5, 2, "Bad Gateway" },
        { nameof(CoapCode.ServiceUnavailable), 5, 3, "Service Unavailable" },
        { nameof(CoapCode.GatewayTimeout), 5, 4, "Gateway Timeout" },
        { nameof(CoapCode.ProxyingNotSupported), 5, 5, "Proxying Not Supported" },
        { nameof(CoapCode.HopLimitReached), 5, 8, "Hop Limit Reached" },
        { nameof(CoapCode.Csm), 7, 1, "CSM" },
        { nameof(CoapCode.Ping), 7, 2, "Ping" },
        { nameof(CoapCode.Pong), 7, 3, "Pong" },
        { nameof(CoapCode.Release), 7, 4, "Release" },
        { nameof(CoapCode.Abort), 7, 5, "Abort" },
    };

    private static CoapCode Member(string name)
        => (CoapCode)typeof(CoapCode).GetProperty(name, BindingFlags.Public | BindingFlags.Static)!.GetValue(null)!;

    private static string Dotted(int value)
        => string.Create(CultureInfo.InvariantCulture, $"{value >> 5}.{value & 0x1F:D2}");

    private static HashSet<byte> RegisteredValues()
    {
        HashSet<byte> values = [];
        foreach (object[] row in RegisteredCodes)
        {
            values.Add((byte)(((int)row[1] << 5) | (int)row[2]));
        }

        return values;
    }

    [Theory]
    [MemberData(nameof(RegisteredCodes))]
    public void EveryRegisteredCodeHasANamedMemberWithItsClassAndDetail(string member, int codeClass, int detail, string name)
    {
        CoapCode code = Member(member);

        code.Class.Should().Be(codeClass);
        code.Detail.Should().Be(detail);
        code.Value.Should().Be((byte)((codeClass << 5) | detail));
        code.Name.Should().Be(name);
        code.Should().Be(new CoapCode(codeClass, detail));
    }

    [Theory]
    [MemberData(nameof(RegisteredCodes))]
    public void ARegisteredCodePrintsItsDottedFormFollowedByItsName(string member, int codeClass, int detail, string name)
    {
        string expected = string.Create(CultureInfo.InvariantCulture, $"{codeClass}.{detail:D2} {name}");

        Member(member).ToString().Should().Be(expected);
    }

    [Theory]
    [InlineData(0x45, "2.05 Content")]
    [InlineData(0x01, "0.01 GET")]
    [InlineData(0x84, "4.04 Not Found")]
    [InlineData(0x5F, "2.31 Continue")]
    [InlineData(0xE1, "7.01 CSM")]
    [InlineData(0x00, "0.00 Empty")]
    public void PrintsTheFormsTheRfcsUse(byte value, string expected)
    {
        new CoapCode(value).ToString().Should().Be(expected);
    }

    [Fact]
    public void TheNamedMembersAreExactlyTheRegisteredCodes()
    {
        string[] members = typeof(CoapCode)
            .GetProperties(BindingFlags.Public | BindingFlags.Static)
            .Where(p => p.PropertyType == typeof(CoapCode))
            .Select(p => p.Name)
            .ToArray();

        members.Should().BeEquivalentTo(RegisteredCodes.Select(row => (string)row[0]));
    }

    [Fact]
    public void AnUnregisteredCodeHasNoNameAndPrintsOnlyItsDottedForm()
    {
        HashSet<byte> registered = RegisteredValues();

        for (int value = 0; value < 256; value++)
        {
            CoapCode code = new((byte)value);
            if (registered.Contains((byte)value))
            {
                code.Name.Should().NotBeNull();
                code.ToString().Should().StartWith(Dotted(value) + " ");
            }
            else
            {
                code.Name.Should().BeNull();
                code.ToString().Should().Be(Dotted(value));
            }
        }
    }

    [Theory]
    [InlineData(0x9B, "4.27")]
    [InlineData(0x08, "0.08")]
    [InlineData(0x46, "2.06")]
    [InlineData(0x60, "3.00")]
    [InlineData(0xE6, "7.06")]
    [InlineData(0xFF, "7.31")]
    public void UnknownCodesPrintAsClassDotTwoDigitDetail(byte value, string expected)
    {
        new CoapCode(value).ToString().Should().Be(expected);
    }

    [Theory]
    [InlineData("4.04", 0x84)]
    [InlineData("0.00", 0x00)]
    [InlineData("0.01", 0x01)]
    [InlineData("2.05", 0x45)]
    [InlineData("2.31", 0x5F)]
    [InlineData("7.05", 0xE5)]
    [InlineData("7.31", 0xFF)]
    [InlineData("3.17", 0x71)]
    public void TryParseReadsTheDottedForm(string text, byte expected)
    {
        CoapCode.TryParse(text, out CoapCode code).Should().BeTrue();
        code.Value.Should().Be(expected);
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("4")]
    [InlineData("4.")]
    [InlineData("4.4")]
    [InlineData("4.004")]
    [InlineData("404")]
    [InlineData("4,04")]
    [InlineData("4-04")]
    [InlineData(" 4.04")]
    [InlineData("4.04 ")]
    [InlineData("4.04 Not Found")]
    [InlineData("8.00")]
    [InlineData("9.01")]
    [InlineData("4.32")]
    [InlineData("4.99")]
    [InlineData("-4.04")]
    [InlineData("4.-1")]
    [InlineData("4.+1")]
    [InlineData("a.bc")]
    [InlineData("4.0x")]
    [InlineData("40.4")]
    [InlineData("\u0664.\u0660\u0664")]
    [InlineData("4.\u0660\u0664")]
    public void TryParseRejectsTextThatIsNotClassDotTwoDigitDetail(string? text)
    {
        CoapCode.TryParse(text, out CoapCode code).Should().BeFalse();
        code.Should().Be(default(CoapCode));
    }

    [Fact]
    public void TryParseReadsBackTheDottedFormOfEveryCode()
    {
        for (int value = 0; value < 256; value++)
        {
            CoapCode.TryParse(Dotted(value), out CoapCode code).Should().BeTrue();
            code.Value.Should().Be((byte)value);
        }
    }

    [Fact]
    public void ClassifiesEveryCodeByItsClass()
    {
        for (int value = 0; value < 256; value++)
        {
            CoapCode code = new((byte)value);
            int codeClass = value / 32;
            int detail = value % 32;

            code.IsEmpty.Should().Be(value == 0, "of {0}", code);
            code.IsRequest.Should().Be(codeClass == 0 && detail != 0, "of {0}", code);

            // RFC 7252 section 12.1: classes 1, 3 and 6 are reserved; only 2, 4 and 5 are responses.
            code.IsResponse.Should().Be(codeClass is 2 or 4 or 5, "of {0}", code);
            code.IsSuccess.Should().Be(codeClass == 2, "of {0}", code);
            code.IsClientError.Should().Be(codeClass == 4, "of {0}", code);
            code.IsServerError.Should().Be(codeClass == 5, "of {0}", code);
            code.IsSignaling.Should().Be(codeClass == 7, "of {0}", code);
        }
    }

    [Fact]
    public void TheNamedMembersFallIntoTheirClasses()
    {
        CoapCode.Empty.IsEmpty.Should().BeTrue();
        CoapCode.Empty.IsRequest.Should().BeFalse();
        CoapCode.IPatch.IsRequest.Should().BeTrue();
        CoapCode.Continue.IsSuccess.Should().BeTrue();
        CoapCode.NotFound.IsResponse.Should().BeTrue();
        CoapCode.NotFound.IsClientError.Should().BeTrue();
        CoapCode.HopLimitReached.IsServerError.Should().BeTrue();
        CoapCode.Abort.IsSignaling.Should().BeTrue();
        CoapCode.Abort.IsResponse.Should().BeFalse();
    }

    [Theory]
    [InlineData(-1, 0)]
    [InlineData(8, 0)]
    [InlineData(int.MinValue, 0)]
    [InlineData(0, -1)]
    [InlineData(0, 32)]
    [InlineData(7, int.MaxValue)]
    public void TheConstructorRejectsAClassOrDetailOutOfRange(int codeClass, int detail)
    {
        Action create = () => _ = new CoapCode(codeClass, detail);

        create.Should().Throw<ArgumentOutOfRangeException>();
    }

    [Theory]
    [InlineData(0, 0, 0x00)]
    [InlineData(0, 31, 0x1F)]
    [InlineData(7, 0, 0xE0)]
    [InlineData(7, 31, 0xFF)]
    [InlineData(4, 4, 0x84)]
    public void TheConstructorPacksClassAndDetailIntoTheWireByte(int codeClass, int detail, byte expected)
    {
        CoapCode code = new(codeClass, detail);

        code.Value.Should().Be(expected);
        ((byte)code).Should().Be(expected);
    }

    [Fact]
    public void CodesCompareByTheirWireByte()
    {
        CoapCode fromByte = (byte)0x84;

        (fromByte == CoapCode.NotFound).Should().BeTrue();
        (fromByte != CoapCode.NotFound).Should().BeFalse();
        fromByte.Equals((object)CoapCode.NotFound).Should().BeTrue();
        fromByte.Equals((object)(byte)0x84).Should().BeFalse();
        fromByte.GetHashCode().Should().Be(CoapCode.NotFound.GetHashCode());
        (CoapCode.Get < CoapCode.Content).Should().BeTrue();
        (CoapCode.Content > CoapCode.Get).Should().BeTrue();
        (CoapCode.Content <= CoapCode.Content).Should().BeTrue();
        (CoapCode.Content >= CoapCode.Abort).Should().BeFalse();
        CoapCode.BadRequest.CompareTo(CoapCode.InternalServerError).Should().BeNegative();
    }
}
