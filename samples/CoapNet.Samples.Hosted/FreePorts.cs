using System.Net;
using CoapNet.Transports;

namespace CoapNet.Samples.Hosted;

/// <summary>What to pass instead of the endpoints a start could not bind: each one's Url at a port free right now.</summary>
internal static class FreePorts
{
    /// <summary>One "--Coap:Endpoints:{name}:Url=scheme://address:port" per endpoint of <paramref name="failure"/> that configuration named.</summary>
    public static IEnumerable<string> Moves(CoapBindException failure)
    {
        List<int> given = [];
        foreach (CoapBindException endpoint in failure.Failures)
        {
            if (endpoint.Name is { } name)
            {
                given.Add(FreePort.Find(endpoint.EndPoint.Address, given));
                yield return $"--{name}:Url={new CoapAddress(endpoint.Scheme, new IPEndPoint(endpoint.EndPoint.Address, given[^1]))}";
            }
        }
    }
}
