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
        generated.Should().Contain("InterceptsLocation(").And.Contain("CoapCbor.Register<global::Reading>");
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

    private static (Compilation Output, ImmutableArray<Diagnostic> Diagnostics, string Generated) Run(string source)
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
        GeneratorDriver driver = CSharpGeneratorDriver.Create([new EndpointGenerator().AsSourceGenerator()], parseOptions: parse);
        driver = driver.RunGeneratorsAndUpdateCompilation(compilation, out Compilation output, out ImmutableArray<Diagnostic> diagnostics);
        string generated = string.Concat(driver.GetRunResult().GeneratedTrees.Select(tree => tree.ToString()));
        return (output, diagnostics, generated);
    }
}
