using System.Collections.Concurrent;
using System.Formats.Cbor;

namespace CoapNet.Endpoints;

/// <summary>
/// CBOR (RFC 8949, Content-Format 60) contracts of application types, for handlers' payloads and results: the source
/// generator registers one for every type a mapped handler reads or returns (its public properties as a map keyed by
/// their JSON names), written as plain <see cref="CborWriter"/> and <see cref="CborReader"/> calls, so no reflection runs
/// and Native AOT keeps them. Register a contract of your own for a type the generator cannot describe.
/// </summary>
public static class CoapCbor
{
    private static readonly ConcurrentDictionary<Type, bool> Registered = new();

    [ThreadStatic]
    private static CborWriter? t_writer;

    /// <summary>Registers (or replaces) the CBOR contract of <typeparamref name="T"/>.</summary>
    /// <typeparam name="T">The type.</typeparam>
    /// <param name="write">Writes one value as one CBOR data item.</param>
    /// <param name="read">Reads one data item into a value, or null when the type is only written.</param>
    public static void Register<T>(Action<CborWriter, T> write, Func<CborReader, T>? read)
    {
        ArgumentNullException.ThrowIfNull(write);
        CborContract<T>.Write = write;
        CborContract<T>.Read = read;
        Registered[typeof(T)] = read is not null;
    }

    /// <summary>True when <paramref name="type"/> has a CBOR contract.</summary>
    /// <param name="type">The type.</param>
    /// <returns>True when registered.</returns>
    public static bool IsRegistered(Type type)
    {
        ArgumentNullException.ThrowIfNull(type);
        return Registered.ContainsKey(type);
    }

    /// <summary>Encodes a value with its registered contract.</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="value">The value.</param>
    /// <returns>The CBOR encoding.</returns>
    /// <exception cref="InvalidOperationException"><typeparamref name="T"/> has no contract.</exception>
    public static byte[] Serialize<T>(T value)
    {
        Action<CborWriter, T> write = CborContract<T>.Write ?? throw NoContract(typeof(T));

        // One writer per thread, reused: its buffer grows to the largest body and stays, so a response costs only its
        // payload array. Taken out while in use, so a contract that encodes another value inside gets a writer of its own.
        CborWriter writer = t_writer ?? new CborWriter(CborConformanceMode.Lax, convertIndefiniteLengthEncodings: false, allowMultipleRootLevelValues: false);
        t_writer = null;
        try
        {
            writer.Reset();
            write(writer, value);
            return writer.Encode();
        }
        finally
        {
            writer.Reset();
            t_writer = writer;
        }
    }

    /// <summary>Decodes one value with its registered contract; the data must hold exactly one data item.</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="cbor">The CBOR encoding.</param>
    /// <returns>The value.</returns>
    /// <exception cref="InvalidOperationException"><typeparamref name="T"/> has no contract for reading, or the data does not fit it.</exception>
    /// <exception cref="CborContentException">The data is not well-formed CBOR.</exception>
    public static T Deserialize<T>(ReadOnlyMemory<byte> cbor)
    {
        Func<CborReader, T> read = CborContract<T>.Read ?? throw NoContract(typeof(T));
        // CborReader refuses nesting deeper than 64, so the generated readers, which recurse per level, stay shallow
        // whatever a peer sends.
        CborReader reader = new(cbor, CborConformanceMode.Lax);
        T value = read(reader);
        if (reader.BytesRemaining != 0)
        {
            throw new CborContentException($"{reader.BytesRemaining} bytes follow the {typeof(T).Name}.");
        }

        return value;
    }

    internal static bool CanRead<T>() => CborContract<T>.Read is not null;

    internal static bool CanWrite<T>() => CborContract<T>.Write is not null;

    private static InvalidOperationException NoContract(Type type)
        => new($"{type.Name} has no CBOR contract: map a handler that uses it (the source generator writes one) or call CoapCbor.Register.");

    private static class CborContract<T>
    {
        public static Action<CborWriter, T>? Write;
        public static Func<CborReader, T>? Read;
    }
}
