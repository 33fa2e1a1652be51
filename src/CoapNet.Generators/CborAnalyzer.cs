using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;

namespace CoapNet.Generators;

/// <summary>
/// Describes the CBOR contract of a type: its public properties as a map keyed by their JSON names (a
/// [JsonPropertyName] if present, else the property's name, as System.Text.Json's default), collections as arrays,
/// string-keyed dictionaries as maps, scalars by their CBOR major type. Read back through the constructor that
/// System.Text.Json would choose ([JsonConstructor], a parameterless one, or the only public one).
/// </summary>
internal sealed class CborAnalyzer
{
    private readonly Dictionary<string, CborType> _types = new();
    private readonly HashSet<string> _inProgress = new();

    public IReadOnlyCollection<CborType> Types => _types.Values;

    /// <summary>The type's key in the table, or null with the reason when it has no contract.</summary>
    public string? Describe(ITypeSymbol type, out string? reason)
    {
        reason = null;
        string key = type.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(Symbols.Plain);
        if (_types.ContainsKey(key) || _inProgress.Contains(key))
        {
            return key;
        }

        if (Symbols.Inaccessible(type) is string inaccessible)
        {
            reason = inaccessible;
            return null;
        }

        if (Primitive(type) is string primitive)
        {
            return Add(key, CborKind.Primitive, primitive, string.Empty, canRead: true, 0, []);
        }

        if (type.TypeKind == TypeKind.Enum && type is INamedTypeSymbol { EnumUnderlyingType: { } underlying })
        {
            return Add(key, CborKind.Enum, underlying.SpecialType == SpecialType.System_UInt64 ? "uint64" : "int64", string.Empty, canRead: true, 0, []);
        }

        _inProgress.Add(key);
        try
        {
            return DescribeComposite(type, key, out reason);
        }
        finally
        {
            _inProgress.Remove(key);
        }
    }

    private string? DescribeComposite(ITypeSymbol type, string key, out string? reason)
    {
        reason = null;
        if (Symbols.NullableValue(type) is ITypeSymbol inner)
        {
            return Describe(inner, out reason) is string element ? Add(key, CborKind.Nullable, string.Empty, element, _types.TryGetValue(element, out CborType? e) ? e.CanRead : true, 0, []) : null;
        }

        if (type is IArrayTypeSymbol { Rank: 1 } array)
        {
            return Describe(array.ElementType, out reason) is string element ? Add(key, CborKind.Array, string.Empty, element, true, 0, []) : null;
        }

        if (type is INamedTypeSymbol { IsGenericType: true } generic)
        {
            switch (Symbols.MetadataName(generic))
            {
                case "System.Collections.Generic.List`1" or "System.Collections.Generic.IList`1" or "System.Collections.Generic.IReadOnlyList`1"
                    or "System.Collections.Generic.ICollection`1" or "System.Collections.Generic.IReadOnlyCollection`1":
                    return Describe(generic.TypeArguments[0], out reason) is string listed ? Add(key, CborKind.List, string.Empty, listed, true, 0, []) : null;
                case "System.Collections.Generic.IEnumerable`1":
                    return Describe(generic.TypeArguments[0], out reason) is string enumerated ? Add(key, CborKind.Enumerable, string.Empty, enumerated, true, 0, []) : null;
                case "System.Collections.Generic.Dictionary`2" or "System.Collections.Generic.IDictionary`2" or "System.Collections.Generic.IReadOnlyDictionary`2":
                    if (generic.TypeArguments[0].SpecialType != SpecialType.System_String)
                    {
                        reason = "a dictionary's keys must be strings";
                        return null;
                    }

                    return Describe(generic.TypeArguments[1], out reason) is string value ? Add(key, CborKind.Dictionary, string.Empty, value, true, 0, []) : null;
            }
        }

        if (type is not INamedTypeSymbol { TypeKind: TypeKind.Class or TypeKind.Struct } named || named.SpecialType != SpecialType.None
            || type.ContainingNamespace?.ToDisplayString() is "System" || named.IsAbstract || named.IsStatic)
        {
            reason = $"{type.ToDisplayString()} is not a concrete class, record or struct of the application's";
            return null;
        }

        return DescribeObject(named, key, out reason);
    }

