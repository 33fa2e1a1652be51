using System.CommandLine;
using CoapNet.Cli;

namespace CoapNet.Tests.Cli;

/// <summary>How the tool's command line ends a command that fails in a way nothing in it expected.</summary>
public sealed class CoapCommandLineTests
{
    [Fact]
    public async Task AnExceptionNoCommandExpectsIsOneLineAndExitOne()
    {
        (int exit, string[] lines) = await RunBrokenAsync("broken", "coap://127.0.0.1/x");

        exit.Should().Be(1);
        lines.Should().Equal("error: coap://127.0.0.1/x: a bug in a command (InvalidOperationException; -v shows where)");
    }

    [Fact]
    public async Task WithVerboseTheLineIsFollowedByTheTrace()
    {
        (int exit, string[] lines) = await RunBrokenAsync("broken", "coap://127.0.0.1/x", "-v");

        exit.Should().Be(1);
        lines[0].Should().Be("error: coap://127.0.0.1/x: a bug in a command (InvalidOperationException)");
        lines.Should().Contain(line => line.Contains(nameof(Fail), StringComparison.Ordinal), "the trace names the method that threw");
    }

    /// <summary>Runs a command with the shared client options (the URI, -v) whose action throws what nothing catches.</summary>
    private static async Task<(int Exit, string[] Lines)> RunBrokenAsync(params string[] args)
    {
        using StringWriter error = new();
        Terminal terminal = new(TextWriter.Null, error, outputRedirected: true, errorRedirected: true, () => Stream.Null);
        Command broken = new("broken");
        new ClientSession().AddTo(broken);
        broken.SetAction(_ => Fail());

        int exit = await CoapCommandLine.RunAsync(new RootCommand { broken }, terminal, args);

        return (exit, error.ToString().Split('\n', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries));
    }

    private static int Fail() => throw new InvalidOperationException("A bug in a command.");
}
