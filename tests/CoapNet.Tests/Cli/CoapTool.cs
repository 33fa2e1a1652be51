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
    public static async Task<CoapToolResult> RunAsync(byte[]? stdin, params string[] arguments)
    {
        using Process process = new() { StartInfo = StartInfo(arguments) };
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
            throw new TimeoutException($"coap {string.Join(' ', arguments)} did not exit within {Liveness}.");
        }

        return new CoapToolResult(process.ExitCode, await output, await error);
    }

    /// <inheritdoc cref="RunAsync(byte[], string[])"/>
    public static Task<CoapToolResult> RunAsync(params string[] arguments) => RunAsync(null, arguments);

    /// <summary>How to start the tool with every stream redirected.</summary>
    private static ProcessStartInfo StartInfo(params string[] arguments)
    {
        ProcessStartInfo info = new(ChildProcess.DotnetHost)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Dll);
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
