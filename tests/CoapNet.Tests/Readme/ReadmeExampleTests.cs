using System.Net;
using CoapNet.Client;
using CoapNet.Endpoints;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Server;

namespace CoapNet.Tests.Readme;

/// <summary>
/// The README's ten-line server and client example, and its OSCORE one, compile (they are this code) and work. The README binds
/// the CoAP port, 5683; the test binds port 0, which the OS makes a free one at run time, so it neither fails nor skips when
/// something on the machine already holds 5683. <see cref="ReadmeSpelling"/> is the whole difference.
/// </summary>
public sealed class ReadmeExampleTests
{
    /// <summary>
    /// The only places where the code this test runs differs from the README's text: the test's spelling, then
    /// the README's. The README's client URI has no port because 5683 is CoAP's default (RFC 7252 section 6.1).
    /// </summary>
    private static readonly (string Test, string Readme)[] ReadmeSpelling =
    [
        ("\"coap://127.0.0.1:0\"", "\"coap://127.0.0.1:5683\""),
        ("$\"coap://127.0.0.1:{server.LocalEndPoints[0].Port}/hello\"", "\"coap://127.0.0.1/hello\""),
        ("console.WriteLine", "Console.WriteLine"),
    ];

    /// <summary>The same for the OSCORE example: the port, and the server's address the client's context is for.</summary>
    private static readonly (string Test, string Readme)[] OscoreSpelling =
    [
        ("\"coap://127.0.0.1:0\"", "\"coap://127.0.0.1:5683\""),
        ("AddClientContext(server.LocalEndPoints[0], mine)", "AddClientContext(new IPEndPoint(IPAddress.Loopback, 5683), mine)"),
        ("$\"coap://{server.LocalEndPoints[0]}/hello\"", "\"coap://127.0.0.1/hello\""),
        ("console.WriteLine", "Console.WriteLine"),
    ];

    [Fact]
    public async Task TheReadmeExampleCompilesAndAnswers()
    {
        string printed = await RunReadmeExampleAsync();

        printed.Should().Be("2.05 Content: Hello, CoAP!");
    }

    [Fact]
    public async Task TheReadmeOscoreExampleCompilesAndAnswersOnlyAProtectedRequest()
    {
        (string printed, CoapCode unprotected) = await RunReadmeOscoreExampleAsync();

        printed.Should().Be("Hello, OSCORE!");
        unprotected.Should().Be(CoapCode.Unauthorized);
    }

    [Theory]
    [InlineData("README")]
    [InlineData("OSCORE")]
    public void TheReadmeShowsExactlyThisCode(string marker)
    {
        (string Test, string Readme)[] spelling = marker == "README" ? ReadmeSpelling : OscoreSpelling;
        string readme = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "README.md")).ReplaceLineEndings("\n");
        string source = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "ReadmeExampleTests.cs.txt"));
        string example = Between(source, $"// {marker}-BEGIN\n", $"        // {marker}-END");

        foreach ((string test, string _) in spelling)
        {
            example.Should().Contain(test, "each substitution must still apply, or the README's text would go unchecked there");
        }

        readme.Should().Contain(Normalize(example, spelling), "the README's example must be the code this test compiles and runs");
    }

    private static async Task<string> RunReadmeExampleAsync()
    {
        StringWriter output = new();
        TextWriter console = output;

        // README-BEGIN
        await using var server = new CoapServer(new CoapServerOptions().Listen("coap://127.0.0.1:0"));
        server.MapGet("/hello", request => CoapResponse.Content("Hello, CoAP!"));
        server.MapPut("/lamps/{id}", request => new CoapResponse(CoapCode.Changed));
        await server.StartAsync();

        await using var client = new CoapClient();
        CoapResponse response = await client.GetAsync(new Uri($"coap://127.0.0.1:{server.LocalEndPoints[0].Port}/hello"));
        console.WriteLine($"{response.Code}: {response.GetPayloadString()}");  // 2.05 Content: Hello, CoAP!
        // README-END
        return output.ToString().Trim();
    }

    private static async Task<(string Printed, CoapCode Unprotected)> RunReadmeOscoreExampleAsync()
    {
        StringWriter output = new();
        TextWriter console = output;

        // OSCORE-BEGIN
        var secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");
        var serverOptions = new CoapServerOptions().Listen("coap://127.0.0.1:0");
        serverOptions.Endpoint.UseOscore(new OscoreOptions().AddServerContext(new OscoreContext(new() { MasterSecret = secret, SenderId = [1], RecipientId = [] })));
        await using var server = new CoapServer(serverOptions);
        server.MapGet("/hello", () => "Hello, OSCORE!").RequireOscore();
        await server.StartAsync();

        var mine = new OscoreContext(new() { MasterSecret = secret, SenderId = [], RecipientId = [1] });
        await using var client = new CoapClient(new CoapClientOptions { Endpoint = new CoapEndpointOptions().UseOscore(new OscoreOptions().AddClientContext(server.LocalEndPoints[0], mine)) });
        console.WriteLine((await client.GetAsync(new Uri($"coap://{server.LocalEndPoints[0]}/hello"))).GetPayloadString());  // Hello, OSCORE!
        // OSCORE-END
        await using CoapClient plain = new();
        CoapResponse unprotected = await plain.GetAsync(new Uri($"coap://{server.LocalEndPoints[0]}/hello"));
        return (output.ToString().Trim(), unprotected.Code);
    }

    private static string Between(string text, string start, string end)
    {
        text = text.ReplaceLineEndings("\n");
        int from = text.IndexOf(start, StringComparison.Ordinal) + start.Length;
        return text[from..text.IndexOf(end, from, StringComparison.Ordinal)];
    }

    // The README shows the lines without the method's indentation, and with its own spelling of the port.
    private static string Normalize(string code, (string Test, string Readme)[] spelling)
    {
        string[] lines = code.Split('\n');
        for (int i = 0; i < lines.Length; i++)
        {
            lines[i] = lines[i].StartsWith("        ", StringComparison.Ordinal) ? lines[i][8..] : lines[i];
        }

        string readme = string.Join('\n', lines);
        foreach ((string test, string readmeSpelling) in spelling)
        {
            readme = readme.Replace(test, readmeSpelling, StringComparison.Ordinal);
        }

        return readme.TrimEnd();
    }
}
