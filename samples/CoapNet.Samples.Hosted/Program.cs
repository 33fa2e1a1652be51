// The CoapNet server in the Generic Host, with handlers written as minimal APIs are: parameters bound from the route,
// the payload and dependency injection; objects sent as CBOR or JSON by the request's Accept. Settings from
// appsettings.json ("Coap"), logging from the host, Ctrl+C or SIGTERM drains and stops.
//   coap-client-notls -A 60 coap://127.0.0.1/lamps/1   (CBOR)     coap-client-notls -A 50 coap://127.0.0.1/lamps/1   (JSON)
// --Telemetry:Console=true prints CoapNet's metrics and traces through the OpenTelemetry console exporter.
//   dotnet run --project samples/CoapNet.Samples.Hosted
// Each endpoint is a section of Coap:Endpoints with its address in Url; coaps+tcp (CoAP over TLS) is one with a certificate
// (PEM files) in its Tls section, in appsettings.json or:
//   dotnet run --project samples/CoapNet.Samples.Hosted -- --Coap:Endpoints:secure:Url=coaps+tcp://[::]:5684 --Coap:Endpoints:secure:Tls:CertificateFile=server.pem --Coap:Endpoints:secure:Tls:CertificateKeyFile=server.key
// A key under Coap that is not a setting stops the start with its name and the nearest known one.
// The host is an ASP.NET Core application: Kestrel, on the endpoints of "Kestrel:Endpoints" (http://[::]:8683 in
// appsettings.json), serves CoAP over WebSockets (coap+ws, RFC 8323 section 4) into the same routes, and the explorer page
// at / that explores them from a browser:   http://127.0.0.1:8683/
using CoapNet.AspNetCore;
using CoapNet.Configuration;
using CoapNet.Diagnostics;
using CoapNet.Endpoints;
using CoapNet.Hosting;
using CoapNet.Samples.Hosted;
using CoapNet.Server;
using CoapNet.Transports;
using Microsoft.AspNetCore.Builder;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(args);
builder.Services.AddSingleton<VisitCounter>();
builder.Services.AddScoped<Greeter>();
builder.Services.AddSingleton<LampStore>();
builder.Services.AddSingleton<Thermometer>().AddHostedService(services => services.GetRequiredService<Thermometer>());
builder.Services.AddCoapServer(options => options.Handlers.JsonTypeInfoResolver = SampleJson.Default);
builder.Services.AddCoapWebSockets();
if (builder.Configuration.GetValue<bool>("Telemetry:Console"))
{
    builder.Services.AddOpenTelemetry()
        .ConfigureResource(resource => resource.AddService("CoapNet.Samples.Hosted"))
        .WithMetrics(metrics => metrics.AddMeter(CoapInstrumentation.MeterName).AddConsoleExporter())
        .WithTracing(tracing => tracing.AddSource(CoapInstrumentation.ActivitySourceName).AddConsoleExporter());
}

WebApplication web = builder.Build();
web.MapCoapWebSockets();    // ws://HOST:8683/.well-known/coap
web.MapCoapExplorer();      // http://HOST:8683/
IHost app = web;            // CoAP routes are mapped on the host (a web application's own MapGet maps HTTP routes)
try
{
    // Mapping resolves the server, whose options configuration makes: a key that is not a setting stops it here.
    app.MapGet("/hello", (Greeter greeter) => greeter.Greet()).WithTitle("Greeting");
    app.MapGet(Thermometer.Path, (Thermometer thermometer) => thermometer.Read()).WithTitle("Temperature (degrees Celsius)").Observable();
    CoapRouteGroupBuilder lamps = app.MapGroup("/lamps").WithResourceType("lamp");
    lamps.MapGet("/", (LampStore store) => store.All());
    lamps.MapGet("/{id:int}", (int id, LampStore store) => store.Find(id) is { } lamp ? CoapResults.Content(lamp) : CoapResults.NotFound($"No lamp {id}."))
        .Observable();
    lamps.MapPut("/{id:int}", (int id, Lamp lamp, LampStore store, CoapServer server) =>
    {
        bool existed = store.Save(lamp with { Id = id });
        server.NotifyObservers($"/lamps/{id}");
        return existed ? CoapResults.Changed() : CoapResults.Created($"/lamps/{id}");
    });

    await app.RunAsync();
}
catch (OperationCanceledException)
{
    // Ctrl+C or SIGTERM while the host was starting (Kestrel binding its port): stopped before it had started, as asked.
    return 0;
}
catch (CoapBindException e)
{
    // The host has logged the failure; this line says what to change, as arguments that work as written, and the exit
    // code says it failed.
    Console.Error.WriteLine($"{e.Message} Change their Url in appsettings.json, or on the command line: {string.Join(' ', FreePorts.Moves(e))}");
    return 1;
}
catch (Exception e) when (e is CoapConfigurationException or FormatException)
{
    // A key that is not a setting, or a value that cannot be used: the message names its path.
    Console.Error.WriteLine(e.Message);
    return 1;
}

return 0;
