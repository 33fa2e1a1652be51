namespace CoapNet.Tests.Cli;

/// <summary>The tool's command line itself: help for every command, and exit code 2 for every kind of bad usage.</summary>
public sealed class CoapToolUsageTests
{
    [Theory]
    [InlineData]
    [InlineData("get")]
    [InlineData("post")]
    [InlineData("put")]
    [InlineData("delete")]
    [InlineData("fetch")]
    [InlineData("patch")]
    [InlineData("ipatch")]
    [InlineData("observe")]
    [InlineData("discover")]
    [InlineData("ping")]
    [InlineData("serve")]
    public async Task EveryCommandHasHelpThatDocumentsTheExitCodes(params string[] command)
    {
        CoapToolResult result = await CoapTool.RunAsync([.. command, "--help"]);

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Contain("Usage:").And.Contain("Exit codes: 0");
        result.OutputText.Should().NotContain("\u001b");
    }

    [Theory]
    [InlineData("get")]
    [InlineData("frobnicate", "coap://127.0.0.1/")]
    [InlineData("get", "http://127.0.0.1/")]
    [InlineData("get", "coap://127.0.0.1/", "--bogus")]
    [InlineData("post", "coap://127.0.0.1/", "-t", "no-such-format")]
    [InlineData("post", "coap://127.0.0.1/", "-d", "x", "-f", "file")]
    [InlineData("get", "coap://127.0.0.1/", "--timeout", "-1")]
    [InlineData("get", "coap://127.0.0.1/", "-O", "70000,x")]
    [InlineData("get", "coap://127.0.0.1/", "-O", "14,soon")]
    [InlineData("get", "coap://127.0.0.1/", "-b", "100")]
    [InlineData("get", "coap://127.0.0.1/", "--raw", "--pretty")]
    [InlineData("observe", "coap://127.0.0.1/", "--count", "0")]
    [InlineData("observe", "coap://127.0.0.1/", "-s", "0")]
    [InlineData("serve", "/no/such/folder")]
    [InlineData("serve", ".", "--port", "70000")]
    public async Task BadUsageExitsTwoAndSaysWhy(params string[] arguments)
    {
        CoapToolResult result = await CoapTool.RunAsync(arguments);

        result.ExitCode.Should().Be(2, result.ToString());
        result.Output.Should().BeEmpty();
        result.Error.Should().Contain("error:").And.Contain("--help");
    }

    [Theory]
    [InlineData("coap://127.0.0.1:99999/hello", "'coap://127.0.0.1:99999/hello' has the port '99999', which is not a number from 0 to 65535.")]
    [InlineData("coap://[::1]:70000/hello", "'coap://[::1]:70000/hello' has the port '70000', which is not a number from 0 to 65535.")]
    [InlineData("coaps+tcp://127.0.0.1:5x/hello", "'coaps+tcp://127.0.0.1:5x/hello' has the port '5x', which is not a number from 0 to 65535.")]
    [InlineData("coap://127.0.0.1:0/hello", "'coap://127.0.0.1:0/hello' has the port 0, which no server listens on.")]
    [InlineData("http://127.0.0.1/hello", "'http://127.0.0.1/hello' is not a coap://, coaps://, coap+tcp://, coaps+tcp://, coap+ws://, coaps+ws:// URI.")]
    [InlineData("coap://[::1/hello", "'coap://[::1/hello' opens an IP literal with '[' at index 7 but does not close it.")]
    public async Task AUriTheLibraryCannotReadIsBadUsageThatSaysWhatIsWrong(string uri, string said)
    {
        CoapToolResult result = await CoapTool.RunAsync("get", uri);

        result.ExitCode.Should().Be(2, result.ToString());
        result.ErrorLines[0].Should().Be($"error: {said}", "the library's endpoint parser says what is wrong where (the port's fault is the port's), not only that the URI is not a coap URI");
    }

    [Fact]
    public async Task AnUnreadablePayloadFileIsBadUsage()
    {
        CoapToolResult result = await CoapTool.RunAsync("put", "coap://127.0.0.1/x", "-f", "/no/such/file");

        result.ExitCode.Should().Be(2, result.ToString());
        result.Error.Should().Contain("cannot read the payload");
    }

    [Fact]
    public async Task CoapAlonePrintsTheHelp()
    {
        CoapToolResult result = await CoapTool.RunAsync();

        result.ExitCode.Should().Be(0, result.ToString());
        result.OutputText.Should().Contain("Usage:").And.Contain("observe <URI>").And.Contain("Exit codes: 0");
    }
}
