using System.Diagnostics;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// Runs the dotnet command line as a developer does (pack, new, add package, build), isolated from the test host's
/// MSBuild settings, with a package cache of the caller's choosing, and fails the test with everything it printed when
/// it does not succeed.
/// </summary>
internal static class DotnetCommand
{
    /// <summary>The longest one command may take: a pack or a build on a loaded two-core machine.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromMinutes(10);

    /// <summary>The repository's root: the folder above the tests that holds CoapNet.sln.</summary>
    public static string RepositoryRoot()
    {
        DirectoryInfo? directory = new(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "CoapNet.sln")))
        {
            directory = directory.Parent;
        }

        return directory?.FullName ?? throw new InvalidOperationException($"No CoapNet.sln above {AppContext.BaseDirectory}.");
    }

    /// <summary>Runs <c>dotnet <paramref name="arguments"/></c> in <paramref name="directory"/> and returns what it printed.</summary>
    /// <param name="directory">The working directory.</param>
    /// <param name="packageCache">The NuGet package cache (NUGET_PACKAGES); null for the user's.</param>
    /// <param name="arguments">The command and its arguments.</param>
    /// <returns>Standard output and standard error.</returns>
    public static async Task<string> RunAsync(string directory, string? packageCache, params string[] arguments)
    {
        ProcessStartInfo info = new(ChildProcess.DotnetHost)
        {
            WorkingDirectory = directory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        // The test host's MSBuild settings must not leak into a build of another project.
        info.Environment.Remove("MSBuildExtensionsPath");
        info.Environment.Remove("MSBuildSDKsPath");
        info.Environment.Remove("MSBUILD_EXE_PATH");
        info.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        info.Environment["DOTNET_NOLOGO"] = "1";
        if (packageCache is not null)
        {
            info.Environment["NUGET_PACKAGES"] = packageCache;
        }

        using Process process = Process.Start(info)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        using (CancellationTokenSource timeout = new(Timeout))
        {
            await process.WaitForExitAsync(timeout.Token);
        }

        string all = await output + await error;
        process.ExitCode.Should().Be(0, $"dotnet {string.Join(' ', arguments)} in {directory} printed:\n{all}");
        return all;
    }
}
