using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

public class SmokeTests
{
    [Fact]
    public void ParsesTheGetTemperatureRequestOfRfc7252Figure16()
    {
        // RFC 7252 Appendix A, Figure 16: CON [0x7d34] GET /temperature, no token.
        byte[] wire = [0x40, 0x01, 0x7d, 0x34, 0xbb, .. "temperature"u8];
        CoapMessage message = CoapMessageSerializer.Udp.Deserialize(wire);
        message.Type.Should().Be(CoapMessageType.Confirmable);
        message.Code.Should().Be(CoapCode.Get);
        message.MessageId.Should().Be(0x7d34);
        message.Token.Length.Should().Be(0);
        message.UriPath.Should().Be("/temperature");
        message.Payload.Length.Should().Be(0);
        CoapMessageSerializer.Udp.Serialize(message).Should().Equal(wire);
    }
}
