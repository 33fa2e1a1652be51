using System.Globalization;
using System.Text;

namespace CoapNet.Messages;

/// <summary>
/// The typed view of an option: <see cref="EmptyOption"/>, <see cref="UIntOption"/>,
/// <see cref="StringOption"/> or <see cref="OpaqueOption"/>. Use it to build options with typed
/// values (<see cref="CoapOptionCollection.Add(CoapOption)"/>) or to inspect one
/// (<see cref="CoapOptionEntry.ToOption"/>).
/// </summary>
/// <remarks>
/// Messages store options as <see cref="CoapOptionEntry"/> (number and value bytes); a typed
/// object exists only when asked for, so the parse path never allocates one per option.
/// An option whose number is not registered is represented as an <see cref="OpaqueOption"/>.
/// </remarks>
public abstract class CoapOption
{
    private protected CoapOption(CoapOptionNumber number) => Number = number;

    /// <summary>The option number.</summary>
    public CoapOptionNumber Number { get; }

    /// <summary>The registered name, or the number when the option is not registered.</summary>
    public string Name => CoapOptionDefinition.GetName(Number);

    /// <summary>The value format of this typed view.</summary>
    public abstract CoapOptionFormat Format { get; }

    /// <summary>True when the option is critical (RFC 7252 section 5.4.6).</summary>
    public bool IsCritical => Number.IsCritical();

    /// <summary>True when the option is unsafe to forward (RFC 7252 section 5.4.6).</summary>
    public bool IsUnsafe => Number.IsUnsafe();

    /// <summary>True when the option is not part of the cache key (RFC 7252 section 5.4.6).</summary>
    public bool IsNoCacheKey => Number.IsNoCacheKey();

    /// <summary>Encodes the value into its wire bytes.</summary>
    /// <returns>The encoded value.</returns>
    public abstract ReadOnlyMemory<byte> Encode();

    /// <summary>Creates the typed view that the registry defines for <paramref name="number"/>.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The encoded value.</param>
    /// <returns>The typed option; opaque when the number is unregistered or the value does not fit the format.</returns>
    public static CoapOption Create(CoapOptionNumber number, ReadOnlyMemory<byte> value)
    {
        CoapOptionFormat format = CoapOptionDefinition.TryGet(number, out CoapOptionDefinition? d) ? d.Format : CoapOptionFormat.Opaque;
        switch (format)
        {
            case CoapOptionFormat.Empty when value.IsEmpty:
                return new EmptyOption(number);
            case CoapOptionFormat.UInt when UIntCodec.TryRead(value.Span, out uint n):
                return new UIntOption(number, n);
            case CoapOptionFormat.String:
                return new StringOption(number, Encoding.UTF8.GetString(value.Span));
            default:
                return new OpaqueOption(number, value);
        }
    }

    /// <summary>"Name: value".</summary>
    public override string ToString() => Name + ": " + FormatValue();

    /// <summary>The value as text for <see cref="ToString"/>.</summary>
    /// <returns>The formatted value.</returns>
    protected abstract string FormatValue();
}

/// <summary>An option with a typed value.</summary>
/// <typeparam name="T">The value type.</typeparam>
public abstract class CoapOption<T> : CoapOption
{
    private protected CoapOption(CoapOptionNumber number, T value)
        : base(number) => Value = value;

    /// <summary>The decoded value.</summary>
    public T Value { get; }
}

/// <summary>An option with a zero-length value, such as If-None-Match.</summary>
public sealed class EmptyOption : CoapOption
{
    /// <summary>Creates an empty option.</summary>
    /// <param name="number">The option number.</param>
    public EmptyOption(CoapOptionNumber number)
        : base(number)
    {
    }

    /// <inheritdoc/>
    public override CoapOptionFormat Format => CoapOptionFormat.Empty;

    /// <inheritdoc/>
    public override ReadOnlyMemory<byte> Encode() => ReadOnlyMemory<byte>.Empty;

    /// <inheritdoc/>
    protected override string FormatValue() => "(empty)";
}

/// <summary>An option whose value is an unsigned integer, such as Content-Format or Max-Age.</summary>
public sealed class UIntOption : CoapOption<uint>
{
    /// <summary>Creates an unsigned integer option.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The value; it is encoded in the fewest bytes (RFC 7252 section 3.2).</param>
    public UIntOption(CoapOptionNumber number, uint value)
        : base(number, value)
    {
    }

    /// <inheritdoc/>
    public override CoapOptionFormat Format => CoapOptionFormat.UInt;

    /// <inheritdoc/>
    public override ReadOnlyMemory<byte> Encode() => UIntCodec.Encode(Value);

    /// <inheritdoc/>
    protected override string FormatValue() => Value.ToString(CultureInfo.InvariantCulture);
}

/// <summary>An option whose value is a UTF-8 string, such as Uri-Path.</summary>
public sealed class StringOption : CoapOption<string>
{
    /// <summary>Creates a string option.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The value.</param>
    /// <exception cref="ArgumentNullException"><paramref name="value"/> is null.</exception>
    public StringOption(CoapOptionNumber number, string value)
        : base(number, value ?? throw new ArgumentNullException(nameof(value)))
    {
    }

    /// <inheritdoc/>
    public override CoapOptionFormat Format => CoapOptionFormat.String;

    /// <inheritdoc/>
    public override ReadOnlyMemory<byte> Encode() => Encoding.UTF8.GetBytes(Value);

    /// <inheritdoc/>
    protected override string FormatValue() => Value;
}

/// <summary>An option whose value is a sequence of bytes, such as ETag; also every unregistered option.</summary>
public sealed class OpaqueOption : CoapOption<ReadOnlyMemory<byte>>
{
    /// <summary>Creates an opaque option.</summary>
    /// <param name="number">The option number.</param>
    /// <param name="value">The value bytes.</param>
    public OpaqueOption(CoapOptionNumber number, ReadOnlyMemory<byte> value)
        : base(number, value)
    {
    }

    /// <inheritdoc/>
    public override CoapOptionFormat Format => CoapOptionFormat.Opaque;

    /// <inheritdoc/>
    public override ReadOnlyMemory<byte> Encode() => Value;

    /// <inheritdoc/>
    protected override string FormatValue() => Value.IsEmpty ? "(empty)" : "0x" + Convert.ToHexString(Value.Span);
}
