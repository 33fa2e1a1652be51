using System.Buffers;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// Exhaustive and random corruption of the parser core: every value of every byte of the small wire samples,
/// and random byte strings, either parse (and then write back identically) or are rejected with a reason;
/// nothing throws anything else. The behaviour suite runs a cheaper version through every entry point.
/// </summary>
public class MutationTests
{
    public static TheoryData<CoapFraming> Framings { get; } = [CoapFraming.Datagram, CoapFraming.Stream];

    [Theory]
    [MemberData(nameof(Framings))]
    public void EveryValueOfEveryByteParsesOrIsRejectedWithAReason(CoapFraming framing)
    {
        CoapMessageSerializer serializer = new(framing);
        Dictionary<CoapFormatErrorReason, int> reasons = [];
        foreach (WireSample sample in WireSamples.Small(framing))
        {
            byte[] mutated = (byte[])sample.Bytes.Clone();
            for (int position = 0; position < mutated.Length; position++)
            {
                for (int value = 0; value < 256; value++)
                {
                    mutated[position] = (byte)value;
                    CoapFormatErrorReason reason = ParseOrReject(serializer, mutated, $"{sample.Name}[{position}] = 0x{value:x2}");
                    reasons[reason] = reasons.GetValueOrDefault(reason) + 1;
                }

                mutated[position] = sample.Bytes[position];
            }
        }

        reasons.Should().ContainKey(CoapFormatErrorReason.None, "some mutations still parse");
        reasons.Keys.Should().Contain(framing == CoapFraming.Datagram
            ? [CoapFormatErrorReason.UnsupportedVersion, CoapFormatErrorReason.InvalidTokenLength, CoapFormatErrorReason.EmptyMessageNotEmpty, CoapFormatErrorReason.TruncatedOption]
            : [CoapFormatErrorReason.InvalidTokenLength, CoapFormatErrorReason.TruncatedFrame, CoapFormatErrorReason.TrailingBytes, CoapFormatErrorReason.TruncatedOption]);
    }

    [Theory]
    [MemberData(nameof(Framings))]
    public void RandomBytesParseOrAreRejectedWithAReason(CoapFraming framing)
    {
        CoapMessageSerializer serializer = new(framing);
        Random random = new(1729 + (int)framing);
        for (int i = 0; i < 20_000; i++)
        {
            byte[] bytes = new byte[random.Next(0, 40)];
            random.NextBytes(bytes);
            if (bytes.Length > 0 && random.Next(2) == 0)
            {
                // Half of the inputs get a plausible first byte so that the parser gets past the header.
                bytes[0] = framing == CoapFraming.Datagram ? (byte)(0x40 | (bytes[0] & 0x37)) : (byte)((bytes.Length - 2 << 4) & 0xF0);
            }

            ParseOrReject(serializer, bytes, $"random input #{i}");
        }
    }

    /// <summary>Runs the span, memory and sequence readers on <paramref name="input"/>; they must agree.</summary>
    /// <remarks>Plain checks instead of assertions: this runs a hundred thousand times.</remarks>
    private static CoapFormatErrorReason ParseOrReject(CoapMessageSerializer serializer, byte[] input, string what)
    {
        try
        {
            bool parsed = serializer.TryDeserialize(input, out CoapMessage? message, out CoapFormatError error);
            OperationStatus status = serializer.ReadFrame(new ReadOnlySequence<byte>(input), out CoapMessage? framed, out _, out CoapFormatError frameError);
            if (parsed)
            {
                // The encoding is canonical, so whatever parses writes back to exactly the input.
                Check(message is not null && error == default && serializer.Serialize(message).AsSpan().SequenceEqual(input), "parsed but does not write back identically");
                Check(status == OperationStatus.Done && serializer.Serialize(framed!).AsSpan().SequenceEqual(input), $"ReadFrame answered {status}");
                return CoapFormatErrorReason.None;
            }

            Check(message is null && error.Reason != CoapFormatErrorReason.None && error.Offset >= 0 && error.Offset <= input.Length, $"rejected with {error}");
            try
            {
                serializer.Deserialize(input);
                Check(false, "Deserialize accepted what TryDeserialize rejected");
            }
            catch (CoapFormatException e)
            {
                Check(e.Error == error, $"Deserialize found {e.Error}, TryDeserialize {error}");
            }

            if (error.Reason == CoapFormatErrorReason.TrailingBytes)
            {
                // ReadFrame reads only the first frame, which may itself be well-formed or not.
                Check(
                    status == OperationStatus.Done ? serializer.Serialize(framed!).AsSpan().SequenceEqual(input.AsSpan(0, (int)error.Offset)) : status == OperationStatus.InvalidData && frameError.Offset < error.Offset,
                    $"ReadFrame answered {status} {frameError} for a first frame ending at {error.Offset}");
            }
            else if (status == OperationStatus.InvalidData)
            {
                Check(frameError == error, $"ReadFrame found {frameError}, TryDeserialize {error}");
            }
            else
            {
                Check(status == OperationStatus.NeedMoreData && error.Reason is CoapFormatErrorReason.TruncatedFrame or CoapFormatErrorReason.MessageTooShort, $"ReadFrame answered {status} for {error}");
            }

            return error.Reason;
        }
        catch (Exception e) when (e is not Xunit.Sdk.XunitException)
        {
            throw new Xunit.Sdk.XunitException($"{what}: {TestMessages.Hex(input)} threw {e}");
        }

        void Check(bool condition, string problem)
        {
            if (!condition)
            {
                throw new Xunit.Sdk.XunitException($"{what}: {TestMessages.Hex(input)}: {problem}");
            }
        }
    }
}
