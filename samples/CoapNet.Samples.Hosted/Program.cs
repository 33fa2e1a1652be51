// The CoapNet server in the Generic Host: settings from appsettings.json ("Coap"), logging from the
// host, Ctrl+C or SIGTERM drains and stops. GET coap://127.0.0.1/hello to see the scoped greeter at work.
//   dotnet run --project samples/CoapNet.Samples.Hosted
using CoapNet.Hosting;
using CoapNet.Samples.Hosted;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Services.AddSingleton<VisitCounter>();
builder.Services.AddScoped<Greeter>();
builder.Services.AddCoapServer().MapResource<HelloResource>("/hello");
await builder.Build().RunAsync();
