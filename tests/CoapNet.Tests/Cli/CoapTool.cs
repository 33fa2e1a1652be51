using System.Diagnostics;
using System.Text;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Cli;

/// <summary>
/// The built <c>coap</c> tool run as a process, the way a script runs it: <c>dotnet coap.dll ...</c>
/// with standard input, output and error redirected (so it sees a pipe, not a terminal).
/// </summary>
internal static class CoapTool
{
    /// <summary>How long one run may take before the test fails instead of hanging.</summary>
    public static readonly TimeSpan Liveness = TimeSpan.FromSeconds(60);

    /// <summary>The tool's dll, copied next to the tests through the project reference.</summary>
    public static string Dll
    {
        get
        {
            string dll = Path.Combine(AppContext.BaseDirectory, "coap.dll");
            File.Exists(dll).Should().BeTrue($"the project reference copies the tool next to the tests ({dll})");
            return dll;
        }
    }

    /// <summary>Runs the tool to completion.</summary>
    /// <param name="stdin">What to pipe into standard input; it is closed either way.</param>
    /// <param name="arguments">The command line after "coap".</param>
    public static Task<CoapToolResult> RunAsync(byte[]? stdin, params string[] arguments)
        => RunAsync(Redirected(ChildProcess.DotnetHost, [Dll, .. arguments]), stdin, "coap " + string.Join(' ', arguments));

    /// <inheritdoc cref="RunAsync(byte[], string[])"/>
    public static Task<CoapToolResult> RunAsync(params string[] arguments) => RunAsync((byte[]?)null, arguments);

    /// <summary>Runs a POSIX shell script that runs the tool, the way a user's script does: <c>sh -c SCRIPT ARGUMENTS</c> ($0, $1, ...).</summary>
    /// <param name="script">The script.</param>
    /// <param name="arguments">Its positional parameters, from $0.</param>
    public static Task<CoapToolResult> RunShellAsync(string script, params string[] arguments)
        => RunAsync(Redirected("/bin/sh", ["-c", script, .. arguments]), null, "sh -c " + script);

    private static async Task<CoapToolResult> RunAsync(ProcessStartInfo info, byte[]? stdin, string what)
    {
        using Process process = new() { StartInfo = info };
        process.Start();
        Task<byte[]> output = ReadAllAsync(process.StandardOutput.BaseStream);
        Task<string> error = process.StandardError.ReadToEndAsync();
        if (stdin is not null)
        {
            await process.StandardInput.BaseStream.WriteAsync(stdin);
        }

        process.StandardInput.Close();
        using CancellationTokenSource timeout = new(Liveness);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{what} did not exit within {Liveness}.");
        }

        return new CoapToolResult(process.ExitCode, await output, await error);
    }

    /// <summary>How to start a program with every stream redirected.</summary>
    private static ProcessStartInfo Redirected(string program, IEnumerable<string> arguments)
    {
        ProcessStartInfo info = new(program)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return info;
    }

    private static async Task<byte[]> ReadAllAsync(Stream stream)
    {
        using MemoryStream buffer = new();
        await stream.CopyToAsync(buffer);
        return buffer.ToArray();
    }
}

/// <summary>What one run of the tool left behind.</summary>
internal sealed record CoapToolResult(int ExitCode, byte[] Output, string Error)
{
    /// <summary>Standard output as UTF-8 text.</summary>
    public string OutputText => Encoding.UTF8.GetString(Output);

    /// <summary>Standard error split into lines.</summary>
    public string[] ErrorLines => Error.Split('\n', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);

    /// <summary>For assertion messages.</summary>
    public override string ToString() => $"exit {ExitCode}; stdout: {OutputText}; stderr: {Error}";
}
