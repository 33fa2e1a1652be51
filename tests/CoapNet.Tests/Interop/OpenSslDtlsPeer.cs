using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Interop;

/// <summary>
/// OpenSSL's command-line DTLS 1.2 peers, <c>openssl s_client</c> and <c>openssl s_server</c> (Debian package openssl),
/// a record layer that shares no code with ours. Run with <c>-brief</c>: each application record the peer decrypts comes
/// out on its stdout with one write, what a test writes to its stdin in one write goes out as one application record,
/// and stderr names the negotiated suite. On a developer machine without the command the tests skip with how to
/// install it; under CI=true (.ci/run installs it) they fail instead.
/// </summary>
internal sealed class OpenSslDtlsPeer : IDisposable
{
    public const string InstallHint = "the openssl command is not installed; install it with: sudo apt-get install -y openssl";

    /// <summary>How long a read or a handshake may take before the test fails: a liveness bound, not a timing goal.</summary>
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly Channel<byte[]> _records = Channel.CreateUnbounded<byte[]>();
    private readonly List<string> _errors = [];
    private readonly Task _reading;

    private OpenSslDtlsPeer(Process process, int port)
    {
        _process = process;
        Port = port;
        _reading = Task.WhenAll(Task.Run(ReadRecordsAsync), Task.Run(ReadErrorsAsync));
    }

    /// <summary>The port an <c>s_server</c> listens on (UDP, 127.0.0.1); 0 for an <c>s_client</c>.</summary>
    public int Port { get; }

    /// <summary>What the peer wrote to stderr so far: the connection summary, verification and alert messages.</summary>
    public string Errors
    {
        get
        {
            lock (_errors)
            {
                return string.Join('\n', _errors);
            }
        }
    }

    /// <summary>True once the process has ended (a close_notify or fatal alert received, or its input closed).</summary>
    public bool HasExited => _process.HasExited;

    /// <summary><c>-psk_identity</c> and <c>-psk</c> (the key in hex) for either side; a server needs <see cref="NoCertificate"/> too.</summary>
    public static string[] Psk(string identity, byte[] key) => ["-psk_identity", identity, "-psk", Convert.ToHexString(key)];

    /// <summary>An <c>s_server</c> that offers PSK suites only.</summary>
    public static string[] NoCertificate => ["-nocert"];

    /// <summary>
    /// A certificate and its key as PEM files, and the CA that the peer's certificate must chain to; the peer's
    /// certificate is required and must verify (a failure ends the handshake), and a server's must name 127.0.0.1.
    /// </summary>
    public static string[] Certificate(string certificate, string key, string authority, bool server)
        => ["-cert", certificate, "-key", key, "-CAfile", authority, "-verify_return_error", .. server ? new[] { "-Verify", "2" } : ["-verify", "2", "-verify_ip", "127.0.0.1"]];

    /// <summary>Starts <c>openssl s_client</c> towards <paramref name="server"/>, offering only <paramref name="cipher"/> (an OpenSSL suite name).</summary>
    public static OpenSslDtlsPeer Client(IPEndPoint server, string cipher, params string[] credentials)
        => new(Start(["s_client", "-connect", $"127.0.0.1:{server.Port.ToString(CultureInfo.InvariantCulture)}", .. Common(cipher), "-nocommands", .. credentials]), 0);

    /// <summary>Starts <c>openssl s_server</c> on 127.0.0.1 at a free port, accepting only <paramref name="cipher"/>, and waits until it has bound it.</summary>
    public static OpenSslDtlsPeer Server(string cipher, params string[] credentials)
    {
        for (int attempt = 1; ; attempt++)
        {
            // s_server takes no port 0 under -brief (it prints the port it got only without it): a port free a moment
            // ago, and another if something took it first (s_server then exits at once).
            int port = FreePorts.UdpAndTcp();
            Process process = Start(["s_server", "-accept", $"127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}", .. Common(cipher), .. credentials]);
            OpenSslDtlsPeer peer = new(process, port);
            if (WaitUntilBound(process, port))
            {
                return peer;
            }

            string errors = peer.Errors;
            peer.Dispose();
            if (attempt == 5)
            {
                throw new InvalidOperationException($"openssl s_server did not start: {errors}");
            }
        }
    }

