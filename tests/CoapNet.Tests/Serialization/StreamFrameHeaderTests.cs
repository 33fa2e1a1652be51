using System.Buffers;
using System.Security.Claims;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>The public frame-header helpers a transport that re-frames RFC 8323 frames uses (WebSockets, section 4.2).</summary>
public sealed class StreamFrameHeaderTests
{
    [Theory]
    [InlineData(0, 1)]
    [InlineData(12, 1)]
    [InlineData(13, 2)]
    [InlineData(268, 2)]
    [InlineData(269, 3)]
    [InlineData(65804, 3)]
    [InlineData(65805, 5)]
    public void AHeaderWrittenForABodyReadsBackAsTheFrameTheTcpCodecWrites(int bodyLength, int expectedHeader)
    {
        CoapMessage message = new() { Code = CoapCode.Content, Token = new byte[] { 1, 2, 3 } };
        message.Payload = new byte[bodyLength - 1 < 0 ? 0 : bodyLength - 1];
        byte[] frame = CoapMessageSerializer.Tcp.Serialize(message);
        Span<byte> header = stackalloc byte[5];

        int written = CoapMessageSerializer.WriteStreamFrameHeader(header, 3, bodyLength);
        OperationStatus status = CoapMessageSerializer.ReadStreamFrameHeader(frame, out int headerLength, out long frameLength);

        written.Should().Be(expectedHeader);
        status.Should().Be(OperationStatus.Done);
        headerLength.Should().Be(expectedHeader);
        frameLength.Should().Be(frame.Length);
        frame.AsSpan(0, written).ToArray().Should().Equal(header[..written].ToArray(), "the helper writes what the codec writes");
    }

    [Fact]
    public void AHeaderCutInsideItsExtendedLengthNeedsMoreAndAReservedTokenLengthIsInvalid()
    {
        CoapMessageSerializer.ReadStreamFrameHeader([0xE0, 0x01], out _, out _).Should().Be(OperationStatus.NeedMoreData);
        CoapMessageSerializer.ReadStreamFrameHeader([0x09], out _, out _).Should().Be(OperationStatus.InvalidData);
        FluentActions.Invoking(() => CoapMessageSerializer.WriteStreamFrameHeader(new byte[5], 9, 0)).Should().Throw<ArgumentOutOfRangeException>();
    }

    [Fact]
    public void AnAuthenticatedUserIsAnIdentityByItsNameWithItsClaims()
    {
        ClaimsPrincipal alice = new(new ClaimsIdentity([new Claim(ClaimTypes.Name, "alice"), new Claim(ClaimTypes.Role, "admin")], "Test"));
        ClaimsPrincipal aliceAgain = new(new ClaimsIdentity([new Claim(ClaimTypes.Name, "alice")], "Test"));

        CoapPeerIdentity identity = CoapPeerIdentity.FromUser(alice);

        identity.Kind.Should().Be(CoapPeerIdentityKind.User);
        identity.ToString().Should().Be("user:alice");
        identity.User!.IsInRole("admin").Should().BeTrue();
        identity.Should().Be(CoapPeerIdentity.FromUser(aliceAgain), "the same user is recognised again on another connection");
        FluentActions.Invoking(() => CoapPeerIdentity.FromUser(new ClaimsPrincipal(new ClaimsIdentity()))).Should().Throw<ArgumentException>().WithMessage("*not authenticated*");
    }
}
