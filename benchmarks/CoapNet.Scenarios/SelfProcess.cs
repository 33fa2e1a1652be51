using System.Diagnostics;
using System.Globalization;

namespace CoapNet.Scenarios;

/// <summary>
/// How a scenario runs this program again as a child process in another role (slow-senders-peer, websockets-server), so
/// that what the child costs (its connections, its CPU time) is apart from the parent's, and how it ends the child.
/// </summary>
internal static class SelfProcess
{
    /// <summary>
    /// Starts this program with <paramref name="arguments"/>, its standard input and output redirected (closing its input
    /// is the child's signal to stop); under <c>taskset -c <paramref name="cpu"/></c> when a core is given.
    /// </summary>
    public static Process Start(IReadOnlyList<string> arguments, int? cpu = null)
    {
        string self = Environment.ProcessPath ?? throw new InvalidOperationException("The path of this process is unknown.");
        List<string> command = [self];
        if (string.Equals(Path.GetFileNameWithoutExtension(self), "dotnet", StringComparison.OrdinalIgnoreCase))
        {
            // Started as "dotnet CoapNet.Scenarios.dll": the child needs the assembly too.
            command.Add(typeof(SelfProcess).Assembly.Location);
        }

        command.AddRange(arguments);
        if (cpu is int core)
        {
            // taskset executes the program in its own process, so the child's id is the program's.
            command.InsertRange(0, ["taskset", "-c", core.ToString(CultureInfo.InvariantCulture)]);
        }

        ProcessStartInfo start = new(command[0], command.Skip(1)) { RedirectStandardInput = true, RedirectStandardOutput = true, UseShellExecute = false };
        return Process.Start(start) ?? throw new InvalidOperationException($"The {arguments[0]} process did not start.");
    }

    /// <summary>Ends a child: closing its input is its signal to close its sockets and exit; it is killed only if it does not.</summary>
    public static void End(Process process)
    {
        try
        {
            process.StandardInput.Close();
            if (!process.WaitForExit(TimeSpan.FromSeconds(10)))
            {
                process.Kill();
                process.WaitForExit();
            }
        }
        finally
        {
            process.Dispose();
        }
    }
}
