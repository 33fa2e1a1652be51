using System.Diagnostics;
using System.Globalization;

namespace CoapNet.Scenarios;

/// <summary>The parent's handle on a <see cref="SlowSenderPeer"/> child process; disposing it ends the child.</summary>
internal sealed class SlowSenderProcess : IDisposable
{
    // Opening 1,000 connections takes about a second; this only guards against a hung run.
    private static readonly TimeSpan OpenTimeout = TimeSpan.FromMinutes(2);

    private readonly Process _process;

    private SlowSenderProcess(Process process, int open)
    {
        _process = process;
        Open = open;
    }

    /// <summary>How many connections the child holds open (CSMs exchanged).</summary>
    public int Open { get; }

    /// <summary>Starts this program as a slow-senders-peer and waits until its <paramref name="count"/> connections are open.</summary>
    public static async Task<SlowSenderProcess> StartAsync(int port, int count, int runSeconds)
    {
        Process process = SelfProcess.Start(["slow-senders-peer", "--port", Invariant(port), "--connections", Invariant(count), "--run-seconds", Invariant(runSeconds)]);
        try
        {
            using CancellationTokenSource timeout = new(OpenTimeout);
            string? line = await process.StandardOutput.ReadLineAsync(timeout.Token);
            string[] words = line?.Split(' ') ?? [];
            if (words.Length != 3 || words[0] != "open")
            {
                throw new InvalidOperationException($"The slow-senders-peer process answered '{line}' instead of 'open OK REFUSED'.");
            }

            return new SlowSenderProcess(process, int.Parse(words[1], CultureInfo.InvariantCulture));
        }
        catch
        {
            SelfProcess.End(process);
            throw;
        }
    }

    /// <summary>Tells the child to start trickling its requests.</summary>
    public async Task StartTrickleAsync()
    {
        await _process.StandardInput.WriteLineAsync("trickle");
        await _process.StandardInput.FlushAsync();
    }

    /// <summary>Ends the child and returns how many bytes each of its connections trickled (-1 when it did not say).</summary>
    public async Task<int> StopAsync()
    {
        _process.StandardInput.Close();
        using CancellationTokenSource timeout = new(TimeSpan.FromSeconds(10));
        try
        {
            string? line = await _process.StandardOutput.ReadLineAsync(timeout.Token);
            return line is not null && line.StartsWith("trickled ", StringComparison.Ordinal) ? int.Parse(line.AsSpan(9), CultureInfo.InvariantCulture) : -1;
        }
        catch (OperationCanceledException)
        {
            return -1;
        }
    }

    /// <inheritdoc/>
    public void Dispose() => SelfProcess.End(_process);

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);
}
