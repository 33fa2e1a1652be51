using System.Diagnostics;
using System.Runtime.InteropServices;
using CoapNet.Tests.Interop;
using Microsoft.Win32.SafeHandles;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// A network of its own for multicast tests, so that no group request ever leaves the machine (issue 38): Linux network
/// namespaces, one per node, each with a veth whose other end is on a bridge in a namespace of its own, with multicast
/// snooping off (so the bridge floods every group without waiting for IGMP/MLD reports); node N has 10.200.0.N/24 and
/// fd00:200::N/64 (no duplicate address detection, so the address works at once) on its interface "e0", and a route
/// for 224.0.0.0/4 there. Names carry a prefix unique to the instance, so runs in parallel do not collide; Dispose
/// deletes every namespace it made (their veths with them), also when the constructor or the test failed.
/// </summary>
/// <remarks>
/// Our code runs in a node two ways: a program as a process under <c>ip netns exec</c> (the sample server, libcoap), and
/// a client in this process through <see cref="Run{T}"/>, which moves a thread of its own into the node's namespace with
/// setns(2) and runs the code there: a socket belongs to the namespace of the thread that made it, for its whole life,
/// and <see cref="CoapNet.Multicast.CoapGroupClient"/> makes its socket when it sends. Without root or without
/// <c>ip</c>, the test skips with the reason; under CI=true it fails instead.
/// </remarks>
internal sealed class TestNetwork : IDisposable
{
    /// <summary>The interface each node has.</summary>
    public const string Interface = "e0";

    private const int CloneNewNet = 0x40000000;
    private readonly string _prefix = "cn" + Convert.ToHexString(System.Security.Cryptography.RandomNumberGenerator.GetBytes(3)).ToLowerInvariant();
    private readonly List<string> _namespaces = [];
    private readonly string _bridge;

    public TestNetwork(int nodes)
    {
        Require();
        _bridge = _prefix + "br";
        try
        {
            AddNamespace(_bridge);
            Ip("-n", _bridge, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0");
            Ip("-n", _bridge, "link", "set", "br0", "up");
            for (int node = 1; node <= nodes; node++)
            {
                AddNode(node);
            }
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    /// <summary>The namespace of node <paramref name="node"/> (1-based).</summary>
    public string Node(int node) => $"{_prefix}n{node}";

    /// <summary>Node <paramref name="node"/>'s IPv4 address.</summary>
    public static string IPv4(int node) => $"10.200.0.{node}";

    /// <summary>Node <paramref name="node"/>'s IPv6 address.</summary>
    public static string IPv6(int node) => $"fd00:200::{node}";

    /// <summary>Runs <paramref name="work"/> on a thread in node <paramref name="node"/>'s namespace, and returns what it returns.</summary>
    public T Run<T>(int node, Func<T> work)
    {
        T result = default!;
        Exception? failed = null;
        Thread thread = new(() =>
        {
            try
            {
                using SafeFileHandle handle = File.OpenHandle($"/var/run/netns/{Node(node)}");
                if (SetNs((int)handle.DangerousGetHandle(), CloneNewNet) != 0)
                {
                    throw new InvalidOperationException($"setns into {Node(node)} failed: errno {Marshal.GetLastPInvokeError()}");
                }

                result = work();
            }
            catch (Exception e)
            {
                failed = e;
            }
        });
        thread.Start();
        thread.Join();
        if (failed is not null)
        {
            throw new InvalidOperationException("Running in " + Node(node) + " failed.", failed);
        }

        return result;
    }

    /// <summary>The arguments that run a program in node <paramref name="node"/>: ip netns exec NAME, then the program's.</summary>
    public string[] Exec(int node, params string[] command) => ["netns", "exec", Node(node), .. command];

    public void Dispose()
    {
        for (int i = _namespaces.Count - 1; i >= 0; i--)
        {
            TryIp("netns", "del", _namespaces[i]);
        }

        _namespaces.Clear();
    }

    /// <summary>Root and <c>ip</c>, or the test skips (fails under CI=true) with what is missing.</summary>
    private static void Require()
    {
        if (LibCoap.Find("ip") is null)
        {
            LibCoap.Missing("multicast tests build network namespaces with ip(8), which is not installed (sudo apt-get install -y iproute2)");
        }

        if (!Environment.IsPrivilegedProcess)
        {
            LibCoap.Missing("multicast tests build network namespaces, which needs root (CI runs them as root)");
        }
    }

    private void AddNode(int node)
    {
        string ns = Node(node);
        string outside = $"{_prefix}v{node}";
        AddNamespace(ns);
        Ip("link", "add", outside, "type", "veth", "peer", "name", Interface, "netns", ns);
        Ip("link", "set", outside, "netns", _bridge);
        Ip("-n", _bridge, "link", "set", outside, "master", "br0", "up");

        // The kernel's own link-local address skips duplicate address detection too, as the fd00:200:: one does (nodad):
        // while it is tentative a socket sends from the global address instead, and who answers from which address changes.
        Ip("netns", "exec", ns, "sysctl", "-q", "-w", $"net.ipv6.conf.{Interface}.accept_dad=0");
        Ip("-n", ns, "link", "set", "lo", "up");
        Ip("-n", ns, "link", "set", Interface, "up");
        Ip("-n", ns, "addr", "add", IPv4(node) + "/24", "dev", Interface);
        Ip("-n", ns, "addr", "add", IPv6(node) + "/64", "dev", Interface, "nodad");
        Ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", Interface);
    }

    private void AddNamespace(string name)
    {
        Ip("netns", "add", name);
        _namespaces.Add(name);
    }

    private static void Ip(params string[] arguments)
    {
        (int code, string output) = RunIp(arguments);
        if (code != 0)
        {
            throw new InvalidOperationException($"ip {string.Join(' ', arguments)} exited with {code}: {output}");
        }
    }

    private static void TryIp(params string[] arguments) => RunIp(arguments);

    private static (int Code, string Output) RunIp(string[] arguments)
    {
        ProcessStartInfo info = new("ip") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(info)!;
        string output = process.StandardOutput.ReadToEnd() + process.StandardError.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, output);
    }

    [DllImport("libc", EntryPoint = "setns", SetLastError = true)]
    private static extern int SetNs(int fd, int nstype);
}
