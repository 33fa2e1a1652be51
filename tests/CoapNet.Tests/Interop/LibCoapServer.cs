using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Interop;

/// <summary>
/// A libcoap coap-server-notls on 127.0.0.1 at a port chosen free at run time, with dynamic
/// resources enabled (-d), for the tests that drive it with our client.
/// </summary>
public sealed class LibCoapServer : IDisposable
{
    private readonly string _executable;
    private readonly string[] _arguments;
    private Process _process;

    private LibCoapServer(string executable, string[] arguments, int port)
    {
        _executable = executable;
        _arguments = arguments;
        Port = port;
        _process = Launch();
    }

    /// <summary>The UDP (and TCP) port the server listens on.</summary>
    public int Port { get; }

    /// <summary>The server's UDP endpoint.</summary>
    public IPEndPoint EndPoint => new(IPAddress.Loopback, Port);

    /// <summary>A coap:// URI on the server.</summary>
    public Uri Uri(string pathAndQuery) => new($"coap://127.0.0.1:{Port}{pathAndQuery}");

    /// <summary>Starts a server and waits until it answers.</summary>
    public static LibCoapServer Start() => Start(LibCoap.Server);

    /// <summary>Starts <paramref name="executable"/> (coap-server-notls, or a (D)TLS build with its credentials in <paramref name="arguments"/>) and waits until it answers on its plain UDP port.</summary>
    public static LibCoapServer Start(string executable, params string[] arguments)
    {
        // libcoap binds the same port for UDP and TCP, and a (D)TLS build the next one for coaps and coaps+tcp. A port
        // taken between the choice and libcoap's bind leaves libcoap serving without that endpoint (it says so and carries
        // on), so a secure build is started again on other ports until its coaps+tcp port accepts.
        bool secure = !Path.GetFileName(executable).EndsWith("-notls", StringComparison.Ordinal);
        for (int attempt = 0; ; attempt++)
        {
            LibCoapServer server = new(executable, arguments, secure ? FreePorts.UdpAndTcpWithNext() : FreePorts.UdpAndTcp());
            server.WaitUntilAnswering();
            if (!secure || attempt >= 4 || AcceptsTcp(server.Port + 1))
            {
                return server;
            }

            server.Dispose();
        }
    }

    private static bool AcceptsTcp(int port)
    {
        try
        {
            using TcpClient client = new();
            return client.ConnectAsync(IPAddress.Loopback, port).Wait(TimeSpan.FromSeconds(2)) && client.Connected;
        }
        catch (AggregateException)
        {
            return false;
        }
    }

    /// <summary>
    /// Kills the server (SIGKILL: it says nothing on its way out, not even a DTLS close_notify, as a crash or a power cut)
    /// and starts it again on the same port with the same arguments, with no memory of its sessions or observers.
    /// </summary>
    public void Restart()
    {
        LibCoap.Stop(_process);
        _process = Launch();
        WaitUntilAnswering();
    }

    /// <inheritdoc/>
    public void Dispose() => LibCoap.Stop(_process);

    private Process Launch()
        => LibCoap.Start(_executable, ["-A", "127.0.0.1", "-p", Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-d", "50", "-v", "0", .. _arguments]);

    private void WaitUntilAnswering()
    {
        // A raw CoAP ping (empty CON) until the RST comes back: no dependency on the code under test.
        using UdpClient probe = new(new IPEndPoint(IPAddress.Loopback, 0));
        byte[] ping = [0x40, 0x00, 0x12, 0x34];
        Stopwatch waited = Stopwatch.StartNew();
        while (waited.Elapsed < TimeSpan.FromSeconds(10))
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"coap-server-notls exited with {_process.ExitCode}: {_process.StandardError.ReadToEnd()}");
            }

            probe.Send(ping, EndPoint);
            using CancellationTokenSource timeout = new(TimeSpan.FromMilliseconds(200));
            try
            {
                UdpReceiveResult answer = probe.ReceiveAsync(timeout.Token).AsTask().GetAwaiter().GetResult();
                if (answer.Buffer.Length == 4 && (answer.Buffer[0] & 0x30) == 0x30)
                {
                    return;
                }
            }
            catch (OperationCanceledException)
            {
            }
            catch (SocketException)
            {
                Thread.Sleep(50);
            }
        }

        throw new TimeoutException("coap-server-notls did not answer a ping within 10 s.");
    }
}
