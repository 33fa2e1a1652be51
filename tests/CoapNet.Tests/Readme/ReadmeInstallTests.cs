using System.Text.RegularExpressions;

namespace CoapNet.Tests.Readme;

/// <summary>
/// The README's install steps, done as a newcomer does them: pack the library from this repository into a folder,
/// give a new console application the README's nuget.config (with that folder), add the package and build. In the
/// packing collection: it packs in the repository's own Release output, as the packages tests do.
/// </summary>
[Collection(Packaging.PackingCollection.Name)]
public sealed partial class ReadmeInstallTests
{
    [Fact]
    public async Task ThePackageInstallsFromALocalFolderAsTheReadmeSays()
    {
        string readme = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "README.md")).ReplaceLineEndings("\n");
        string install = readme[readme.IndexOf("## Install\n", StringComparison.Ordinal)..];
        install = install[..install.IndexOf("\n## ", 1, StringComparison.Ordinal)];
        install.Should().Contain("not published on nuget.org yet", "the README says plainly that the package is not on nuget.org");
        install.Should().Contain("dotnet pack src/CoapNet -c Release -o ~/coapnet-packages");
        string config = NuGetConfig().Match(install).Groups["xml"].Value;
        config.Should().Contain("/home/me/coapnet-packages", "the README's nuget.config names the folder the packages were packed into");

        string root = Infrastructure.DotnetCommand.RepositoryRoot();
        string work = Directory.CreateTempSubdirectory("coapnet-install-").FullName;
        try
        {
            string packages = Path.Combine(work, "coapnet-packages");
            string app = Directory.CreateDirectory(Path.Combine(work, "app")).FullName;
            await DotnetAsync(root, null, "pack", "src/CoapNet", "-c", "Release", "-o", packages);
            await DotnetAsync(app, null, "new", "console", "--name", "App", "--output", app);
            File.WriteAllText(Path.Combine(app, "nuget.config"), config.Replace("/home/me/coapnet-packages", packages, StringComparison.Ordinal));
            File.WriteAllText(Path.Combine(app, "Program.cs"), "System.Console.WriteLine(new CoapNet.Messages.CoapMessage().Code);\n");

            // A package cache of its own: the package comes from the folder, never from a copy an earlier run left in the user's cache.
            string cache = Path.Combine(work, "nuget-cache");
            await DotnetAsync(app, cache, "add", "package", "CoapNet");
            string built = await DotnetAsync(app, cache, "build");

            built.Should().Contain("0 Error(s)");
            File.ReadAllText(Path.Combine(app, "App.csproj")).Should().Contain("<PackageReference Include=\"CoapNet\"");
            Directory.Exists(Path.Combine(cache, "coapnet")).Should().BeTrue("the package was restored from the folder into this cache");
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }

    private static Task<string> DotnetAsync(string directory, string? packageCache, params string[] arguments)
        => Infrastructure.DotnetCommand.RunAsync(directory, packageCache, arguments);

    [GeneratedRegex("```xml\\n(?<xml><configuration>.*?</configuration>)\\n```", RegexOptions.Singleline)]
    private static partial Regex NuGetConfig();
}
