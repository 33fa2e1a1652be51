namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// A child process that exits before it says what a test waits for fails the test at once, with what it printed, not
/// after the liveness bound (a sample that cannot bind its port, a setting it refuses).
/// </summary>
public sealed class ChildProcessTests
{
    [SkippableFact]
    public async Task AProcessThatExitsBeforeItSaysWhatTheTestWaitsForFailsTheWaitWithItsStandardError()
    {
        Skip.If(OperatingSystem.IsWindows(), "sh");
        TaskCompletionSource listening = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess child = ChildProcess.Start("sh", ["-c", "echo 'Cannot bind coap://[::]:5683: Address already in use.' >&2; exit 1"], _ => { });

        // A day: were the early exit not noticed, the test would hang rather than pass.
        Func<Task> wait = () => child.UntilAsync(listening.Task, TimeSpan.FromDays(1), "say it listens");

        (await wait.Should().ThrowAsync<Xunit.Sdk.XunitException>()).Which.Message.Should()
            .Contain("exited with 1 before it did say it listens").And.Contain("Cannot bind coap://[::]:5683: Address already in use.");
    }

    [Fact]
    public async Task WhatTheTestWaitsForEndsTheWaitWhileTheProcessRuns()
    {
        TaskCompletionSource ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
        using ChildProcess child = ChildProcess.Start(ChildProcess.DotnetHost, ["--info"], line =>
        {
            if (line.Contains(".NET", StringComparison.Ordinal))
            {
                ready.TrySetResult();
            }
        });

        await child.UntilAsync(ready.Task, TimeSpan.FromMinutes(5), "print its version");

        ready.Task.IsCompletedSuccessfully.Should().BeTrue();
    }
}
