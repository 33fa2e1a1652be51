using CoapNet.Messages;
using CoapNet.Serialization;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// Behaviour of the entry points that read a connection (streams, pipes, ReadFrame): stream frames are read
/// one after another, a clean end returns no message, and an end inside a frame is an error.
/// </summary>
public abstract class ConnectionSerializerTests : SerializerTests
{
    [Theory]
    [MemberData(nameof(Framings))]
    public async Task ReadsNoMessageFromAConnectionThatEndsBeforeItsFirstByte(CoapFraming framing)
        => (await Entry.ReadAsync(new CoapMessageSerializer(framing), [])).Should().BeEmpty();

    [Fact]
    public async Task ReadsBackToBackFramesOneMessageAfterAnother()
    {
        WireSample[] samples = [.. new[] { "Rfc8323Csm", "Rfc8323Ping", "Rfc8323GetLen12", "Rfc8323ContentLen14", "Rfc8323Empty", "Rfc8323Pong", "Rfc8323Abort" }.Select(WireSamples.Get)];

        IReadOnlyList<CoapMessage> messages = await Entry.ReadAsync(CoapMessageSerializer.Tcp, Concat([.. samples.Select(s => s.Bytes)]));

        messages.Should().HaveCount(samples.Length);
        for (int i = 0; i < samples.Length; i++)
        {
            messages[i].ShouldMatch(samples[i].Expected, CoapFraming.Stream);
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(7)]
    [InlineData(14)]
    public async Task RejectsConnectionThatEndsInsideTheFrameAfterWholeOnes(int cut)
    {
        byte[] input = Concat(WireSamples.Get("Rfc8323Ping").Bytes, WireSamples.Get("Rfc8323Csm").Bytes, WireSamples.Get("Rfc8323GetLen12").Bytes[..cut]);

        // The offset counts from the start of the unfinished message.
        await ShouldRejectAsync(CoapMessageSerializer.Tcp, input, CoapFormatErrorReason.UnexpectedEndOfStream, cut);
    }

    [Fact]
    public async Task ReadsEverythingUntilTheEndOfTheConnectionAsOneDatagram()
    {
        byte[] first = Hex("50 02 00 01 ff 61");
        byte[] second = WireSamples.Get("Rfc7252Figure16Response").Bytes;

        CoapMessage message = await ReadOneAsync(CoapMessageSerializer.Udp, Concat(first, second));

        message.Payload.ToArray().Should().Equal(Concat([0x61], second), "datagram framing has no length: the payload runs to the end");
    }
}
