using System.Buffers;
using CoapNet.Messages;
using CoapNet.Serialization;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// <see cref="CoapMessageSerializer.ReadFrame"/>, the building block of a connection's read loop: every split
/// of a frame into segments, exact consumption, and answers that never throw.
/// </summary>
public class ReadFrameTests
{
    [Theory]
    [MemberData(nameof(WireSamples.SmallStreamNames), MemberType = typeof(WireSamples))]
    public void ReadsAStreamFrameFromEverySplitIntoTwoSegments(string sample)
    {
        WireSample wire = WireSamples.Get(sample);
        for (int split = 0; split <= wire.Bytes.Length; split++)
        {
            ReadOnlySequence<byte> buffer = TwoSegments(wire.Bytes, split);

            OperationStatus status = CoapMessageSerializer.Tcp.ReadFrame(buffer, out CoapMessage? message, out SequencePosition consumed, out CoapFormatError error);

            status.Should().Be(OperationStatus.Done, "split at {0}", split);
            error.Should().Be(default(CoapFormatError));
            buffer.Slice(consumed).IsEmpty.Should().BeTrue("the whole frame is consumed");
            message!.ShouldMatch(wire.Expected, CoapFraming.Stream);
        }
    }

    [Theory]
    [MemberData(nameof(WireSamples.DatagramNames), MemberType = typeof(WireSamples))]
    public void ReadsADatagramFromEverySplitIntoTwoSegments(string sample)
    {
        WireSample wire = WireSamples.Get(sample);
        for (int split = 0; split <= wire.Bytes.Length; split++)
        {
            ReadOnlySequence<byte> buffer = TwoSegments(wire.Bytes, split);

            CoapMessageSerializer.Udp.ReadFrame(buffer, out CoapMessage? message, out SequencePosition consumed, out _).Should().Be(OperationStatus.Done);

            buffer.Slice(consumed).IsEmpty.Should().BeTrue("datagram framing takes the whole buffer");
            message!.ShouldMatch(wire.Expected, CoapFraming.Datagram);
        }
    }

    [Fact]
    public void ConsumesExactlyOneFrameAndLeavesTheNextOneBuffered()
    {
        byte[] first = WireSamples.Get("Rfc8323ContentLen14").Bytes;
        byte[] second = WireSamples.Get("Rfc8323Csm").Bytes;
        ReadOnlySequence<byte> buffer = Segments.Split(Concat(first, second, second[..3]), 7);

        CoapMessageSerializer.Tcp.ReadFrame(buffer, out CoapMessage? one, out SequencePosition afterOne, out _).Should().Be(OperationStatus.Done);
        ReadOnlySequence<byte> rest = buffer.Slice(afterOne);
        CoapMessageSerializer.Tcp.ReadFrame(rest, out CoapMessage? two, out SequencePosition afterTwo, out _).Should().Be(OperationStatus.Done);
        ReadOnlySequence<byte> partial = rest.Slice(afterTwo);
        OperationStatus third = CoapMessageSerializer.Tcp.ReadFrame(partial, out CoapMessage? none, out SequencePosition notConsumed, out CoapFormatError error);

        one!.Payload.Length.Should().Be(299);
        rest.ToArray().Should().Equal(Concat(second, second[..3]));
        two!.Code.Should().Be(new CoapCode(7, 1));
        third.Should().Be(OperationStatus.NeedMoreData);
        none.Should().BeNull();
        notConsumed.Should().Be(partial.Start);
        error.Reason.Should().Be(CoapFormatErrorReason.None, "incomplete input is not an error");
    }

    [Fact]
    public void AnswersNeedMoreDataForAnEmptyStreamBufferAndTooShortForAnEmptyDatagram()
    {
        CoapMessageSerializer.Tcp.ReadFrame(ReadOnlySequence<byte>.Empty, out _, out _, out CoapFormatError streamError).Should().Be(OperationStatus.NeedMoreData);
        CoapMessageSerializer.Udp.ReadFrame(ReadOnlySequence<byte>.Empty, out _, out _, out CoapFormatError datagramError).Should().Be(OperationStatus.InvalidData);

        streamError.Reason.Should().Be(CoapFormatErrorReason.None);
        datagramError.Should().Be(new CoapFormatError(CoapFormatErrorReason.MessageTooShort, 0));
    }

    [Theory]
    [InlineData("09", CoapFormatErrorReason.InvalidTokenLength)]
    [InlineData("df", CoapFormatErrorReason.InvalidTokenLength)]
    [InlineData("f0 ff ff ff ff", CoapFormatErrorReason.MessageTooLarge)]
    [InlineData("f0 00 80 00 00", CoapFormatErrorReason.MessageTooLarge)]
    public void AnswersInvalidDataFromTheHeaderWithoutWaitingForTheBody(string hex, CoapFormatErrorReason reason)
    {
        CoapMessageSerializer.Tcp.ReadFrame(Segments.Split(Hex(hex), 1), out CoapMessage? message, out _, out CoapFormatError error).Should().Be(OperationStatus.InvalidData);

        message.Should().BeNull();
        error.Should().Be(new CoapFormatError(reason, 0));
    }

    [Fact]
    public void AnswersNeedMoreDataUntilTheExtendedLengthIsComplete()
    {
        byte[] frame = WireSamples.Get("Rfc8323ContentLen15").Bytes;
        foreach (int length in new[] { 1, 2, 3, 4, 5, 6, 100, frame.Length - 1 })
        {
            ReadOnlySequence<byte> buffer = Segments.Split(frame[..length], 2);

            CoapMessageSerializer.Tcp.ReadFrame(buffer, out CoapMessage? message, out SequencePosition consumed, out _).Should().Be(OperationStatus.NeedMoreData, "{0} of {1} bytes", length, frame.Length);

            message.Should().BeNull();
            consumed.Should().Be(buffer.Start);
        }
    }

    [Fact]
    public void OwnsItsBytesSoTheBufferCanBeRecycledAfterwards()
    {
        byte[] bytes = (byte[])WireSamples.Get("Rfc8323ContentLen13").Bytes.Clone();
        ReadOnlySequence<byte> buffer = Segments.Split(bytes, 4);

        CoapMessageSerializer.Tcp.ReadFrame(buffer, out CoapMessage? message, out _, out _);
        Array.Fill(bytes, (byte)0xEE);

        message!.ShouldMatch(WireSamples.Get("Rfc8323ContentLen13").Expected, CoapFraming.Stream);
    }

    private static ReadOnlySequence<byte> TwoSegments(byte[] bytes, int split)
        => Segments.Of(bytes[..split], bytes[split..]);
}
