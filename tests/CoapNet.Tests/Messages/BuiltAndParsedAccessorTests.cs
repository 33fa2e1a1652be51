using System.Collections;
using System.Globalization;
using System.Reflection;
using System.Text;
using CoapNet.Messages;
using CoapNet.Serialization;
using CoapNet.Tests.Serialization;

namespace CoapNet.Tests.Messages;

/// <summary>
/// A property of every message: each read accessor answers the same on a message as built and on the same
/// message parsed back, through every read entry point of the serializer. A parsed message keeps its options as
/// the wire bytes until something asks for the collection, so each accessor is read on a fresh parse, where no
/// other accessor has built the collection for it. The accessors are found by reflection: a public member added
/// later is checked without a change here, or the test names it.
/// </summary>
public sealed class BuiltAndParsedAccessorTests
{
    // What GetUri is asked on every message: with and without a destination, each scheme's default port and another.
    private static readonly (string Scheme, string? Host, int? Port)[] UriArguments =
    [
        ("coap", "h", 1234),
        ("coap", "h", null),
        ("coap+tcp", "192.0.2.1", 5683),
        ("coaps", "2001:db8::1", 5684),
        ("coap", null, null),
    ];

    // Public members that change a message (or make another one): not accessors.
    // Option numbers asked of HasOption and TryGetOption: each one the messages below may carry, one below the first
    // (If-Match), one between two carried (Uri-Port before Uri-Path), and ones above every carried option.
    private static readonly CoapOptionNumber[] LookedUpOptions =
    [
        CoapOptionNumber.IfMatch, CoapOptionNumber.UriHost, CoapOptionNumber.ETag, CoapOptionNumber.IfNoneMatch, CoapOptionNumber.Observe,
        CoapOptionNumber.UriPort, CoapOptionNumber.Oscore, CoapOptionNumber.UriPath, CoapOptionNumber.ContentFormat, CoapOptionNumber.UriQuery,
        CoapOptionNumber.Accept, CoapOptionNumber.Block2, CoapOptionNumber.Size1, CoapOptionNumber.Echo, (CoapOptionNumber)65000,
    ];

    private static readonly HashSet<string> Writers = ["SetUri", "SetUriPathSegments", "SetPayload", "CreateResponse"];

    // The suites' adapters, and TryDeserialize called bare: the Try adapter compares its two parses, which builds their collections.
    public static TheoryData<string> EntryPoints => ["Span", "Memory", "TrySpan", "TryMemory", "SyncStream", "AsyncStream", "AsyncOneByteStream", "Pipe", "PipeOneByteWrites", "ReadFrameOneByteSegments"];

    [Theory]
    [MemberData(nameof(EntryPoints))]
    public async Task EveryAccessorReadsTheSameOnABuiltAndAParsedMessage(string entryPoint)
    {
        SerializerEntryPoint entry = Create(entryPoint);
        List<string> differences = [];
        foreach (CoapMessage built in Messages())
        {
            // A buffer entry point reads either framing; one that reads a connection reads frames (RFC 8323).
            CoapMessageSerializer[] serializers = entry.ReadsConnection ? [CoapMessageSerializer.Tcp] : [CoapMessageSerializer.Udp, CoapMessageSerializer.Tcp];
            foreach (CoapMessageSerializer serializer in serializers)
            {
                byte[] bytes = serializer.Serialize(built);
                if (serializer.Framing == CoapFraming.Stream)
                {
                    // A frame carries no type or Message ID (RFC 8323 section 3.2): the built message reads as what a frame gives.
                    CoapMessage frame = (await entry.ReadAsync(serializer, bytes))[0];
                    built.Type = frame.Type;
                    built.MessageId = frame.MessageId;
                }

                foreach (Accessor accessor in Accessors())
                {
                    // A fresh parse per accessor: none reads a collection that another one built.
                    CoapMessage parsed = (await entry.ReadAsync(serializer, bytes)).Should().ContainSingle().Subject;
                    string expected = accessor.Read(built);
                    string actual = accessor.Read(parsed);
                    if (expected != actual)
                    {
                        differences.Add($"{accessor.Name} over {serializer.Framing} of {built}: built {expected}, parsed {actual}");
                    }
                }
            }
        }

        differences.Should().BeEmpty();
    }

