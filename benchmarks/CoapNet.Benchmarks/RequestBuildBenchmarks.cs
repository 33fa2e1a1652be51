using BenchmarkDotNet.Attributes;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Benchmarks;

/// <summary>
/// Building a GET request from a URI and writing it as a datagram: the per-request cost a client pays
/// before any I/O. The URI has a host name, a non-default port, three path segments and a query.
/// </summary>
public class RequestBuildBenchmarks
{
    private const string Target = "coap://sensor.local:5690/sensors/temperature/latest?unit=C";

    private static readonly CoapMessageSerializer Serializer = CoapMessageSerializer.Udp;

    private static readonly CoapRequestBuilder Builder = new(Target);

    private readonly byte[] _destination = new byte[256];

    /// <summary>CoapMessage.CreateRequest with a System.Uri parsed per request, then Serialize into a buffer.</summary>
    [Benchmark(Baseline = true)]
    public int CreateRequestFromUri() => Serializer.Serialize(CoapMessage.CreateRequest(CoapCode.Get, new Uri(Target)), _destination);

    /// <summary>A builder made once for the target: each request copies the ready options (one array), then Serialize.</summary>
    [Benchmark]
    public int BuildFromBuilder() => Serializer.Serialize(Builder.Build(CoapCode.Get), _destination);

    /// <summary>The builder made per request from the URI text (its own RFC 7252 section 6.4 split, no System.Uri), then Build and Serialize.</summary>
    [Benchmark]
    public int BuildFromNewBuilder() => Serializer.Serialize(new CoapRequestBuilder(Target).Build(CoapCode.Get), _destination);
}
