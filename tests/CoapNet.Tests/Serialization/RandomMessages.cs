using System.Text;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// Deterministic random messages (seeded <see cref="Random"/>) that cover every option format (empty,
/// opaque, uint, string), registered and unregistered option numbers including 0 and 65535, tokens of 0 to
/// 8 bytes, and payloads present and absent.
/// </summary>
internal static class RandomMessages
{
    // Registered numbers of every format, unregistered ones, and the numbers at the delta boundaries.
    private static readonly ushort[] Numbers =
    [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 23, 27, 28, 31, 35, 39, 60,
        252, 258, 268, 269, 270, 292, 1000, 2048, 65000, 65534, 65535,
    ];

    // Value lengths at the extended-length boundaries of RFC 7252 section 3.1 (and a few in between).
    private static readonly int[] OpaqueLengths = [0, 1, 2, 8, 12, 13, 14, 40, 268, 269, 270];

    private static readonly string[] Strings = ["", "a", "temperature", "ß€😀", "x=1&y=2", new string('s', 12), new string('t', 13), new string('u', 268), new string('v', 269)];

    public static IEnumerable<CoapMessage> Generate(int seed, int count)
    {
        Random random = new(seed);
        for (int i = 0; i < count; i++)
        {
            yield return Next(random);
        }
    }

    public static CoapMessage Next(Random random)
    {
        // About one message in twelve is an Empty message, which must stay empty.
        if (random.Next(12) == 0)
        {
            return new CoapMessage { Type = (CoapMessageType)random.Next(4), MessageId = (ushort)random.Next(65536) };
        }

        CoapMessage message = new()
        {
            Type = (CoapMessageType)random.Next(4),
            Code = new CoapCode((byte)random.Next(1, 256)),
            MessageId = (ushort)random.Next(65536),
            Token = Bytes(random, random.Next(CoapMessage.MaxTokenLength + 1)),
        };

        int optionCount = random.Next(4) == 0 ? 0 : random.Next(1, 12);
        for (int i = 0; i < optionCount; i++)
        {
            AddRandomOption(random, message.Options);
        }

        message.Payload = random.Next(3) switch
        {
            0 => ReadOnlyMemory<byte>.Empty,
            1 => Bytes(random, random.Next(1, 20)),
            _ => Bytes(random, OpaqueLengths[random.Next(1, OpaqueLengths.Length)] + random.Next(3)),
        };
        return message;
    }

    private static void AddRandomOption(Random random, CoapOptionCollection options)
    {
        CoapOptionNumber number = (CoapOptionNumber)(random.Next(5) == 0 ? random.Next(65536) : Numbers[random.Next(Numbers.Length)]);
        switch (random.Next(4))
        {
            case 0:
                options.AddEmpty(number);
                break;
            case 1:
                options.Add(number, Bytes(random, OpaqueLengths[random.Next(OpaqueLengths.Length)]));
                break;
            case 2:
                options.Add(number, random.Next(5) switch
                {
                    0 => 0u,
                    1 => (uint)random.Next(256),
                    2 => (uint)random.Next(65536),
                    3 => (uint)random.Next(1 << 24),
                    _ => uint.MaxValue - (uint)random.Next(1000),
                });
                break;
            default:
                options.Add(number, Strings[random.Next(Strings.Length)]);
                break;
        }
    }

    private static byte[] Bytes(Random random, int length)
    {
        byte[] bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    /// <summary>A short description for assertion messages.</summary>
    public static string Describe(CoapMessage message, CoapFraming framing)
        => new StringBuilder().Append(framing).Append(' ').Append(message).ToString();
}
