using System.Buffers;
using System.Runtime.InteropServices;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// A parsed message with thousands of options keeps them in a compact, chunked table rather than one entry
/// array; every way of reading, changing and writing the options must behave as it does for a small message.
/// </summary>
public class ManyOptionsTests
{
    // Past the compact threshold (64) and past two 8,192-entry chunks, so chunk boundaries are crossed; the
    // frame (about 130 KB) is past the 64 KiB the copying parser puts in one array, so segments are crossed too.
    private const int PathCount = 20000;

    public enum EntryPoint
    {
        Span,
        Memory,
        Stream,
        StreamAsync,
        Pipe,
    }

    public static TheoryData<CoapFraming, EntryPoint> Cases { get; } = Wire.EveryFraming<EntryPoint>();

    [Theory]
    [MemberData(nameof(Cases))]
    public void IndexerAndLookupsReadEveryOptionInWireOrder(CoapFraming framing, EntryPoint entryPoint)
    {
        CoapMessage original = CreateMessage();
        CoapMessage parsed = Parse(framing, entryPoint, original);

        CoapOptionCollection options = parsed.Options;
        options.Count.Should().Be(original.Options.Count);
        for (int i = 0; i < options.Count; i++)
        {
            options[i].Should().Be(original.Options[i], "option {0} is read back as written", i);
        }

        options.Contains(CoapOptionNumber.UriHost).Should().BeTrue();
        options.Contains(CoapOptionNumber.ETag).Should().BeFalse();
        options.CountOf(CoapOptionNumber.UriPath).Should().Be(PathCount);
        options.CountOf(CoapOptionNumber.UriQuery).Should().Be(2);
        options.TryGet(CoapOptionNumber.UriQuery, out CoapOptionEntry query).Should().BeTrue();
        query.GetString().Should().Be("a=1");
        parsed.ContentFormat.Should().Be(CoapContentFormat.Json);
        options.GetStrings(CoapOptionNumber.UriQuery).Should().Equal("a=1", "b=2");
        options.GetStrings(CoapOptionNumber.UriPath)[8191].Should().Be(Segment(8191));
        options.TryGetFirstInvalid(out _).Should().BeFalse();
        options.ToString().Should().Be(original.Options.ToString());
        ((Action)(() => _ = options[options.Count])).Should().Throw<ArgumentOutOfRangeException>();
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void ForeachAndTheEnumerableInterfaceVisitEveryOptionInOrder(CoapFraming framing, EntryPoint entryPoint)
    {
        CoapMessage original = CreateMessage();
        CoapMessage parsed = Parse(framing, entryPoint, original);

        List<CoapOptionEntry> visited = [];
        foreach (CoapOptionEntry entry in parsed.Options)
        {
            visited.Add(entry);
        }

        visited.Should().Equal(original.Options);
        parsed.Options.Should().Equal(original.Options, "IEnumerable<CoapOptionEntry> reads the same options");
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void SpansAndChangesSeeTheSameOptions(CoapFraming framing, EntryPoint entryPoint)
    {
        CoapMessage original = CreateMessage();
        CoapMessage parsed = Parse(framing, entryPoint, original);

        parsed.Options.AsSpan().ToArray().Should().Equal(original.Options.AsSpan().ToArray());
        parsed.Options.GetAll(CoapOptionNumber.UriPath).Length.Should().Be(PathCount);

        parsed.Options.Add(CoapOptionNumber.IfNoneMatch, ReadOnlyMemory<byte>.Empty);
        parsed.Options.RemoveAll(CoapOptionNumber.UriQuery).Should().Be(2);
        parsed.Options.Count.Should().Be(original.Options.Count - 1);
        parsed.Options[1].Number.Should().Be(CoapOptionNumber.IfNoneMatch, "If-None-Match (5) sorts after Uri-Host (3)");
        parsed.Options[^1].Number.Should().Be(CoapOptionNumber.ContentFormat);

        parsed.Options.Clear();
        parsed.HasOptions.Should().BeFalse();
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void AParsedMessageWritesBackToTheSameBytesThroughEveryWriter(CoapFraming framing, EntryPoint entryPoint)
    {
        CoapMessageSerializer serializer = Serializer(framing);
        CoapMessage original = CreateMessage();
        byte[] wire = serializer.Serialize(original);
        CoapMessage parsed = Parse(framing, entryPoint, original);

        serializer.GetSerializedLength(parsed).Should().Be(wire.Length);
        serializer.Serialize(parsed).Should().Equal(wire);
        byte[] destination = new byte[wire.Length];
        serializer.Serialize(parsed, destination.AsSpan()).Should().Be(wire.Length);
        destination.Should().Equal(wire);
        using MemoryStream stream = new();
        serializer.Serialize(parsed, stream);
        stream.ToArray().Should().Equal(wire);
    }

    [Fact]
    public void AMessageJustBelowTheCompactThresholdBehavesTheSame()
    {
        CoapMessage original = new() { Code = CoapCode.Get, MessageId = 1 };
        for (int i = 0; i < 64; i++)
        {
            original.Options.Add(CoapOptionNumber.UriPath, Segment(i));
        }

        CoapMessage parsed = CoapMessageSerializer.Udp.Deserialize((ReadOnlySpan<byte>)CoapMessageSerializer.Udp.Serialize(original));

        parsed.Options.AsSpan().ToArray().Should().Equal(original.Options.AsSpan().ToArray());
    }

    // Raised past the 1,024-option default: these messages are large on purpose.
    private static CoapMessageSerializer Serializer(CoapFraming framing)
        => new(framing, new CoapSerializerOptions { MaxMessageSize = 1 << 20, MaxOptionCount = int.MaxValue });

    [Theory]
    [InlineData(EntryPoint.Span)]
    [InlineData(EntryPoint.Stream)]
    [InlineData(EntryPoint.StreamAsync)]
    [InlineData(EntryPoint.Pipe)]
    public void ACopiedLargeMessageKeepsEveryArrayButALargePayloadBelowTheLargeObjectHeapThreshold(EntryPoint entryPoint)
    {
        // Small options, then one of the largest value an option can hold (65,804 bytes, an unregistered elective
        // number so no registered bound applies), more small options and a 100 KB payload.
        CoapMessage original = new() { Code = CoapCode.Post, Token = new byte[] { 9, 8, 7 } };
        for (int i = 0; i < 3000; i++)
        {
            original.Options.Add(CoapOptionNumber.UriPath, Segment(i));
        }

        byte[] largest = new byte[CoapOptionEntry.MaxValueLength];
        new Random(5).NextBytes(largest);
        original.Options.Add((CoapOptionNumber)65000, largest);
        original.Options.Add((CoapOptionNumber)65001, new byte[] { 1 });
        byte[] payload = new byte[100_000];
        new Random(6).NextBytes(payload);
        original.Payload = payload;

        CoapMessage parsed = Parse(CoapFraming.Stream, entryPoint, original);

        parsed.Token.ToArray().Should().Equal(9, 8, 7);
        parsed.Options.Should().Equal(original.Options);
        parsed.Payload.ToArray().Should().Equal(payload);
        ArrayLength(parsed.Token).Should().BeLessThan(85_000);
        foreach (CoapOptionEntry entry in parsed.Options)
        {
            ArrayLength(entry.Value).Should().BeLessThan(85_000, "option {0}'s bytes are not on the Large Object Heap", entry.Number);
        }
    }

    private static int ArrayLength(ReadOnlyMemory<byte> memory)
        => MemoryMarshal.TryGetArray(memory, out ArraySegment<byte> segment) ? segment.Array!.Length : throw new InvalidOperationException("not an array");

    private static CoapMessage Parse(CoapFraming framing, EntryPoint entryPoint, CoapMessage original)
    {
        CoapMessageSerializer serializer = Serializer(framing);
        byte[] wire = serializer.Serialize(original);
        switch (entryPoint)
        {
            case EntryPoint.Span:
                return serializer.Deserialize((ReadOnlySpan<byte>)wire);
            case EntryPoint.Memory:
                return serializer.Deserialize((ReadOnlyMemory<byte>)wire);
            case EntryPoint.Stream:
                return serializer.Deserialize(new MemoryStream(wire))!;
            case EntryPoint.StreamAsync:
                return serializer.DeserializeAsync(new MemoryStream(wire)).AsTask().GetAwaiter().GetResult()!;
            default:
                serializer.ReadFrame(new ReadOnlySequence<byte>(wire), out CoapMessage? message, out _, out _).Should().Be(OperationStatus.Done);
                return message!;
        }
    }

    private static string Segment(int i) => "s" + i.ToString(System.Globalization.CultureInfo.InvariantCulture);

    // Uri-Host (3), 9,000 Uri-Path (11), Content-Format (12), two Uri-Query (15) and a payload.
    private static CoapMessage CreateMessage()
    {
        CoapMessage message = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Post, MessageId = 0x1234, Token = new byte[] { 1, 2, 3, 4 } };
        message.Options.Add(CoapOptionNumber.UriHost, "many.example");
        for (int i = 0; i < PathCount; i++)
        {
            message.Options.Add(CoapOptionNumber.UriPath, Segment(i));
        }

        message.Options.Add(CoapOptionNumber.UriQuery, "a=1");
        message.Options.Add(CoapOptionNumber.UriQuery, "b=2");
        message.ContentFormat = CoapContentFormat.Json;
        message.SetPayload("{\"many\":true}");
        return message;
    }
}
