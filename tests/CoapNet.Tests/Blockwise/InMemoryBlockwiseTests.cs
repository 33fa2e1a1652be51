using System.Net;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Blockwise;

/// <summary>What the block-wise tests share: a client and a server address on an in-memory network in virtual time, the deterministic body, and a GET.</summary>
public abstract class InMemoryBlockwiseTests : IDisposable
{
    protected static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");

    protected static readonly IPEndPoint ClientAddress = InMemoryNetwork.EndPoint("10.0.0.1");

    private protected InMemoryBlockwiseTests(bool deliversImmediately) => Network = new InMemoryNetwork(Time) { DeliversImmediately = deliversImmediately };

    private protected ManualTimeProvider Time { get; } = new();

    private protected InMemoryNetwork Network { get; }

    /// <summary>Disposed in reverse order at the end of the test.</summary>
    private protected List<IDisposable> Owned { get; } = [];

    public void Dispose()
    {
        for (int i = Owned.Count - 1; i >= 0; i--)
        {
            Owned[i].Dispose();
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>The byte at offset i is i mod 251, as the sample's /large serves.</summary>
    private protected static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }

    private protected static CoapMessage Get(string pathAndQuery)
    {
        int query = pathAndQuery.IndexOf('?', StringComparison.Ordinal);
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get };
        request.UriPath = query < 0 ? pathAndQuery : pathAndQuery[..query];
        if (query >= 0)
        {
            request.UriQuery = pathAndQuery[(query + 1)..];
        }

        return request;
    }
}
