using System.Diagnostics;
using System.Text.RegularExpressions;

namespace CoapNet.Tests.Interop.ScaleOut;

/// <summary>
/// Locates nginx and its stream module (Debian packages nginx and libnginx-mod-stream), the load balancer of the
/// scale-out tests. On a developer machine without them the tests skip with how to install them; under CI=true
/// they must run (.ci/run installs both), so a missing nginx fails the test instead.
/// </summary>
internal static partial class Nginx
{
    public const string InstallHint = "nginx with its stream module is not installed; install them with: sudo apt-get install -y nginx libnginx-mod-stream";

    private static readonly Lazy<(string? Executable, string? LoadModule, string? Missing)> Found = new(Locate);

    /// <summary>The nginx executable; skips the test (fails it under CI=true) when nginx or its stream module is missing.</summary>
    public static string Executable
    {
        get
        {
            Require();
            return Found.Value.Executable!;
        }
    }

    /// <summary>
    /// The load_module directive for the stream module when nginx was built with it as a dynamic module (Debian's
    /// --with-stream=dynamic: the module file from libnginx-mod-stream), or an empty string when it is built in.
    /// </summary>
    public static string LoadModule
    {
        get
        {
            Require();
            return Found.Value.LoadModule!;
        }
    }

    private static void Require()
    {
        if (Found.Value.Missing is { } missing)
        {
            // .ci/run installs nginx and libnginx-mod-stream; there a missing one is a failure, not a skip.
            LibCoap.Missing(missing);
        }
    }

    private static (string?, string?, string?) Locate()
    {
        // nginx is in /usr/sbin, which is not on every user's PATH.
        string? executable = LibCoap.Find("nginx") ?? (File.Exists("/usr/sbin/nginx") ? "/usr/sbin/nginx" : null);
        if (executable is null)
        {
            return (null, null, InstallHint);
        }

        // nginx -V prints its version and configure arguments on stderr.
        ProcessStartInfo info = new(executable, "-V") { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        using Process version = Process.Start(info)!;
        string configure = version.StandardError.ReadToEnd() + version.StandardOutput.ReadToEnd();
        version.WaitForExit();
        if (WithStream().Match(configure) is not { Success: true } stream)
        {
            return (null, null, $"{executable} was built without the stream module (no --with-stream in nginx -V). {InstallHint}");
        }

        if (stream.Groups["dynamic"].Success)
        {
            string directory = ModulesPath().Match(configure) is { Success: true } path ? path.Groups["path"].Value : "/usr/lib/nginx/modules";
            string module = Path.Combine(directory, "ngx_stream_module.so");
            return File.Exists(module)
                ? (executable, $"load_module {module};", null)
                : (null, null, $"nginx loads its stream module from {module}, which is missing. {InstallHint}");
        }

        return (executable, string.Empty, null);
    }

    [GeneratedRegex(@"--with-stream(?<dynamic>=dynamic)?(\s|$)")]
    private static partial Regex WithStream();

    [GeneratedRegex(@"--modules-path=(?<path>\S+)")]
    private static partial Regex ModulesPath();
}
