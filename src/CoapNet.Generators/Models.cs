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

/// <summary>The CBOR shape of a type the generator writes a contract for.</summary>
internal enum CborKind
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
/// <param name="Assign">How the reader sets it: "ctor", "init", "set" or "none".</param>
/// <param name="CtorIndex">Its position in the constructor, for "ctor".</param>
internal sealed record CborMember(string Name, string Key, string Type, string Assign, int CtorIndex);

/// <summary>A type in the CBOR table, keyed by its fully qualified name.</summary>
internal sealed record CborType(
    string Key,
    string TypeName,
    CborKind Kind,
    string Primitive,
    string Element,
    bool CanRead,
    int CtorParameters,
    EquatableArray<CborMember> Members);

/// <summary>What one call site contributes: the endpoint (or null), its diagnostics and the CBOR types it needs.</summary>
internal sealed record CallModel(EndpointModel? Endpoint, EquatableArray<DiagnosticInfo> Diagnostics, EquatableArray<CborType> CborTypes, EquatableArray<string> CborRoots);
