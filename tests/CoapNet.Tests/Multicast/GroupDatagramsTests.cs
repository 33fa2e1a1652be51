using CoapNet.Messages;
using CoapNet.Multicast;
using CoapNet.Serialization;

namespace CoapNet.Tests.Multicast;

/// <summary>What a group endpoint takes in and lets out (RFC 7252 section 8.1), by the bytes.</summary>
public class GroupDatagramsTests
{
    [Theory]
    [InlineData(CoapMessageType.NonConfirmable, 0x01, true)]
    [InlineData(CoapMessageType.NonConfirmable, 0x03, true)]
    [InlineData(CoapMessageType.Confirmable, 0x01, false)]
    [InlineData(CoapMessageType.NonConfirmable, 0x45, false)]
    [InlineData(CoapMessageType.Acknowledgement, 0x00, false)]
    [InlineData(CoapMessageType.Reset, 0x00, false)]
    [InlineData(CoapMessageType.NonConfirmable, 0x00, false)]
    public void OnlyANonRequestGoesUp(CoapMessageType type, byte code, bool up)
    {
        CoapMessage message = new() { Type = type, Code = new CoapCode(code >> 5, code & 0x1F), MessageId = 9 };

        GroupDatagrams.IsGroupRequest(CoapMessageSerializer.Udp.Serialize(message)).Should().Be(up);
    }

    [Fact]
    public void AnythingShorterThanAHeaderOrOfAnotherVersionStaysDown()
    {
        GroupDatagrams.IsGroupRequest([0x50, 0x01, 0x00]).Should().BeFalse();
        GroupDatagrams.IsGroupRequest([0x90, 0x01, 0x00, 0x01]).Should().BeFalse("version 2");
    }

    [Fact]
    public void AResetIsNeverSentFromAGroupEndpoint()
    {
        GroupDatagrams.IsReset(CoapMessageSerializer.Udp.Serialize(CoapMessage.CreateEmpty(CoapMessageType.Reset, 1))).Should().BeTrue();
        GroupDatagrams.IsReset(CoapMessageSerializer.Udp.Serialize(CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, 1))).Should().BeFalse();
    }
}
