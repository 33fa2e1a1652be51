// The CoapNet server in the Generic Host, with handlers written as minimal APIs are: parameters bound from the route,
// the payload and dependency injection; objects sent as CBOR or JSON by the request's Accept. Settings from
// appsettings.json ("Coap"), logging from the host, Ctrl+C or SIGTERM drains and stops.
//   coap-client-notls -A 60 coap://127.0.0.1/lamps/1   (CBOR)     coap-client-notls -A 50 coap://127.0.0.1/lamps/1   (JSON)
// --Telemetry:Console=true prints CoapNet's metrics and traces through the OpenTelemetry console exporter.
//   dotnet run --project samples/CoapNet.Samples.Hosted
// coaps+tcp (CoAP over TLS) is off until Coap:Tls names an endpoint and a certificate (PEM files), in appsettings.json or:
//   dotnet run --project samples/CoapNet.Samples.Hosted -- --Coap:Tls:Endpoints:0=[::]:5684 --Coap:Tls:CertificateFile=server.pem --Coap:Tls:CertificateKeyFile=server.key
using CoapNet.Diagnostics;
using CoapNet.Endpoints;
using CoapNet.Hosting;
using CoapNet.Samples.Hosted;
using CoapNet.Server;
using CoapNet.Transports;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Services.AddSingleton<VisitCounter>();
builder.Services.AddScoped<Greeter>();
builder.Services.AddSingleton<LampStore>();
builder.Services.AddCoapServer(options => options.Handlers.JsonTypeInfoResolver = SampleJson.Default);
if (builder.Configuration.GetValue<bool>("Telemetry:Console"))
{
    builder.Services.AddOpenTelemetry()
        .ConfigureResource(resource => resource.AddService("CoapNet.Samples.Hosted"))
        .WithMetrics(metrics => metrics.AddMeter(CoapInstrumentation.MeterName).AddConsoleExporter())
        .WithTracing(tracing => tracing.AddSource(CoapInstrumentation.ActivitySourceName).AddConsoleExporter());
}

IHost app = builder.Build();
app.MapGet("/hello", (Greeter greeter) => greeter.Greet()).WithTitle("Greeting");
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

try
{
    await app.RunAsync();
}
catch (CoapBindException e)
{
    // The host has logged the failure; this line says what to change, and the exit code says it failed.
    Console.Error.WriteLine($"{e.Message} Set other endpoints in Coap:Endpoints or Coap:Tls:Endpoints (appsettings.json, or --Coap:Endpoints:0=udp://[::]:5684).");
    return 1;
}

return 0;
