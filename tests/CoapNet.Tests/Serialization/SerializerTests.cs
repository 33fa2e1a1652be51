using CoapNet.Messages;
using CoapNet.Serialization;
using FluentAssertions.Execution;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// The serializer's behaviour, written once and run through every entry point (see the subclasses in
/// SerializerTests.EntryPoints.cs): wire samples from the RFCs, round trips, every length boundary,
/// truncation, single-byte mutations, and each format error of RFC 7252 section 3 and RFC 8323 section 3.2
/// with its reason and offset.
/// </summary>
public abstract partial class SerializerTests
{
    private static readonly byte[] Masks = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF];

    private protected abstract SerializerEntryPoint Entry { get; }

    public static TheoryData<CoapFraming> Framings { get; } = [CoapFraming.Datagram, CoapFraming.Stream];

    private static CoapMessageSerializer Default(CoapFraming framing) => framing == CoapFraming.Datagram ? CoapMessageSerializer.Udp : CoapMessageSerializer.Tcp;

    private static CoapMessageSerializer Roomy(CoapFraming framing) => new(framing, new CoapSerializerOptions { MaxMessageSize = 1 << 20 });

    private static CoapMessageSerializer Strict(CoapFraming framing) => new(framing, new CoapSerializerOptions { RejectInvalidOptionLengths = true });

    // ---- Wire samples (RFC 7252 Appendix A, RFC 8323) ----

    [Theory]
    [MemberData(nameof(WireSamples.Names), MemberType = typeof(WireSamples))]
    public async Task DecodesRfcWireSampleToEveryExpectedField(string sample)
    {
        WireSample wire = WireSamples.Get(sample);

        CoapMessage message = await ReadOneAsync(Default(wire.Framing), wire.Bytes);

        message.ShouldMatch(wire.Expected, wire.Framing);
    }

    [Theory]
    [MemberData(nameof(WireSamples.Names), MemberType = typeof(WireSamples))]
    public async Task ReencodesRfcWireSampleToTheSameBytes(string sample)
    {
        WireSample wire = WireSamples.Get(sample);
        CoapMessageSerializer serializer = Default(wire.Framing);

        (await WriteAsync(serializer, wire.Expected)).ShouldEqualBytes(wire.Bytes, "when written from the expected fields");
        (await WriteAsync(serializer, await ReadOneAsync(serializer, wire.Bytes))).ShouldEqualBytes(wire.Bytes, "when written from the decoded message");
    }

    [Fact]
    public async Task DecodesFigure16GetTemperatureAndItsPiggybackedResponse()
    {
        CoapMessage request = await ReadOneAsync(CoapMessageSerializer.Udp, Hex("40 01 7d 34 bb 74 65 6d 70 65 72 61 74 75 72 65"));
        CoapMessage response = await ReadOneAsync(CoapMessageSerializer.Udp, Hex("60 45 7d 34 ff 32 32 2e 33 20 43"));

        request.Type.Should().Be(CoapMessageType.Confirmable);
        request.Code.Should().Be(CoapCode.Get);
        request.MessageId.Should().Be(0x7d34);
        request.Token.IsEmpty.Should().BeTrue();
        request.Options.Should().ContainSingle().Which.Number.Should().Be(CoapOptionNumber.UriPath);
        request.UriPath.Should().Be("/temperature");
        request.Payload.IsEmpty.Should().BeTrue();
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.Code.Should().Be(CoapCode.Content);
        response.MessageId.Should().Be(request.MessageId, "a piggybacked response echoes the request's Message ID");
        response.HasOptions.Should().BeFalse();
        response.GetPayloadString().Should().Be("22.3 C");
    }

    [Fact]
    public async Task DecodesCapabilitiesAndSettingsWithMaxMessageSizeAndBlockWiseTransfer()
    {
        CoapMessage csm = await ReadOneAsync(CoapMessageSerializer.Tcp, Hex("40 e1 22 04 80 20"));

        csm.Code.IsSignaling.Should().BeTrue();
        csm.Code.Should().Be(new CoapCode(7, 1));
        csm.Token.IsEmpty.Should().BeTrue();
        csm.Options.Count.Should().Be(2);
        csm.Options[0].Number.Should().Be((CoapOptionNumber)2, "Max-Message-Size is signaling option 2");
        csm.Options[0].GetUInt().Should().Be(1152);
        csm.Options[1].Number.Should().Be((CoapOptionNumber)4, "Block-Wise-Transfer is signaling option 4");
        csm.Options[1].Value.IsEmpty.Should().BeTrue();
        csm.Payload.IsEmpty.Should().BeTrue();
    }

    // ---- Round trips and length boundaries ----

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task RoundTripsRandomMessages(CoapFraming framing)
    {
        CoapMessageSerializer serializer = Default(framing);
        int index = 0;
        foreach (CoapMessage message in RandomMessages.Generate(seed: 7252 + (int)framing, count: 150))
        {
            using AssertionScope scope = new($"random message #{index++} ({message})");
            byte[] bytes = await WriteAsync(serializer, message);
            bytes.ShouldEqualBytes(Encode(framing, message));
            (await ReadOneAsync(serializer, bytes)).ShouldMatch(message, framing);
        }
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task RoundTripsEveryTokenLengthWithAndWithoutPayload(CoapFraming framing)
    {
        CoapMessageSerializer serializer = Default(framing);
        for (int tokenLength = 0; tokenLength <= CoapMessage.MaxTokenLength; tokenLength++)
        {
            foreach (byte[] payload in new[] { Array.Empty<byte>(), "22.3 C"u8.ToArray() })
            {
                using AssertionScope scope = new($"token of {tokenLength} bytes, payload of {payload.Length}");
                CoapMessage message = TestMessages.Create(CoapMessageType.NonConfirmable, CoapCode.Content, 0xbeef, Filler(tokenLength, tokenLength), [(CoapOptionNumber.ContentFormat, [])], payload);

                byte[] bytes = await WriteAsync(serializer, message);

                bytes.ShouldEqualBytes(Encode(framing, message));
                (bytes[0] & 0x0F).Should().Be(tokenLength, "TKL is the low nibble of the first byte in both framings");
                (await ReadOneAsync(serializer, bytes)).ShouldMatch(message, framing);
            }
        }
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task RoundTripsOptionsOfEveryFormatWithRegisteredAndUnregisteredNumbers(CoapFraming framing)
    {
        CoapMessage message = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Put, MessageId = 7, Token = new byte[] { 1, 2, 3 } };
        message.Options.AddEmpty((CoapOptionNumber)0);
        message.Options.Add(CoapOptionNumber.UriHost, "example.com");
        message.Options.Add(CoapOptionNumber.ETag, new byte[] { 0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3 });
        message.Options.AddEmpty(CoapOptionNumber.IfNoneMatch);
        message.Options.Add(CoapOptionNumber.Observe, 0u);
        message.Options.Add(CoapOptionNumber.UriPath, "ß€😀");
        message.Options.Add(CoapOptionNumber.ContentFormat, 50u);
        message.Options.Add(CoapOptionNumber.MaxAge, uint.MaxValue);
        message.Options.Add((CoapOptionNumber)2048, new byte[] { 9, 8, 7 });
        message.Options.Add((CoapOptionNumber)65535, "last");
        message.SetPayload("{\"v\":1}");

        byte[] bytes = await WriteAsync(Default(framing), message);
        CoapMessage decoded = await ReadOneAsync(Default(framing), bytes);

        bytes.ShouldEqualBytes(Encode(framing, message));
        decoded.ShouldMatch(message, framing);
        decoded.Options[0].Number.Should().Be((CoapOptionNumber)0);
        decoded.UriHost.Should().Be("example.com");
        decoded.IfNoneMatch.Should().BeTrue();
        decoded.Observe.Should().Be(0u);
        decoded.UriPath.Should().Be("/ß€😀");
        decoded.ContentFormat.Should().Be(CoapContentFormat.Json);
        decoded.MaxAge.Should().Be(uint.MaxValue);
        decoded.Options[^1].GetString().Should().Be("last");
        decoded.Options.TryGetFirstInvalid(out _).Should().BeFalse();
    }

    [Theory]
    [InlineData(CoapFraming.Datagram, 0, "00")]
    [InlineData(CoapFraming.Datagram, 12, "c0")]
    [InlineData(CoapFraming.Datagram, 13, "d0 00")]
    [InlineData(CoapFraming.Datagram, 14, "d0 01")]
    [InlineData(CoapFraming.Datagram, 268, "d0 ff")]
    [InlineData(CoapFraming.Datagram, 269, "e0 00 00")]
    [InlineData(CoapFraming.Datagram, 270, "e0 00 01")]
    [InlineData(CoapFraming.Datagram, 65535, "e0 fe f2")]
    [InlineData(CoapFraming.Stream, 0, "00")]
    [InlineData(CoapFraming.Stream, 12, "c0")]
    [InlineData(CoapFraming.Stream, 13, "d0 00")]
    [InlineData(CoapFraming.Stream, 268, "d0 ff")]
    [InlineData(CoapFraming.Stream, 269, "e0 00 00")]
    [InlineData(CoapFraming.Stream, 65535, "e0 fe f2")]
    public async Task EncodesOptionDeltaAtEveryExtendedFormBoundary(CoapFraming framing, int number, string optionHex)
    {
        CoapMessage message = TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Get, MessageId, options: [((CoapOptionNumber)number, [])]);
        byte[] expected = Message(framing, 0x01, [], Hex(optionHex));

        (await WriteAsync(Default(framing), message)).ShouldEqualBytes(expected);
        (await ReadOneAsync(Default(framing), expected)).ShouldMatch(message, framing);
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task EncodesLowestAndHighestOptionNumbersInOneMessage(CoapFraming framing)
    {
        // Option 0 (delta 0) followed by option 65535 (delta 65535, the largest that fits a number).
        CoapMessage message = TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Get, MessageId, options: [((CoapOptionNumber)65535, [0x02]), ((CoapOptionNumber)0, [0x01])]);
        byte[] expected = Message(framing, 0x01, [], Hex("01 01 e1 fe f2 02"));

        (await WriteAsync(Default(framing), message)).ShouldEqualBytes(expected);
        (await ReadOneAsync(Default(framing), expected)).ShouldMatch(message, framing);
    }

    [Theory]
    [InlineData(CoapFraming.Datagram, 0, "20")]
    [InlineData(CoapFraming.Datagram, 12, "2c")]
    [InlineData(CoapFraming.Datagram, 13, "2d 00")]
    [InlineData(CoapFraming.Datagram, 268, "2d ff")]
    [InlineData(CoapFraming.Datagram, 269, "2e 00 00")]
    [InlineData(CoapFraming.Datagram, 270, "2e 00 01")]
    [InlineData(CoapFraming.Datagram, 65804, "2e ff ff")]
    [InlineData(CoapFraming.Stream, 0, "20")]
    [InlineData(CoapFraming.Stream, 12, "2c")]
    [InlineData(CoapFraming.Stream, 13, "2d 00")]
    [InlineData(CoapFraming.Stream, 268, "2d ff")]
    [InlineData(CoapFraming.Stream, 269, "2e 00 00")]
    [InlineData(CoapFraming.Stream, 65804, "2e ff ff")]
    public async Task EncodesOptionValueLengthAtEveryExtendedFormBoundary(CoapFraming framing, int length, string headerHex)
    {
        // Option 2 is unregistered, so any length is valid for it; 65804 is the longest value the encoding expresses.
        byte[] value = Filler(length);
        CoapMessage message = TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Post, MessageId, options: [((CoapOptionNumber)2, value)]);
        byte[] expected = Message(framing, 0x02, [], Concat(Hex(headerHex), value));

        (await WriteAsync(Roomy(framing), message)).ShouldEqualBytes(expected);
        (await ReadOneAsync(Roomy(framing), expected)).ShouldMatch(message, framing);
    }

    [Theory]
    [InlineData(0, "00 45")]
    [InlineData(12, "c0 45")]
    [InlineData(13, "d0 00 45")]
    [InlineData(268, "d0 ff 45")]
    [InlineData(269, "e0 00 00 45")]
    [InlineData(65804, "e0 ff ff 45")]
    [InlineData(65805, "f0 00 00 00 00 45")]
    [InlineData(65806, "f0 00 00 00 01 45")]
    public async Task EncodesStreamLenAtEveryExtendedFormBoundary(int bodyLength, string headHex)
    {
        // RFC 8323 section 3.2: Len counts the options, the payload marker and the payload; here marker and payload.
        byte[] payload = bodyLength == 0 ? [] : Filler(bodyLength - 1);
        CoapMessage message = TestMessages.Signal(CoapCode.Content, payload: payload);
        byte[] expected = Concat(Hex(headHex), bodyLength == 0 ? [] : [0xFF], payload);

        (await WriteAsync(CoapMessageSerializer.Tcp, message)).ShouldEqualBytes(expected);
        (await ReadOneAsync(CoapMessageSerializer.Tcp, expected)).ShouldMatch(message, CoapFraming.Stream);
    }

    // ---- Truncation ----

    [Theory]
    [MemberData(nameof(WireSamples.SmallStreamNames), MemberType = typeof(WireSamples))]
    public async Task RejectsEveryTruncatedPrefixOfAStreamFrame(string sample)
    {
        byte[] bytes = WireSamples.Get(sample).Bytes;
        for (int cut = 0; cut < bytes.Length; cut++)
        {
            using AssertionScope scope = new($"{sample} cut to {cut} bytes");
            await ShouldRejectTruncatedFrameAsync(bytes[..cut]);
        }
    }

    [Fact]
    public async Task RejectsTruncatedFrameWithFourExtendedLengthBytes()
    {
        byte[] bytes = WireSamples.Get("Rfc8323ContentLen15").Bytes;
        foreach (int cut in new[] { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, bytes.Length / 2, bytes.Length - 1 })
        {
            using AssertionScope scope = new($"cut to {cut} bytes");
            await ShouldRejectTruncatedFrameAsync(bytes[..cut]);
        }
    }

    [Theory]
    [MemberData(nameof(WireSamples.DatagramNames), MemberType = typeof(WireSamples))]
    public async Task TruncatedDatagramIsRejectedUnlessItEndsBetweenOptionsOrInsideThePayload(string sample)
    {
        // A datagram has no length field: a prefix that ends after a whole option is a shorter, valid message.
        WireSample wire = WireSamples.Get(sample);
        CoapMessage full = wire.Expected;
        int tokenEnd = 4 + full.Token.Length;
        int[] optionEnds = [.. Enumerable.Range(0, full.Options.Count + 1).Select(n => Encode(CoapFraming.Datagram, FirstOptions(full, n, default)).Length)];
        int marker = full.Payload.IsEmpty ? -1 : optionEnds[^1];
        for (int cut = 0; cut < wire.Bytes.Length; cut++)
        {
            using AssertionScope scope = new($"{sample} cut to {cut} bytes");
            byte[] prefix = wire.Bytes[..cut];
            int wholeOptions = Array.IndexOf(optionEnds, cut);
            if (cut == 0 && Entry.ReadsConnection)
            {
                (await Entry.ReadAsync(CoapMessageSerializer.Udp, prefix)).Should().BeEmpty("a connection that ends before any byte ends cleanly");
            }
            else if (cut < 4)
            {
                await ShouldRejectAsync(CoapMessageSerializer.Udp, prefix, CoapFormatErrorReason.MessageTooShort, cut);
            }
            else if (cut < tokenEnd)
            {
                await ShouldRejectAsync(CoapMessageSerializer.Udp, prefix, CoapFormatErrorReason.TruncatedToken, cut);
            }
            else if (wholeOptions >= 0)
            {
                (await ReadOneAsync(CoapMessageSerializer.Udp, prefix)).ShouldMatch(FirstOptions(full, wholeOptions, default), CoapFraming.Datagram);
            }
            else if (marker >= 0 && cut == marker + 1)
            {
                await ShouldRejectAsync(CoapMessageSerializer.Udp, prefix, CoapFormatErrorReason.PayloadMarkerWithoutPayload, marker);
            }
            else if (marker >= 0 && cut > marker + 1)
            {
                (await ReadOneAsync(CoapMessageSerializer.Udp, prefix)).ShouldMatch(FirstOptions(full, full.Options.Count, full.Payload[..(cut - marker - 1)]), CoapFraming.Datagram);
            }
            else
            {
                await ShouldRejectAsync(CoapMessageSerializer.Udp, prefix, CoapFormatErrorReason.TruncatedOption, optionEnds.Last(end => end < cut));
            }
        }
    }

    // ---- Mutation ----

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task EverySingleByteMutationParsesOrIsRejectedAsMalformed(CoapFraming framing)
    {
        CoapMessageSerializer serializer = Default(framing);
        int parsed = 0;
        int rejected = 0;
        foreach (WireSample sample in WireSamples.Small(framing))
        {
            for (int position = 0; position < sample.Bytes.Length; position++)
            {
                foreach (byte mask in Masks)
                {
                    byte[] mutated = (byte[])sample.Bytes.Clone();
                    mutated[position] ^= mask;
                    if (await ParsesOrIsRejectedAsync(serializer, mutated, $"{sample.Name} with byte {position} ^ 0x{mask:x2}"))
                    {
                        parsed++;
                    }
                    else
                    {
                        rejected++;
                    }
                }
            }
        }

        parsed.Should().BePositive("some mutations (in a payload, a token, the Message ID) leave a valid message");
        rejected.Should().BePositive("some mutations (in the version, TKL or an option header) make it malformed");
    }

    // ---- Format errors, RFC 7252 section 3 and RFC 8323 section 3.2 ----

    [Theory]
    [InlineData("00 01 12 34")]
    [InlineData("80 01 12 34")]
    [InlineData("c0 01 12 34")]
    [InlineData("0f 01 12 34")]
    [InlineData("ff ff ff ff")]
    [InlineData("81 01 7d 34 20 bb 74 65 6d 70 65 72 61 74 75 72 65")]
    public async Task RejectsVersionOtherThanOne(string hex)
        => await ShouldRejectAsync(CoapMessageSerializer.Udp, Hex(hex), CoapFormatErrorReason.UnsupportedVersion, 0);

    public static TheoryData<CoapFraming, int> ReservedTokenLengths { get; } = Combine(9, 15);

    [Theory]
    [MemberData(nameof(ReservedTokenLengths))]
    public async Task RejectsTokenLengthNineToFifteen(CoapFraming framing, int tokenLength)
    {
        byte[] bytes = framing == CoapFraming.Datagram
            ? Concat([(byte)(0x40 | tokenLength), 0x01, 0x12, 0x34], Filler(tokenLength))
            : Concat([(byte)tokenLength, 0x01], Filler(tokenLength));

        await ShouldRejectAsync(Default(framing), bytes, CoapFormatErrorReason.InvalidTokenLength, 0);
    }

    [Theory]
    [InlineData(CoapFraming.Datagram, "f0", 0)]
    [InlineData(CoapFraming.Datagram, "f1 61", 0)]
    [InlineData(CoapFraming.Datagram, "fe 61 61", 0)]
    [InlineData(CoapFraming.Datagram, "b1 61 f0", 2)]
    [InlineData(CoapFraming.Datagram, "d0 00 f5 00", 2)]
    [InlineData(CoapFraming.Stream, "f0", 0)]
    [InlineData(CoapFraming.Stream, "fe 61 61", 0)]
    [InlineData(CoapFraming.Stream, "b1 61 f0", 2)]
    public async Task RejectsOptionDeltaNibbleFifteenThatIsNotThePayloadMarker(CoapFraming framing, string bodyHex, int offset)
        => await ShouldRejectBodyAsync(Default(framing), bodyHex, CoapFormatErrorReason.InvalidOptionDelta, offset);

    [Theory]
    [InlineData(CoapFraming.Datagram, "0f", 0)]
    [InlineData(CoapFraming.Datagram, "1f 00", 0)]
    [InlineData(CoapFraming.Datagram, "df 00", 0)]
    [InlineData(CoapFraming.Datagram, "ef 00 00", 0)]
    [InlineData(CoapFraming.Datagram, "b1 61 3f", 2)]
    [InlineData(CoapFraming.Stream, "0f", 0)]
    [InlineData(CoapFraming.Stream, "df 00", 0)]
    [InlineData(CoapFraming.Stream, "b1 61 3f", 2)]
    public async Task RejectsOptionLengthNibbleFifteen(CoapFraming framing, string bodyHex, int offset)
        => await ShouldRejectBodyAsync(Default(framing), bodyHex, CoapFormatErrorReason.InvalidOptionLength, offset);

    [Theory]
    [InlineData(CoapFraming.Datagram, "ff", 0)]
    [InlineData(CoapFraming.Datagram, "b1 61 ff", 2)]
    [InlineData(CoapFraming.Stream, "ff", 0)]
    [InlineData(CoapFraming.Stream, "b1 61 ff", 2)]
    public async Task RejectsPayloadMarkerWithoutPayload(CoapFraming framing, string bodyHex, int offset)
        => await ShouldRejectBodyAsync(Default(framing), bodyHex, CoapFormatErrorReason.PayloadMarkerWithoutPayload, offset);

    [Theory]
    [InlineData(CoapFraming.Datagram, "aa", "")]
    [InlineData(CoapFraming.Datagram, "0102030405060708", "")]
    [InlineData(CoapFraming.Datagram, "", "b1 61")]
    [InlineData(CoapFraming.Datagram, "", "ff 01")]
    [InlineData(CoapFraming.Stream, "aa", "")]
    [InlineData(CoapFraming.Stream, "", "b1 61")]
    [InlineData(CoapFraming.Stream, "", "ff 01")]
    public async Task RejectsEmptyMessageWithTokenOptionsOrPayload(CoapFraming framing, string tokenHex, string bodyHex)
    {
        byte[] token = Hex(tokenHex);
        byte[] bytes = Message(framing, 0x00, token, Hex(bodyHex), out int bodyStart);

        // RFC 7252 section 4.1: the first byte after the header is already too many.
        await ShouldRejectAsync(Default(framing), bytes, CoapFormatErrorReason.EmptyMessageNotEmpty, bodyStart - token.Length);
    }

    [Theory]
    [InlineData(CoapFraming.Datagram, "e0 ff ff", 0)]
    [InlineData(CoapFraming.Datagram, "e0 fe f3", 0)]
    [InlineData(CoapFraming.Datagram, "e0 fe f2 10", 3)]
    [InlineData(CoapFraming.Datagram, "d0 ff e0 ff 00", 2)]
    [InlineData(CoapFraming.Stream, "e0 ff ff", 0)]
    [InlineData(CoapFraming.Stream, "e0 fe f2 10", 3)]
    public async Task RejectsOptionNumberAbove65535(CoapFraming framing, string bodyHex, int offset)
        => await ShouldRejectBodyAsync(Default(framing), bodyHex, CoapFormatErrorReason.OptionNumberTooLarge, offset);

    [Theory]
    [InlineData(CoapFraming.Datagram, "b5 61 62", 0)]
    [InlineData(CoapFraming.Datagram, "0d", 0)]
    [InlineData(CoapFraming.Datagram, "0e 00", 0)]
    [InlineData(CoapFraming.Datagram, "d0", 0)]
    [InlineData(CoapFraming.Datagram, "e0 00", 0)]
    [InlineData(CoapFraming.Datagram, "d1 00", 0)]
    [InlineData(CoapFraming.Datagram, "2d 05 61", 0)]
    [InlineData(CoapFraming.Datagram, "b1 61 03 61", 2)]
    [InlineData(CoapFraming.Stream, "b5 61 62", 0)]
    [InlineData(CoapFraming.Stream, "0e 00", 0)]
    [InlineData(CoapFraming.Stream, "b1 61 03 61", 2)]
    public async Task RejectsOptionThatRunsPastTheEnd(CoapFraming framing, string bodyHex, int offset)
        => await ShouldRejectBodyAsync(Default(framing), bodyHex, CoapFormatErrorReason.TruncatedOption, offset);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task RejectsDatagramShorterThanFourBytes(int length)
        => await ShouldRejectAsync(CoapMessageSerializer.Udp, Hex("40 01 12 34")[..length], CoapFormatErrorReason.MessageTooShort, length);

    [Theory]
    [InlineData("42 01 12 34 aa", 5)]
    [InlineData("48 01 12 34", 4)]
    public async Task RejectsTokenThatRunsPastTheEndOfADatagram(string hex, int offset)
        => await ShouldRejectAsync(CoapMessageSerializer.Udp, Hex(hex), CoapFormatErrorReason.TruncatedToken, offset);

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task RejectsMessageLargerThanMaxMessageSize(CoapFraming framing)
    {
        const int Limit = 40;
        CoapMessageSerializer serializer = new(framing, new CoapSerializerOptions { MaxMessageSize = Limit });
        int payloadLength = Enumerable.Range(1, Limit).First(n => Message(framing, 0x45, [], Concat([0xFF], Filler(n))).Length == Limit);

        CoapMessage atLimit = await ReadOneAsync(serializer, Message(framing, 0x45, [], Concat([0xFF], Filler(payloadLength))));

        atLimit.Payload.Length.Should().Be(payloadLength, "a message of exactly MaxMessageSize bytes is accepted");
        await ShouldRejectAsync(
            serializer,
            Message(framing, 0x45, [], Concat([0xFF], Filler(payloadLength + 1))),
            CoapFormatErrorReason.MessageTooLarge,
            framing == CoapFraming.Datagram ? Limit : 0);
    }

    [Theory]
    [InlineData("f0 ff ff ff ff", int.MaxValue)]
    [InlineData("f8 ff ff ff ff 01 02", int.MaxValue)]
    [InlineData("f0 ff ff ff ff", null)]
    [InlineData("f0 00 80 00 00 45", null)]
    public async Task RejectsStreamFrameWhoseLengthExceedsTheLimitFromItsHeaderAlone(string hex, int? maxMessageSize)
    {
        // A Len of 4 GB (or just above the 8 MiB default) is refused before anything is allocated or awaited.
        CoapMessageSerializer serializer = new(CoapFraming.Stream, new CoapSerializerOptions { MaxMessageSize = maxMessageSize });

        await ShouldRejectAsync(serializer, Hex(hex), CoapFormatErrorReason.MessageTooLarge, 0);
    }

    // ---- Registered option bounds (RFC 7252 section 5.4.3 and 5.4.5) ----

    [Theory]
    [InlineData(CoapFraming.Datagram, "c3 00 00 32", 0, CoapOptionNumber.ContentFormat)]
    [InlineData(CoapFraming.Datagram, "49 01 02 03 04 05 06 07 08 09", 0, CoapOptionNumber.ETag)]
    [InlineData(CoapFraming.Datagram, "30", 0, CoapOptionNumber.UriHost)]
    [InlineData(CoapFraming.Datagram, "d0 03", 0, CoapOptionNumber.HopLimit)]
    [InlineData(CoapFraming.Datagram, "b1 61 13 00 00 32", 2, CoapOptionNumber.ContentFormat)]
    [InlineData(CoapFraming.Stream, "c3 00 00 32", 0, CoapOptionNumber.ContentFormat)]
    [InlineData(CoapFraming.Stream, "49 01 02 03 04 05 06 07 08 09", 0, CoapOptionNumber.ETag)]
    [InlineData(CoapFraming.Stream, "b1 61 13 00 00 32", 2, CoapOptionNumber.ContentFormat)]
    public async Task RejectsOutOfBoundsRegisteredOptionLengthWhenStrict(CoapFraming framing, string bodyHex, int offset, CoapOptionNumber number)
    {
        CoapFormatException rejection = await ShouldRejectBodyAsync(Strict(framing), bodyHex, CoapFormatErrorReason.InvalidOptionValueLength, offset);

        rejection.Message.Should().Contain("InvalidOptionValueLength", "the exception names its reason ({0})", number);
    }

    [Theory]
    [InlineData(CoapFraming.Datagram, "c3 00 00 32", 0, CoapOptionNumber.ContentFormat)]
    [InlineData(CoapFraming.Datagram, "49 01 02 03 04 05 06 07 08 09", 0, CoapOptionNumber.ETag)]
    [InlineData(CoapFraming.Datagram, "30", 0, CoapOptionNumber.UriHost)]
    [InlineData(CoapFraming.Datagram, "d0 03", 0, CoapOptionNumber.HopLimit)]
    [InlineData(CoapFraming.Datagram, "b1 61 13 00 00 32", 2, CoapOptionNumber.ContentFormat)]
    [InlineData(CoapFraming.Stream, "c3 00 00 32", 0, CoapOptionNumber.ContentFormat)]
    [InlineData(CoapFraming.Stream, "49 01 02 03 04 05 06 07 08 09", 0, CoapOptionNumber.ETag)]
    [InlineData(CoapFraming.Stream, "b1 61 13 00 00 32", 2, CoapOptionNumber.ContentFormat)]
    public async Task KeepsOutOfBoundsRegisteredOptionAndReportsItByDefault(CoapFraming framing, string bodyHex, int offset, CoapOptionNumber number)
    {
        byte[] body = Hex(bodyHex);

        CoapMessage message = await ReadOneAsync(Default(framing), Message(framing, 0x01, [], body));

        message.Options.TryGetFirstInvalid(out CoapOptionEntry invalid).Should().BeTrue("RFC 7252 section 5.4.3 treats the option as unrecognized");
        invalid.Number.Should().Be(number);
        invalid.HasValidLength.Should().BeFalse();
        TestMessages.SameBytes(invalid.Value, body.AsMemory(body.Length - invalid.Value.Length)).Should().BeTrue("the option keeps its bytes (it starts at body offset {0})", offset);
        if (number == CoapOptionNumber.ContentFormat)
        {
            message.ContentFormat.Should().BeNull("the typed accessor reads an out-of-bounds option as absent");
        }
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task KeepsRepeatedNonRepeatableOptionAndReportsItsSecondOccurrence(CoapFraming framing)
    {
        // Content-Format 50, then Content-Format 0 (delta 0); a length check alone does not catch it.
        byte[] bytes = Message(framing, 0x02, [], Hex("c1 32 01 00"));

        CoapMessage lenient = await ReadOneAsync(Default(framing), bytes);
        CoapMessage strict = await ReadOneAsync(Strict(framing), bytes);

        lenient.Options.Count.Should().Be(2);
        lenient.Options.TryGetFirstInvalid(out CoapOptionEntry second).Should().BeTrue("Content-Format is not repeatable (RFC 7252 section 5.4.5)");
        second.Number.Should().Be(CoapOptionNumber.ContentFormat);
        second.Value.ToArray().Should().Equal(0x00);
        strict.Options.Count.Should().Be(2, "RejectInvalidOptionLengths judges lengths, not repetition");
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public async Task AcceptsRepeatedRepeatableOptions(CoapFraming framing)
    {
        CoapMessage message = await ReadOneAsync(Strict(framing), Message(framing, 0x01, [], Hex("b1 61 01 62 01 63")));

        message.UriPath.Should().Be("/a/b/c");
        message.Options.TryGetFirstInvalid(out _).Should().BeFalse();
    }

    [Theory]
    [InlineData("Rfc8323Csm")]
    [InlineData("Rfc8323PingWithCustody")]
    [InlineData("Rfc8323ReleaseWithHoldOff")]
    [InlineData("Rfc8323Abort")]
    public async Task StrictReadingAcceptsSignalingOptionsThatReuseRequestOptionNumbers(string sample)
    {
        // RFC 8323 section 5.2: signaling option numbers are scoped to their signaling code; Block-Wise-Transfer
        // and Hold-Off (4) are not ETags, and their registered bounds must not apply.
        WireSample wire = WireSamples.Get(sample);

        (await ReadOneAsync(Strict(CoapFraming.Stream), wire.Bytes)).ShouldMatch(wire.Expected, CoapFraming.Stream);
    }

    // ---- Write-side errors ----

    public static TheoryData<CoapFraming, string> EmptyMessageParts { get; } = new()
    {
        { CoapFraming.Datagram, "token" },
        { CoapFraming.Datagram, "option" },
        { CoapFraming.Datagram, "payload" },
        { CoapFraming.Stream, "token" },
        { CoapFraming.Stream, "option" },
        { CoapFraming.Stream, "payload" },
    };

    [Theory]
    [MemberData(nameof(EmptyMessageParts))]
    public async Task RefusesToWriteEmptyMessageWithTokenOptionOrPayload(CoapFraming framing, string part)
    {
        CoapMessage message = CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, 0x7d38);
        switch (part)
        {
            case "token":
                message.Token = new byte[] { 0x53 };
                break;
            case "option":
                message.Options.Add(CoapOptionNumber.UriPath, "a");
                break;
            default:
                message.Payload = new byte[] { 1 };
                break;
        }

        Func<Task> write = () => Entry.WriteAsync(Default(framing), message);

        (await write.Should().ThrowExactlyAsync<ArgumentException>())
            .WithMessage("*Empty message*RFC 7252 section 4.1*")
            .And.ParamName.Should().Be("message");
    }

    [Fact]
    public async Task RefusesToWriteDatagramLargerThanMaxMessageSizeAndSaysWhy()
    {
        CoapMessage message = TestMessages.Create(CoapMessageType.Acknowledgement, CoapCode.Content, 1, payload: new byte[70_000]);

        Func<Task> write = () => Entry.WriteAsync(CoapMessageSerializer.Udp, message);

        (await write.Should().ThrowExactlyAsync<ArgumentException>())
            .WithMessage("*70005 bytes*datagram*at most 65507*payload is 70000 bytes*block-wise*")
            .And.ParamName.Should().Be("message");
    }

    [Fact]
    public async Task RefusesToWriteStreamFrameLargerThanMaxMessageSize()
    {
        CoapMessageSerializer serializer = new(CoapFraming.Stream, new CoapSerializerOptions { MaxMessageSize = 1024 });
        CoapMessage message = TestMessages.Signal(CoapCode.Content, payload: new byte[1024]);

        Func<Task> write = () => Entry.WriteAsync(serializer, message);

        (await write.Should().ThrowExactlyAsync<ArgumentException>()).WithMessage("*stream frame*at most 1024*");
    }

    [Fact]
    public async Task RefusesToWriteUnknownMessageTypeInADatagramButIgnoresTypeInAFrame()
    {
        CoapMessage message = TestMessages.Create((CoapMessageType)4, CoapCode.Get, 1);

        Func<Task> write = () => Entry.WriteAsync(CoapMessageSerializer.Udp, message);

        await write.Should().ThrowExactlyAsync<ArgumentException>();
        (await WriteAsync(CoapMessageSerializer.Tcp, message)).Should().Equal(0x00, 0x01);
    }

    // ---- Helpers ----

    private static TheoryData<CoapFraming, int> Combine(int from, int to)
    {
        TheoryData<CoapFraming, int> data = [];
        foreach (CoapFraming framing in new[] { CoapFraming.Datagram, CoapFraming.Stream })
        {
            for (int i = from; i <= to; i++)
            {
                data.Add(framing, i);
            }
        }

        return data;
    }

    private static CoapMessage FirstOptions(CoapMessage message, int count, ReadOnlyMemory<byte> payload)
    {
        CoapMessage copy = new() { Type = message.Type, Code = message.Code, MessageId = message.MessageId, Token = message.Token, Payload = payload };
        for (int i = 0; i < count; i++)
        {
            copy.Options.Add(message.Options[i]);
        }

        return copy;
    }

    private protected async Task<CoapMessage> ReadOneAsync(CoapMessageSerializer serializer, byte[] input)
    {
        IReadOnlyList<CoapMessage> messages = await Entry.ReadAsync(serializer, input);
        messages.Should().HaveCount(1, "the input holds one message");
        return messages[0];
    }

    private async Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
    {
        byte[] bytes = await Entry.WriteAsync(serializer, message);
        bytes.Length.Should().Be(serializer.GetSerializedLength(message), "GetSerializedLength predicts the bytes written");
        return bytes;
    }

    private protected async Task<CoapFormatException> ShouldRejectAsync(CoapMessageSerializer serializer, byte[] input, CoapFormatErrorReason reason, long offset)
    {
        Func<Task> read = () => Entry.ReadAsync(serializer, input);
        CoapFormatException rejection = (await read.Should().ThrowExactlyAsync<CoapFormatException>()).Which;
        rejection.Reason.Should().Be(reason);
        rejection.Offset.Should().Be(offset, "the error is located at byte {0} ({1})", offset, reason);
        rejection.Error.Should().Be(new CoapFormatError(reason, offset));
        return rejection;
    }

    private Task<CoapFormatException> ShouldRejectBodyAsync(CoapMessageSerializer serializer, string bodyHex, CoapFormatErrorReason reason, int offsetInBody)
    {
        byte[] bytes = Message(serializer.Framing, 0x01, [], Hex(bodyHex), out int bodyStart);
        return ShouldRejectAsync(serializer, bytes, reason, bodyStart + offsetInBody);
    }

    private async Task ShouldRejectTruncatedFrameAsync(byte[] prefix)
    {
        if (!Entry.ReadsConnection)
        {
            await ShouldRejectAsync(CoapMessageSerializer.Tcp, prefix, prefix.Length == 0 ? CoapFormatErrorReason.MessageTooShort : CoapFormatErrorReason.TruncatedFrame, prefix.Length);
        }
        else if (prefix.Length == 0)
        {
            (await Entry.ReadAsync(CoapMessageSerializer.Tcp, prefix)).Should().BeEmpty("a connection that ends before any byte ends cleanly");
        }
        else
        {
            await ShouldRejectAsync(CoapMessageSerializer.Tcp, prefix, CoapFormatErrorReason.UnexpectedEndOfStream, prefix.Length);
        }
    }

    /// <summary>True when the bytes parse (and then re-serialize to exactly themselves), false when they are rejected as malformed.</summary>
    private async Task<bool> ParsesOrIsRejectedAsync(CoapMessageSerializer serializer, byte[] input, string what)
    {
        IReadOnlyList<CoapMessage> messages;
        try
        {
            messages = await Entry.ReadAsync(serializer, input);
        }
        catch (CoapFormatException rejection)
        {
            rejection.Reason.Should().NotBe(CoapFormatErrorReason.None, what);
            rejection.Offset.Should().BeInRange(0, input.Length, what);
            return false;
        }
        catch (Exception other)
        {
            throw new Xunit.Sdk.XunitException($"{what}: {TestMessages.Hex(input)} threw {other.GetType().Name}, not CoapFormatException: {other}");
        }

        // The encoding is canonical (extended forms only above their thresholds), so whatever parses writes back identically.
        Concat([.. messages.Select(serializer.Serialize)]).ShouldEqualBytes(input, what);
        return true;
    }
}
