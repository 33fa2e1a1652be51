using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;

namespace CoapNet.Generators;

/// <summary>
/// Writes the System.Text.Json metadata of the handlers' types from the contract table, as the System.Text.Json source
/// generator would for a context (its <c>JsonMetadataServices</c> calls), and registers it with <c>CoapJson</c>, so
/// JSON works under trimming and Native AOT without a context of the application's. Property names are left to the
/// options' naming policy unless [JsonPropertyName] fixed them; converters in the options come first, then a
/// [JsonConverter] on the type, as System.Text.Json orders them.
/// </summary>
internal sealed class JsonContractEmitter(Dictionary<string, ContractType> types, Func<string, int> id)
{
    private const string Metadata = "global::System.Text.Json.Serialization.Metadata";
    private const string Services = Metadata + ".JsonMetadataServices";
    private const string Options = "global::System.Text.Json.JsonSerializerOptions";

    /// <summary>The converter of each scalar, by the contract table's name for it.</summary>
    private static readonly Dictionary<string, string> Converters = new()
    {
        ["bool"] = "BooleanConverter",
        ["int8"] = "SByteConverter",
        ["uint8"] = "ByteConverter",
        ["int16"] = "Int16Converter",
        ["uint16"] = "UInt16Converter",
        ["int32"] = "Int32Converter",
        ["uint32"] = "UInt32Converter",
        ["int64"] = "Int64Converter",
        ["uint64"] = "UInt64Converter",
        ["float"] = "SingleConverter",
        ["double"] = "DoubleConverter",
        ["decimal"] = "DecimalConverter",
        ["string"] = "StringConverter",
        ["bytes"] = "ByteArrayConverter",
        ["guid"] = "GuidConverter",
        ["datetimeoffset"] = "DateTimeOffsetConverter",
        ["datetime"] = "DateTimeConverter",
        ["timespan"] = "TimeSpanConverter",
    };

    private readonly Dictionary<string, string> _blockers = new();

    /// <summary>
    /// Why the type, or a type it reaches, gets no generated JSON metadata (an attribute the metadata does not model), or
    /// null when it gets it. A type with a [JsonConverter] of its own needs nothing of what it contains.
    /// </summary>
    public string? Blocker(string key)
    {
        if (_blockers.TryGetValue(key, out string? known))
        {
            return known.Length == 0 ? null : known;
        }

        _blockers[key] = string.Empty; // a cycle is ready as far as this type goes
        ContractType type = types[key];
        string blocker = type.JsonBlocker;
        if (blocker.Length == 0 && type.JsonConverter.Length == 0)
        {
            IEnumerable<string> reached = type.Element.Length > 0 ? [type.Element] : type.Members.Select(m => m.Type);
            foreach (string inner in reached)
            {
                if (Blocker(inner) is string why)
                {
                    blocker = types[inner].Kind == ContractKind.Object ? $"{Name(inner)} {why}" : why;
                    break;
                }
            }
        }

        _blockers[key] = blocker;
        return blocker.Length == 0 ? null : blocker;
    }

    /// <summary>Writes the registrations and the metadata of every type in <paramref name="registered"/> that gets it.</summary>
    public void Emit(StringBuilder text, IEnumerable<ContractType> registered)
    {
        ContractType[] ready = registered.Where(t => Blocker(t.Key) is null).ToArray();
        text.AppendLine();
        text.AppendLine("    file static class CoapJsonContracts");
        text.AppendLine("    {");
        text.AppendLine("        public static void Register()");
        text.AppendLine("        {");
        foreach (ContractType type in ready)
        {
            text.AppendLine($"            global::CoapNet.Endpoints.CoapJson.Register<{type.TypeName}>(J{id(type.Key)});");
        }

        text.AppendLine("        }");
        foreach (ContractType type in ready)
        {
            EmitTypeInfo(text, type);
        }

        text.AppendLine();
        text.AppendLine($"        private static {Metadata}.JsonTypeInfo<T> Custom<T>({Options} o)");
        text.AppendLine("        {");
        text.AppendLine("            foreach (var converter in o.Converters)");
        text.AppendLine("            {");
        text.AppendLine($"                if (converter is not null && converter.CanConvert(typeof(T))) return {Services}.CreateValueInfo<T>(o, Expand<T>(converter, o));");
        text.AppendLine("            }");
        text.AppendLine();
        text.AppendLine("            return null;");
        text.AppendLine("        }");
        text.AppendLine();
        text.AppendLine($"        private static global::System.Text.Json.Serialization.JsonConverter Expand<T>(global::System.Text.Json.Serialization.JsonConverter converter, {Options} o)");
        text.AppendLine("            => converter is global::System.Text.Json.Serialization.JsonConverterFactory factory ? factory.CreateConverter(typeof(T), o) : converter;");
        if (ready.Any(MadeByConverter))
        {
            EmitInitOnlyConverter(text);
        }

        text.AppendLine("    }");
    }

