using System.Globalization;
using System.Net;
using System.Text;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Interop.ScaleOut;

/// <summary>
/// nginx's stream proxy in front of CoAP server instances, coap:// (UDP) and coap+tcp:// on one port of 127.0.0.1
/// chosen free at run time. It runs unprivileged: its configuration, pid file and error log are in a temporary
/// directory of its own, and it stays in the foreground (daemon off) as this process's child. The stream block is
/// the one docs/DEPLOYMENT.md shows (<see cref="StreamBlock"/>; a test compares them).
/// </summary>
internal sealed class NginxStreamProxy(ChildProcess process, DirectoryInfo directory, int port) : IAsyncDisposable
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    /// <summary>The port nginx listens on, for UDP and TCP.</summary>
    public int Port { get; } = port;

    /// <summary>What nginx wrote to its error log (notices included) so far.</summary>
    public string ErrorLog => ReadLog(directory);

    /// <summary>A URI on the balancer.</summary>
    /// <param name="scheme">coap or coap+tcp.</param>
    /// <param name="pathAndQuery">The path, and a query if any.</param>
    public Uri Uri(string scheme, string pathAndQuery) => new($"{scheme}://127.0.0.1:{Port}{pathAndQuery}");

    /// <summary>
    /// The stream block: one upstream per transport that keeps each client address on one instance
    /// (<c>hash $remote_addr consistent</c>), and a listener per transport on <paramref name="listen"/>.
    /// </summary>
    /// <param name="listen">Where nginx listens, for UDP and TCP.</param>
    /// <param name="udp">The instances' UDP endpoints.</param>
    /// <param name="tcp">The instances' TCP endpoints.</param>
    /// <param name="proxyResponses">A proxy_responses for the UDP listener, which the deployment leaves unset; only to show what it breaks.</param>
    public static string StreamBlock(IPEndPoint listen, IReadOnlyList<IPEndPoint> udp, IReadOnlyList<IPEndPoint> tcp, int? proxyResponses = null)
    {
        StringBuilder block = new();
        block.Append("stream {\n");
        Upstream(block, "coap_udp", udp);
        block.Append('\n');
        Upstream(block, "coap_tcp", tcp);
        block.Append('\n')
            .Append("    server {\n")
            .Append(CultureInfo.InvariantCulture, $"        listen {listen} udp reuseport;\n")
            .Append("        proxy_pass coap_udp;\n")
            .Append("        proxy_timeout 10m;\n");
        if (proxyResponses is int responses)
        {
            block.Append(CultureInfo.InvariantCulture, $"        proxy_responses {responses};\n");
        }

        block.Append("    }\n")
            .Append('\n')
            .Append("    server {\n")
            .Append(CultureInfo.InvariantCulture, $"        listen {listen};\n")
            .Append("        proxy_pass coap_tcp;\n")
            .Append("        proxy_timeout 10m;\n")
            .Append("    }\n")
            .Append("}\n");
        return block.ToString();
    }

    /// <summary>Starts nginx in front of the instances and waits until its workers run.</summary>
    /// <param name="udp">The instances' UDP endpoints.</param>
    /// <param name="tcp">The instances' TCP endpoints.</param>
    /// <param name="proxyResponses">See <see cref="StreamBlock"/>.</param>
    public static async Task<NginxStreamProxy> StartAsync(IReadOnlyList<IPEndPoint> udp, IReadOnlyList<IPEndPoint> tcp, int? proxyResponses = null)
    {
        string executable = Nginx.Executable;
        for (int attempt = 1; ; attempt++)
        {
            int listen = FreePorts.UdpAndTcp();
            DirectoryInfo home = Directory.CreateTempSubdirectory("coapnet-nginx-");
            string configuration = Path.Combine(home.FullName, "nginx.conf");
            File.WriteAllText(configuration, Configuration(home.FullName, StreamBlock(new IPEndPoint(IPAddress.Loopback, listen), udp, tcp, proxyResponses)));

            // -p: relative paths under its directory; -e: the error log from the start, before the configuration is read.
            ChildProcess started = ChildProcess.Start(executable, ["-p", home.FullName, "-c", configuration, "-e", Path.Combine(home.FullName, "error.log")], _ => { });
            NginxStreamProxy proxy = new(started, home, listen);

            // Ready when the master has started its workers: the listening sockets are bound before that.
            await Wait.UntilAsync(() => started.HasExited || proxy.ErrorLog.Contains("start worker process ", StringComparison.Ordinal), "nginx to start its workers", Liveness);
            if (!started.HasExited)
            {
                return proxy;
            }

            string log = proxy.ErrorLog + started.Output;
            await proxy.DisposeAsync();

            // Another process took the port between choosing it and nginx's bind: choose again.
            if (attempt < 5 && log.Contains("Address already in use", StringComparison.Ordinal))
            {
                continue;
            }

            throw new InvalidOperationException("nginx exited at start: " + log);
        }
    }

    /// <summary>Stops nginx (SIGTERM, its fast shutdown: a graceful one waits for UDP sessions to time out) and removes its directory.</summary>
    public async ValueTask DisposeAsync()
    {
        if (!process.HasExited)
        {
            await process.SignalAsync("TERM");
            await process.WaitForExitAsync(Liveness);
        }

        process.Dispose();
        directory.Delete(recursive: true);
    }

    private static string Configuration(string directory, string stream)
        => $$"""
        # The scale-out test's nginx: in the foreground, unprivileged, with its files in {{directory}}.
        daemon off;
        worker_processes 2;
        pid {{directory}}/nginx.pid;
        error_log {{directory}}/error.log notice;
        {{Nginx.LoadModule}}

        events {
            worker_connections 1024;
        }

        {{stream}}
        """;

    private static void Upstream(StringBuilder block, string name, IReadOnlyList<IPEndPoint> instances)
    {
        block.Append(CultureInfo.InvariantCulture, $"    upstream {name} {{\n")
            .Append("        hash $remote_addr consistent;\n");
        foreach (IPEndPoint instance in instances)
        {
            block.Append(CultureInfo.InvariantCulture, $"        server {instance};\n");
        }

        block.Append("    }\n");
    }

    private static string ReadLog(DirectoryInfo directory)
    {
        string path = Path.Combine(directory.FullName, "error.log");
        if (!File.Exists(path))
        {
            return string.Empty;
        }

        // nginx holds the file open for writing; share it.
        using FileStream file = new(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using StreamReader reader = new(file);
        return reader.ReadToEnd();
    }
}