    /// <summary>The suite the handshake settled on, as OpenSSL names it; waits for the handshake to complete.</summary>
    public async Task<string> NegotiatedCipherAsync()
    {
        const string Prefix = "Ciphersuite: ";
        string? Line()
        {
            lock (_errors)
            {
                return _errors.Find(line => line.StartsWith(Prefix, StringComparison.Ordinal));
            }
        }

        await Wait.UntilAsync(() => Line() is not null || _process.HasExited, "openssl's handshake to complete", Bound);
        return Line()?[Prefix.Length..] ?? throw new InvalidOperationException($"openssl ended without a handshake: {Errors}");
    }

    /// <summary>Sends <paramref name="plaintext"/> as one application record (one write to the pipe, atomic below PIPE_BUF).</summary>
    public void Send(ReadOnlySpan<byte> plaintext)
    {
        Stream input = _process.StandardInput.BaseStream;
        input.Write(plaintext);
        input.Flush();
    }

    /// <summary>The plaintext of the next application record the peer decrypted (one write of OpenSSL's to its stdout).</summary>
    public async Task<byte[]> ReceiveAsync()
    {
        using CancellationTokenSource bound = new(Bound);
        try
        {
            return await _records.Reader.ReadAsync(bound.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"openssl decrypted nothing within {Bound.TotalSeconds} s: {Errors}");
        }
        catch (ChannelClosedException)
        {
            throw new InvalidOperationException($"openssl exited with {_process.ExitCode}: {Errors}");
        }
    }

    /// <summary>Closes the peer's stdin: <c>s_client</c> then sends close_notify (RFC 5246 section 7.2.1) and exits.</summary>
    public void CloseInput() => _process.StandardInput.Close();

    /// <summary>Waits for the process to end by itself, within the liveness bound; its exit code.</summary>
    public async Task<int> WaitForExitAsync()
    {
        using CancellationTokenSource bound = new(Bound);
        try
        {
            await _process.WaitForExitAsync(bound.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"openssl did not exit within {Bound.TotalSeconds} s: {Errors}");
        }

        return _process.ExitCode;
    }

    /// <summary>Ends the process if it still runs.</summary>
    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        // Its pipes end with it; the readers finish before the process object lets go of them.
        _process.WaitForExit();
        _reading.Wait(Bound);
        _process.Dispose();
    }

    // RFC 6347: DTLS 1.2 only; the one suite asked for (CCM_8's 64-bit tag needs OpenSSL's security level 0); -brief for
    // a stdout of application data alone and the negotiated suite on stderr.
    private static string[] Common(string cipher) => ["-dtls1_2", "-cipher", cipher + ":@SECLEVEL=0", "-brief"];

    private static Process Start(string[] arguments) => LibCoap.Start(LibCoap.Require("openssl", InstallHint), arguments);

    // Bound once a socket of our own, which asks for no address reuse and so cannot share the port, can no longer take
    // it; false when s_server exited first (the port was taken meanwhile) or never bound it.
    private static bool WaitUntilBound(Process process, int port)
    {
        Stopwatch waited = Stopwatch.StartNew();
        while (waited.Elapsed < Bound && !process.HasExited)
        {
            using Socket probe = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            try
            {
                probe.Bind(new IPEndPoint(IPAddress.Loopback, port));
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.AddressAlreadyInUse)
            {
                return true;
            }

            probe.Close();
            Thread.Sleep(10);
        }

        return false;
    }

    private async Task ReadRecordsAsync()
    {
        Stream output = _process.StandardOutput.BaseStream;
        byte[] buffer = new byte[65_536];
        int read;
        while ((read = await output.ReadAsync(buffer)) > 0)
        {
            _records.Writer.TryWrite(buffer.AsSpan(0, read).ToArray());
        }

        _records.Writer.TryComplete();
    }

    private async Task ReadErrorsAsync()
    {
        StreamReader errors = _process.StandardError;
        while (await errors.ReadLineAsync() is { } line)
        {
            lock (_errors)
            {
                _errors.Add(line);
            }
        }
    }
}
