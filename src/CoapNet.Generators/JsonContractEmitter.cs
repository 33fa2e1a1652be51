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
        text.AppendLine("    }");
    }

    private static string Name(string key) => key.StartsWith("global::", StringComparison.Ordinal) ? key.Substring("global::".Length) : key;

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
            default:
                EmitObject(text, type, n);
                break;
        }

        text.AppendLine("        }");
        if (type.Kind == ContractKind.Object)
        {
            EmitProperties(text, type, n);
        }
    }

    /// <summary>
    /// An object's metadata: made through the constructor the contract table chose, its required members set in the
    /// object initializer (C# demands them there), each of those a constructor parameter to System.Text.Json, which
    /// matches a parameter to the property of its name; init-only members are set through their setters' accessors.
    /// </summary>
    private void EmitObject(StringBuilder text, ContractType type, int n)
    {
        string t = type.TypeName;
        List<ContractMember> initialized = type.Members.Where(m => m.Assign == "required").ToList();
        ContractMember[] byCtor = new ContractMember[type.CtorParameters];
        foreach (ContractMember member in type.Members.Where(m => m.Assign == "ctor"))
        {
            byCtor[member.CtorIndex] = member;
        }

        List<ContractMember> parameters = [.. byCtor, .. initialized];
        text.AppendLine($"            var values = new {Metadata}.JsonObjectInfoValues<{t}>");
        text.AppendLine("            {");
        if (type.CanRead && parameters.Count == 0)
        {
            text.AppendLine($"                ObjectCreator = static () => new {t}(),");
        }
        else if (type.CanRead)
        {
            string arguments = string.Join(", ", byCtor.Select((m, i) => $"({types[m.Type].TypeName})args[{i}]"));
            string initializer = initialized.Count == 0 ? string.Empty
                : " { " + string.Join(", ", initialized.Select((m, i) => $"{m.Name} = ({types[m.Type].TypeName})args[{type.CtorParameters + i}]")) + " }";
            text.AppendLine($"                ObjectWithParameterizedConstructorCreator = static args => new {t}({arguments}){initializer},");
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

    private void EmitProperties(StringBuilder text, ContractType type, int n)
    {
        string t = type.TypeName;
        text.AppendLine();
        text.AppendLine($"        private static {Metadata}.JsonPropertyInfo[] P{n}({Options} o)");
        text.AppendLine("        {");
        text.AppendLine($"            var properties = new {Metadata}.JsonPropertyInfo[{type.Members.Count}];");
        for (int i = 0; i < type.Members.Count; i++)
        {
            ContractMember m = type.Members[i];
            string p = types[m.Type].TypeName;
            // A member the constructor or the object initializer sets is a parameter to System.Text.Json, never set
            // through this; a setter that says so makes it one JSON may carry (and require), as its own generator does.
            string setter = m.Assign is "ctor" or "required" ? "static (obj, value) => throw new global::System.InvalidOperationException(\"Set when the object is made.\")"
                : m.Assign == "init" && type.IsValueType ? $"static (obj, value) => {SourceEmitter.InitSetter(n, i)}(ref global::System.Runtime.CompilerServices.Unsafe.Unbox<{t}>(obj), value)"
                : m.Assign == "init" ? $"static (obj, value) => {SourceEmitter.InitSetter(n, i)}(({t})obj, value)"
                : m.Assign != "set" ? "null"
                : type.IsValueType ? $"static (obj, value) => global::System.Runtime.CompilerServices.Unsafe.Unbox<{t}>(obj).{m.Name} = value"
                : $"static (obj, value) => (({t})obj).{m.Name} = value";
            string converter = m.JsonConverter.Length > 0 ? $"({"global::System.Text.Json.Serialization.JsonConverter"}<{p}>)Expand<{p}>(new {m.JsonConverter}(), o)" : "null";
            string ignore = m.JsonIgnore.Length > 0 ? "global::System.Text.Json.Serialization.JsonIgnoreCondition." + m.JsonIgnore : "null";
            string jsonName = m.JsonName.Length > 0 ? Symbols.Literal(m.JsonName) : "null";
            text.AppendLine($"            properties[{i}] = {Services}.CreatePropertyInfo<{p}>(o, new {Metadata}.JsonPropertyInfoValues<{p}>");
            text.AppendLine("            {");
            text.AppendLine("                IsProperty = true,");
            text.AppendLine("                IsPublic = true,");
            text.AppendLine($"                DeclaringType = typeof({t}),");
            text.AppendLine($"                Converter = {converter},");
            text.AppendLine($"                Getter = static obj => (({t})obj).{m.Name},");
            text.AppendLine($"                Setter = {setter},");
            text.AppendLine($"                IgnoreCondition = {ignore},");
            text.AppendLine($"                PropertyName = {Symbols.Literal(m.Name)},");
            text.AppendLine($"                JsonPropertyName = {jsonName},");
            text.AppendLine("            });");
            if (m.Required)
            {
                text.AppendLine($"            properties[{i}].IsRequired = true;");
            }

            if (m.Order != 0)
            {
                text.AppendLine($"            properties[{i}].Order = {m.Order};");
            }
        }

        text.AppendLine("            return properties;");
        text.AppendLine("        }");
    }
}
