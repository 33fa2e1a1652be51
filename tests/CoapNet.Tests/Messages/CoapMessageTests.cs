using System.Text;
using CoapNet.Messages;

namespace CoapNet.Tests.Messages;

public class CoapMessageTests
{
    [Fact]
    public void ANewMessageIsAnEmptyConfirmableMessage()
    {
        CoapMessage message = new();

        message.Type.Should().Be(CoapMessageType.Confirmable);
        message.Code.Should().Be(CoapCode.Empty);
        message.MessageId.Should().Be(0);
        message.Token.IsEmpty.Should().BeTrue();
        message.Payload.IsEmpty.Should().BeTrue();
        message.HasOptions.Should().BeFalse();
    }

    [Fact]
    public void TheMessageTypesHaveTheirWireValues()
    {
        // RFC 7252 section 3: Confirmable (0), Non-confirmable (1), Acknowledgement (2), Reset (3).
        ((byte)CoapMessageType.Confirmable).Should().Be(0);
        ((byte)CoapMessageType.NonConfirmable).Should().Be(1);
        ((byte)CoapMessageType.Acknowledgement).Should().Be(2);
        ((byte)CoapMessageType.Reset).Should().Be(3);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(8)]
    public void ATokenOfUpToEightBytesIsAccepted(int length)
    {
        byte[] token = Enumerable.Range(0xA0, length).Select(i => (byte)i).ToArray();

        CoapMessage message = new() { Token = token };

        message.Token.ToArray().Should().Equal(token);
        CoapMessage.MaxTokenLength.Should().Be(8);
    }

    [Theory]
    [InlineData(9)]
    [InlineData(15)]
    [InlineData(256)]
    public void ATokenLongerThanEightBytesIsRejected(int length)
    {
        CoapMessage message = new() { Token = new byte[] { 1, 2 } };

        message.Invoking(m => m.Token = new byte[length]).Should().Throw<ArgumentException>();
        message.Token.ToArray().Should().Equal(1, 2);
    }

    [Fact]
    public void TheOptionsCollectionIsCreatedOnFirstUseAndHasOptionsReportsContent()
    {
        CoapMessage message = new();

        message.HasOptions.Should().BeFalse();
        message.Options.Should().BeSameAs(message.Options);
        message.HasOptions.Should().BeFalse();

        message.Options.Add(CoapOptionNumber.UriPath, "a");
        message.HasOptions.Should().BeTrue();
    }

    [Fact]
    public void CreateRequestSetsTheMethodTypeAndUriOptions()
    {
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://example.com:61616/sensors/temp?unit=c"));

        request.Type.Should().Be(CoapMessageType.Confirmable);
        request.Code.Should().Be(CoapCode.Get);
        request.UriHost.Should().Be("example.com");
        request.UriPort.Should().Be(61616);
        request.GetUriPathSegments().Should().Equal("sensors", "temp");
        request.GetUriQueryArguments().Should().Equal("unit=c");
        request.MessageId.Should().Be(0);
        request.Token.IsEmpty.Should().BeTrue();
        request.Payload.IsEmpty.Should().BeTrue();
    }

    [Theory]
    [InlineData(0x01, CoapMessageType.Confirmable)]
    [InlineData(0x02, CoapMessageType.NonConfirmable)]
    [InlineData(0x05, CoapMessageType.Confirmable)]
    [InlineData(0x07, CoapMessageType.NonConfirmable)]
    [InlineData(0x1F, CoapMessageType.Confirmable)]
    public void CreateRequestAcceptsAnyMethodAsConfirmableOrNonConfirmable(byte method, CoapMessageType type)
    {
        CoapMessage request = CoapMessage.CreateRequest(method, new Uri("coap://h/"), type);

        request.Code.Value.Should().Be(method);
        request.Type.Should().Be(type);
    }

