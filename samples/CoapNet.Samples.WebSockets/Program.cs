// CoAP over WebSockets (RFC 8323 section 4) on ASP.NET Core: Kestrel serves coap+ws at ws://HOST:PORT/.well-known/coap
// (coaps+ws over HTTPS) into a hosted CoapServer's routes; an endpoint the server listens on besides
// (options.Listen("coap://[::]:5683"), or "Coap:Endpoints" in configuration) serves the same routes.
//
//   dotnet run --project samples/CoapNet.Samples.WebSockets --urls http://127.0.0.1:8683
//
// Then, from a client that registers CoapNet.WebSockets' transport: GET coap+ws://127.0.0.1:8683/hello; or open the explorer,
// http://127.0.0.1:8683/, a page that speaks CoAP over the same WebSocket endpoint from the browser.
using CoapNet.AspNetCore;
using CoapNet.Messages;

WebApplicationBuilder builder = WebApplication.CreateBuilder(args);

// coap+ws and coaps+ws endpoints whose listener is this application; pages of other origins are refused.
builder.Services.AddCoapWebSockets(options => options.AllowedOrigins.Add("http://localhost:8683"))
    .Map((server, _) =>
    {
        server.MapGet("/hello", _ => CoapResponse.Content("Hello over WebSockets!"));
        server.MapGet("/whoami", request => CoapResponse.Content($"{request.Peer.Scheme} {request.Peer.EndPoint}"));
    });

WebApplication app = builder.Build();
app.MapCoapWebSockets();
app.MapCoapExplorer();
app.Run();
