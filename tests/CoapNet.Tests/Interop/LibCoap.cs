using System.Diagnostics;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Locates libcoap's example binaries (Debian package libcoap3-bin), the reference peers of the
/// interop tests. On a developer machine without them the tests skip with how to install them;
/// under CI=true they must run, so a missing binary fails the test instead.
/// </summary>
internal static class LibCoap
{
    public const string InstallHint = "libcoap's coap-client-notls / coap-server-notls are not installed; install them with: sudo apt-get install -y libcoap3-bin";

    public static string Client => Require("coap-client-notls");

    public static string Server => Require("coap-server-notls");

    /// <summary>libcoap's client built with OpenSSL: coaps (DTLS) and coaps+tcp (TLS).</summary>
    public static string ClientOpenSsl => Require("coap-client-openssl");

    /// <summary>libcoap's server built with OpenSSL: it serves DTLS and TLS on its port + 1.</summary>
    public static string ServerOpenSsl => Require("coap-server-openssl");

    /// <summary>libcoap's client built with GnuTLS: the build with raw public keys (<c>-M key.pem</c>).</summary>
    public static string ClientGnuTls => Require("coap-client-gnutls");

    /// <summary>libcoap's server built with GnuTLS: raw public keys (<c>-M key.pem</c>), DTLS on its port + 1.</summary>
    public static string ServerGnuTls => Require("coap-server-gnutls");

    internal static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>Starts a libcoap tool with its output captured.</summary>
    public static Process Start(string executable, params string[] arguments)
    {
        ProcessStartInfo info = new(executable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return Process.Start(info) ?? throw new InvalidOperationException($"Could not start {executable}.");
    }

    /// <summary>What a tool that exits by itself wrote to stdout and stderr, once it has exited (within a bound on a hung peer, not a timing goal).</summary>
    public static async Task<string> ReadOutputAsync(Process tool, TimeSpan bound)
    {
        using CancellationTokenSource cancel = new(bound);
        Task<string> stdout = tool.StandardOutput.ReadToEndAsync(cancel.Token);
        Task<string> stderr = tool.StandardError.ReadToEndAsync(cancel.Token);
        await tool.WaitForExitAsync(cancel.Token);
        return await stdout + await stderr;
    }

    /// <summary>Ends a tool that is still running (they wait for responses or for -B seconds).</summary>
    public static void Stop(Process process)
    {
        if (!process.HasExited)
        {
            process.Kill(entireProcessTree: true);
        }

        process.WaitForExit();
        process.Dispose();
    }

    private static string Require(string name) => Require(name, InstallHint);

    /// <summary>
    /// The full path of the interop peer <paramref name="name"/> on PATH. Missing, the test skips with
    /// <paramref name="installHint"/> on a developer machine and fails with it under CI=true, where .ci/run installs
    /// every peer.
    /// </summary>
    internal static string Require(string name, string installHint)
    {
        string? path = Find(name);
        if (path is null)
        {
            Missing(installHint);
        }

        return path!;
    }

    /// <summary>
    /// A tool the test needs is missing: under CI=true, where .ci/run installs every peer, the test fails with
    /// <paramref name="installHint"/> (unless <paramref name="mayBeAbsentInCi"/>: .ci/run said it could not install it);
    /// on a developer machine it skips with it.
    /// </summary>
    internal static void Missing(string installHint, bool mayBeAbsentInCi = false)
    {
        if (IsCi && !mayBeAbsentInCi)
        {
            throw new InvalidOperationException(installHint);
        }

        Skip.If(true, installHint);
    }

    /// <summary>The full path of an executable on PATH, or null.</summary>
    internal static string? Find(string name)
    {
        foreach (string directory in (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(Path.PathSeparator))
        {
            string candidate = Path.Combine(directory, name);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        return null;
    }
}