    private string? DescribeObject(INamedTypeSymbol type, string key, out string? reason)
    {
        reason = null;
        List<IPropertySymbol> properties = [];
        HashSet<string> seen = [];
        for (INamedTypeSymbol? t = type; t is not null && t.SpecialType != SpecialType.System_Object && t.SpecialType != SpecialType.System_ValueType; t = t.BaseType)
        {
            foreach (IPropertySymbol property in t.GetMembers().OfType<IPropertySymbol>())
            {
                if (property.IsStatic || property.IsIndexer || property.DeclaredAccessibility != Accessibility.Public
                    || property.GetMethod is not { DeclaredAccessibility: Accessibility.Public } || !seen.Add(property.Name) || IsIgnored(property)
                    || (property.Name == "EqualityContract" && type.IsRecord))
                {
                    continue;
                }

                properties.Add(property);
            }
        }

        IMethodSymbol? constructor = ChooseConstructor(type);
        bool canRead = constructor is not null;
        List<CborMember> members = [];
        foreach (IPropertySymbol property in properties)
        {
            if (Describe(property.Type, out string? why) is not string memberType)
            {
                reason = $"its property {property.Name} {why}";
                return null;
            }

            int index = -1;
            for (int i = 0; constructor is not null && i < constructor.Parameters.Length; i++)
            {
                if (string.Equals(constructor.Parameters[i].Name, property.Name, System.StringComparison.OrdinalIgnoreCase))
                {
                    index = i;
                }
            }

            string assign = index >= 0 ? "ctor"
                : property.SetMethod is { DeclaredAccessibility: Accessibility.Public, IsInitOnly: false } ? "set"
                : property.SetMethod is { DeclaredAccessibility: Accessibility.Public, IsInitOnly: true } ? "init"
                : "none";
            string jsonName = Symbols.Attribute(property, "JsonPropertyNameAttribute")?.ConstructorArguments.FirstOrDefault().Value as string ?? property.Name;
            members.Add(new CborMember(property.Name, jsonName, memberType, assign, index));
        }

        if (constructor is not null && constructor.Parameters.Any(p => !members.Any(m => m.Assign == "ctor" && m.CtorIndex == constructor.Parameters.IndexOf(p))))
        {
            // A constructor parameter with no property of its name cannot be filled from the map.
            canRead = false;
        }

        return Add(key, CborKind.Object, string.Empty, string.Empty, canRead, constructor?.Parameters.Length ?? 0, [.. members]);
    }

    private static bool IsIgnored(IPropertySymbol property)
    {
        AttributeData? ignore = Symbols.Attribute(property, "JsonIgnoreAttribute");
        if (ignore is null)
        {
            return false;
        }

        // [JsonIgnore] alone (Condition Always) leaves the property out; a conditional one keeps it.
        foreach (var argument in ignore.NamedArguments)
        {
            if (argument.Key == "Condition" && argument.Value.Value is int condition && condition != 1)
            {
                return false;
            }
        }

        return true;
    }

    private static IMethodSymbol? ChooseConstructor(INamedTypeSymbol type)
    {
        IMethodSymbol[] constructors = type.InstanceConstructors.Where(c => c.DeclaredAccessibility == Accessibility.Public).ToArray();
        IMethodSymbol? marked = constructors.FirstOrDefault(c => Symbols.Attribute(c, "JsonConstructorAttribute") is not null);
        if (marked is not null)
        {
            return marked;
        }

        IMethodSymbol? parameterless = constructors.FirstOrDefault(c => c.Parameters.Length == 0);
        if (parameterless is not null)
        {
            return parameterless;
        }

        IMethodSymbol[] withParameters = constructors.Where(c => !(c.Parameters.Length == 1 && SymbolEqualityComparer.Default.Equals(c.Parameters[0].Type, type))).ToArray();
        return withParameters.Length == 1 ? withParameters[0] : null;
    }

    private string Add(string key, CborKind kind, string primitive, string element, bool canRead, int ctorParameters, ImmutableArray<CborMember> members)
    {
        _types[key] = new CborType(key, key, kind, primitive, element, canRead, ctorParameters, new EquatableArray<CborMember>(members));
        return key;
    }

    private static string? Primitive(ITypeSymbol type)
    {
        switch (type.SpecialType)
        {
            case SpecialType.System_Boolean:
                return "bool";
            case SpecialType.System_SByte:
                return "int8";
            case SpecialType.System_Byte:
                return "uint8";
            case SpecialType.System_Int16:
                return "int16";
            case SpecialType.System_UInt16:
                return "uint16";
            case SpecialType.System_Int32:
                return "int32";
            case SpecialType.System_UInt32:
                return "uint32";
            case SpecialType.System_Int64:
                return "int64";
            case SpecialType.System_UInt64:
                return "uint64";
            case SpecialType.System_Single:
                return "float";
            case SpecialType.System_Double:
                return "double";
            case SpecialType.System_Decimal:
                return "decimal";
            case SpecialType.System_String:
                return "string";
            case SpecialType.System_DateTime:
                return "datetime";
        }

        if (type is IArrayTypeSymbol { Rank: 1, ElementType.SpecialType: SpecialType.System_Byte })
        {
            return "bytes";
        }

        return Symbols.MetadataName(type) switch
        {
            "System.Guid" => "guid",
            "System.DateTimeOffset" => "datetimeoffset",
            "System.TimeSpan" => "timespan",
            _ => null,
        };
    }
}