    /// <summary>
    /// True for an object read through <c>InitOnlyConverter</c>: one with an init-only member that is neither required nor
    /// a constructor parameter. System.Text.Json's own object path cannot keep such a member's initializer's value when
    /// the JSON lacks it (it passes a constructor parameter's default for an absent member, dotnet/runtime#84484), and
    /// outside the object initializer only an accessor of its setter could set it.
    /// </summary>
    private static bool MadeByConverter(ContractType type)
        => type.Kind == ContractKind.Object && type.CanRead && type.JsonConverter.Length == 0 && type.Members.Any(m => m.Assign == "init");

    /// <summary>
    /// The converter of the objects <see cref="MadeByConverter"/> picks. It reads the members through System.Text.Json
    /// metadata of the struct the CBOR reader fills too (the options' naming policy, case-insensitive matching, member
    /// converters and unmapped-member handling apply as to any object), then makes the object as the CBOR reader does;
    /// it writes through the object's own metadata.
    /// </summary>
    private static void EmitInitOnlyConverter(StringBuilder text) => text.AppendLine().Append($$"""
                private sealed class InitOnlyConverter<T, TMembers> : global::System.Text.Json.Serialization.JsonConverter<T> where TMembers : struct
                {
                    private readonly {{Metadata}}.JsonTypeInfo<T> _write;
                    private readonly {{Metadata}}.JsonPropertyInfo[] _members;
                    private readonly {{Metadata}}.JsonTypeInfo<TMembers> _read;
                    private readonly global::System.Func<TMembers, int> _missing;
                    private readonly global::System.Func<TMembers, T> _make;

                    public InitOnlyConverter({{Options}} o, {{Metadata}}.JsonTypeInfo<T> write, {{Metadata}}.JsonPropertyInfo[] members, global::System.Func<TMembers, int> missing, global::System.Func<TMembers, T> make)
                    {
                        _write = write;
                        _members = members;
                        _missing = missing;
                        _make = make;
                        _read = {{Services}}.CreateObjectInfo<TMembers>(o, new {{Metadata}}.JsonObjectInfoValues<TMembers> { ObjectCreator = static () => default, PropertyMetadataInitializer = _ => members });
                    }

                    public override T Read(ref global::System.Text.Json.Utf8JsonReader reader, global::System.Type typeToConvert, {{Options}} options)
                    {
                        // Anything but an object (null too, for a struct) is refused as System.Text.Json refuses it: an exception
                        // without a message gets the serializer's own, naming the type and the path.
                        if (reader.TokenType != global::System.Text.Json.JsonTokenType.StartObject) throw new global::System.Text.Json.JsonException();
                        TMembers read = global::System.Text.Json.JsonSerializer.Deserialize(ref reader, _read);
                        int missing = _missing(read);
                        if (missing >= 0) throw new global::System.Text.Json.JsonException("The JSON object of " + typeof(T) + " has no '" + _members[missing].Name + "', which it requires.");
                        return _make(read);
                    }

                    public override void Write(global::System.Text.Json.Utf8JsonWriter writer, T value, {{Options}} options) => global::System.Text.Json.JsonSerializer.Serialize(writer, value, _write);
                }

        """);

    /// <summary>A type's name for a message: its key without the global:: alias.</summary>
    public static string Name(string key) => key.StartsWith("global::", StringComparison.Ordinal) ? key.Substring("global::".Length) : key;

