using System.Diagnostics;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Locates node-coap (npm package "coap"), the second interop peer, installed by
/// <c>npm ci</c> in tests/interop-node. Without it the tests skip with how to install it; under
/// CI=true they must run, unless .ci/run could not install it and said so (COAPNET_NODE_COAP=unavailable).
/// </summary>
internal static class NodeCoap
{
    public const string InstallHint = "node-coap is not installed; install it with: (cd tests/interop-node && npm ci) (Node.js 18 or later)";

    /// <summary>Starts <paramref name="script"/> of tests/interop-node with node, its output captured.</summary>
    public static Process Start(string script, params string[] arguments)
    {
        string directory = Require();
        return LibCoap.Start(LibCoap.Find("node")!, [Path.Combine(directory, script), .. arguments]);
    }

    private static string Require()
    {
        string? directory = FindDirectory();
        bool installed = LibCoap.Find("node") is not null && directory is not null && File.Exists(Path.Combine(directory, "node_modules", "coap", "package.json"));
        if (!installed)
        {
            bool unavailable = string.Equals(Environment.GetEnvironmentVariable("COAPNET_NODE_COAP"), "unavailable", StringComparison.Ordinal);
            LibCoap.Missing(InstallHint, mayBeAbsentInCi: unavailable);
        }

        return directory!;
    }

    /// <summary>tests/interop-node, found from the test assembly's folder upward.</summary>
    private static string? FindDirectory()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            string candidate = Path.Combine(directory.FullName, "tests", "interop-node");
            if (File.Exists(Path.Combine(candidate, "package.json")))
            {
                return candidate;
            }
        }

        return null;
    }
}
