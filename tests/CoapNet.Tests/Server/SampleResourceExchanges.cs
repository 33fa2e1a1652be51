using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Server;

/// <summary>
/// What a client does with the sample server's resources end to end, the same over every stream transport (coaps+tcp,
/// coap+ws, coaps+ws): observe /counter, and move a megabyte through /upload and /large block-wise.
/// </summary>
internal static class SampleResourceExchanges
{
    private const int Megabyte = 1 << 20;

    /// <summary>Observes /counter until three notifications came, POSTing after each so the next comes over the same connection.</summary>
    /// <returns>The payloads, "0", "1", "2" when all went well.</returns>
    public static async Task<IReadOnlyList<string>> ObserveCounterAsync(CoapClient client, Uri counter)
    {
        using CancellationTokenSource stop = new(Wait.DefaultBound);
        List<string> seen = [];
        await foreach (CoapResponse response in client.ObserveAsync(counter, stop.Token))
        {
            seen.Add(response.GetPayloadString());
            if (seen.Count == 3)
            {
                break;
            }

            // Each POST increments the counter and notifies its observers.
            await client.PostAsync(counter, default);
        }

        return seen;
    }

    /// <summary>Uploads a random megabyte to /upload and downloads one from /large, both block-wise, and checks both bodies.</summary>
    /// <param name="client">The client.</param>
    /// <param name="uri">The URI of a path on the server.</param>
    public static async Task MovesAMegabyteBlockWiseAsync(CoapClient client, Func<string, Uri> uri)
    {
        byte[] body = new byte[Megabyte];
        new Random(7).NextBytes(body);

        CoapResponse uploaded = await client.PutAsync(uri("/upload"), body);
        CoapResponse downloaded = await client.GetAsync(uri($"/large?size={Megabyte}"));

        uploaded.GetPayloadString().Should().Be(Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant(), "/upload answers the SHA-256 of the whole body it received");
        downloaded.Payload.Length.Should().Be(Megabyte);
        downloaded.Payload.ToArray().Should().Equal(Enumerable.Range(0, Megabyte).Select(i => (byte)(i % 251)));
    }
}
