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
    public async Task TheTransportSampleBuildsAgainstThePackedPackageAloneAndServesOverItsOwnScheme()
    {
        string dll = await packages.BuildAsync("samples/CoapNet.Samples.Transport");

        Directory.GetDirectories(packages.Restored("CoapNet")).Select(Path.GetFileName).Should().Equal(
            [packages.Version], "CoapNet came from the packed folder, at the version just packed, and from nowhere else");
        File.Exists(Path.Combine(Path.GetDirectoryName(dll)!, "CoapNet.dll")).Should().BeTrue("the package's assembly is what the sample runs on");
        using ChildProcess sample = ChildProcess.StartDll(dll, [], _ => { });
        (await sample.WaitForExitAsync(Liveness)).Should().Be(0, sample.Output);
        sample.Output.Should().Contain("Listening on coap+serial://127.0.0.2:1/")
            .And.Contain("GET /hello: 2.05 Content Hello over the line!")
            .And.Contain("GET /firmware: 2.05 Content, 4000 bytes, intact");
    }
}