    [Fact]
    public void TheAccessorsCoverEveryPublicReadMember()
    {
        // Guards the reflection above: it must find the typed accessors users call, GetUri among them.
        string[] names = [.. Accessors().Select(a => a.Name)];
        names.Should().Contain(["UriPath", "UriQuery", "UriHost", "UriPort", "ETag", "IfNoneMatch", "Block2", "GetUriPathSegments()", "GetETags()", "GetPayloadString()", "ToString()", "GetUri(coap, h, 1234)", "Options", "HasOption(UriPath)", "TryGetOption(ETag)"]);
    }

    [Fact]
    public void GetUriOfAParsedRequestHasItsPathAndQuery()
    {
        // The regression that prompted the property: the path and query were read from a collection a parsed message does not have yet.
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://h:1234/a/b?x=1"));
        CoapMessage parsed = CoapMessageSerializer.Udp.Deserialize(CoapMessageSerializer.Udp.Serialize(request));

        parsed.GetUri("coap", "h").Should().Be(new Uri("coap://h:1234/a/b?x=1"));
        parsed.GetUri("coap", "h", 1234).Should().Be(new Uri("coap://h:1234/a/b?x=1"));
    }

    /// <summary>Random messages of every shape, and requests with the URI, conditional and block options handlers read.</summary>
    private static IEnumerable<CoapMessage> Messages()
    {
        foreach (CoapMessage message in RandomMessages.Generate(seed: 2117, count: 60))
        {
            yield return message;
        }

        Random random = new(21);
        string[] segments = ["a", "", "b c", "ä", "%", "x/y", "sensors", "temp"];
        string[] arguments = ["x=1", "", "a&b", "q=?", "ü=1"];
        for (int i = 0; i < 60; i++)
        {
            CoapMessage request = new()
            {
                Type = (CoapMessageType)random.Next(2),
                Code = new CoapCode((byte)random.Next(1, 8)),
                MessageId = (ushort)random.Next(65536),
                Token = BitConverter.GetBytes(random.Next()).AsMemory(0, random.Next(5)),
            };
            if (random.Next(2) == 0)
            {
                request.UriHost = random.Next(2) == 0 ? "example.com" : "Ex.Ample";
            }

            if (random.Next(2) == 0)
            {
                request.UriPort = (ushort)random.Next(1, 65536);
            }

            request.SetUriPathSegments(Pick(random, segments, random.Next(4)));
            foreach (string argument in Pick(random, arguments, random.Next(3)))
            {
                request.Options.Add(CoapOptionNumber.UriQuery, argument);
            }

            for (int e = random.Next(3); e > 0; e--)
            {
                request.Options.Add(CoapOptionNumber.ETag, BitConverter.GetBytes(random.Next()).AsMemory(0, random.Next(1, 5)));
            }

            for (int m = random.Next(3); m > 0; m--)
            {
                request.Options.Add(CoapOptionNumber.IfMatch, BitConverter.GetBytes(random.Next()).AsMemory(0, random.Next(5)));
            }

            request.IfNoneMatch = random.Next(3) == 0;
            request.Accept = random.Next(2) == 0 ? (ushort)random.Next(65536) : null;
            request.ContentFormat = random.Next(2) == 0 ? CoapContentFormat.Json : null;
            request.Block2 = random.Next(3) == 0 ? new CoapBlock(random.Next(100), false, 6) : null;
            request.Observe = random.Next(3) == 0 ? 0u : null;
            if (random.Next(2) == 0)
            {
                request.SetPayload("payload " + i.ToString(CultureInfo.InvariantCulture));
            }

            yield return request;
        }
    }

    private static IEnumerable<string> Pick(Random random, string[] values, int count)
    {
        for (int i = 0; i < count; i++)
        {
            yield return values[random.Next(values.Length)];
        }
    }

