using System.Globalization;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Packaging;

/// <summary>
/// The library's packages packed once per test run into a folder of their own, at a version no run before used (so no
/// package cache can hold a stale copy), for tests that build projects against those packages alone: what such a
/// project compiles against is what users get, and a package that needs anything internal fails them.
/// </summary>
/// <remarks>
/// Projects under test take the folder and the version as MSBuild properties (<c>CoapNetPackages</c>,
/// <c>CoapNetPackageVersion</c>: see samples/CoapNet.Samples.Transport), restore into a cache of the run's own (the
/// user's cache is only read, for third-party packages) and keep their outputs in the run's folder.
/// </remarks>
public sealed class PackedPackages : IAsyncLifetime
{
    /// <summary>The projects packed: what the projects built against the packages need.</summary>
    private static readonly string[] Projects = ["src/CoapNet"];

    private readonly string _work = Directory.CreateTempSubdirectory("coapnet-packed-").FullName;

    /// <summary>The folder that holds the packages.</summary>
    public string Folder => Path.Combine(_work, "packages");

    /// <summary>The version they were packed at.</summary>
    public string Version { get; } = string.Create(CultureInfo.InvariantCulture, $"0.1.0-packtest.{DateTime.UtcNow:yyyyMMddHHmmss}.{Environment.ProcessId}");

    private string Cache => Path.Combine(_work, "nuget-cache");

    /// <inheritdoc/>
    public async Task InitializeAsync()
    {
        foreach (string project in Projects)
        {
            await DotnetCommand.RunAsync(DotnetCommand.RepositoryRoot(), null, "pack", project, "-c", "Release", "-o", Folder, $"-p:Version={Version}");
        }
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
        string userCache = Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } cache ? cache
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
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
            $"-p:RestoreFallbackFolders={userCache}");
        return Path.Combine(output, name + ".dll");
    }

    /// <summary>The package cache of this run's builds, where the packages under test are restored to.</summary>
    /// <param name="id">A package id, such as "CoapNet".</param>
    /// <returns>The folder of that package's versions in the cache.</returns>
    public string Restored(string id) => Path.Combine(Cache, id.ToLowerInvariant());

    /// <inheritdoc/>
    public Task DisposeAsync()
    {
        Directory.Delete(_work, recursive: true);
        return Task.CompletedTask;
    }
}
