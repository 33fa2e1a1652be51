using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// A program the tests run as a process the way a user runs it (a sample server, <c>coap serve</c>):
/// its output collected line by line, signals sent with kill(1), and a bounded wait for its exit.
/// </summary>
internal sealed class ChildProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();

    private ChildProcess(Process process) => _process = process;

    /// <summary>Everything it printed so far, stdout and stderr.</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>The dotnet host that runs the tests, to run a built program's dll with.</summary>
    public static string DotnetHost
        => Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host
        : Environment.ProcessPath is { } path && Path.GetFileNameWithoutExtension(path) == "dotnet" ? path
        : "dotnet";

    /// <summary>Starts a dll under the dotnet host with its output redirected and its input closed.</summary>
    /// <param name="dll">The program.</param>
    /// <param name="arguments">Its arguments.</param>
    /// <param name="onLine">Called with each line it prints, on stdout or stderr.</param>
    public static ChildProcess StartDll(string dll, IEnumerable<string> arguments, Action<string> onLine)
    {
        File.Exists(dll).Should().BeTrue($"the project reference copies the program next to the tests ({dll})");

        // A hosted program finds its appsettings.json in its content root, the working directory.
        return Start(DotnetHost, [dll, .. arguments], onLine, Path.GetDirectoryName(dll)!);
    }

    /// <summary>Starts an executable with its output redirected and its input closed.</summary>
    /// <param name="executable">The program: a path, or a name looked up on PATH.</param>
    /// <param name="arguments">Its arguments.</param>
    /// <param name="onLine">Called with each line it prints, on stdout or stderr.</param>
    /// <param name="workingDirectory">Its working directory; null for the tests' own.</param>
    public static ChildProcess Start(string executable, IEnumerable<string> arguments, Action<string> onLine, string? workingDirectory = null)
    {
        ProcessStartInfo info = new(executable)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        if (workingDirectory is not null)
        {
            info.WorkingDirectory = workingDirectory;
        }

        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        ChildProcess child = new(new Process { StartInfo = info });
        child._process.OutputDataReceived += (_, e) => child.OnLine(e.Data, onLine);
        child._process.ErrorDataReceived += (_, e) => child.OnLine(e.Data, onLine);
        child._process.Start();
        child._process.StandardInput.Close();
        child._process.BeginOutputReadLine();
        child._process.BeginErrorReadLine();
        return child;
    }

    /// <summary>Whether it has exited.</summary>
    public bool HasExited => _process.HasExited;

    /// <summary>Sends a signal the way a user would, with kill(1).</summary>
    /// <param name="signal">The signal name, such as "TERM".</param>
    public async Task SignalAsync(string signal)
    {
        using Process kill = Process.Start("kill", ["-" + signal, _process.Id.ToString(CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync();
        kill.ExitCode.Should().Be(0);
    }

    /// <summary>Waits for the exit, failing the test after <paramref name="liveness"/>.</summary>
    /// <param name="liveness">How long to wait.</param>
    /// <returns>The exit code.</returns>
    public async Task<int> WaitForExitAsync(TimeSpan liveness)
    {
        using CancellationTokenSource timeout = new(liveness);
        await _process.WaitForExitAsync(timeout.Token);
        return _process.ExitCode;
    }

    /// <summary>
    /// Waits for <paramref name="awaited"/> (a line it prints, say), and fails the test at once with everything it printed
    /// when the process exits first (a port it could not bind, a setting it refused), rather than after
    /// <paramref name="liveness"/>, which bounds a process that neither says it nor exits.
    /// </summary>
    /// <param name="awaited">What the test waits for.</param>
    /// <param name="liveness">How long to wait.</param>
    /// <param name="what">What <paramref name="awaited"/> is, for the failure's message.</param>
    public async Task UntilAsync(Task awaited, TimeSpan liveness, string what)
    {
        // WaitForExitAsync completes once the redirected output has been read to its end too, so Output is whole.
        Task exited = _process.WaitForExitAsync();
        Task first;
        try
        {
            first = await Task.WhenAny(awaited, exited).WaitAsync(liveness);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"{_process.StartInfo.FileName} {string.Join(' ', _process.StartInfo.ArgumentList)} did not {what} within {liveness}; it printed:\n{Output}");
        }

        // The output's last line may still be on its way to its handler when the exit is seen; a moment for it to
        // arrive keeps a process that did what was awaited and then exited from counting as one that exited early.
        if (first != awaited && await Task.WhenAny(awaited, Task.Delay(TimeSpan.FromSeconds(2))) != awaited)
        {
            throw new Xunit.Sdk.XunitException($"{_process.StartInfo.FileName} {string.Join(' ', _process.StartInfo.ArgumentList)} exited with {_process.ExitCode} before it did {what}; it printed:\n{Output}");
        }

        await awaited;
    }

    /// <summary>Kills the process if it still runs.</summary>
    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }

        _process.Dispose();
    }

    private void OnLine(string? line, Action<string> onLine)
    {
        if (line is null)
        {
            return;
        }

        lock (_output)
        {
            _output.AppendLine(line);
        }

        onLine(line);
    }
}
