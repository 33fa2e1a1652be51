using CoapNet.Tests.Server;

namespace CoapNet.Tests.Cli;

/// <summary>
/// The tool's --oscore FILE against the sample server's demo context (RFC 8613 Appendix C.1): the sequence number kept in
/// FILE.seq makes each run's requests new to the server's replay window (RFC 8613 section 7.5.1, Appendix B.1.1).
/// </summary>
public sealed class CoapToolOscoreTests : IDisposable
{
    // The client's side of the context the sample server prints: its Sender ID empty, the server's 01.
    private const string DemoContext = """
        { "MasterSecret": "0102030405060708090a0b0c0d0e0f10", "MasterSalt": "9e7ca92223786340", "SenderId": "", "RecipientId": "01" }
        """;

    private readonly string _folder = Directory.CreateTempSubdirectory("coapnet-oscore-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public async Task Two_runs_one_after_the_other_both_get_the_protected_answer_and_without_the_state_file_a_third_is_a_replay()
    {
        using SampleServerProcess sample = await SampleServerProcess.StartAsync();
        string file = Path.Combine(_folder, "demo.json");
        await File.WriteAllTextAsync(file, DemoContext);
        string uri = $"coap://{sample.EndPoint}/oscore/hello";

        CoapToolResult first = await CoapTool.RunAsync("get", uri, "--oscore", file);
        CoapToolResult second = await CoapTool.RunAsync("get", uri, "--oscore", file);

        first.ExitCode.Should().Be(0, first.ToString());
        first.OutputText.Should().Be("Hello, OSCORE!");
        second.ExitCode.Should().Be(0, second.ToString());
        second.OutputText.Should().Be("Hello, OSCORE!");
        File.ReadAllText(file + ".seq").Should().Be("200\n", "each run reserved the numbers it might use before its first request");

        // The state gone, the next run starts at 0 again: a Partial IV the server has seen, refused (RFC 8613 section 7.4).
        File.Delete(file + ".seq");
        CoapToolResult replay = await CoapTool.RunAsync("get", uri, "--oscore", file);
        replay.ExitCode.Should().Be(4, replay.ToString());
        replay.OutputText.Should().NotContain("Hello");
    }

    [Fact]
    public async Task A_context_file_with_a_misspelled_key_or_a_corrupt_state_file_is_one_line_that_names_it()
    {
        string file = Path.Combine(_folder, "demo.json");
        await File.WriteAllTextAsync(file, DemoContext.Replace("MasterSalt", "MasterSlat", StringComparison.Ordinal));
        string corrupt = Path.Combine(_folder, "ok.json");
        await File.WriteAllTextAsync(corrupt, DemoContext);
        await File.WriteAllTextAsync(corrupt + ".seq", "garbage");

        CoapToolResult misspelled = await CoapTool.RunAsync("get", "coap://127.0.0.1:9/oscore/hello", "--oscore", file);
        CoapToolResult damaged = await CoapTool.RunAsync("get", "coap://127.0.0.1:9/oscore/hello", "--oscore", corrupt);

        misspelled.ExitCode.Should().Be(1, misspelled.ToString());
        misspelled.ErrorLines.Should().ContainSingle().Which.Should().Contain("MasterSlat").And.Contain("MasterSalt").And.NotContain("0102030405");
        damaged.ExitCode.Should().Be(1, damaged.ToString());
        damaged.ErrorLines.Should().ContainSingle().Which.Should().Contain(corrupt + ".seq").And.Contain("corrupt");
    }
}
