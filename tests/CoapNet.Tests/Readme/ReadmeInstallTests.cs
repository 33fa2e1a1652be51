using System.Text.RegularExpressions;
using CoapNet.Tests.Packaging;

namespace CoapNet.Tests.Readme;

/// <summary>
/// The README's install steps, done as a newcomer does them: the packages packed by the README's one command (the
/// packing fixture runs it), a new console application given the README's nuget.config (with that folder), NetCoap.Dtls
/// added, and the README's coaps program as its Program.cs, run end to end: a DTLS server and client on loopback, on a
/// port the OS picks.
/// </summary>
[Collection(PackingCollection.Name)]
public sealed partial class ReadmeInstallTests(PackedPackages packages)
{
    /// <summary>
    /// The only places where the program the test runs differs from the README's coaps program: the README's spelling,
    /// then the test's. The README binds coaps' port, 5684, which its client URI leaves out as the default (RFC 7252
    /// section 6.2); the test binds port 0 and asks the port the OS gave.
    /// </summary>
    private static readonly (string Readme, string Test)[] TestSpelling =
    [
        ("\"coaps://127.0.0.1:5684\"", "\"coaps://127.0.0.1:0\""),
        ("new Uri(\"coaps://127.0.0.1/whoami\")", "new Uri($\"coaps://127.0.0.1:{server.LocalEndPoints[0].Port}/whoami\")"),
    ];

    [Fact]
    public async Task ANewConsoleAppRestoresNetCoapDtlsFromThePackedFolderAndRunsTheReadmesCoapsProgram()
    {
        string readme = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "README.md")).ReplaceLineEndings("\n");
        string install = Section(readme, "## Install\n");
        install.Should().Contain($"{PackedPackages.Command} ~/coapnet-packages", "the README packs every package with the command the fixture ran");
        foreach (string id in PackedPackages.Ids)
        {
            install.Should().Contain($"`{id}`", "the README lists every package id");
        }

        string config = NuGetConfig().Match(install).Groups["xml"].Value;
        config.Should().Contain("/home/me/coapnet-packages", "the README's nuget.config names the folder the packages were packed into");
        string program = CoapsProgram().Match(readme).Groups["code"].Value;
        program.Should().Contain("using CoapNet.Dtls;", "the README's coaps program is whole: a new console app runs it as it is");
        foreach ((string readmeSpelling, string test) in TestSpelling)
        {
            program.Should().Contain(readmeSpelling, "each substitution must still apply, or the README's text would go unchecked there");
            program = program.Replace(readmeSpelling, test, StringComparison.Ordinal);
        }

        string work = Directory.CreateTempSubdirectory("coapnet-install-").FullName;
        try
        {
            string app = Directory.CreateDirectory(Path.Combine(work, "app")).FullName;
            await DotnetAsync(app, null, "new", "console", "--name", "App", "--output", app);
            File.WriteAllText(Path.Combine(app, "nuget.config"), config.Replace("/home/me/coapnet-packages", packages.Folder, StringComparison.Ordinal));
            File.WriteAllText(Path.Combine(app, "Program.cs"), program);

            // A package cache of its own, so the packages come from the folder and never from a copy an earlier run left;
            // third-party packages are read from the user's cache first (RestoreFallbackFolders), as the fixture's builds do.
            string cache = Path.Combine(work, "nuget-cache");
            File.WriteAllText(
                Path.Combine(work, "Directory.Build.props"),
                $"<Project><PropertyGroup><RestoreFallbackFolders>{PackedPackages.UserCache}</RestoreFallbackFolders></PropertyGroup></Project>\n");
            await DotnetAsync(app, cache, "add", "package", "NetCoap.Dtls", "--version", packages.Version);
            string ran = await DotnetAsync(app, cache, "run");

            ran.Should().Contain("you are psk:device-7", "the server saw the client's pre-shared key identity over DTLS");
            File.ReadAllText(Path.Combine(app, "App.csproj")).Should().Contain("<PackageReference Include=\"NetCoap.Dtls\"");
            foreach (string id in (string[])["netcoap", "netcoap.dtls"])
            {
                Directory.GetDirectories(Path.Combine(cache, id)).Select(Path.GetFileName).Should().Equal(
                    [packages.Version], $"{id} was restored from the packed folder (NetCoap.Dtls brings NetCoap), at the version just packed");
            }
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }

    private static string Section(string readme, string heading)
    {
        string section = readme[readme.IndexOf(heading, StringComparison.Ordinal)..];
        return section[..section.IndexOf("\n## ", 1, StringComparison.Ordinal)];
    }

    private static Task<string> DotnetAsync(string directory, string? packageCache, params string[] arguments)
        => Infrastructure.DotnetCommand.RunAsync(directory, packageCache, arguments);

    [GeneratedRegex("```xml\\n(?<xml><configuration>.*?</configuration>)\\n```", RegexOptions.Singleline)]
    private static partial Regex NuGetConfig();

    // The README's one C# block that uses CoapNet.Dtls: a whole program.
    [GeneratedRegex("```csharp\\n(?<code>using CoapNet\\.Client;\\nusing CoapNet\\.Dtls;\\n.*?)```", RegexOptions.Singleline)]
    private static partial Regex CoapsProgram();
}
