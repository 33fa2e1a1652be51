using System.Globalization;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Packaging;

/// <summary>
/// Every package of the repository, packed once per test run by the README's one command (<see cref="Command"/>) into a
/// folder of its own, at a version no run before used (so no package cache can hold a stale copy), for tests that build
/// projects against those packages alone: what such a project compiles against is what users get, and a package that
/// needs anything internal fails them.
/// </summary>
/// <remarks>
/// Projects under test take the folder and the version as MSBuild properties (<c>CoapNetPackages</c>,
/// <c>CoapNetPackageVersion</c>: see samples/CoapNet.Samples.Transport), restore into a cache of the run's own (the
/// user's cache is only read, for third-party packages) and keep their outputs in the run's folder.
/// </remarks>
public sealed class PackedPackages : IAsyncLifetime
{
    /// <summary>The README's command that packs every package, less the folder it packs into.</summary>
    public const string Command = "dotnet pack CoapNet.sln -c Release -o";

    /// <summary>
    /// The ids of the packages that command makes: all of the repository's, and nothing that is not one (tests,
    /// benchmarks and samples are not packable). NetCoap, not CoapNet: nuget.org ids ignore case, and CoAPnet is taken.
    /// </summary>
    public static readonly string[] Ids = ["NetCoap", "NetCoap.AspNetCore", "NetCoap.Dtls", "NetCoap.Hosting", "NetCoap.Multicast", "NetCoap.Oscore", "NetCoap.Tool", "NetCoap.WebSockets"];

    private readonly string _work = Directory.CreateTempSubdirectory("coapnet-packed-").FullName;

    /// <summary>The folder that holds the packages.</summary>
    public string Folder => Path.Combine(_work, "packages");

    /// <summary>The version they were packed at.</summary>
    public string Version { get; } = string.Create(CultureInfo.InvariantCulture, $"0.1.0-packtest.{DateTime.UtcNow:yyyyMMddHHmmss}.{Environment.ProcessId}");

    /// <summary>The user's package cache, read (never written) for third-party packages by the builds against the packages.</summary>
    public static string UserCache => Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } cache ? cache
        : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");

    private string Cache => Path.Combine(_work, "nuget-cache");

    /// <inheritdoc/>
    public async Task InitializeAsync()
    {
        string root = DotnetCommand.RepositoryRoot();
        string[] command = [.. Command.Split(' ')[1..], Folder, $"-p:Version={Version}"];

        // Each target framework's test run packs in the same Release outputs of src/: one at a time, across processes.
        using FileStream turn = await TakeTurnAsync(Path.Combine(root, "tests", "CoapNet.Tests", "obj", "packing.lock"));
        await DotnetCommand.RunAsync(root, null, command);
    }

    /// <summary>
    /// Builds <paramref name="project"/> (a folder below the repository's root) against the packages alone, into a folder
    /// of this run, and returns the path of its built assembly.
    /// </summary>
    /// <param name="project">The project's folder, such as "samples/CoapNet.Samples.Transport".</param>
    /// <returns>The assembly.</returns>
    public async Task<string> BuildAsync(string project)
    {
        string name = Path.GetFileName(project);
        string output = Path.Combine(_work, name, "bin");
        await DotnetCommand.RunAsync(
            DotnetCommand.RepositoryRoot(),
            Cache,
            "build",
            project,
            "-c",
            "Release",
            "-o",
            output,
            $"-p:CoapNetPackages={Folder}",
            $"-p:CoapNetPackageVersion={Version}",
            $"-p:BaseIntermediateOutputPath={Path.Combine(_work, name, "obj")}{Path.DirectorySeparatorChar}",
            $"-p:RestoreFallbackFolders={UserCache}");
        return Path.Combine(output, name + ".dll");
    }

    /// <summary>The package cache of this run's builds, where the packages under test are restored to.</summary>
    /// <param name="id">A package id, such as "NetCoap".</param>
    /// <returns>The folder of that package's versions in the cache.</returns>
    public string Restored(string id) => Path.Combine(Cache, id.ToLowerInvariant());

    /// <summary>The packages in the folder, by id (the file names less version and extension), symbols packages aside.</summary>
    /// <returns>The ids, in order.</returns>
    public IReadOnlyList<string> PackedIds()
    {
        string suffix = "." + Version + ".nupkg";
        List<string> ids = [];
        foreach (string file in Directory.GetFiles(Folder, "*.nupkg"))
        {
            string name = Path.GetFileName(file);
            ids.Add(name.EndsWith(suffix, StringComparison.Ordinal) ? name[..^suffix.Length] : name);
        }

        ids.Sort(StringComparer.Ordinal);
        return ids;
    }

    /// <inheritdoc/>
    public Task DisposeAsync()
    {
        Directory.Delete(_work, recursive: true);
        return Task.CompletedTask;
    }

    // An exclusive lock on a file (flock on Unix) that the other test process may hold while it packs: waited for, not
    // timed, since a pack takes what it takes; DotnetCommand.Timeout bounds the other side.
    private static async Task<FileStream> TakeTurnAsync(string path)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        DateTime giveUp = DateTime.UtcNow + DotnetCommand.Timeout + DotnetCommand.Timeout;
        while (true)
        {
            try
            {
                return new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
            }
            catch (IOException) when (DateTime.UtcNow < giveUp)
            {
                await Task.Delay(TimeSpan.FromMilliseconds(500));
            }
        }
    }
}
