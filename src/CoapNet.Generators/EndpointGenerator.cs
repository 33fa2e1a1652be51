using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;

namespace CoapNet.Generators;

/// <summary>
/// Writes the binding code of every <c>MapGet(template, Delegate)</c> call (and its siblings) in the compilation, with a
/// C# interceptor per call that maps it (as ASP.NET Core's request delegate generator does), and the CBOR contracts of
/// the types the handlers read and return. One file, so the interceptors, invokers and contracts can all be file-local.
/// </summary>
[Generator(LanguageNames.CSharp)]
public sealed class EndpointGenerator : IIncrementalGenerator
{
    private const string JsonSerializableAttribute = "System.Text.Json.Serialization.JsonSerializableAttribute";

    /// <summary>
    /// Registers the pipeline: the calls, analyzed one by one, then emitted together, with what the whole compilation
    /// says about JSON: whether the build is trimmed or Native AOT (reflection off) and which types a JsonSerializerContext
    /// of the application's declares.
    /// </summary>
    /// <param name="context">The generator's context.</param>
    public void Initialize(IncrementalGeneratorInitializationContext context)
    {
        IncrementalValuesProvider<CallModel> calls = context.SyntaxProvider
            .CreateSyntaxProvider(static (node, _) => EndpointAnalyzer.IsCandidate(node), EndpointAnalyzer.Analyze)
            .Where(static call => call is not null)!;
        IncrementalValueProvider<bool> trimmed = context.AnalyzerConfigOptionsProvider.Select(static (options, _) => IsTrimmed(options.GlobalOptions));
        IncrementalValuesProvider<string> serializable = context.SyntaxProvider
            .ForAttributeWithMetadataName(JsonSerializableAttribute, static (node, _) => node is ClassDeclarationSyntax, static (attributed, _) => SerializableTypes(attributed))
            .SelectMany(static (types, _) => types.Items);
        context.RegisterSourceOutput(calls.Collect().Combine(trimmed).Combine(serializable.Collect()), static (output, input) => Emit(output, input.Left.Left, input.Left.Right, input.Right));
    }

