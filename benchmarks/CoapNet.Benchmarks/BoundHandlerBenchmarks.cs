using System.Formats.Cbor;
using System.Globalization;
using System.Net;
using BenchmarkDotNet.Attributes;
using CoapNet.Channels;
using CoapNet.Endpoints;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Benchmarks;

/// <summary>
/// One GET /lamps/7 through a route's handler, as the server's dispatch calls it (routing and the socket left out, the
/// same for all): a handler with bound parameters, <c>(int id) =&gt; new Lamp(id, ...)</c> answered in CBOR, against
/// today's <c>CoapRequest -&gt; CoapResponse</c> handler that parses the route value and writes the same CBOR itself.
/// <see cref="PlainWithSameEncoder"/> writes the CBOR with the contract the generator made, so
/// <see cref="Bound"/> minus it is the binding layer alone (binding, negotiation, the context, the pipeline);
/// <see cref="PlainHandWritten"/> is what an application writes today with a new CborWriter per response.
/// </summary>
[MemoryDiagnoser]
public class BoundHandlerBenchmarks
{
    private readonly CoapRequest _request;
    private readonly Func<CoapRequest, CoapResponse> _bound;
    private readonly Func<CoapRequest, CoapResponse> _plainSameEncoder;
    private readonly Func<CoapRequest, CoapResponse> _plainHandWritten;

    public BoundHandlerBenchmarks()
    {
        CapturingRoutes routes = new();
        routes.MapGet("/lamps/{id:int}", (int id) => new BenchLamp(id, "desk", true, 0.5));
        _bound = routes.Handler!.Sync!;
        _plainSameEncoder = request =>
        {
            int id = int.Parse(request.GetRouteValue("id")!, CultureInfo.InvariantCulture);
            return CoapResponse.Content(CoapCbor.Serialize(new BenchLamp(id, "desk", true, 0.5)), CoapContentFormat.Cbor);
        };
        _plainHandWritten = request =>
        {
            int id = int.Parse(request.GetRouteValue("id")!, CultureInfo.InvariantCulture);
            BenchLamp lamp = new(id, "desk", true, 0.5);
            CborWriter writer = new(CborConformanceMode.Lax);
            writer.WriteStartMap(4);
            writer.WriteTextString("Id");
            writer.WriteInt32(lamp.Id);
            writer.WriteTextString("Name");
            writer.WriteTextString(lamp.Name);
            writer.WriteTextString("On");
            writer.WriteBoolean(lamp.On);
            writer.WriteTextString("Brightness");
            writer.WriteDouble(lamp.Brightness);
            writer.WriteEndMap();
            return CoapResponse.Content(writer.Encode(), CoapContentFormat.Cbor);
        };

        CoapMessage message = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 1, Token = new byte[] { 1, 2 } };
        message.UriPath = "/lamps/7";
        CoapExchange exchange = new(message, new BenchChannel());
        ServerRequestFeature.For(exchange).RouteValues = new Dictionary<string, string>(StringComparer.Ordinal) { ["id"] = "7" };
        _request = new CoapRequest(exchange);
        if (!_bound(_request).Payload.Span.SequenceEqual(_plainHandWritten(_request).Payload.Span)
            || !_bound(_request).Payload.Span.SequenceEqual(_plainSameEncoder(_request).Payload.Span))
        {
            throw new InvalidOperationException("The handlers do not answer the same bytes; the comparison would be meaningless.");
        }
    }

    /// <summary>Today's handler, writing its CBOR by hand with a new CborWriter.</summary>
    [Benchmark(Baseline = true)]
    public CoapResponse PlainHandWritten() => _plainHandWritten(_request);

    /// <summary>Today's handler, writing its CBOR with the generated contract (the bound handler's encoder).</summary>
    [Benchmark]
    public CoapResponse PlainWithSameEncoder() => _plainSameEncoder(_request);

    /// <summary>The handler with a bound parameter and an object result, through the generated binding code.</summary>
    [Benchmark]
    public CoapResponse Bound() => _bound(_request);

    /// <summary>A map of one route that keeps the handler the generated code makes, as a server would.</summary>
    private sealed class CapturingRoutes : ICoapEndpointRouteBuilder
    {
        public CoapHandlerOptions HandlerOptions { get; } = new();

        public RouteHandler? Handler { get; private set; }

        public CoapEndpointBuilder MapEndpoint(CoapCode method, string template, CoapEndpointInvoker invoker)
        {
            CoapRoute route = new CoapRouter().GetOrAdd(template);
            CoapEndpointBuilder endpoint = new(new CoapRouteBuilder(route, new CoapServer()));
            Handler = invoker.Attach(route, HandlerOptions, endpoint, continueOnCapturedContext: false);
            return endpoint;
        }
    }

    /// <summary>Where the request came from; the handlers never answer through it.</summary>
    private sealed class BenchChannel() : PeerChannel(CoapPeer.Udp(new IPEndPoint(IPAddress.Loopback, 5683)), isReliable: false)
    {
        public override IMessageLayer Layer => throw new InvalidOperationException("The benchmark never answers through a message layer.");

        public override bool Fits(CoapMessage message, int tokenLength) => throw new InvalidOperationException("The benchmark never answers through a message layer.");
    }
}

/// <summary>The lamp of the benchmark.</summary>
/// <param name="Id">Its number.</param>
/// <param name="Name">Its name.</param>
/// <param name="On">Whether it is lit.</param>
/// <param name="Brightness">From 0 to 1.</param>
public sealed record BenchLamp(int Id, string Name, bool On, double Brightness);
