using System.Diagnostics;
using System.Security.Cryptography;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.QBlock;
using CoapNet.Samples.Server;
using CoapNet.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Block-wise transfer (RFC 7959) with libcoap 4.3 over real loopback sockets, once over UDP and once
/// over TCP (RFC 8323): libcoap's coap-client downloads a megabyte from the sample's /large and
/// uploads a megabyte to its /upload; our client uploads to libcoap's coap-server and reads the body back.
/// </summary>
public abstract class LibCoapBlockwiseInteropTests
{
    private const int Megabyte = 1_048_576;
    private static readonly TimeSpan ProcessTimeout = TimeSpan.FromSeconds(120);
    private readonly string _scheme;
    private readonly QBlockOptions _qblock;

    private protected LibCoapBlockwiseInteropTests(string scheme, bool qblock = false)
    {
        _scheme = scheme;

        // With Q-Block (RFC 9177) enabled on our side, libcoap 4.3.1, which has none, must still get plain block-wise:
        // our server uses it only for a client that offers it, our client falls back after libcoap's 4.02 (section 4.1).
        _qblock = new QBlockOptions { Enabled = qblock };
    }

    [SkippableTheory]
    [InlineData(null)]
    [InlineData("64")]
    public async Task LibcoapDownloadsAMegabyteFromLargeExactly(string? blockSize)
    {
        // -b 64 asks for 64-byte Block2 blocks from the start (early negotiation, RFC 7959 section 2.4).
        byte[] received = await LibcoapAgainstSampleAsync($"/large?size={Megabyte}", blockSize);

        received.Length.Should().Be(Megabyte);
        received.Should().Equal(Deterministic(Megabyte), "the byte at offset i is i mod 251");
    }

    [SkippableTheory]
    [InlineData(null)]
    [InlineData("256")]
    public async Task LibcoapUploadsAMegabyteToUploadAndGetsItsSha256(string? blockSize)
    {
        string input = TempFile();
        byte[] body = new byte[Megabyte];
        new Random(9).NextBytes(body);
        await File.WriteAllBytesAsync(input, body);
        try
        {
            byte[] answer = await LibcoapAgainstSampleAsync("/upload", blockSize, "-m", "put", "-f", input);

            System.Text.Encoding.UTF8.GetString(answer).Should().Be(Convert.ToHexString(SHA256.HashData(body)).ToLowerInvariant(), "/upload answers the SHA-256 of the whole body it received");
        }
        finally
        {
            File.Delete(input);
        }
    }

    [SkippableFact]
    public async Task OurClientUploadsABodyLargerThanOneBlockToLibcoapAndReadsItBack()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new(new CoapClientOptions { Endpoint = new CoapEndpointOptions { QBlock = _qblock } });
        Uri uri = new($"{_scheme}://127.0.0.1:{server.Port}/upload-{Guid.NewGuid().ToString("N")[..8]}");
        byte[] body = new byte[_scheme == "coap" ? 5000 : 200_000];
        new Random(11).NextBytes(body);

        // Over UDP 5 Block1 blocks of 1024 bytes; over TCP past the base 1152 bytes before libcoap's
        // CSM is known, then whatever its CSM Max-Message-Size allows.
        CoapResponse created = await client.PutAsync(uri, body, CoapContentFormat.OctetStream);
        CoapResponse read = await client.GetAsync(uri);

        created.Code.Should().Be(CoapCode.Created, created.GetPayloadString());
        read.Code.Should().Be(CoapCode.Content);
        read.Payload.ToArray().Should().Equal(body);
        client.Put(uri, body.AsMemory(0, 3000), CoapContentFormat.OctetStream).Code.Should().Be(CoapCode.Changed, "the synchronous form uploads too");
        client.Get(uri).Payload.ToArray().Should().Equal(body.AsSpan(0, 3000).ToArray());
    }

    /// <summary>Runs coap-client against a sample server (16 MiB block-wise limits) and returns the payload it wrote with -o.</summary>
    private async Task<byte[]> LibcoapAgainstSampleAsync(string pathAndQuery, string? blockSize, params string[] arguments)
    {
        string client = LibCoap.Client;
        CoapServerOptions options = new CoapServerOptions { Endpoint = new CoapEndpointOptions { Blockwise = SampleResources.Blockwise, QBlock = _qblock } }
            .Listen("coap://127.0.0.1:0");
        if (_scheme != "coap")
        {
            options.Listen("coap+tcp://127.0.0.1:0");
        }

        await using LoopbackServer server = LoopbackServer.Start(s => SampleResources.Map(s), options);
        string output = TempFile();
        List<string> all = ["-B", "60", "-o", output, .. arguments];
        if (blockSize is not null)
        {
            all.AddRange(["-b", blockSize]);
        }

        all.Add(server.Uri(pathAndQuery, _scheme).ToString());
        Process process = LibCoap.Start(client, [.. all]);
        try
        {
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            using (CancellationTokenSource timeout = new(ProcessTimeout))
            {
                await process.WaitForExitAsync(timeout.Token);
            }

            process.ExitCode.Should().Be(0, $"coap-client {string.Join(' ', all)} failed: {await stdout} {await stderr}");
            return File.Exists(output) ? await File.ReadAllBytesAsync(output) : [];
        }
        finally
        {
            LibCoap.Stop(process);
            File.Delete(output);
        }
    }

    private static byte[] Deterministic(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }

    private static string TempFile() => Path.Combine(Path.GetTempPath(), $"coapnet-blockwise-{Guid.NewGuid():N}.bin");
}

/// <summary>Block-wise interop with libcoap over UDP.</summary>
public sealed class LibCoapBlockwiseInteropOverUdpTests() : LibCoapBlockwiseInteropTests("coap");

/// <summary>Block-wise interop with libcoap over TCP.</summary>
public sealed class LibCoapBlockwiseInteropOverTcpTests() : LibCoapBlockwiseInteropTests("coap+tcp");

/// <summary>Block-wise interop with libcoap over UDP with Q-Block enabled on our server and client, which libcoap 4.3.1 does not have.</summary>
public sealed class LibCoapBlockwiseInteropWithQBlockTests() : LibCoapBlockwiseInteropTests("coap", qblock: true);
