// The CoapNet sample client: exercises the sample server (start it first with
//   dotnet run --project samples/CoapNet.Samples.Server
// then run: dotnet run --project samples/CoapNet.Samples.Client -- [coap://host:port]).
using System.Text;
using CoapNet.Client;
using CoapNet.LinkFormat;
using CoapNet.Messages;
using CoapNet.Messaging;

Uri server = new(args.Length > 0 ? args[0] : "coap://127.0.0.1:5683");
await using CoapClient client = new();

try
{
    Console.WriteLine($"Ping {server}: {(await client.PingAsync(server)).TotalMilliseconds:F1} ms");

    Console.WriteLine("Resources:");
    foreach (CoapLink link in await client.DiscoverAsync(server))
    {
        Console.WriteLine($"  {link.Target,-8} {link.Title}");
    }

    Show("GET /hello", await client.GetAsync(new Uri(server, "/hello")));
    Show("GET /time", client.Get(new Uri(server, "/time")));  // the synchronous form
    Show("POST /echo", await client.PostAsync(new Uri(server, "/echo"), Encoding.UTF8.GetBytes("{\"on\":true}"), CoapContentFormat.Json));

    Uri entry = new(server, "/store/sample");
    Show("PUT /store/sample", await client.PutAsync(entry, Encoding.UTF8.GetBytes("42"), CoapContentFormat.TextPlain));
    CoapResponse stored = await client.GetAsync(entry);
    Show("GET /store/sample", stored);
    Console.WriteLine($"  ETag {Convert.ToHexString((stored.Message.ETag ?? ReadOnlyMemory<byte>.Empty).Span)}");
    Show("DELETE /store/sample", await client.DeleteAsync(entry));
    Show("GET /store/sample", await client.GetAsync(entry));

    // The server acknowledges at once and answers separately (RFC 7252 section 5.2.2).
    Show("GET /slow?ms=1500", await client.GetAsync(new Uri(server, "/slow?ms=1500")));
    Show("GET /large?size=64", await client.GetAsync(new Uri(server, "/large?size=64")));
    return 0;
}
catch (CoapException e)
{
    Console.Error.WriteLine($"{e.GetType().Name}: {e.Message}");
    Console.Error.WriteLine("Is the sample server running? dotnet run --project samples/CoapNet.Samples.Server");
    return 1;
}

static void Show(string what, CoapResponse response)
{
    string payload = response.ContentFormat is CoapContentFormat.OctetStream
        ? $"{response.Payload.Length} bytes"
        : response.GetPayloadString();
    Console.WriteLine($"{what,-22} -> {response.Code}  {payload}");
}
