using System.Text.Json;
using System.Text.Json.Nodes;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// The hosted sample's appsettings.json as the tests run it, in a content root of its own (<see cref="Arguments"/>): the
/// sample's file with its <c>Coap:Endpoints</c> section written anew, each endpoint under its name and scheme on
/// 127.0.0.1 at a port the OS picks. The section is replaced whole, not overridden key by key on the command line, so no
/// endpoint of the file (which binds CoAP's fixed ports, as a running sample does) reaches a test.
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
        string text = settings.ToJsonString(new JsonSerializerOptions { WriteIndented = true });
        File.WriteAllText(Path.Combine(Folder, "appsettings.json"), edit is null ? text : edit(text));
    }

    /// <summary>The content root that holds the file.</summary>
    public string Folder { get; } = Directory.CreateTempSubdirectory("coapnet-hosted-").FullName;

    /// <summary>The file's endpoints: each name and its scheme.</summary>
    public Dictionary<string, string> Endpoints { get; } = [];

    /// <summary>The sample's arguments that make it read this file instead of its own.</summary>
    public string[] Arguments => ["--contentRoot", Folder];

    /// <summary>Deletes the folder.</summary>
    public void Dispose() => Directory.Delete(Folder, recursive: true);
}
