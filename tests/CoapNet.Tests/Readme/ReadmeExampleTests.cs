using System.Net;
using System.Net.Sockets;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Readme;

/// <summary>The README's ten-line server and client example compiles (it is this code) and works.</summary>
public sealed class ReadmeExampleTests
{
    [SkippableFact]
    public async Task TheReadmeExampleCompilesAndAnswers()
    {
        string printed;
        try
        {
            printed = await RunReadmeExampleAsync();
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.AddressAlreadyInUse && !IsCi)
        {
            Skip.If(true, "UDP port 5683 on 127.0.0.1 is in use (a CoAP server is running here); the README example binds it.");
            return;
        }

        printed.Should().Be("2.05 Content: Hello, CoAP!");
    }

    [Fact]
    public void TheReadmeShowsExactlyThisCode()
    {
        string readme = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "README.md")).ReplaceLineEndings("\n");
        string source = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "ReadmeCheck", "ReadmeExampleTests.cs.txt"));

        readme.Should().Contain(Normalize(Between(source, "// README-BEGIN\n", "        // README-END")), "the README's example must be the code this test compiles and runs");
    }

    private static bool IsCi => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    private static async Task<string> RunReadmeExampleAsync()
    {
        StringWriter output = new();
        TextWriter console = output;

        // README-BEGIN
        await using var server = new CoapServer(new CoapServerOptions { Endpoints = [new IPEndPoint(IPAddress.Loopback, 5683)] });
        server.MapGet("/hello", request => CoapResponse.Content("Hello, CoAP!"));
        server.MapPut("/lamps/{id}", request => new CoapResponse(CoapCode.Changed));
        await server.StartAsync();

        await using var client = new CoapClient();
        CoapResponse response = await client.GetAsync(new Uri("coap://127.0.0.1/hello"));
        console.WriteLine($"{response.Code}: {response.GetPayloadString()}");  // 2.05 Content: Hello, CoAP!
        // README-END
        return output.ToString().Trim();
    }

    private static string Between(string text, string start, string end)
    {
        text = text.ReplaceLineEndings("\n");
        int from = text.IndexOf(start, StringComparison.Ordinal) + start.Length;
        return text[from..text.IndexOf(end, from, StringComparison.Ordinal)];
    }

    // The README shows the lines without the method's indentation.
    private static string Normalize(string code)
    {
        string[] lines = code.Split('\n');
        for (int i = 0; i < lines.Length; i++)
        {
            lines[i] = lines[i].StartsWith("        ", StringComparison.Ordinal) ? lines[i][8..] : lines[i];
        }

        return string.Join('\n', lines).Replace("console.WriteLine", "Console.WriteLine", StringComparison.Ordinal).TrimEnd();
    }
}