    private void EmitTypeInfo(StringBuilder text, ContractType type)
    {
        string t = type.TypeName;
        int n = id(type.Key);
        text.AppendLine();
        text.AppendLine($"        private static {Metadata}.JsonTypeInfo<{t}> J{n}({Options} o)");
        text.AppendLine("        {");
        text.AppendLine($"            if (Custom<{t}>(o) is {{ }} custom) return custom;");
        if (type.JsonConverter.Length > 0)
        {
            text.AppendLine($"            return {Services}.CreateValueInfo<{t}>(o, Expand<{t}>(new {type.JsonConverter}(), o));");
            text.AppendLine("        }");
            return;
        }

        string element = type.Element.Length > 0 ? types[type.Element].TypeName : string.Empty;
        string values = $"new {Metadata}.JsonCollectionInfoValues<{t}>";
        switch (type.Kind)
        {
            case ContractKind.Primitive:
                text.AppendLine($"            return {Services}.CreateValueInfo<{t}>(o, {Services}.{Converters[type.Primitive]});");
                break;
            case ContractKind.Enum:
                text.AppendLine($"            return {Services}.CreateValueInfo<{t}>(o, {Services}.GetEnumConverter<{t}>(o));");
                break;
            case ContractKind.Nullable:
                text.AppendLine($"            return {Services}.CreateValueInfo<{t}>(o, {Services}.GetNullableConverter<{element}>(o));");
                break;
            case ContractKind.Array:
                text.AppendLine($"            return {Services}.CreateArrayInfo<{element}>(o, {values}());");
                break;
            case ContractKind.List or ContractKind.Enumerable:
                text.AppendLine(type.Definition switch
                {
                    "System.Collections.Generic.List`1" => $"            return {Services}.CreateListInfo<{t}, {element}>(o, {values} {{ ObjectCreator = static () => new {t}() }});",
                    "System.Collections.Generic.IList`1" => $"            return {Services}.CreateIListInfo<{t}, {element}>(o, {values}());",
                    "System.Collections.Generic.ICollection`1" => $"            return {Services}.CreateICollectionInfo<{t}, {element}>(o, {values}());",

                    // IReadOnlyList, IReadOnlyCollection, IEnumerable: read into a List, which each of them is.
                    _ => $"            return {Services}.CreateIEnumerableInfo<{t}, {element}>(o, {values}());",
                });
                break;
            case ContractKind.Dictionary:
                text.AppendLine(type.Definition switch
                {
                    "System.Collections.Generic.Dictionary`2" => $"            return {Services}.CreateDictionaryInfo<{t}, string, {element}>(o, {values} {{ ObjectCreator = static () => new {t}() }});",
                    "System.Collections.Generic.IDictionary`2" => $"            return {Services}.CreateIDictionaryInfo<{t}, string, {element}>(o, {values}());",
                    _ => $"            return {Services}.CreateIReadOnlyDictionaryInfo<{t}, string, {element}>(o, {values}());",
                });
                break;
            case ContractKind.Object when MadeByConverter(type):
                text.AppendLine($"            return {Services}.CreateValueInfo<{t}>(o, new InitOnlyConverter<{t}, {SourceEmitter.MembersType(n)}>(o, O{n}(o), M{n}(o), static s => {FirstMissing(type)}, static s => {SourceEmitter.Make(n)}(in s)));");
                text.AppendLine("        }");
                text.AppendLine();
                text.AppendLine($"        private static {Metadata}.JsonTypeInfo<{t}> O{n}({Options} o)");
                text.AppendLine("        {");
                EmitObject(text, type, n, readable: false);
                break;
            default:
                EmitObject(text, type, n, type.CanRead);
                break;
        }

        text.AppendLine("        }");
        if (type.Kind == ContractKind.Object)
        {
            EmitProperties(text, type, n);
        }

        if (MadeByConverter(type))
        {
            EmitMemberProperties(text, type, n);
        }
    }

    /// <summary>The index of the first required member the struct read has not, or -1: an expression over <c>s</c>.</summary>
    private static string FirstMissing(ContractType type)
    {
        StringBuilder expression = new();
        for (int i = 0; i < type.Members.Count; i++)
        {
            if (type.Members[i].Required && type.Members[i].Assign != "none")
            {
                expression.Append($"!s.h{i} ? {i} : ");
            }
        }

        return expression.Append("-1").ToString();
    }

    /// <summary>
    /// An object's metadata: made as the CBOR reader makes it (<see cref="SourceEmitter.Make"/>), from its constructor's
    /// parameters and its required members, each of those a constructor parameter to System.Text.Json, which matches a
    /// parameter to the property of its name. Without <paramref name="readable"/> it only writes.
    /// </summary>
    private void EmitObject(StringBuilder text, ContractType type, int n, bool readable)
    {
        string t = type.TypeName;
        ContractMember[] byCtor = new ContractMember[type.CtorParameters];
        foreach (ContractMember member in type.Members.Where(m => m.Assign == "ctor"))
        {
            byCtor[member.CtorIndex] = member;
        }

        List<ContractMember> parameters = [.. byCtor, .. type.Members.Where(m => m.Assign == "required")];
        text.AppendLine($"            var values = new {Metadata}.JsonObjectInfoValues<{t}>");
        text.AppendLine("            {");
        if (readable && parameters.Count == 0)
        {
            text.AppendLine($"                ObjectCreator = static () => {SourceEmitter.Make(n)}(new {SourceEmitter.MembersType(n)}()),");
        }
        else if (readable)
        {
            string fields = string.Join(", ", parameters.Select((m, i) => $"m{type.Members.Items.IndexOf(m)} = ({types[m.Type].TypeName})args[{i}]"));
            text.AppendLine($"                ObjectWithParameterizedConstructorCreator = static args => {SourceEmitter.Make(n)}(new {SourceEmitter.MembersType(n)} {{ {fields} }}),");
            text.AppendLine($"                ConstructorParameterMetadataInitializer = static () => new {Metadata}.JsonParameterInfoValues[]");
            text.AppendLine("                {");
            for (int i = 0; i < parameters.Count; i++)
            {
                text.AppendLine($"                    new() {{ Name = {Symbols.Literal(parameters[i].Name)}, ParameterType = typeof({types[parameters[i].Type].TypeName}), Position = {i}, HasDefaultValue = false, DefaultValue = null }},");
            }

            text.AppendLine("                },");
        }

        text.AppendLine($"                PropertyMetadataInitializer = _ => P{n}(o),");
        text.AppendLine("            };");
        text.AppendLine($"            return {Services}.CreateObjectInfo<{t}>(o, values);");
    }

