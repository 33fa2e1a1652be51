// The CoapNet server in the Generic Host: settings from appsettings.json ("Coap"), logging from the
// host, Ctrl+C or SIGTERM drains and stops. GET coap://127.0.0.1/hello to see the scoped greeter at work.
// --Telemetry:Console=true prints CoapNet's metrics and traces through the OpenTelemetry console exporter.
//   dotnet run --project samples/CoapNet.Samples.Hosted
using CoapNet.Diagnostics;
using CoapNet.Hosting;
using CoapNet.Samples.Hosted;
using CoapNet.Transports;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Services.AddSingleton<VisitCounter>();
builder.Services.AddScoped<Greeter>();
builder.Services.AddCoapServer().MapResource<HelloResource>("/hello");
if (builder.Configuration.GetValue<bool>("Telemetry:Console"))
{
    builder.Services.AddOpenTelemetry()
        .ConfigureResource(resource => resource.AddService("CoapNet.Samples.Hosted"))
        .WithMetrics(metrics => metrics.AddMeter(CoapInstrumentation.MeterName).AddConsoleExporter())
        .WithTracing(tracing => tracing.AddSource(CoapInstrumentation.ActivitySourceName).AddConsoleExporter());
}

try
{
    await builder.Build().RunAsync();
}
catch (CoapBindException e)
{
    // The host has logged the failure; this line says what to change, and the exit code says it failed.
    Console.Error.WriteLine($"{e.Message} Set other endpoints in Coap:Endpoints (appsettings.json, or --Coap:Endpoints:0=udp://[::]:5684).");
    return 1;
}

return 0;
