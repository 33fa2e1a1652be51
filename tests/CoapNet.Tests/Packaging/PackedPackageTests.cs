using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Packaging;

/// <summary>
/// Projects built against the packed packages alone (no project reference), then run: they use the public API only, and
/// the packages carry all they need.
/// </summary>
[Collection(PackingCollection.Name)]
public sealed class PackedPackageTests(PackedPackages packages)
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(60);

    [Fact]
    public void PackingTheSolutionMakesEveryPackageAndNothingElse()
    {
        packages.PackedIds().Should().Equal(PackedPackages.Ids, $"`{PackedPackages.Command} DIR` packs the library, its secure transport, group communication, OSCORE, hosting, WebSockets, ASP.NET Core and the tool, and no test, benchmark or sample");
        Directory.GetFiles(packages.Folder, "*.snupkg").Should().HaveCount(7, "the seven libraries carry symbols packages; the tool does not");
    }

    [Theory]
    [InlineData("NetCoap.Dtls")]
    [InlineData("NetCoap.Hosting")]
    [InlineData("NetCoap.Multicast")]
    [InlineData("NetCoap.Oscore")]
    [InlineData("NetCoap.WebSockets")]
    public void APackageOnNetCoapBringsItsGeneratorAndBuildProps(string id)
    {
        using System.IO.Compression.ZipArchive package = System.IO.Compression.ZipFile.OpenRead(Path.Combine(packages.Folder, $"{id}.{packages.Version}.nupkg"));
        using StreamReader nuspec = new(package.GetEntry($"{id}.nuspec")!.Open());
        List<System.Xml.Linq.XElement> dependencies = [.. System.Xml.Linq.XDocument.Parse(nuspec.ReadToEnd()).Descendants()
            .Where(e => e.Name.LocalName == "dependency" && (string?)e.Attribute("id") == "NetCoap")];

        dependencies.Should().HaveCount(2, "one for each target framework");
        foreach (System.Xml.Linq.XElement dependency in dependencies)
        {
            ((string?)dependency.Attribute("exclude") ?? string.Empty).Should().NotContainAny(["Build", "Analyzers"], "an application that adds only this package still compiles its handlers' binding");
        }
    }

    [Fact]
    public async Task TheTransportSampleBuildsAgainstThePackedPackageAloneAndServesOverItsOwnScheme()
    {
        string dll = await packages.BuildAsync("samples/CoapNet.Samples.Transport");

        Directory.GetDirectories(packages.Restored("NetCoap")).Select(Path.GetFileName).Should().Equal(
            [packages.Version], "NetCoap came from the packed folder, at the version just packed, and from nowhere else");
        File.Exists(Path.Combine(Path.GetDirectoryName(dll)!, "CoapNet.dll")).Should().BeTrue("the package's assembly is what the sample runs on");
        using ChildProcess sample = ChildProcess.StartDll(dll, [], _ => { });
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
        sample.Output.Should().Contain("Listening on coap+serial://127.0.0.2:1/")
            .And.Contain("GET /hello: 2.05 Content Hello over the line!")
            .And.Contain("GET /firmware: 2.05 Content, 4000 bytes, intact");
    }
}