    /// <summary>
    /// True when the build turns reflection off for System.Text.Json: trimming or Native AOT, whose analyzers the SDK
    /// enables and makes visible to the compiler (Microsoft.NET.ILLink.Analyzers.props), as it does for PublishAot itself.
    /// </summary>
    private static bool IsTrimmed(AnalyzerConfigOptions options)
    {
        foreach (string property in (string[])["EnableTrimAnalyzer", "EnableAotAnalyzer", "PublishTrimmed", "PublishAot"])
        {
            if (options.TryGetValue("build_property." + property, out string? value) && string.Equals(value, "true", System.StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The types a JsonSerializerContext's [JsonSerializable] attributes declare, as the contract table keys them.</summary>
    private static EquatableArray<string> SerializableTypes(GeneratorAttributeSyntaxContext attributed)
    {
        List<string> keys = [];
        foreach (AttributeData attribute in attributed.Attributes)
        {
            if (attribute.ConstructorArguments.FirstOrDefault().Value is ITypeSymbol type)
            {
                keys.Add(type.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(Symbols.Plain));
            }
        }

        return new EquatableArray<string>([.. keys]);
    }

    private static void Emit(SourceProductionContext context, ImmutableArray<CallModel> calls, bool trimmed, ImmutableArray<string> serializable)
    {
        foreach (CallModel call in calls)
        {
            foreach (DiagnosticInfo diagnostic in call.Diagnostics)
            {
                context.ReportDiagnostic(Diagnostic.Create(Descriptors.ById(diagnostic.Id), diagnostic.Location.ToLocation(), diagnostic.Arguments.Cast<object>().ToArray()));
            }
        }

        EndpointModel[] endpoints = calls.Select(c => c.Endpoint).Where(e => e is not null).Cast<EndpointModel>().ToArray();
        if (endpoints.Length == 0)
        {
            return;
        }

        Dictionary<string, ContractType> types = new();
        foreach (CallModel call in calls)
        {
            foreach (ContractType type in call.ContractTypes)
            {
                types[type.Key] = type;
            }
        }

        HashSet<string> roots = new(calls.SelectMany(c => c.Roots));
        if (trimmed)
        {
            ReportMissingJson(context, calls, types, new HashSet<string>(serializable));
        }

        context.AddSource("CoapNet.Endpoints.g.cs", new SourceEmitter(types, roots).Emit(endpoints));
    }

    /// <summary>
    /// COAPGEN006 for each payload or result type whose JSON metadata neither the generator writes nor a context of the
    /// application's declares: with reflection off, JSON for it would be refused, and the build says so instead of a
    /// silent 4.06 at run time.
    /// </summary>
    private static void ReportMissingJson(SourceProductionContext context, ImmutableArray<CallModel> calls, Dictionary<string, ContractType> types, HashSet<string> serializable)
    {
        JsonContractEmitter json = new(types, static _ => 0);
        HashSet<(string, LocationInfo)> reported = [];
        foreach (CallModel call in calls)
        {
            foreach (JsonRoot root in call.JsonRoots)
            {
                string? why = root.Described ? json.Blocker(root.Key) : root.Reason;
                if (why is not null && !serializable.Contains(root.Key) && reported.Add((root.Key, root.Where)))
                {
                    context.ReportDiagnostic(Diagnostic.Create(Descriptors.NoJsonMetadata, root.Where.ToLocation(), root.Display, why));
                }
            }
        }
    }
}

/// <summary>The text of the generated file.</summary>
internal sealed class SourceEmitter(Dictionary<string, ContractType> types, HashSet<string> roots)
{
    private const string Binder = "global::CoapNet.Endpoints.CoapBinder";

    /// <summary>How each scalar is written ({0}: the value) and read, by CBOR major type (RFC 8949 section 3.1).</summary>
    private static readonly Dictionary<string, (string Write, string Read)> PrimitiveCode = new()
    {
        ["bool"] = ("w.WriteBoolean({0});", "r.ReadBoolean()"),
        ["int8"] = ("w.WriteInt32({0});", "checked((sbyte)r.ReadInt32())"),
        ["uint8"] = ("w.WriteUInt32({0});", "checked((byte)r.ReadUInt32())"),
        ["int16"] = ("w.WriteInt32({0});", "checked((short)r.ReadInt32())"),
        ["uint16"] = ("w.WriteUInt32({0});", "checked((ushort)r.ReadUInt32())"),
        ["int32"] = ("w.WriteInt32({0});", "r.ReadInt32()"),
        ["uint32"] = ("w.WriteUInt32({0});", "r.ReadUInt32()"),
        ["int64"] = ("w.WriteInt64({0});", "r.ReadInt64()"),
        ["uint64"] = ("w.WriteUInt64({0});", "r.ReadUInt64()"),
        ["float"] = ("w.WriteSingle({0});", "(float)ReadDouble(r)"),
        ["double"] = ("w.WriteDouble({0});", "ReadDouble(r)"),
        ["decimal"] = ("w.WriteDecimal({0});", "ReadDecimal(r)"),
        ["string"] = ("if ({0} is null) w.WriteNull(); else w.WriteTextString({0});", "ReadString(r)"),
        ["bytes"] = ("if ({0} is null) w.WriteNull(); else w.WriteByteString({0});", "ReadBytes(r)"),
        ["guid"] = ("w.WriteTextString({0}.ToString(\"D\"));", "global::System.Guid.Parse(r.ReadTextString())"),
        ["datetimeoffset"] = ("w.WriteDateTimeOffset({0});", "r.ReadDateTimeOffset()"),
        ["datetime"] = ("w.WriteDateTimeOffset(new global::System.DateTimeOffset({0}.ToUniversalTime(), global::System.TimeSpan.Zero));", "r.ReadDateTimeOffset().UtcDateTime"),
        ["timespan"] = ("w.WriteTextString({0}.ToString(\"c\", global::System.Globalization.CultureInfo.InvariantCulture));", "global::System.TimeSpan.ParseExact(r.ReadTextString(), \"c\", global::System.Globalization.CultureInfo.InvariantCulture)"),
    };
    private readonly StringBuilder _text = new();
    private readonly Dictionary<string, int> _ids = new();
    private readonly Dictionary<string, bool> _readable = new();

    public string Emit(EndpointModel[] endpoints)
    {
        _text.AppendLine("// <auto-generated/> by CoapNet.Generators: the binding code of the handlers mapped with MapX(template, Delegate).");
        _text.AppendLine("#nullable enable");
        _text.AppendLine("#pragma warning disable CS0219, CS9113, CS8600, CS8601, CS8602, CS8603, CS8604, CS8619, CS8620, CS8625, CS1591");
        _text.AppendLine();
        _text.AppendLine("namespace System.Runtime.CompilerServices");
        _text.AppendLine("{");
        _text.AppendLine("    [global::System.AttributeUsage(global::System.AttributeTargets.Method, AllowMultiple = true)]");
        _text.AppendLine("    file sealed class InterceptsLocationAttribute(int version, string data) : global::System.Attribute");
        _text.AppendLine("    {");
        _text.AppendLine("    }");
        _text.AppendLine("}");
        _text.AppendLine();
        _text.AppendLine("namespace CoapNet.Generated");
        _text.AppendLine("{");
        EmitInterceptors(endpoints);
        for (int i = 0; i < endpoints.Length; i++)
        {
            EmitInvoker(endpoints[i], i);
        }

        EmitContracts();
        _text.AppendLine("}");
        return _text.ToString();
    }

    private void EmitInterceptors(EndpointModel[] endpoints)
    {
        _text.AppendLine("    file static class CoapEndpointInterceptors");
        _text.AppendLine("    {");
        for (int i = 0; i < endpoints.Length; i++)
        {
            EndpointModel e = endpoints[i];
            string routes = e.ReceiverIsHost ? "global::CoapNet.Hosting.CoapHostEndpointRouteBuilderExtensions.GetCoapRoutes(routes)" : "routes";
            _text.AppendLine($"        // {e.MapMethod} at {e.DisplayLocation}");
            _text.AppendLine($"        [global::System.Runtime.CompilerServices.InterceptsLocation({e.Version}, {Symbols.Literal(e.Data)})]");
            _text.AppendLine($"        public static global::CoapNet.Endpoints.CoapEndpointBuilder {e.MapMethod}{i}(this {e.ReceiverTypeName} routes, string template, global::System.Delegate handler)");
            _text.AppendLine("        {");
            _text.AppendLine("            global::System.ArgumentNullException.ThrowIfNull(routes);");
            _text.AppendLine("            global::System.ArgumentNullException.ThrowIfNull(handler);");
            _text.AppendLine("            CoapContracts.EnsureRegistered();");
            _text.AppendLine($"            return {routes}.MapEndpoint(global::CoapNet.Messages.CoapCode.{e.Method}, template, new CoapEndpointInvoker{i}(handler));");
            _text.AppendLine("        }");
            _text.AppendLine();
        }

        _text.AppendLine("    }");
        _text.AppendLine();
    }

    private void EmitInvoker(EndpointModel e, int index)
    {
        _text.AppendLine($"    file sealed class CoapEndpointInvoker{index} : global::CoapNet.Endpoints.CoapEndpointInvoker");
        _text.AppendLine("    {");
        _text.AppendLine("        private static readonly global::CoapNet.Endpoints.CoapParameterInfo[] s_parameters =");
        _text.AppendLine("        [");
        foreach (ParameterModel p in e.Parameters)
        {
            _text.AppendLine($"            new({Symbols.Literal(p.Name)}, global::CoapNet.Endpoints.CoapParameterSource.{p.Source}, typeof({p.TypeOfName}), {(p.IsOptional ? "true" : "false")}),");
        }

        _text.AppendLine("        ];");
        _text.AppendLine();
        string resultType = e.Result == ResultKind.Object ? $"typeof({e.ResultTypeOfName})" : "null";
        _text.AppendLine($"        public CoapEndpointInvoker{index}(global::System.Delegate handler)");
        _text.AppendLine($"            : base(handler, s_parameters, isAsync: {(e.IsAsync ? "true" : "false")}, resultType: {resultType})");
        _text.AppendLine("        {");
        _text.AppendLine("        }");
        _text.AppendLine();
        _text.AppendLine($"        protected override {(e.IsAsync ? "async " : string.Empty)}global::System.Threading.Tasks.ValueTask<global::CoapNet.Messages.CoapResponse> InvokeAsync(global::CoapNet.Endpoints.CoapEndpointContext context)");
        _text.AppendLine("        {");
        _text.AppendLine($"            var handler = ({e.DelegateTypeName})Handler;");
        string fail = e.IsAsync ? "return context.BindingFailure!;" : "return new(context.BindingFailure!);";
        for (int i = 0; i < e.Parameters.Count; i++)
        {
            EmitBinding(e.Parameters[i], i, fail);
        }

        string call = $"handler({string.Join(", ", Enumerable.Range(0, e.Parameters.Count).Select(i => "p" + i))})";
        if (e.IsAsync)
        {
            call = $"await {call}.ConfigureAwait(context.ContinueOnCapturedContext)";
        }

        string response = e.Result switch
        {
            ResultKind.Empty => $"{Binder}.WriteEmpty(context)",
            ResultKind.Response => $"{Binder}.WriteResponse(context, {call})",
            ResultKind.Result => $"{Binder}.WriteResult(context, {call})",
            ResultKind.Text => $"{Binder}.WriteText(context, {call})",
            ResultKind.Bytes or ResultKind.Memory => $"{Binder}.WriteBytes(context, {call})",
            _ => $"{Binder}.WriteObject<{e.ResultTypeOfName}>(context, {call})",
        };
        if (e.Result == ResultKind.Empty)
        {
            _text.AppendLine($"            {call};");
        }

        _text.AppendLine(e.IsAsync ? $"            return {response};" : $"            return new({response});");
        _text.AppendLine("        }");
        _text.AppendLine("    }");
        _text.AppendLine();
    }

    private void EmitBinding(ParameterModel p, int i, string fail)
    {
        string v = "p" + i;
        string line = p.Kind switch
        {
            BindingKind.Request => $"var {v} = context.Request;",
            BindingKind.Peer => $"var {v} = context.Request.Peer;",
            BindingKind.Identity => $"var {v} = context.Identity;",
            BindingKind.CancellationToken => $"var {v} = context.CancellationToken;",
            BindingKind.Context => $"var {v} = context;",
            BindingKind.Parsable => $"if (!{Binder}.TryBindParsable<{p.ValueTypeName}>(context, {i}, out var {v})) {fail}",
            BindingKind.OptionalParsable => $"if (!{Binder}.TryBindOptionalParsable<{p.ValueTypeName}>(context, {i}, out var {v})) {fail}",
            BindingKind.Enum => $"if (!{Binder}.TryBindEnum<{p.ValueTypeName}>(context, {i}, out var {v})) {fail}",
            BindingKind.OptionalEnum => $"if (!{Binder}.TryBindOptionalEnum<{p.ValueTypeName}>(context, {i}, out var {v})) {fail}",
            BindingKind.String => $"if (!{Binder}.TryBindString(context, {i}, out var {v})) {fail}",
            BindingKind.Body => $"if (!{Binder}.TryBindBody<{p.TypeOfName}>(context, {i}, out var {v})) {fail}",
            BindingKind.BodyText => $"if (!{Binder}.TryBindText(context, {i}, out var {v})) {fail}",
            BindingKind.BodyBytes => $"var {v} = context.Request.Payload.ToArray();",
            BindingKind.BodyMemory => $"var {v} = context.Request.Payload;",
            BindingKind.BodyStream => $"using var {v} = {Binder}.BodyStream(context);",
            BindingKind.Service => $"var {v} = {Binder}.GetService<{p.TypeOfName}>(context, {i});",
            _ => $"{p.TypeOfName} {v};\n            if ({Binder}.IsService(context, {i})) {v} = {Binder}.GetService<{p.TypeOfName}>(context, {i});\n            else if (!{Binder}.TryBindBody<{p.TypeOfName}>(context, {i}, out {v})) {fail}",
        };
        _text.AppendLine("            " + line);
    }

    private int Id(string key)
    {
        if (!_ids.TryGetValue(key, out int id))
        {
            id = _ids.Count;
            _ids[key] = id;
        }

        return id;
    }

    /// <summary>The types to register: the roots and what they reach, in a fixed order (scalars too, which JSON needs metadata for).</summary>
    private List<ContractType> Reachable()
    {
        List<ContractType> order = [];
        HashSet<string> seen = [];
        void Visit(string key)
        {
            if (!seen.Add(key) || !types.TryGetValue(key, out ContractType? type))
            {
                return;
            }

            order.Add(type);

            if (type.Element.Length > 0)
            {
                Visit(type.Element);
            }

            foreach (ContractMember member in type.Members)
            {
                Visit(member.Type);
            }
        }

        foreach (string root in roots.OrderBy(r => r, System.StringComparer.Ordinal))
        {
            Visit(root);
        }

        return order;
    }

    /// <summary>True when the type and everything in it can be read back.</summary>
    private bool Readable(string key)
    {
        if (_readable.TryGetValue(key, out bool known))
        {
            return known;
        }

        _readable[key] = true; // a cycle is readable as far as this type goes
        ContractType type = types[key];
        bool readable = type.CanRead && (type.Element.Length == 0 || Readable(type.Element)) && type.Members.All(m => m.Assign == "none" || Readable(m.Type));
        _readable[key] = readable;
        return readable;
    }

    private void EmitContracts()
    {
        List<ContractType> registered = Reachable();
        JsonContractEmitter json = new(types, Id);
        _text.AppendLine("#nullable disable");
        _text.AppendLine("    file static class CoapContracts");
        _text.AppendLine("    {");
        _text.AppendLine("        private static int s_registered;");
        _text.AppendLine();
        _text.AppendLine("        /// <summary>Registers the CBOR contracts and the JSON metadata once, before the first handler is mapped; a CBOR contract the application registered first is kept.</summary>");
        _text.AppendLine("        public static void EnsureRegistered()");
        _text.AppendLine("        {");
        _text.AppendLine("            if (global::System.Threading.Interlocked.Exchange(ref s_registered, 1) != 0) return;");
        // Every type reached, not only the roots: a handler may return CoapResults.Content(lamp.Owner) as well as the lamp.
        // CBOR writes scalars and enums inline; JSON needs metadata for them too.
        _text.AppendLine("            CoapJsonContracts.Register();");
        foreach (ContractType type in registered.Where(t => t.Kind is not (ContractKind.Primitive or ContractKind.Enum)))
        {
            int id = Id(type.Key);
            string read = Readable(type.Key) ? $"R{id}" : "null";
            _text.AppendLine($"            if (!global::CoapNet.Endpoints.CoapCbor.IsRegistered(typeof({type.TypeName}))) global::CoapNet.Endpoints.CoapCbor.Register<{type.TypeName}>(W{id}, {read});");
        }

        _text.AppendLine("        }");
        foreach (ContractType type in registered.Where(t => t.Kind is not (ContractKind.Primitive or ContractKind.Enum)))
        {
            if (type.Kind == ContractKind.Object && type.CanRead)
            {
                EmitMake(type);
            }

            EmitWriter(type);
            if (Readable(type.Key))
            {
                EmitReader(type);
            }
        }

        _text.AppendLine();
        _text.AppendLine("        private static double ReadDouble(global::System.Formats.Cbor.CborReader r) => r.PeekState() is global::System.Formats.Cbor.CborReaderState.UnsignedInteger or global::System.Formats.Cbor.CborReaderState.NegativeInteger ? r.ReadInt64() : r.ReadDouble();");
        _text.AppendLine("        private static decimal ReadDecimal(global::System.Formats.Cbor.CborReader r) => r.PeekState() switch { global::System.Formats.Cbor.CborReaderState.UnsignedInteger or global::System.Formats.Cbor.CborReaderState.NegativeInteger => r.ReadInt64(), global::System.Formats.Cbor.CborReaderState.Tag => r.ReadDecimal(), _ => (decimal)r.ReadDouble() };");
        _text.AppendLine("        private static bool IsNull(global::System.Formats.Cbor.CborReader r) { if (r.PeekState() != global::System.Formats.Cbor.CborReaderState.Null) return false; r.ReadNull(); return true; }");
        _text.AppendLine("        private static string ReadString(global::System.Formats.Cbor.CborReader r) => IsNull(r) ? null : r.ReadTextString();");
        _text.AppendLine("        private static byte[] ReadBytes(global::System.Formats.Cbor.CborReader r) => IsNull(r) ? null : r.ReadByteString();");
        _text.AppendLine("        private static int Capacity(int? count) => count is int n && n < 64 ? n : 64;");
        _text.AppendLine("        private static global::System.InvalidOperationException Missing(string type, string key) => new(\"The CBOR map of \" + type + \" has no '\" + key + \"', which it requires.\");");
        _text.AppendLine("    }");
        json.Emit(_text, registered);
        _text.AppendLine("#nullable enable");
    }

    /// <summary>The struct an object's members are read into, each with whether the payload had it (CBOR and JSON share it).</summary>
    public static string MembersType(int typeId) => $"CoapContracts.Members{typeId}";

    /// <summary>The method that makes an object from its members as read (CBOR and JSON share it).</summary>
    public static string Make(int typeId) => $"CoapContracts.Make{typeId}";

    /// <summary>
    /// The members of an object as read (m: the value, h: whether the payload had it), and the one way the object is made
    /// from them: through its constructor, its required members and its init-only ones in the object initializer (C#
    /// allows init-only ones nowhere else), its settable ones after. An init-only member the payload lacks keeps its
    /// initializer's value: the object initializer gives it what a freshly made instance holds (the same constructor,
    /// arguments and required members, so an initializer that reads a constructor parameter gives the same value). That
    /// instance is made only when the payload has some init-only members and lacks others; with none of them it is the
    /// result itself, with all of them it is not needed. So the constructor runs twice in that mixed case, and an absent
    /// init-only member is set to what its getter returned on the fresh instance (its initializer's value for an
    /// auto-property).
    /// </summary>
    private void EmitMake(ContractType type)
    {
        int id = Id(type.Key);
        string t = type.TypeName;
        _text.AppendLine();
        _text.AppendLine($"        public struct Members{id}");
        _text.AppendLine("        {");
        for (int i = 0; i < type.Members.Count; i++)
        {
            _text.AppendLine($"            public {types[type.Members[i].Type].TypeName} m{i}; public bool h{i};");
        }

        _text.AppendLine("        }");
        _text.AppendLine();
        _text.AppendLine($"        public static {t} Make{id}(in Members{id} s)");
        _text.AppendLine("        {");
        string[] arguments = new string[type.CtorParameters];
        List<string> required = [];
        List<int> inits = [];
        for (int i = 0; i < type.Members.Count; i++)
        {
            ContractMember member = type.Members[i];
            switch (member.Assign)
            {
                case "ctor":
                    arguments[member.CtorIndex] = $"s.m{i}";
                    break;
                case "required":
                    required.Add($"{member.Name} = s.m{i}");
                    break;
                case "init":
                    inits.Add(i);
                    break;
            }
        }

        string made = $"new {t}({string.Join(", ", arguments)})";
        if (inits.Count == 0)
        {
            _text.AppendLine($"            var value = {made}{Initializer(required)};");
        }
        else
        {
            string all = string.Join(" && ", inits.Select(i => $"s.h{i}"));
            string none = string.Join(" && ", inits.Select(i => $"!s.h{i}"));
            IEnumerable<string> kept = inits.Select(i => $"{type.Members[i].Name} = s.h{i} ? s.m{i} : fresh.{type.Members[i].Name}");
            _text.AppendLine($"            var fresh = {all} ? default({t}) : {made}{Initializer(required)};");
            _text.AppendLine($"            var value = {none} ? fresh : {made}{Initializer([.. required, .. kept])};");
        }

        for (int i = 0; i < type.Members.Count; i++)
        {
            if (type.Members[i].Assign == "set")
            {
                _text.AppendLine($"            if (s.h{i}) value.{type.Members[i].Name} = s.m{i};");
            }
        }

        _text.AppendLine("            return value;");
        _text.AppendLine("        }");

        static string Initializer(List<string> assignments) => assignments.Count == 0 ? string.Empty : " { " + string.Join(", ", assignments) + " }";
    }

    private string WriteStatement(string typeKey, string value)
    {
        ContractType type = types[typeKey];
        if (type.Kind == ContractKind.Enum)
        {
            return type.Primitive == "uint64" ? $"w.WriteUInt64((ulong){value});" : $"w.WriteInt64((long){value});";
        }

        if (type.Kind != ContractKind.Primitive)
        {
            return $"W{Id(typeKey)}(w, {value});";
        }

        return string.Format(System.Globalization.CultureInfo.InvariantCulture, PrimitiveCode[type.Primitive].Write, value);
    }

    private string ReadExpression(string typeKey)
    {
        ContractType type = types[typeKey];
        if (type.Kind == ContractKind.Enum)
        {
            return type.Primitive == "uint64" ? $"({type.TypeName})r.ReadUInt64()" : $"({type.TypeName})r.ReadInt64()";
        }

        if (type.Kind != ContractKind.Primitive)
        {
            return $"R{Id(typeKey)}(r)";
        }

        return PrimitiveCode[type.Primitive].Read;
    }

    private void EmitWriter(ContractType type)
    {
        int id = Id(type.Key);
        _text.AppendLine();
        _text.AppendLine($"        private static void W{id}(global::System.Formats.Cbor.CborWriter w, {type.TypeName} v)");
        _text.AppendLine("        {");
        switch (type.Kind)
        {
            case ContractKind.Nullable:
                _text.AppendLine("            if (v is null) { w.WriteNull(); return; }");
                _text.AppendLine($"            {WriteStatement(type.Element, "v.Value")}");
                break;
            case ContractKind.Array or ContractKind.List:
                _text.AppendLine("            if (v is null) { w.WriteNull(); return; }");
                _text.AppendLine($"            w.WriteStartArray(v.{(type.Kind == ContractKind.Array ? "Length" : "Count")});");
                _text.AppendLine($"            foreach (var item in v) {{ {WriteStatement(type.Element, "item")} }}");
                _text.AppendLine("            w.WriteEndArray();");
                break;
            case ContractKind.Enumerable:
                _text.AppendLine("            if (v is null) { w.WriteNull(); return; }");
                _text.AppendLine("            w.WriteStartArray(null);");
                _text.AppendLine($"            foreach (var item in v) {{ {WriteStatement(type.Element, "item")} }}");
                _text.AppendLine("            w.WriteEndArray();");
                break;
            case ContractKind.Dictionary:
                _text.AppendLine("            if (v is null) { w.WriteNull(); return; }");
                _text.AppendLine("            w.WriteStartMap(v.Count);");
                _text.AppendLine($"            foreach (var item in v) {{ w.WriteTextString(item.Key); {WriteStatement(type.Element, "item.Value")} }}");
                _text.AppendLine("            w.WriteEndMap();");
                break;
            default:
                _text.AppendLine("            if ((object)v is null) { w.WriteNull(); return; }");
                _text.AppendLine($"            w.WriteStartMap({type.Members.Count});");
                foreach (ContractMember member in type.Members)
                {
                    _text.AppendLine($"            w.WriteTextString({Symbols.Literal(member.Key)}); {WriteStatement(member.Type, "v." + member.Name)}");
                }

                _text.AppendLine("            w.WriteEndMap();");
                break;
        }

        _text.AppendLine("        }");
    }

    private void EmitReader(ContractType type)
    {
        int id = Id(type.Key);
        _text.AppendLine();
        _text.AppendLine($"        private static {type.TypeName} R{id}(global::System.Formats.Cbor.CborReader r)");
        _text.AppendLine("        {");
        switch (type.Kind)
        {
            case ContractKind.Nullable:
                _text.AppendLine("            if (IsNull(r)) return null;");
                _text.AppendLine($"            return {ReadExpression(type.Element)};");
                break;
            case ContractKind.Array or ContractKind.List or ContractKind.Enumerable:
                string element = types[type.Element].TypeName;
                _text.AppendLine("            if (IsNull(r)) return null;");
                _text.AppendLine($"            var list = new global::System.Collections.Generic.List<{element}>(Capacity(r.ReadStartArray()));");
                _text.AppendLine($"            while (r.PeekState() != global::System.Formats.Cbor.CborReaderState.EndArray) list.Add({ReadExpression(type.Element)});");
                _text.AppendLine("            r.ReadEndArray();");
                _text.AppendLine(type.Kind == ContractKind.Array ? "            return list.ToArray();" : "            return list;");
                break;
            case ContractKind.Dictionary:
                string value = types[type.Element].TypeName;
                _text.AppendLine("            if (IsNull(r)) return null;");
                _text.AppendLine($"            var map = new global::System.Collections.Generic.Dictionary<string, {value}>(Capacity(r.ReadStartMap()));");
                _text.AppendLine($"            while (r.PeekState() != global::System.Formats.Cbor.CborReaderState.EndMap) {{ string key = r.ReadTextString(); map[key] = {ReadExpression(type.Element)}; }}");
                _text.AppendLine("            r.ReadEndMap();");
                _text.AppendLine("            return map;");
                break;
            default:
                EmitObjectReader(type);
                break;
        }

        _text.AppendLine("        }");
    }

    private void EmitObjectReader(ContractType type)
    {
        int id = Id(type.Key);
        _text.AppendLine("            if (r.PeekState() == global::System.Formats.Cbor.CborReaderState.Null) { r.ReadNull(); return default; }");
        _text.AppendLine($"            var s = new Members{id}();");
        _text.AppendLine("            r.ReadStartMap();");
        _text.AppendLine("            while (r.PeekState() != global::System.Formats.Cbor.CborReaderState.EndMap)");
        _text.AppendLine("            {");
        _text.AppendLine("                switch (r.ReadTextString())");
        _text.AppendLine("                {");
        for (int i = 0; i < type.Members.Count; i++)
        {
            if (type.Members[i].Assign != "none")
            {
                _text.AppendLine($"                    case {Symbols.Literal(type.Members[i].Key)}: s.m{i} = {ReadExpression(type.Members[i].Type)}; s.h{i} = true; break;");
            }
        }

        _text.AppendLine("                    default: r.SkipValue(); break;");
        _text.AppendLine("                }");
        _text.AppendLine("            }");
        _text.AppendLine();
        _text.AppendLine("            r.ReadEndMap();");

        // C#'s required (or [JsonRequired]) is the payload's: a map without the member does not bind, in CBOR as in JSON.
        for (int i = 0; i < type.Members.Count; i++)
        {
            if (type.Members[i].Required && type.Members[i].Assign != "none")
            {
                _text.AppendLine($"            if (!s.h{i}) throw Missing({Symbols.Literal(JsonContractEmitter.Name(type.Key))}, {Symbols.Literal(type.Members[i].Key)});");
            }
        }

        _text.AppendLine($"            return Make{id}(in s);");
    }
}