    /// <summary>The object's properties: how System.Text.Json reads (when <see cref="MadeByConverter"/> does not pick it) and writes it.</summary>
    private void EmitProperties(StringBuilder text, ContractType type, int n)
    {
        string t = type.TypeName;
        EmitPropertyInfos(text, type, $"P{n}", t, i => $"static obj => (({t})obj).{type.Members[i].Name}", i =>
        {
            ContractMember m = type.Members[i];

            // A member the constructor or the object initializer sets is a parameter to System.Text.Json, never set
            // through this; a setter that says so makes it one JSON may carry (and require), as its own generator does.
            // An init-only one is read through InitOnlyConverter, which never sets it through this either.
            return m.Assign is "ctor" or "required" or "init" ? "static (obj, value) => throw new global::System.InvalidOperationException(\"Set when the object is made.\")"
                : m.Assign != "set" ? "null"
                : type.IsValueType ? $"static (obj, value) => global::System.Runtime.CompilerServices.Unsafe.Unbox<{t}>(obj).{m.Name} = value"
                : $"static (obj, value) => (({t})obj).{m.Name} = value";
        }, ofObject: true);
    }

    /// <summary>
    /// The same properties on the struct InitOnlyConverter reads into: each setter records that the JSON had the member;
    /// a member with no public setter has none here either, so the JSON's value of it is skipped as it is for the object.
    /// Required members are the converter's to check, so its message names the object's type.
    /// </summary>
    private void EmitMemberProperties(StringBuilder text, ContractType type, int n)
    {
        string members = SourceEmitter.MembersType(n);
        EmitPropertyInfos(text, type, $"M{n}", members, i => $"static obj => (({members})obj).m{i}", i => type.Members[i].Assign == "none" ? "null"
            : $"static (obj, value) => {{ ref var s = ref global::System.Runtime.CompilerServices.Unsafe.Unbox<{members}>(obj); s.m{i} = value; s.h{i} = true; }}", ofObject: false);
    }

    private void EmitPropertyInfos(StringBuilder text, ContractType type, string method, string declaringType, Func<int, string> getter, Func<int, string> setter, bool ofObject)
    {
        text.AppendLine();
        text.AppendLine($"        private static {Metadata}.JsonPropertyInfo[] {method}({Options} o)");
        text.AppendLine("        {");
        text.AppendLine($"            var properties = new {Metadata}.JsonPropertyInfo[{type.Members.Count}];");
        for (int i = 0; i < type.Members.Count; i++)
        {
            ContractMember m = type.Members[i];
            string p = types[m.Type].TypeName;
            string converter = m.JsonConverter.Length > 0 ? $"({"global::System.Text.Json.Serialization.JsonConverter"}<{p}>)Expand<{p}>(new {m.JsonConverter}(), o)" : "null";
            string ignore = m.JsonIgnore.Length > 0 ? "global::System.Text.Json.Serialization.JsonIgnoreCondition." + m.JsonIgnore : "null";
            string jsonName = m.JsonName.Length > 0 ? Symbols.Literal(m.JsonName) : "null";
            text.AppendLine($"            properties[{i}] = {Services}.CreatePropertyInfo<{p}>(o, new {Metadata}.JsonPropertyInfoValues<{p}>");
            text.AppendLine("            {");
            text.AppendLine("                IsProperty = true,");
            text.AppendLine("                IsPublic = true,");
            text.AppendLine($"                DeclaringType = typeof({declaringType}),");
            text.AppendLine($"                Converter = {converter},");
            text.AppendLine($"                Getter = {getter(i)},");
            text.AppendLine($"                Setter = {setter(i)},");
            text.AppendLine($"                IgnoreCondition = {ignore},");
            text.AppendLine($"                PropertyName = {Symbols.Literal(m.Name)},");
            text.AppendLine($"                JsonPropertyName = {jsonName},");
            text.AppendLine("            });");
            if (ofObject && m.Required)
            {
                text.AppendLine($"            properties[{i}].IsRequired = true;");
            }

            if (ofObject && m.Order != 0)
            {
                text.AppendLine($"            properties[{i}].Order = {m.Order};");
            }
        }

        text.AppendLine("            return properties;");
        text.AppendLine("        }");
    }
}
