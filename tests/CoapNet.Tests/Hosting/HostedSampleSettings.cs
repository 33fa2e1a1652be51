using System.Text.Json;
using System.Text.Json.Nodes;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// The hosted sample's appsettings.json as the tests run it, in a content root of its own (<see cref="Arguments"/>): the
/// sample's file with its <c>Coap:Endpoints</c> section written anew, each endpoint under its name and scheme on
/// 127.0.0.1 at a port the OS picks. The section is replaced whole, not overridden key by key on the command line, so no
/// endpoint of the file (which binds CoAP's fixed ports, as a running sample does) reaches a test; nor does its HTTP port.
/// </summary>
internal sealed class HostedSampleSettings : IDisposable
{
    /// <summary>Writes the file.</summary>
    /// <param name="edit">A change to the file's text, such as a misspelled key; none when null.</param>
    public HostedSampleSettings(Func<string, string>? edit = null)
    {
        JsonNode settings = JsonNode.Parse(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "appsettings.json")))!;
        JsonObject endpoints = new();
        foreach ((string name, JsonNode? endpoint) in settings["Coap"]!["Endpoints"]!.AsObject())
        {
            string url = endpoint!["Url"]!.GetValue<string>();
            string scheme = url[..url.IndexOf("://", StringComparison.Ordinal)];
            endpoints[name] = new JsonObject { ["Url"] = $"{scheme}://127.0.0.1:0" };
            Endpoints.Add(name, scheme);
        }

        Endpoints.Should().NotBeEmpty("the sample's file names its endpoints");
        settings["Coap"]!["Endpoints"] = endpoints;

        // Kestrel's HTTP port (coap+ws and the explorer) too: never the file's 8683, which the server .ci/run starts holds.
        settings["Kestrel"] = new JsonObject { ["Endpoints"] = new JsonObject { ["http"] = new JsonObject { ["Url"] = "http://127.0.0.1:0" } } };
        string text = settings.ToJsonString(new JsonSerializerOptions { WriteIndented = true });
        File.WriteAllText(Path.Combine(Folder, "appsettings.json"), edit is null ? text : edit(text));
    }

    /// <summary>The content root that holds the file.</summary>
    public string Folder { get; } = Directory.CreateTempSubdirectory("coapnet-hosted-").FullName;

    /// <summary>The file's endpoints: each name and its scheme.</summary>
    public Dictionary<string, string> Endpoints { get; } = [];

    /// <summary>The sample's arguments that make it read this file instead of its own.</summary>
    public string[] Arguments => ["--contentRoot", Folder];

    /// <summary>
    /// The endpoint a line of the sample's log says the server listens on ("CoAP server listening on coap://..."), or null
    /// for any other line and for coap+ws and coaps+ws, whose listener is Kestrel (named before Kestrel listens).
    /// </summary>
    /// <param name="line">A line the sample printed.</param>
    public static Uri? ListeningOn(string line)
    {
        const string Listening = "listening on ";
        int at = line.IndexOf(Listening, StringComparison.Ordinal);
        if (at < 0 || line.Contains("+ws://", StringComparison.Ordinal))
        {
            return null;
        }

        return new Uri(line[(at + Listening.Length)..].Trim());
    }

    /// <summary>Deletes the folder.</summary>
    public void Dispose() => Directory.Delete(Folder, recursive: true);
}
