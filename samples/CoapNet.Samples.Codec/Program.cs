// Shows the CoapNet codec: builds a request and a response, prints their bytes in both framings,
// and decodes them back. Pass hex bytes (a datagram) as arguments to decode your own:
//   dotnet run --project samples/CoapNet.Samples.Codec -- 40 01 7d 34 bb 74 65 6d 70 65 72 61 74 75 72 65
using CoapNet.Messages;
using CoapNet.Serialization;

if (args.Length > 0)
{
    byte[] bytes = Convert.FromHexString(string.Concat(args).Replace(":", string.Empty, StringComparison.Ordinal));
    if (CoapMessageSerializer.Udp.TryDeserialize(bytes, out CoapMessage? decoded, out CoapFormatError error))
    {
        Console.WriteLine(decoded);
        return 0;
    }

    Console.Error.WriteLine($"Not a well-formed CoAP datagram: {error}");
    return 1;
}

CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://sensor.local/sensors/temperature?unit=C"));
request.MessageId = 0x7d34;
request.Token = new byte[] { 0xc0, 0xff, 0xee, 0x01 };
request.Accept = CoapContentFormat.TextPlain;

CoapMessage response = request.CreateResponse(CoapCode.Content);
response.ContentFormat = CoapContentFormat.TextPlain;
response.MaxAge = 30;
response.SetPayload("22.3 C");

foreach (CoapMessage message in new[] { request, response })
{
    Console.WriteLine(message);
    foreach (CoapMessageSerializer serializer in new[] { CoapMessageSerializer.Udp, CoapMessageSerializer.Tcp })
    {
        byte[] wire = serializer.Serialize(message);
        CoapMessage parsed = serializer.Deserialize(wire);
        Console.WriteLine($"  {serializer.Framing,-8} {wire.Length,3} bytes  {Convert.ToHexString(wire)}");
        Console.WriteLine($"           decoded: {parsed.Code}, path {parsed.UriPath}, payload \"{parsed.GetPayloadString()}\"");
    }
}

return 0;