    /// <summary>Every public read member of <see cref="CoapMessage"/>, each with the arguments it is read with.</summary>
    private static List<Accessor> Accessors()
    {
        List<Accessor> accessors = [];
        foreach (PropertyInfo property in typeof(CoapMessage).GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            accessors.Add(new Accessor(property.Name, message => Describe(() => property.GetValue(message))));
        }

        foreach (MethodInfo method in typeof(CoapMessage).GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.DeclaredOnly))
        {
            if (method.IsSpecialName || Writers.Contains(method.Name))
            {
                continue;
            }

            if (method.Name == nameof(CoapMessage.GetUri))
            {
                foreach ((string scheme, string? host, int? port) in UriArguments)
                {
                    object?[] arguments = [scheme, host, port];
                    accessors.Add(new Accessor($"GetUri({scheme}, {host ?? "null"}, {port?.ToString(CultureInfo.InvariantCulture) ?? "null"})", message => Describe(() => method.Invoke(message, arguments))));
                }

                continue;
            }

            if (method.Name is nameof(CoapMessage.HasOption) or nameof(CoapMessage.TryGetOption))
            {
                foreach (CoapOptionNumber number in LookedUpOptions)
                {
                    // TryGetOption's out argument comes back in the array: the found entry is compared too.
                    accessors.Add(new Accessor($"{method.Name}({number})", message =>
                    {
                        object?[] arguments = method.Name == nameof(CoapMessage.HasOption) ? [number] : [number, null];
                        return Describe(() => method.Invoke(message, arguments)) + (arguments.Length == 2 ? " " + Describe(() => arguments[1]) : string.Empty);
                    }));
                }

                continue;
            }

            method.GetParameters().Should().BeEmpty($"{method.Name} is a public member of CoapMessage: list it among the writers, or give this test the arguments to read it with");
            method.ReturnType.Should().NotBe(typeof(void), $"{method.Name} returns nothing, so it is not an accessor: list it among the writers");
            accessors.Add(new Accessor(method.Name + "()", message => Describe(() => method.Invoke(message, null))));
        }

        return accessors;
    }

    /// <summary>A value as comparable text: bytes in hex, sequences element by element, an exception by its type and message.</summary>
    private static string Describe(Func<object?> read)
    {
        try
        {
            return Describe(read());
        }
        catch (TargetInvocationException e) when (e.InnerException is not null)
        {
            return $"throws {e.InnerException.GetType().Name}: {e.InnerException.Message}";
        }
    }

    private static string Describe(object? value) => value switch
    {
        null => "null",
        string text => '"' + text + '"',
        ReadOnlyMemory<byte> bytes => "0x" + Convert.ToHexString(bytes.Span),
        Uri uri => uri.OriginalString,
        CoapOptionEntry option => $"{(ushort)option.Number}=0x{Convert.ToHexString(option.Value.Span)}",
        CoapOptionCollection options => Join(options.Cast<object?>()),
        IEnumerable sequence => Join(sequence.Cast<object?>()),
        _ => Convert.ToString(value, CultureInfo.InvariantCulture) ?? "null",
    };

    private static string Join(IEnumerable<object?> items)
    {
        StringBuilder text = new("[");
        foreach (object? item in items)
        {
            text.Append(Describe(item)).Append(", ");
        }

        return text.Append(']').ToString();
    }

    private static SerializerEntryPoint Create(string name) => name switch
    {
        "TrySpan" => new BareTry(fromMemory: false),
        "TryMemory" => new BareTry(fromMemory: true),
        _ => (SerializerEntryPoint)Activator.CreateInstance(typeof(SerializerEntryPoint).GetNestedType(name, BindingFlags.NonPublic | BindingFlags.Public)!)!,
    };

    /// <summary>TryDeserialize over a span or a memory, the server's receive path, with nothing read from the message.</summary>
    private sealed class BareTry(bool fromMemory) : SerializerEntryPoint
    {
        public override bool ReadsConnection => false;

        public override Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            bool parsed = fromMemory
                ? serializer.TryDeserialize((ReadOnlyMemory<byte>)input, out CoapMessage? message, out _)
                : serializer.TryDeserialize((ReadOnlySpan<byte>)input, out message, out _);
            parsed.Should().BeTrue();
            return Task.FromResult<IReadOnlyList<CoapMessage>>([message!]);
        }

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message) => Task.FromResult(serializer.Serialize(message));
    }

    private sealed record Accessor(string Name, Func<CoapMessage, string> Read);
}
