using System.Diagnostics;
using System.Text;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;

namespace CoapNet.Tests.Cli;

/// <summary>
/// A command run in a pseudo-terminal, the way a person runs it: a detached tmux session on a server of its own (-L),
/// whose screen is read back as text with capture-pane, so what a terminal shows is asserted without a screenshot.
/// Without tmux the tests skip and say how to install it; under CI=true they fail instead, as CI installs it.
/// </summary>
internal sealed class Tmux : IDisposable
{
    /// <summary>How to install tmux, for the skip message.</summary>
    public const string InstallHint = "tmux is not installed; install it with: sudo apt-get install -y tmux";

    private const string Done = "__coap_exit_";
    private readonly string _server = "coapnet-" + Guid.NewGuid().ToString("N")[..12];

    private Tmux()
    {
    }

    /// <summary>The exit code of the command, once it ended.</summary>
    public int ExitCode { get; private set; }

    /// <summary>Runs a shell command line in a 200x50 terminal and waits until it ends; the screen stays readable.</summary>
    /// <param name="commandLine">A POSIX shell command line.</param>
    /// <returns>The session, ended.</returns>
    public static async Task<Tmux> RunAsync(string commandLine)
    {
        Require();
        Tmux tmux = new();
        await tmux.TmuxAsync("new-session", "-d", "-x", "200", "-y", "50", $"{commandLine}; echo {Done}$?; sleep 120");
        // A liveness bound, not a timing goal: the screen is read every 100 ms until the command has ended.
        Stopwatch waited = Stopwatch.StartNew();
        string screen = await tmux.CaptureAsync();
        while (!screen.Contains(Done, StringComparison.Ordinal))
        {
            if (waited.Elapsed > CoapTool.Liveness)
            {
                tmux.Dispose();
                throw new TimeoutException($"'{commandLine}' did not end in tmux within {CoapTool.Liveness}; the screen: {screen}");
            }

            await Task.Delay(100);
            screen = await tmux.CaptureAsync();
        }
        int at = screen.IndexOf(Done, StringComparison.Ordinal) + Done.Length;
        tmux.ExitCode = int.Parse(screen[at..].Split('\n')[0].Trim(), System.Globalization.CultureInfo.InvariantCulture);
        return tmux;
    }

    /// <summary>The coap tool's command line, quoted for the shell.</summary>
    /// <param name="arguments">The arguments after "coap".</param>
    /// <returns>The command line.</returns>
    public static string Coap(params string[] arguments)
    {
        StringBuilder line = new(Quote(ChildProcess.DotnetHost) + " " + Quote(CoapTool.Dll));
        foreach (string argument in arguments)
        {
            line.Append(' ').Append(Quote(argument));
        }

        return line.ToString();
    }

    /// <summary>The screen as text (no escape sequences), with the scrollback.</summary>
    /// <returns>The text.</returns>
    public Task<string> CaptureAsync() => TmuxAsync("capture-pane", "-p", "-J", "-S", "-200");

    /// <summary>Ends the tmux server of this session.</summary>
    public void Dispose()
    {
        using Process kill = Process.Start(new ProcessStartInfo("tmux", ["-L", _server, "kill-server"]) { RedirectStandardError = true, RedirectStandardOutput = true })!;
        kill.WaitForExit();
    }

    private static void Require()
    {
        // CI installs tmux in .ci/run; there a missing tmux is a failure, not a skip.
        if (LibCoap.Find("tmux") is null)
        {
            LibCoap.Missing(InstallHint);
        }
    }

    private static string Quote(string argument) => "'" + argument.Replace("'", "'\\''", StringComparison.Ordinal) + "'";

    private async Task<string> TmuxAsync(params string[] arguments)
    {
        ProcessStartInfo info = new("tmux") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        info.ArgumentList.Add("-L");
        info.ArgumentList.Add(_server);
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        // A terminal type tmux knows, whatever runs the tests; NO_COLOR unset so the tool behaves as on a desk.
        info.Environment["TERM"] = "xterm-256color";
        info.Environment.Remove("NO_COLOR");
        using Process process = Process.Start(info)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        string error = await process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync();
        process.ExitCode.Should().Be(0, $"tmux {string.Join(' ', arguments)}: {error}");
        return await output;
    }
}