    [Theory]
    [InlineData(0x00)]
    [InlineData(0x45)]
    [InlineData(0x84)]
    [InlineData(0xE2)]
    [InlineData(0x20)]
    public void CreateRequestRejectsACodeThatIsNotAMethod(byte code)
    {
        FluentActions.Invoking(() => CoapMessage.CreateRequest(code, new Uri("coap://h/")))
            .Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData(CoapMessageType.Acknowledgement)]
    [InlineData(CoapMessageType.Reset)]
    public void CreateRequestRejectsAnAcknowledgementOrResetType(CoapMessageType type)
    {
        FluentActions.Invoking(() => CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://h/"), type))
            .Should().Throw<ArgumentException>();
    }

    [Fact]
    public void CreateRequestRejectsANullUri()
    {
        FluentActions.Invoking(() => CoapMessage.CreateRequest(CoapCode.Get, null!))
            .Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void TheResponseToAConfirmableRequestIsAPiggybackedAcknowledgement()
    {
        // RFC 7252 section 5.2.1: the ACK carries the response, the request's Message ID and its token.
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://h/temperature"));
        request.MessageId = 0xBC90;
        request.Token = new byte[] { 0x71 };

        CoapMessage response = request.CreateResponse(CoapCode.Content);

        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.Code.Should().Be(CoapCode.Content);
        response.MessageId.Should().Be(0xBC90);
        response.Token.ToArray().Should().Equal(0x71);
        response.HasOptions.Should().BeFalse();
        response.Payload.IsEmpty.Should().BeTrue();
    }

    [Fact]
    public void TheResponseToANonConfirmableRequestIsNonConfirmableWithTheSameToken()
    {
        // RFC 7252 section 5.2.3: a NON request gets a NON response with a fresh Message ID the sender assigns.
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://h/temperature"), CoapMessageType.NonConfirmable);
        request.MessageId = 0x7A11;
        request.Token = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 };

        CoapMessage response = request.CreateResponse(CoapCode.NotFound);

        response.Type.Should().Be(CoapMessageType.NonConfirmable);
        response.Code.Should().Be(CoapCode.NotFound);
        response.MessageId.Should().Be(0);
        response.Token.ToArray().Should().Equal(1, 2, 3, 4, 5, 6, 7, 8);
    }

    [Theory]
    [InlineData(0x00)]
    [InlineData(0x01)]
    [InlineData(0x1F)]
    [InlineData(0x60)]
    [InlineData(0x3F)]
    [InlineData(0xC0)]
    [InlineData(0xE1)]
    public void CreateResponseRejectsACodeThatIsNotAResponse(byte code)
    {
        CoapMessage request = new() { Code = CoapCode.Get };

        request.Invoking(r => r.CreateResponse(code)).Should().Throw<ArgumentException>();
    }

    [Theory]
    [InlineData(CoapMessageType.Acknowledgement, 0x1234)]
    [InlineData(CoapMessageType.Reset, 0xFFFF)]
    [InlineData(CoapMessageType.Confirmable, 0)]
    [InlineData(CoapMessageType.NonConfirmable, 1)]
    public void CreateEmptyMakesACodeZeroMessageWithNothingElse(CoapMessageType type, int messageId)
    {
        CoapMessage message = CoapMessage.CreateEmpty(type, (ushort)messageId);

        message.Type.Should().Be(type);
        message.MessageId.Should().Be((ushort)messageId);
        message.Code.Should().Be(CoapCode.Empty);
        message.Token.IsEmpty.Should().BeTrue();
        message.HasOptions.Should().BeFalse();
        message.Payload.IsEmpty.Should().BeTrue();
    }

    [Fact]
    public void SetPayloadStoresTheTextAsUtf8()
    {
        CoapMessage message = new();

        message.SetPayload("22.3 °C");

        message.Payload.ToArray().Should().Equal(Encoding.UTF8.GetBytes("22.3 °C"));
        message.Payload.Length.Should().Be(8);
        message.GetPayloadString().Should().Be("22.3 °C");
    }

    [Fact]
    public void AnEmptyPayloadReadsAsAnEmptyString()
    {
        CoapMessage message = new();
        message.GetPayloadString().Should().BeEmpty();

        message.SetPayload(string.Empty);
        message.Payload.IsEmpty.Should().BeTrue();
    }

    [Fact]
    public void SetPayloadRejectsNull()
    {
        new CoapMessage().Invoking(m => m.SetPayload(null!)).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void ToStringShowsTypeCodeMessageIdTokenOptionsAndPayloadSize()
    {
        CoapMessage message = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://h/temperature"));
        message.MessageId = 4660;
        message.Token = new byte[] { 0x0A, 0x0B };
        message.SetPayload("hello world!");

        string text = message.ToString();

        text.Should().StartWith("CON 0.01 GET MID=4660");
        text.Should().Contain("Token=0A0B");
        text.Should().Contain("Uri-Host: h");
        text.Should().Contain("Uri-Path: temperature");
        text.Should().EndWith("12 bytes");
    }

    [Theory]
    [InlineData(CoapMessageType.Confirmable, "CON")]
    [InlineData(CoapMessageType.NonConfirmable, "NON")]
    [InlineData(CoapMessageType.Acknowledgement, "ACK")]
    [InlineData(CoapMessageType.Reset, "RST")]
    public void ToStringStartsWithTheTypeAbbreviation(CoapMessageType type, string abbreviation)
    {
        CoapMessage message = new() { Type = type, Code = CoapCode.Content, MessageId = 1 };

        message.ToString().Should().Be(abbreviation + " 2.05 Content MID=1");
    }

    [Fact]
    public void ToStringOfAnEmptyMessageHasNoTokenOptionsOrPayload()
    {
        CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, 0x7d34).ToString().Should().Be("ACK 0.00 Empty MID=32052");
    }
}
