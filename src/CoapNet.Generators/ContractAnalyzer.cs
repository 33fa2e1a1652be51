using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;

namespace CoapNet.Generators;

/// <summary>
/// Describes the contracts of a type, the table both the CBOR contracts and the JSON metadata are written from: its
/// public properties as a map keyed by their JSON names (a [JsonPropertyName] if present, else the property's name;
/// CBOR keys stay these, JSON names follow the options' naming policy unless the attribute fixed them), collections as
/// arrays, string-keyed dictionaries as maps, scalars by their CBOR major type. Read back through the constructor that
/// System.Text.Json would choose ([JsonConstructor], a parameterless one, or the only public one). What of
/// System.Text.Json's attributes the JSON metadata does not model (polymorphism, number handling, extension data) is
/// recorded as the reason the type gets none.
/// </summary>
internal sealed class ContractAnalyzer
{
    private readonly Dictionary<string, ContractType> _types = new();
    private readonly HashSet<string> _inProgress = new();

    public IReadOnlyCollection<ContractType> Types => _types.Values;

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
            return Add(key, ContractKind.Primitive, primitive, string.Empty, canRead: true, 0, []);
        }

        if (type.TypeKind == TypeKind.Enum && type is INamedTypeSymbol { EnumUnderlyingType: { } underlying })
        {
            string converter = Converter(type, out string blocker);
            return Add(key, ContractKind.Enum, underlying.SpecialType == SpecialType.System_UInt64 ? "uint64" : "int64", string.Empty, canRead: true, 0, [], jsonConverter: converter, jsonBlocker: blocker);
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
            return Describe(inner, out reason) is string element ? Add(key, ContractKind.Nullable, string.Empty, element, _types.TryGetValue(element, out ContractType? e) ? e.CanRead : true, 0, []) : null;
        }

        if (type is IArrayTypeSymbol { Rank: 1 } array)
        {
            return Describe(array.ElementType, out reason) is string element ? Add(key, ContractKind.Array, string.Empty, element, true, 0, []) : null;
        }

        if (type is INamedTypeSymbol { IsGenericType: true } generic)
        {
            switch (Symbols.MetadataName(generic))
            {
                case "System.Collections.Generic.List`1" or "System.Collections.Generic.IList`1" or "System.Collections.Generic.IReadOnlyList`1"
                    or "System.Collections.Generic.ICollection`1" or "System.Collections.Generic.IReadOnlyCollection`1":
                    return Describe(generic.TypeArguments[0], out reason) is string listed ? Add(key, ContractKind.List, string.Empty, listed, true, 0, [], Symbols.MetadataName(generic)) : null;
                case "System.Collections.Generic.IEnumerable`1":
                    return Describe(generic.TypeArguments[0], out reason) is string enumerated ? Add(key, ContractKind.Enumerable, string.Empty, enumerated, true, 0, [], Symbols.MetadataName(generic)) : null;
                case "System.Collections.Generic.Dictionary`2" or "System.Collections.Generic.IDictionary`2" or "System.Collections.Generic.IReadOnlyDictionary`2":
                    if (generic.TypeArguments[0].SpecialType != SpecialType.System_String)
                    {
                        reason = "a dictionary's keys must be strings";
                        return null;
                    }

                    return Describe(generic.TypeArguments[1], out reason) is string value ? Add(key, ContractKind.Dictionary, string.Empty, value, true, 0, [], Symbols.MetadataName(generic)) : null;
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
        bool setsRequired = constructor is not null && Symbols.Attribute(constructor, "SetsRequiredMembersAttribute") is not null;
        string typeConverter = Converter(type, out string blocker);
        blocker = blocker.Length > 0 ? blocker : JsonBlocker(type);
        List<ContractMember> members = [];
        foreach (IPropertySymbol property in properties)
        {
            if (Describe(property.Type, out string? why) is not string memberType)
            {
                reason = $"its property {property.Name}: {why}";
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

            // A required member is set in the object initializer, as C# demands of whoever makes the object, whether its
            // setter is init-only or not (unless the constructor sets the required members itself); another init-only
            // one there too, with a fresh instance's value when the payload lacks it, so its initializer's value stays.
            string assign = index >= 0 ? "ctor"
                : property.SetMethod is not { DeclaredAccessibility: Accessibility.Public } ? "none"
                : property.IsRequired && !setsRequired ? "required"
                : property.SetMethod.IsInitOnly ? "init"
                : "set";
            string? named = Symbols.Attribute(property, "JsonPropertyNameAttribute")?.ConstructorArguments.FirstOrDefault().Value as string;
            string converter = Converter(property, out string memberBlocker);
            if (blocker.Length == 0 && memberBlocker.Length > 0)
            {
                blocker = $"its property {property.Name}'s {memberBlocker}";
            }

            members.Add(new ContractMember(
                property.Name,
                named ?? property.Name,
                memberType,
                assign,
                index,
                named ?? string.Empty,
                IgnoreCondition(property),
                converter,
                !setsRequired && (property.IsRequired || Symbols.Attribute(property, "JsonRequiredAttribute") is not null),
                Symbols.Attribute(property, "JsonPropertyOrderAttribute")?.ConstructorArguments.FirstOrDefault().Value as int? ?? 0));
        }

        if (constructor is not null && constructor.Parameters.Any(p => !members.Any(m => m.Assign == "ctor" && m.CtorIndex == constructor.Parameters.IndexOf(p))))
        {
            // A constructor parameter with no property of its name cannot be filled from the map.
            canRead = false;
        }

        return Add(key, ContractKind.Object, string.Empty, string.Empty, canRead, constructor?.Parameters.Length ?? 0, [.. members], isValueType: type.IsValueType, jsonConverter: typeConverter, jsonBlocker: blocker);
    }

    /// <summary>
    /// The converter of a type's or property's [JsonConverter], which the JSON metadata makes with its public
    /// parameterless constructor (as System.Text.Json does), or empty; a blocker when it cannot be made so.
    /// </summary>
    private static string Converter(ISymbol symbol, out string blocker)
    {
        blocker = string.Empty;
        if (Symbols.Attribute(symbol, "JsonConverterAttribute") is not { } attribute)
        {
            return string.Empty;
        }

        if (attribute.ConstructorArguments.FirstOrDefault().Value is not INamedTypeSymbol converter || converter.IsAbstract || Symbols.Inaccessible(converter) is not null
            || !converter.InstanceConstructors.Any(c => c.Parameters.Length == 0 && c.DeclaredAccessibility == Accessibility.Public))
        {
            blocker = "[JsonConverter] names no converter with a public parameterless constructor";
            return string.Empty;
        }

        return converter.ToDisplayString(Symbols.Plain);
    }

    /// <summary>What of System.Text.Json's attributes on an object type or its members the generated metadata does not model, or empty.</summary>
    private static string JsonBlocker(INamedTypeSymbol type)
    {
        foreach (string attribute in (string[])["JsonPolymorphicAttribute", "JsonDerivedTypeAttribute", "JsonNumberHandlingAttribute", "JsonUnmappedMemberHandlingAttribute", "JsonObjectCreationHandlingAttribute"])
        {
            if (Symbols.Attribute(type, attribute) is not null)
            {
                return $"it has [{attribute.Substring(0, attribute.Length - "Attribute".Length)}]";
            }
        }

        for (INamedTypeSymbol? t = type; t is not null && t.SpecialType != SpecialType.System_Object; t = t.BaseType)
        {
            foreach (ISymbol member in t.GetMembers())
            {
                bool included = Symbols.Attribute(member, "JsonIncludeAttribute") is not null;
                if ((member is IFieldSymbol && included) || (member is IPropertySymbol && included && member.DeclaredAccessibility != Accessibility.Public))
                {
                    return $"its member {member.Name} is included by [JsonInclude]";
                }

                foreach (string attribute in (string[])["JsonExtensionDataAttribute", "JsonNumberHandlingAttribute", "JsonObjectCreationHandlingAttribute"])
                {
                    if (member is IPropertySymbol && Symbols.Attribute(member, attribute) is not null)
                    {
                        return $"its property {member.Name} has [{attribute.Substring(0, attribute.Length - "Attribute".Length)}]";
                    }
                }
            }
        }

        return string.Empty;
    }

    /// <summary>The JsonIgnoreCondition member of a conditional [JsonIgnore] (the unconditional one leaves the property out), or empty.</summary>
    private static string IgnoreCondition(IPropertySymbol property)
    {
        foreach (var argument in Symbols.Attribute(property, "JsonIgnoreAttribute")?.NamedArguments ?? [])
        {
            if (argument.Key == "Condition" && argument.Value.Value is int condition)
            {
                return condition switch
                {
                    0 => "Never",
                    2 => "WhenWritingDefault",
                    3 => "WhenWritingNull",
                    _ => string.Empty,
                };
            }
        }

        return string.Empty;
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

    private string Add(string key, ContractKind kind, string primitive, string element, bool canRead, int ctorParameters, ImmutableArray<ContractMember> members, string definition = "", bool isValueType = false, string jsonConverter = "", string jsonBlocker = "")
    {
        _types[key] = new ContractType(key, key, kind, primitive, element, canRead, ctorParameters, new EquatableArray<ContractMember>(members), definition, isValueType, jsonConverter, jsonBlocker);
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
