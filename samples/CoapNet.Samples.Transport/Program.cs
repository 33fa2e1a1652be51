// A CoAP transport of its own, on the public API only: a stand-in for a serial line (two in-process pipes carrying
// SLIP-framed datagrams) registered as the scheme coap+serial, served by a CoapServer and used by a CoapClient.
// docs/WRITING-A-TRANSPORT.md walks through it. Prints what it exchanged and exits with 0 when all went as it should.
//   dotnet run --project samples/CoapNet.Samples.Transport
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Samples.Transport;
using CoapNet.Server;

SerialLine line = new();
SerialLineTransportFactory serial = new(line);

// The server: its endpoint's address names the scheme, which finds the transport registered for it.
CoapServerOptions serverOptions = new();
serverOptions.Transports.Add(serial);
serverOptions.Listen($"{SerialLineTransportFactory.SchemeName}://{SerialLineTransportFactory.Device}");
await using CoapServer server = new(serverOptions);
server.MapGet("/hello", _ => CoapResponse.Content("Hello over the line!"));
byte[] firmware = new byte[4000];
Random.Shared.NextBytes(firmware);
server.MapGet("/firmware", _ => CoapResponse.Content(firmware, CoapContentFormat.OctetStream));
await server.StartAsync();
Console.WriteLine($"Listening on {string.Join(", ", server.LocalUris)}");

// The client: a request's URI finds the transport by its scheme the same way.
CoapClientOptions clientOptions = new();
clientOptions.Transports.Add(serial);
await using CoapClient client = new(clientOptions);
Uri device = new($"{SerialLineTransportFactory.SchemeName}://{SerialLineTransportFactory.Device.Address}");

CoapResponse hello = await client.GetAsync(new Uri(device, "/hello"));
Console.WriteLine($"GET /hello: {hello.Code} {hello.GetPayloadString()}");

// 4000 bytes do not fit one message: block-wise transfer (RFC 7959) runs over the line as over UDP.
CoapResponse download = await client.GetAsync(new Uri(device, "/firmware"));
bool intact = download.Payload.Span.SequenceEqual(firmware);
Console.WriteLine($"GET /firmware: {download.Code}, {download.Payload.Length} bytes, {(intact ? "intact" : "CORRUPTED")}");

return hello.GetPayloadString() == "Hello over the line!" && intact ? 0 : 1;
