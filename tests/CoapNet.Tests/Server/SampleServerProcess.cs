using System.Globalization;
using System.Net;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample server program as a child process on 127.0.0.1, run the way a user runs it (its dll is copied next
/// to the tests through the project reference): UDP at a port the OS picks (--port 0) and, when asked, coap+tcp at
/// a port chosen free at run time (the program's --tcp-port 0 turns TCP off), or coaps+tcp likewise, or coap+ws and the
/// explorer on an HTTP port. coaps is off (--dtls-port 0), and coaps+tcp and HTTP unless asked (--tls-port 0,
/// --http-port 0), so that two of them run at once and none takes the default HTTP port 8683 of the server .ci/run starts.
/// </summary>
internal sealed class SampleServerProcess : IDisposable
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);

    private readonly TaskCompletionSource<IPEndPoint> _udp = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<IPEndPoint> _tcp = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<IPEndPoint> _tls = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<string> _fingerprint = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<IPEndPoint> _ws = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<Uri> _explorer = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private ChildProcess? _child;

    private SampleServerProcess()
    {
    }

    /// <summary>Its UDP endpoint (coap://).</summary>
    public IPEndPoint EndPoint => _udp.Task.Result;

    /// <summary>Its TCP endpoint (coap+tcp://); only when started with TCP.</summary>
    public IPEndPoint TcpEndPoint => _tcp.Task.IsCompleted ? _tcp.Task.Result : throw new InvalidOperationException("The sample server was started without TCP.");

    /// <summary>Its coaps+tcp endpoint; only when started with TLS.</summary>
    public IPEndPoint TlsEndPoint => _tls.Task.IsCompleted ? _tls.Task.Result : throw new InvalidOperationException("The sample server was started without TLS.");

    /// <summary>The SHA-256 fingerprint of its coaps+tcp certificate as it printed it (hex pairs and colons); only when started with TLS.</summary>
    public string Fingerprint => _fingerprint.Task.IsCompleted ? _fingerprint.Task.Result : throw new InvalidOperationException("The sample server was started without TLS.");

    /// <summary>Its coap+ws endpoint (the HTTP port's authority); only when started with HTTP.</summary>
    public IPEndPoint WebSocketEndPoint => _ws.Task.IsCompleted ? _ws.Task.Result : throw new InvalidOperationException("The sample server was started without HTTP.");

    /// <summary>The explorer page's address as it printed it; only when started with HTTP.</summary>
    public Uri Explorer => _explorer.Task.IsCompleted ? _explorer.Task.Result : throw new InvalidOperationException("The sample server was started without HTTP.");

    /// <summary>Everything it printed so far, stdout and stderr.</summary>
    public string Output => _child!.Output;

    /// <summary>Starts it with UDP only and waits until it says where it listens.</summary>
    public static async Task<SampleServerProcess> StartAsync()
        => await TryStartAsync(tcpPort: 0, tlsPort: 0, []) ?? throw new InvalidOperationException("The sample server exited at start.");

    /// <summary>
    /// Starts it with UDP and TCP and waits until it says where it listens. Should another process take the TCP
    /// port between choosing it and the bind, the server exits with its bind error and starts again on another.
    /// </summary>
    public static Task<SampleServerProcess> StartWithTcpAsync()
        => StartRetryingAsync(lastAttempt => TryStartAsync(FreePorts.UdpAndTcp(), tlsPort: 0, [], lastAttempt));

    /// <summary>
    /// Starts it with UDP and coaps+tcp (TCP off) and waits until it says where it listens and prints its certificate's
    /// fingerprint; <paramref name="arguments"/> go on its command line too (--cert FILE --key FILE). Should another process
    /// take the TLS port first, it starts again on another.
    /// </summary>
    public static Task<SampleServerProcess> StartWithTlsAsync(params string[] arguments)
        => StartRetryingAsync(lastAttempt => TryStartAsync(tcpPort: 0, FreePorts.UdpAndTcp(), arguments, lastAttempt));

    /// <summary>
    /// Starts it with UDP and coap+ws with the explorer on an HTTP port chosen free at run time, and waits until it says
    /// where both are. Should another process take the HTTP port first, it starts again on another.
    /// </summary>
    public static Task<SampleServerProcess> StartWithHttpAsync()
        => StartRetryingAsync(lastAttempt => TryStartAsync(tcpPort: 0, tlsPort: 0, [], lastAttempt, httpPort: FreePorts.UdpAndTcp()));

    /// <summary>Sends a signal the way a user would, with kill(1).</summary>
    /// <param name="signal">The signal name, such as "TERM".</param>
    public Task SignalAsync(string signal) => _child!.SignalAsync(signal);

    /// <summary>Waits for the exit, failing the test after a liveness bound.</summary>
    public Task<int> WaitForExitAsync() => _child!.WaitForExitAsync(Liveness);

    /// <summary>Kills the process if it still runs.</summary>
    public void Dispose() => _child?.Dispose();

    private static async Task<SampleServerProcess> StartRetryingAsync(Func<bool, Task<SampleServerProcess?>> tryStart)
    {
        for (int attempt = 1; ; attempt++)
        {
            SampleServerProcess? sample = await tryStart(attempt == 5);
            if (sample is not null)
            {
                return sample;
            }
        }
    }

    // Null when it could not bind its TCP or TLS port (exit code 1) and this is not the last attempt.
    private static async Task<SampleServerProcess?> TryStartAsync(int tcpPort, int tlsPort, string[] arguments, bool lastAttempt = true, int httpPort = 0)
    {
        SampleServerProcess sample = new();
        sample._child = ChildProcess.StartDll(
            Path.Combine(AppContext.BaseDirectory, "CoapNet.Samples.Server.dll"),
            ["--port", "0", "--tcp-port", tcpPort.ToString(CultureInfo.InvariantCulture), "--dtls-port", "0", "--tls-port", tlsPort.ToString(CultureInfo.InvariantCulture), "--http-port", httpPort.ToString(CultureInfo.InvariantCulture), "--address", "127.0.0.1", .. arguments],
            sample.OnLine);
        List<Task> awaited = [sample._udp.Task];
        if (tcpPort != 0)
        {
            awaited.Add(sample._tcp.Task);
        }

        if (tlsPort != 0)
        {
            awaited.AddRange([sample._tls.Task, sample._fingerprint.Task]);
        }

        if (httpPort != 0)
        {
            awaited.AddRange([sample._ws.Task, sample._explorer.Task]);
        }

        Task listening = Task.WhenAll(awaited);
        Task<int> exited = sample._child.WaitForExitAsync(Liveness);
        Task first = await Task.WhenAny(listening, exited);
        if (first == listening)
        {
            await listening;
            return sample;
        }

        string output = sample.Output;
        sample.Dispose();
        if (!lastAttempt && exited.IsCompletedSuccessfully && exited.Result == 1)
        {
            return null;
        }

        throw new InvalidOperationException("The sample server did not say where it listens: " + output, exited.Exception);
    }

    private void OnLine(string line)
    {
        // "CoapNet sample server listening on coap://127.0.0.1:PORT" (and coap+tcp://, coaps+tcp://), one line per endpoint;
        // "... SHA-256 fingerprint AB:CD:... (try: ...)" for the coaps+tcp certificate; "... listening on coap+ws://127.0.0.1:PORT"
        // and "explorer: http://127.0.0.1:PORT/" for the HTTP port.
        const string Udp = "listening on coap://", Tcp = "listening on coap+tcp://", Tls = "listening on coaps+tcp://", Print = "SHA-256 fingerprint ";
        // The library's own log line for coap+ws may name the endpoint before Kestrel listens ([::]:0): the program's line is read.
        const string Ws = "sample server listening on coap+ws://", Explorer = "explorer: ";
        int at = line.IndexOf(Udp, StringComparison.Ordinal);
        if (at >= 0)
        {
            _udp.TrySetResult(IPEndPoint.Parse(line[(at + Udp.Length)..].Trim()));
        }

        at = line.IndexOf(Tcp, StringComparison.Ordinal);
        if (at >= 0)
        {
            _tcp.TrySetResult(IPEndPoint.Parse(line[(at + Tcp.Length)..].Trim()));
        }

        at = line.IndexOf(Tls, StringComparison.Ordinal);
        if (at >= 0)
        {
            _tls.TrySetResult(IPEndPoint.Parse(line[(at + Tls.Length)..].Trim()));
        }

        at = line.IndexOf(Ws, StringComparison.Ordinal);
        if (at >= 0)
        {
            _ws.TrySetResult(IPEndPoint.Parse(line[(at + Ws.Length)..].Trim()));
        }

        if (line.StartsWith(Explorer, StringComparison.Ordinal))
        {
            _explorer.TrySetResult(new Uri(line[Explorer.Length..].Trim()));
        }

        at = line.IndexOf(Print, StringComparison.Ordinal);
        if (at >= 0)
        {
            _fingerprint.TrySetResult(line[(at + Print.Length)..].Split(' ')[0]);
        }
    }
}
