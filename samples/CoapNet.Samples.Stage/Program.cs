// A stage of its own on both sides (docs/WRITING-A-STAGE.md): a server limits each client to 2 requests a second and
// answers the rest 4.29 Too Many Requests with Max-Age (RFC 8516); the client, told so, holds back until Max-Age has
// passed. Run: dotnet run --project samples/CoapNet.Samples.Stage
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Samples.Stage;
using CoapNet.Server;

const string Name = "RateLimit";

// The stage goes below every built-in one, nearest the wire; each endpoint gets its own, made by the factory.
CoapEndpointOptions serverEndpoint = new CoapEndpointOptions()
    .UseStage(Name, context => new RateLimitStage(context, perSecond: 2, burst: 2), CoapStagePosition.BelowAll);
await using CoapServer server = new(new CoapServerOptions { Endpoint = serverEndpoint }.Listen("coap://127.0.0.1:0"));
server.MapGet("/hello", _ => CoapResponse.Content("Hello, CoAP!"));
await server.StartAsync();
Uri hello = new($"coap://127.0.0.1:{server.LocalEndPoints[0].Port}/hello");

// The client's stage only remembers what servers said; its own limit is not reached here.
CoapEndpointOptions clientEndpoint = new CoapEndpointOptions()
    .UseStage(Name, context => new RateLimitStage(context, perSecond: 100, burst: 100), CoapStagePosition.BelowAll);
await using CoapClient client = new(new CoapClientOptions { Endpoint = clientEndpoint });

for (int i = 1; i <= 4; i++)
{
    Show($"GET /hello #{i}", await client.GetAsync(hello));
}

// The fourth never left the client: it was answered from the hold the third's 4.29 set. Once Max-Age has passed, the
// server has a request to spend again.
await Task.Delay(TimeSpan.FromSeconds(1.1));
Show("GET /hello after 1 s", await client.GetAsync(hello));
return 0;

static void Show(string what, CoapResponse response)
    => Console.WriteLine($"{what,-22} -> {response.Code}{(response.Message.MaxAge is uint age && response.Code == CoapCode.TooManyRequests ? $"  Max-Age {age}" : $"  {response.GetPayloadString()}")}");
