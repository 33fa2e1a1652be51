using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Benchmarks;

/// <summary>The everyday messages of <see cref="EverydayMessageBenchmarks"/>.</summary>
public enum EverydayMessage
{
    /// <summary>CON GET /sensors/temperature/latest, 4-byte token.</summary>
    GetRequest,

    /// <summary>ACK 2.05 Content, Content-Format application/json, 64-byte payload.</summary>
    ContentResponse,

    /// <summary>NON 2.05 Content with Observe, Content-Format and Max-Age, a 32-byte reading (RFC 7641).</summary>
    ObserveNotification,

    /// <summary>ACK 2.05 Content, block 3 of a larger representation: Content-Format, Block2, Size2 and 1024 bytes (RFC 7959).</summary>
    Block2Response,

    /// <summary>An Empty ACK (0.00): the separate-response acknowledgement, 4 bytes on UDP.</summary>
    EmptyAck,
}

/// <summary>Builds the messages the benchmarks measure, once per setup and deterministically.</summary>
internal static class BenchmarkMessages
{
    /// <summary>
    /// Uri-Path segments as they appear in real CoAP paths (RFC 7252 6.4: one option per segment):
    /// short words and identifiers, 1 to 11 bytes, 5.2 bytes on average. Option i carries
    /// PathSegments[i % Length], so large option counts keep the same size mix.
    /// </summary>
    public static readonly string[] PathSegments =
    [
        "api", "v1", "buildings", "b12", "floors", "3", "rooms", "r301",
        "sensors", "temperature", "readings", "latest", "devices", "a4c1", "fw", "state",
    ];

    /// <summary>
    /// Stream framing (RFC 8323) without the 8 MiB and 1,024-option default caps: the matrix's largest cells and
    /// the 1 GB case (100,000 options) exceed both.
    /// </summary>
    public static CoapMessageSerializer UnboundedStream { get; } =
        new(CoapFraming.Stream, new CoapSerializerOptions { MaxMessageSize = int.MaxValue, MaxOptionCount = int.MaxValue });

    /// <summary>
    /// The thesis message (section 3.2): ACK, 2.01 Created, random 8-byte token and Message ID,
    /// <paramref name="options"/> Uri-Path options and a random payload. A fixed seed makes every
    /// run measure the same bytes.
    /// </summary>
    public static CoapMessage CreateThesisMessage(int options, int payloadLength)
    {
        Random random = new(20_21);
        byte[] token = new byte[8];
        random.NextBytes(token);
        byte[] payload = GC.AllocateUninitializedArray<byte>(payloadLength);
        random.NextBytes(payload);
        CoapMessage message = new()
        {
            Type = CoapMessageType.Acknowledgement,
            Code = CoapCode.Created,
            MessageId = (ushort)random.Next(ushort.MaxValue + 1),
            Token = token,
            Payload = payload,
        };

        // Options.Add(number, string) encodes each value into its own array, as an application building
        // the message would; the values are not shared, so a large message is not unrealistically cache-hot.
        for (int i = 0; i < options; i++)
        {
            message.Options.Add(CoapOptionNumber.UriPath, PathSegments[i % PathSegments.Length]);
        }

        return message;
    }

    public static CoapMessage CreateEveryday(EverydayMessage kind)
    {
        byte[] token = [0x5A, 0x17, 0xC3, 0x02];
        switch (kind)
        {
            case EverydayMessage.GetRequest:
                {
                    CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 0x7D34, Token = token };
                    request.Options.Add(CoapOptionNumber.UriPath, "sensors");
                    request.Options.Add(CoapOptionNumber.UriPath, "temperature");
                    request.Options.Add(CoapOptionNumber.UriPath, "latest");
                    return request;
                }

            case EverydayMessage.ContentResponse:
                {
                    CoapMessage response = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = 0x7D34, Token = token };
                    response.ContentFormat = CoapContentFormat.Json;
                    response.Payload = Text("{\"sensor\":\"t-301\",\"celsius\":21.75,\"ts\":1767225600,\"ok\":1,\"sq\":8}", 64);
                    return response;
                }

            case EverydayMessage.ObserveNotification:
                {
                    CoapMessage notification = new() { Type = CoapMessageType.NonConfirmable, Code = CoapCode.Content, MessageId = 0x7D35, Token = token };
                    notification.Observe = 0x01A2B3;
                    notification.ContentFormat = CoapContentFormat.Json;
                    notification.MaxAge = 30;
                    notification.Payload = Text("{\"celsius\":21.75,\"ts\":176722560}", 32);
                    return notification;
                }

            case EverydayMessage.Block2Response:
                {
                    CoapMessage block = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = 0x7D36, Token = token };
                    block.ContentFormat = CoapContentFormat.OctetStream;
                    block.Block2 = new CoapBlock(3, more: true, sizeExponent: 6);
                    block.Size2 = 16_384;
                    byte[] payload = new byte[1024];
                    new Random(7).NextBytes(payload);
                    block.Payload = payload;
                    return block;
                }

            case EverydayMessage.EmptyAck:
                return CoapMessage.CreateEmpty(CoapMessageType.Acknowledgement, 0x7D34);

            default:
                throw new ArgumentOutOfRangeException(nameof(kind), kind, null);
        }
    }

    private static byte[] Text(string text, int length)
    {
        byte[] bytes = System.Text.Encoding.UTF8.GetBytes(text);
        if (bytes.Length != length)
        {
            throw new InvalidOperationException($"The sample text is {bytes.Length} bytes, not {length}.");
        }

        return bytes;
    }
}
