using CoapNet.Cli;
using CoapNet.Messages;

namespace CoapNet.Tests.Cli;

/// <summary>The -v dump's one line per message, in libcoap's coap_show_pdu format.</summary>
public sealed class WireFormatTests
{
    [Fact]
    public void FormatsARequestAsLibcoapDoes()
    {
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://127.0.0.1/hello"));
        request.MessageId = 0x7d34;
        request.Token = new byte[] { 0xc0, 0xff, 0xee, 0x01 };

        WireFormat.Format(request, reliable: false).Should().Be("v:1 t:CON c:GET i:7d34 {c0ffee01} [ Uri-Path:hello ]");
    }

    [Fact]
    public void FormatsAResponseWithItsContentFormatByNameAndATextPayloadOnOneLine()
    {
        CoapMessage response = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = 1, Token = new byte[] { 0x0a } };
        response.ContentFormat = CoapContentFormat.Json;
        response.SetPayload("{\"a\":1}\n");

        WireFormat.Format(response, reliable: false).Should().Be("v:1 t:ACK c:2.05 i:0001 {0a} [ Content-Format:application/json ] :: '{\"a\":1}\\n'");
    }

    [Fact]
    public void FormatsBinaryPayloadsBlockOptionsAndOpaqueOptions()
    {
        CoapMessage response = new() { Type = CoapMessageType.NonConfirmable, Code = CoapCode.Content, MessageId = 0xffff };
        response.Options.Add(CoapOptionNumber.ETag, new byte[] { 0x12, 0x34 });
        response.Options.Add(CoapOptionNumber.Block2, (uint)((3 << 4) | 0x8 | 2));
        response.Payload = new byte[] { 0x00, 0xff };

        WireFormat.Format(response, reliable: false).Should().Be("v:1 t:NON c:2.05 i:ffff {} [ ETag:0x1234, Block2:3/M/64 ] :: binary data length 2 <<00ff>>");
    }

    [Fact]
    public void FormatsABertBlockAsBertNotAsASize()
    {
        // RFC 8323 section 6: SZX 7 is BERT, blocks of several KiB numbered in KiB; 16 << 7 would claim 2048 bytes.
        CoapMessage response = new() { Code = CoapCode.Content };
        response.Options.Add(CoapOptionNumber.Block2, (uint)((4 << 4) | 0x8 | 7));
        CoapMessage last = new() { Code = CoapCode.Content };
        last.Options.Add(CoapOptionNumber.Block1, (uint)((8 << 4) | 7));

        WireFormat.Format(response, reliable: true).Should().Be("v:Reliable c:2.05 {} [ Block2:4/M/BERT ]");
        WireFormat.Format(last, reliable: true).Should().Be("v:Reliable c:2.05 {} [ Block1:8/_/BERT ]");
    }

    [Fact]
    public void FormatsStreamMessagesAndSignalsWithoutTypeOrMessageId()
    {
        CoapMessage csm = new() { Code = CoapCode.Csm };
        csm.Options.Add((CoapOptionNumber)2, 1152u);
        csm.Options.AddEmpty((CoapOptionNumber)4);
        CoapMessage empty = new() { Type = CoapMessageType.Reset, MessageId = 0x1234 };

        WireFormat.Format(csm, reliable: true).Should().Be("v:Reliable c:7.01 {} [ Max-Message-Size:1152, Block-Wise-Transfer: ]");
        WireFormat.Format(empty, reliable: false).Should().Be("v:1 t:RST c:0.00 i:1234 {} [ ]");
    }

    [Theory]
    [InlineData("json", 50)]
    [InlineData("application/cbor", 60)]
    [InlineData("TEXT", 0)]
    [InlineData("link", 40)]
    [InlineData("octet", 42)]
    [InlineData("exi", 47)]
    [InlineData("xml", 41)]
    [InlineData("11542", 11542)]
    public void ReadsContentFormatsByNameMediaTypeOrNumber(string text, int expected)
    {
        ContentFormats.TryParse(text, out ushort format).Should().BeTrue();
        format.Should().Be((ushort)expected);
    }

    [Theory]
    [InlineData("jsn")]
    [InlineData("65536")]
    [InlineData("-1")]
    [InlineData("")]
    public void RejectsWhatNamesNoContentFormat(string text) => ContentFormats.TryParse(text, out _).Should().BeFalse();
}
