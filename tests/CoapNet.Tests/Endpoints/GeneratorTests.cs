using System.Collections.Immutable;
using CoapNet.Generators;
using CoapNet.Server;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace CoapNet.Tests.Endpoints;

/// <summary>The handlers' source generator on sources of its own: what it writes compiles, and what it cannot bind it reports.</summary>
public sealed class GeneratorTests
{
    private const string Usings = """
        using System;
        using System.IO;
        using System.Threading;
        using System.Threading.Tasks;
        using CoapNet.Endpoints;
        using CoapNet.Messages;
        using CoapNet.Server;

        """;

    [Fact]
    public void TheCodeItWritesForEveryKindOfParameterAndResultCompiles()
    {
        (Compilation output, ImmutableArray<Diagnostic> diagnostics, string generated) = Run(Usings + """
            public sealed record Reading(Guid Sensor, DateTimeOffset At, double[] Values, Kind Kind, int? Battery);
            public enum Kind { Temperature, Humidity }
            public sealed class Store { }

            public static class Program
            {
                public static void Main()
                {
                    var server = new CoapServer();
                    server.MapGet("/r/{id:int}", (int id, string? q, long? n, Kind kind, Store store, CoapRequest request, CancellationToken ct) => new Reading(Guid.Empty, default, [1.5], kind, id));
                    server.MapPost("/r", async (Reading reading, CancellationToken ct) => { await Task.Delay(1, ct); return CoapResults.Created("/r/1", reading); });
                    server.MapPut("/r/{id:int}", ([FromBody] string text, int id) => CoapResponse.Content(text));
                    server.MapDelete("/r/{id:int}", (int id) => { });
                    server.MapFetch("/b", (byte[] body) => body);
                    server.MapPatch("/s", (Stream body, [FromServices] Store store) => Task.CompletedTask);
                    server.MapGroup("/g").MapIPatch("/x", Handlers.Patch);
                }
            }

            public static class Handlers
            {
                public static ValueTask<string> Patch(ReadOnlyMemory<byte> body) => ValueTask.FromResult(body.Length.ToString());
            }
            """);

        diagnostics.Where(d => d.Severity >= DiagnosticSeverity.Warning).Should().BeEmpty();
        output.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).Select(d => d.ToString()).Should().BeEmpty();
        generated.Should().Contain("InterceptsLocation(").And.Contain("CoapCbor.Register<global::Reading>").And.Contain("CoapJson.Register<global::Reading>");
        generated.Split("[global::System.Runtime.CompilerServices.InterceptsLocation(").Length.Should().Be(8, "one interceptor per MapX call");
    }

    [Fact]
    public void AParameterThatCannotBeBoundIsAnErrorNamingIt()
    {
        (_, ImmutableArray<Diagnostic> diagnostics, _) = Run(Usings + """
            public sealed class Widget { public int Size { get; set; } }
            public static class Program
            {
                public static void Main() => new CoapServer().MapGet("/w/{widget}", ([FromRoute] Widget widget) => "x");
            }
            """);

        Diagnostic error = diagnostics.Should().ContainSingle(d => d.Id == "COAPGEN001").Subject;
        error.Severity.Should().Be(DiagnosticSeverity.Error);
        error.GetMessage(System.Globalization.CultureInfo.InvariantCulture).Should().Contain("'widget'").And.Contain("ISpanParsable");
    }

    [Fact]
    public void ADelegateWhoseParametersAreUnknownIsAnError()
    {
        (_, ImmutableArray<Diagnostic> diagnostics, _) = Run(Usings + """
            public static class Program
            {
                public static void Main(Delegate handler) => new CoapServer().MapGet("/d", handler);
            }
            """);

        diagnostics.Should().ContainSingle(d => d.Id == "COAPGEN002").Which.Severity.Should().Be(DiagnosticSeverity.Error);
    }

    [Fact]
    public void TwoParametersThatReadThePayloadAreAnError()
    {
        (_, ImmutableArray<Diagnostic> diagnostics, _) = Run(Usings + """
            public static class Program
            {
                public static void Main() => new CoapServer().MapPost("/two", (byte[] first, Stream second) => "x");
            }
            """);

        diagnostics.Should().ContainSingle(d => d.Id == "COAPGEN003").Which.GetMessage(System.Globalization.CultureInfo.InvariantCulture)
            .Should().Contain("'first'").And.Contain("'second'");
    }

    [Fact]
    public void AResultThatIsNoResponseIsAnErrorAndATypeWithoutCborContractIsSaid()
    {
        (_, ImmutableArray<Diagnostic> diagnostics, _) = Run(Usings + """
            public sealed class Holder { public object Anything { get; set; } = 1; }
            public static class Program
            {
                public static void Main()
                {
                    var server = new CoapServer();
                    server.MapGet("/o", () => (object)1);
                    server.MapGet("/h", () => new Holder());
                }
            }
            """);

        diagnostics.Should().Contain(d => d.Id == "COAPGEN004" && d.Severity == DiagnosticSeverity.Error);
        diagnostics.Should().Contain(d => d.Id == "COAPGEN005" && d.Severity == DiagnosticSeverity.Info
            && d.GetMessage(System.Globalization.CultureInfo.InvariantCulture).Contains("Anything", StringComparison.Ordinal));
    }

    [Fact]
    public void TheJsonMetadataItWritesReadsAndWritesEveryShapeWithoutReflection()
    {
        (Compilation output, ImmutableArray<Diagnostic> diagnostics, string generatedCode) = Run(Usings + """
            using System.Collections.Generic;
            using System.Text.Json;
            using System.Text.Json.Serialization;

            public enum Kind { Temperature, Humidity }
            [JsonConverter(typeof(JsonStringEnumConverter<Mode>))] public enum Mode { Off, Eco }
            public struct Point { public int X { get; set; } public int Y { get; set; } }
            public sealed class Upper : JsonConverter<string>
            {
                public override string Read(ref Utf8JsonReader reader, Type type, JsonSerializerOptions options) => reader.GetString()!.ToLowerInvariant();
                public override void Write(Utf8JsonWriter writer, string value, JsonSerializerOptions options) => writer.WriteStringValue(value.ToUpperInvariant());
            }

            public sealed class Sensor
            {
                public required string Name { get; init; }
                public Kind Kind { get; set; }
                public Mode Mode { get; set; }
                public Kind? Spare { get; set; }
                public Point At { get; set; }
                [JsonPropertyOrder(-1)] public int First { get; set; }
                [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Note { get; set; }
                [JsonPropertyName("v")] public IReadOnlyList<double> Values { get; init; } = [];
                public IDictionary<string, int> Counts { get; set; } = new Dictionary<string, int>();
                public IReadOnlyDictionary<string, Point>? Places { get; set; }
                public ICollection<Guid> Ids { get; set; } = new List<Guid>();
                public IList<long>? Longs { get; set; }
                public IEnumerable<bool>? Flags { get; set; }
                public byte[]? Raw { get; set; }
                [JsonConverter(typeof(Upper))] public string Shout { get; set; } = "";
            }

            public sealed record Reading(Guid Sensor, double[] Values, int? Battery)
            {
                public string Unit { get; init; } = "C";
            }

            public static class Program
            {
                public static void Main()
                {
                    var server = new CoapServer();
                    server.MapPost("/s", (Sensor sensor) => sensor);
                    server.MapPost("/r", (Reading reading) => reading);
                }
            }
            """);
        diagnostics.Where(d => d.Severity >= DiagnosticSeverity.Warning).Should().BeEmpty();
        output.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).Select(d => d.ToString()).Should().BeEmpty();

        // Run it: mapping registers the metadata, which alone (no reflection resolver) reads and writes the types.
        using MemoryStream image = new();
        output.Emit(image).Success.Should().BeTrue();
        System.Reflection.Assembly assembly = System.Reflection.Assembly.Load(image.ToArray());
        assembly.GetType("Program")!.GetMethod("Main")!.Invoke(null, null);
        generatedCode.Should().NotContain("UnsafeAccessor", "init-only members are set in object initializers, never through an accessor of a setter");
        System.Text.Json.JsonSerializerOptions generated = new(System.Text.Json.JsonSerializerDefaults.Web) { TypeInfoResolver = CoapNet.Endpoints.CoapJson.Generated };

        string sensor = RoundTrip(assembly.GetType("Sensor")!, """
            {"name":"t1","kind":1,"mode":"Eco","spare":null,"at":{"x":1,"y":2},"first":7,"v":[0.5],"counts":{"a":1},
             "places":{"p":{"x":3,"y":4}},"ids":["00000000-0000-0000-0000-000000000001"],"longs":[9],"flags":[true],"raw":"AQI=","shout":"Hey"}
            """, generated);
        string reading = RoundTrip(assembly.GetType("Reading")!, """{"SENSOR":"00000000-0000-0000-0000-000000000002","values":[1,2],"battery":null,"unit":"F"}""", generated);
        string unitless = RoundTrip(assembly.GetType("Reading")!, """{"sensor":"00000000-0000-0000-0000-000000000002","values":[],"battery":3}""", generated);

        sensor.Should().Be("""{"first":7,"name":"t1","kind":1,"mode":"Eco","spare":null,"at":{"x":1,"y":2},"v":[0.5],"counts":{"a":1},"places":{"p":{"x":3,"y":4}},"ids":["00000000-0000-0000-0000-000000000001"],"longs":[9],"flags":[true],"raw":"AQI=","shout":"HEY"}""");
        reading.Should().Be("""{"sensor":"00000000-0000-0000-0000-000000000002","values":[1,2],"battery":null,"unit":"F"}""");
        unitless.Should().Be("""{"sensor":"00000000-0000-0000-0000-000000000002","values":[],"battery":3,"unit":"C"}""", "an init-only member the JSON does not have keeps its initializer's value");
        FluentActions.Invoking(() => RoundTrip(assembly.GetType("Sensor")!, """{"kind":0}""", generated))
            .Should().Throw<System.Text.Json.JsonException>().WithMessage("*name*", "C#'s required is JSON's required");

        static string RoundTrip(Type type, string json, System.Text.Json.JsonSerializerOptions options)
            => System.Text.Json.JsonSerializer.Serialize(System.Text.Json.JsonSerializer.Deserialize(json, options.GetTypeInfo(type)), options.GetTypeInfo(type));
    }

    [Theory]
    [InlineData("EnableAotAnalyzer", true)]
    [InlineData("EnableTrimAnalyzer", true)]
    [InlineData(null, false)]
    public void ATypeWithoutJsonMetadataIsAWarningNamingItOnlyWhenTheBuildIsTrimmed(string? property, bool warned)
    {
        (_, ImmutableArray<Diagnostic> diagnostics, _) = Run(Usings + """
            using System.Text.Json.Serialization;
            [JsonPolymorphic] [JsonDerivedType(typeof(Dimmer), "dimmer")]
            public class Device { public string Name { get; set; } = ""; }
            public sealed class Dimmer : Device { public int Level { get; set; } }
            public sealed class Holder { public object Anything { get; set; } = 1; }

            public static class Program
            {
                public static void Main()
                {
                    var server = new CoapServer();
                    server.MapPut("/d", ([FromBody] Device device) => "ok");
                    server.MapGet("/h", () => new Holder());
                }
            }
            """, property is null ? null : new() { ["build_property." + property] = "true" });

        Diagnostic[] missing = [.. diagnostics.Where(d => d.Id == "COAPGEN006")];
        if (!warned)
        {
            missing.Should().BeEmpty("reflection reads and writes JSON where the build is not trimmed");
            return;
        }

        missing.Should().HaveCount(2).And.OnlyContain(d => d.Severity == DiagnosticSeverity.Warning);
        missing.Select(d => d.GetMessage(System.Globalization.CultureInfo.InvariantCulture)).Should().Contain(m => m.StartsWith("Device gets no JSON metadata", StringComparison.Ordinal) && m.Contains("[JsonPolymorphic]", StringComparison.Ordinal))
            .And.Contain(m => m.StartsWith("Holder gets no JSON metadata", StringComparison.Ordinal) && m.Contains("Anything", StringComparison.Ordinal));
    }

    [Fact]
    public void ATypeAContextOfTheApplicationsDeclaresIsNoWarning()
    {
        (_, ImmutableArray<Diagnostic> diagnostics, _) = Run(Usings + """
            using System.Text.Json.Serialization;
            [JsonPolymorphic] [JsonDerivedType(typeof(Dimmer), "dimmer")]
            public class Device { public string Name { get; set; } = ""; }
            public sealed class Dimmer : Device { public int Level { get; set; } }

            [JsonSerializable(typeof(Device))]
            public partial class AppJson : JsonSerializerContext { }

            public static class Program
            {
                public static void Main() => new CoapServer().MapPut("/d", ([FromBody] Device device) => "ok");
            }
            """, new() { ["build_property.PublishAot"] = "true" });

        diagnostics.Should().NotContain(d => d.Id == "COAPGEN006");
    }

    private static (Compilation Output, ImmutableArray<Diagnostic> Diagnostics, string Generated) Run(string source, Dictionary<string, string>? buildProperties = null)
    {
        CSharpParseOptions parse = CSharpParseOptions.Default.WithLanguageVersion(LanguageVersion.Preview)
            .WithFeatures([new KeyValuePair<string, string>("InterceptorsNamespaces", "CoapNet.Generated")]);
        string[] platform = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator);
        IEnumerable<MetadataReference> references = platform.Concat([typeof(CoapServer).Assembly.Location, typeof(System.Formats.Cbor.CborWriter).Assembly.Location])
            .Distinct().Select(path => MetadataReference.CreateFromFile(path));
        CSharpCompilation compilation = CSharpCompilation.Create(
            "GeneratorInput",
            [CSharpSyntaxTree.ParseText(source, parse)],
            references,
            new CSharpCompilationOptions(OutputKind.ConsoleApplication, nullableContextOptions: NullableContextOptions.Enable));
        GeneratorDriver driver = CSharpGeneratorDriver.Create([new EndpointGenerator().AsSourceGenerator()], parseOptions: parse, optionsProvider: new BuildProperties(buildProperties ?? []));
        driver = driver.RunGeneratorsAndUpdateCompilation(compilation, out Compilation output, out ImmutableArray<Diagnostic> diagnostics);
        string generated = string.Concat(driver.GetRunResult().GeneratedTrees.Select(tree => tree.ToString()));
        return (output, diagnostics, generated);
    }

    /// <summary>The MSBuild properties a build makes visible to the compiler (build_property.X), as the SDK passes them.</summary>
    private sealed class BuildProperties(Dictionary<string, string> properties) : Microsoft.CodeAnalysis.Diagnostics.AnalyzerConfigOptionsProvider
    {
        private static readonly Options None = new([]);

        public override Microsoft.CodeAnalysis.Diagnostics.AnalyzerConfigOptions GlobalOptions { get; } = new Options(properties);

        public override Microsoft.CodeAnalysis.Diagnostics.AnalyzerConfigOptions GetOptions(SyntaxTree tree) => None;

        public override Microsoft.CodeAnalysis.Diagnostics.AnalyzerConfigOptions GetOptions(AdditionalText textFile) => None;

        private sealed class Options(Dictionary<string, string> values) : Microsoft.CodeAnalysis.Diagnostics.AnalyzerConfigOptions
        {
            public override bool TryGetValue(string key, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out string? value) => values.TryGetValue(key, out value);
        }
    }
}
