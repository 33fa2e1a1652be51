using System.Net;
using System.Text.Json;
using CoapNet.Client;
using CoapNet.Endpoints;
using CoapNet.Hosting;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Endpoints;
using CoapNet.Tests.Interop;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// Handlers with bound parameters mapped on the Generic Host (<c>app.MapGet</c>), over real UDP on loopback: services
/// from the host in a scope per request, and CBOR or JSON by Accept to our client and to libcoap's.
/// </summary>
public sealed class HostedHandlerTests : IAsyncLifetime
{
    private static readonly TimeSpan Liveness = TimeSpan.FromSeconds(30);
    private readonly LampStoreData _data = new();
    private IHost _host = null!;
    private Uri _base = null!;

    public async Task InitializeAsync()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?> { ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0" });
        builder.Services.AddSingleton(_data).AddScoped<LampStore>();
        builder.Services.AddCoapServer();
        _host = builder.Build();
        CoapRouteGroupBuilder lamps = _host.MapGroup("/lamps");
        lamps.MapGet("/{id:int}", (int id, LampStore store) => store.Find(id) is { } lamp ? CoapResults.Content(lamp) : CoapResults.NotFound());
        lamps.MapPut("/{id:int}", (int id, Lamp lamp, LampStore store) => store.Save(lamp with { Id = id }));
        _host.MapGet("/hello", (string? name) => $"Hello, {name ?? "CoAP"}!");

        // The hosted server is a service too: a handler may take it (to notify observers, as the hosted sample's PUT does).
        _host.MapGet("/routes", (CoapServer server) => string.Join(' ', server.Routes));
        await _host.StartAsync();
        _base = _host.Services.GetRequiredService<CoapServer>().LocalUris.Single();
    }

    public async Task DisposeAsync()
    {
        await _host.StopAsync();
        _host.Dispose();
    }

    [Fact]
    public async Task TheHostsHandlersBindServicesFromTheHostInAScopePerRequest()
    {
        await using CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

        CoapResponse put = await client.PutAsync(new Uri(_base, "/lamps/4"), CoapCbor.Serialize(new Lamp(0, "porch", true, 1)), CoapContentFormat.Cbor);
        CoapMessage get = CoapMessage.CreateRequest(CoapCode.Get, new Uri(_base, "/lamps/4"));
        get.Accept = CoapContentFormat.Json;
        CoapResponse json = await client.SendAsync(get, new IPEndPoint(IPAddress.Loopback, _base.Port));
        CoapResponse hello = await client.GetAsync(new Uri(_base, "/hello?name=host"));
        CoapResponse routes = await client.GetAsync(new Uri(_base, "/routes"));

        put.Code.Should().Be(CoapCode.Changed);
        json.ContentFormat.Should().Be(CoapContentFormat.Json);
        JsonSerializer.Deserialize(json.Payload.Span, EndpointJsonContext.Default.Lamp).Should().Be(new Lamp(4, "porch", true, 1));
        hello.GetPayloadString().Should().Be("Hello, host!");
        routes.GetPayloadString().Should().Contain("/lamps/{id:int}").And.Contain("/routes");
        _data.Disposed.Should().Be(2, "each request's scoped store is disposed with its scope");
    }

    [SkippableFact]
    public async Task LibCoapsClientGetsCborWithAccept60AndJsonWithAccept50()
    {
        string client = LibCoap.Client;
        string cborFile = Path.Combine(Path.GetTempPath(), $"coapnet-lamp-{Guid.NewGuid():N}.cbor");
        try
        {
            using System.Diagnostics.Process cbor = LibCoap.Start(client, "-A", "60", "-o", cborFile, new Uri(_base, "/lamps/1").ToString());
            string cborOutput = await LibCoap.ReadOutputAsync(cbor, Liveness);
            using System.Diagnostics.Process json = LibCoap.Start(client, "-A", "50", new Uri(_base, "/lamps/1").ToString());
            string jsonOutput = await LibCoap.ReadOutputAsync(json, Liveness);

            cbor.ExitCode.Should().Be(0, cborOutput);
            CoapCbor.Deserialize<Lamp>(await File.ReadAllBytesAsync(cborFile)).Should().Be(new Lamp(1, "desk", true, 0.5));
            json.ExitCode.Should().Be(0, jsonOutput);
            jsonOutput.Trim().Should().Be("""{"id":1,"name":"desk","on":true,"brightness":0.5}""");
        }
        finally
        {
            File.Delete(cborFile);
        }
    }
}
