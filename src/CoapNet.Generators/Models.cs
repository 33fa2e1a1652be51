using System;
using System.Collections;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Text;

namespace CoapNet.Generators;

/// <summary>An immutable array compared by its items, so the incremental pipeline can tell an unchanged model.</summary>
internal readonly struct EquatableArray<T>(ImmutableArray<T> items) : IEquatable<EquatableArray<T>>, IEnumerable<T>
    where T : IEquatable<T>
{
    public ImmutableArray<T> Items => items.IsDefault ? ImmutableArray<T>.Empty : items;

    public int Count => Items.Length;

    public T this[int index] => Items[index];

    public bool Equals(EquatableArray<T> other) => Items.SequenceEqual(other.Items);

    public override bool Equals(object? obj) => obj is EquatableArray<T> other && Equals(other);

    public override int GetHashCode()
    {
        int hash = 17;
        foreach (T item in Items)
        {
            hash = (hash * 31) + item.GetHashCode();
        }

        return hash;
    }

    public IEnumerator<T> GetEnumerator() => ((IEnumerable<T>)Items).GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}

/// <summary>Where a diagnostic goes, kept as values (a Location holds the syntax tree, which changes every edit).</summary>
internal sealed record LocationInfo(string Path, TextSpan Span, LinePositionSpan Lines)
{
    public static LocationInfo From(Location location) => new(location.SourceTree?.FilePath ?? string.Empty, location.SourceSpan, location.GetLineSpan().Span);

    public Location ToLocation() => Location.Create(Path, Span, Lines);
}

/// <summary>A diagnostic to report.</summary>
internal sealed record DiagnosticInfo(string Id, LocationInfo Location, EquatableArray<string> Arguments);

/// <summary>How a parameter is bound.</summary>
internal enum BindingKind
{
    Request,
    Peer,
    Identity,
    CancellationToken,
    Context,
    Parsable,
    OptionalParsable,
    Enum,
    OptionalEnum,
    String,
    Body,
    BodyText,
    BodyBytes,
    BodyMemory,
    BodyStream,
    Service,
    ServiceOrBody,
}

/// <summary>One parameter of a handler.</summary>
/// <param name="Name">The name it binds by.</param>
/// <param name="Kind">How it binds.</param>
/// <param name="Source">The CoapParameterSource member.</param>
/// <param name="TypeName">Its type as declared (with nullable annotations).</param>
/// <param name="TypeOfName">Its type for typeof().</param>
/// <param name="ValueTypeName">For a nullable value type, the type inside it; else the same as TypeName.</param>
/// <param name="IsOptional">True when it may be absent.</param>
internal sealed record ParameterModel(string Name, BindingKind Kind, string Source, string TypeName, string TypeOfName, string ValueTypeName, bool IsOptional);

/// <summary>What the handler returns.</summary>
internal enum ResultKind
{
    Empty,
    Response,
    Result,
    Text,
    Bytes,
    Memory,
    Object,
}

/// <summary>One intercepted MapX(template, Delegate) call.</summary>
internal sealed record EndpointModel(
    int Version,
    string Data,
    string DisplayLocation,
    string MapMethod,
    string Method,
    string ReceiverTypeName,
    bool ReceiverIsHost,
    string DelegateTypeName,
    bool IsAsync,
    ResultKind Result,
    string ResultTypeName,
    string ResultTypeOfName,
    EquatableArray<ParameterModel> Parameters);

/// <summary>The shape of a type the generator writes a contract for: how CBOR encodes it and which JSON metadata describes it.</summary>
internal enum ContractKind
{
    Primitive,
    Enum,
    Nullable,
    Array,
    List,
    Enumerable,
    Dictionary,
    Object,
}

/// <summary>One property of an object type.</summary>
/// <param name="Name">The C# property name.</param>
/// <param name="Key">The CBOR map key (the JSON name).</param>
/// <param name="Type">Its type's key in the type table.</param>
/// <param name="Assign">
/// How the reader sets it: "ctor" (a constructor parameter), "required" (C#'s required: in the object initializer),
/// "init" (init-only: in the object initializer too, with a fresh instance's value when the payload lacks it), "set"
/// (after the object is made, only when the payload has it), or "none".
/// </param>
/// <param name="CtorIndex">Its position in the constructor, for "ctor".</param>
/// <param name="JsonName">Its [JsonPropertyName], or empty: then the JSON options' naming policy names it.</param>
/// <param name="JsonIgnore">The JsonIgnoreCondition member of a conditional [JsonIgnore] ("WhenWritingNull"), or empty.</param>
/// <param name="JsonConverter">The converter type of its [JsonConverter], or empty.</param>
/// <param name="Required">True for a C# required member or one with [JsonRequired]: JSON without it does not bind.</param>
/// <param name="Order">Its [JsonPropertyOrder], or 0.</param>
internal sealed record ContractMember(string Name, string Key, string Type, string Assign, int CtorIndex, string JsonName = "", string JsonIgnore = "", string JsonConverter = "", bool Required = false, int Order = 0);

/// <summary>A type in the contract table, keyed by its fully qualified name.</summary>
/// <param name="Key">Its fully qualified name.</param>
/// <param name="TypeName">The same, as generated code names it.</param>
/// <param name="Kind">Its shape.</param>
/// <param name="Primitive">For a primitive or an enum, how CBOR encodes it ("int32", "string", ...).</param>
/// <param name="Element">For a nullable, a collection or a dictionary, its element's (value's) key.</param>
/// <param name="CanRead">True when it can be read back (a constructor to make it).</param>
/// <param name="CtorParameters">The number of parameters of the constructor it is read through.</param>
/// <param name="Members">An object's properties.</param>
/// <param name="Definition">For a collection or a dictionary, the metadata name of its generic definition ("System.Collections.Generic.List`1").</param>
/// <param name="IsValueType">True for a struct.</param>
/// <param name="JsonConverter">The converter type of its own [JsonConverter], or empty.</param>
/// <param name="JsonBlocker">Why the generator writes no JSON metadata for it (an attribute it does not model), or empty.</param>
internal sealed record ContractType(
    string Key,
    string TypeName,
    ContractKind Kind,
    string Primitive,
    string Element,
    bool CanRead,
    int CtorParameters,
    EquatableArray<ContractMember> Members,
    string Definition = "",
    bool IsValueType = false,
    string JsonConverter = "",
    string JsonBlocker = "");

/// <summary>
/// A type a handler reads from the payload or returns, whose JSON metadata must exist: its key (in the table when
/// <paramref name="Described"/>), its name for a diagnostic, why the generator could not describe it, and where the
/// handler was mapped.
/// </summary>
internal sealed record JsonRoot(string Key, bool Described, string Display, string Reason, LocationInfo Where)
{
    public static JsonRoot Of(ITypeSymbol type, string? key, string? reason, LocationInfo where)
    {
        ITypeSymbol plain = type.WithNullableAnnotation(NullableAnnotation.NotAnnotated);
        return new(key ?? plain.ToDisplayString(Symbols.Plain), key is not null, plain.ToDisplayString(), reason ?? "it is not supported", where);
    }
}

/// <summary>
/// What one call site contributes: the endpoint (or null), its diagnostics, the types its contracts need (the roots and
/// all they reach), and the payload and result types whose JSON metadata the build must be able to provide.
/// </summary>
internal sealed record CallModel(EndpointModel? Endpoint, EquatableArray<DiagnosticInfo> Diagnostics, EquatableArray<ContractType> ContractTypes, EquatableArray<string> Roots, EquatableArray<JsonRoot> JsonRoots = default);
