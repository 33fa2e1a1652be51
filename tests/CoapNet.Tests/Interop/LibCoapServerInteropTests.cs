using System.Text;
using CoapNet.Client;
using CoapNet.LinkFormat;
using CoapNet.Messages;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Our CoapClient against libcoap's coap-server-notls over real loopback sockets, once over UDP and
/// once over TCP (RFC 8323), which libcoap serves on the same port.
/// </summary>
public abstract class LibCoapServerInteropTests
{
    private readonly string _scheme;

    private protected LibCoapServerInteropTests(string scheme) => _scheme = scheme;

    [SkippableFact]
    public async Task GetsTheRootResourceOfLibcoap()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();

        CoapResponse response = await client.GetAsync(Uri(server, "/"));

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Contain("libcoap");
    }

    [SkippableFact]
    public void GetsSynchronously()
    {
        using LibCoapServer server = LibCoapServer.Start();
        using CoapClient client = new();

        CoapResponse response = client.Get(Uri(server, "/"));

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Contain("libcoap");
    }

    [SkippableFact]
    public async Task DiscoversLibcoapResourcesWithTheirAttributes()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();

        IReadOnlyList<CoapLink> links = await client.DiscoverAsync(Uri(server, "/"));

        CoapLink time = links.Should().ContainSingle(l => l.Target == "/time").Subject;
        time.ResourceTypes.Should().Equal("ticks");
        time.InterfaceDescriptions.Should().Equal("clock");
        time.IsObservable.Should().BeTrue();
        time.ContentFormats.Should().Equal(CoapContentFormat.TextPlain);
        links.Should().Contain(l => l.Target == "/async");
    }

    [SkippableFact]
    public async Task PingsLibcoap()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();

        TimeSpan roundTrip = await client.PingAsync(Uri(server, "/"));

        roundTrip.Should().BeGreaterThan(TimeSpan.Zero);
        client.Ping(Uri(server, "/")).Should().BeGreaterThan(TimeSpan.Zero);
    }

    [SkippableFact]
    public async Task CreatesReadsReplacesAndDeletesADynamicResource()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();
        Uri uri = Uri(server, "/dynamic-" + Guid.NewGuid().ToString("N")[..8]);

        (await client.PutAsync(uri, "first"u8.ToArray(), CoapContentFormat.TextPlain)).Code.Should().Be(CoapCode.Created);
        (await client.GetAsync(uri)).GetPayloadString().Should().Be("first");
        client.Put(uri, "second"u8.ToArray(), CoapContentFormat.TextPlain).Code.Should().Be(CoapCode.Changed);
        client.Get(uri).GetPayloadString().Should().Be("second");
        (await client.DeleteAsync(uri)).Code.Should().Be(CoapCode.Deleted);
        (await client.GetAsync(uri)).Code.Should().Be(CoapCode.NotFound);
    }

    [SkippableFact]
    public async Task PostToTheRootIsMethodNotAllowed()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();

        CoapResponse response = await client.PostAsync(Uri(server, "/"), Encoding.UTF8.GetBytes("x"));

        response.Code.Should().Be(CoapCode.MethodNotAllowed);
        response.Invoking(r => r.EnsureSuccess()).Should().Throw<CoapNet.Messaging.CoapException>().WithMessage("*4.05*");
    }

    [SkippableFact]
    public async Task ReceivesTheSeparateResponseOfTheAsyncResource()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();

        // libcoap's /async?N answers with an empty ACK, then after N seconds a separate CON response.
        CoapResponse response = await client.GetAsync(Uri(server, "/async?1"));

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("done");
        if (_scheme == "coap")
        {
            response.Message.Type.Should().Be(CoapMessageType.Confirmable, "a separate response arrives as its own CON, not in the ACK");
        }
    }

    [SkippableFact]
    public async Task ABodyLargerThanOneDatagramIsNeverReportedAsAWholeFirstBlock()
    {
        using LibCoapServer server = LibCoapServer.Start();
        await using CoapClient client = new();
        string file = Path.Combine(Path.GetTempPath(), $"coapnet-big-{Guid.NewGuid():N}.bin");
        byte[] body = new byte[1500];
        Random.Shared.NextBytes(body);
        await File.WriteAllBytesAsync(file, body);
        Uri uri = Uri(server, "/big-" + Guid.NewGuid().ToString("N")[..8]);
        try
        {
            // libcoap's own client uploads it block-wise over UDP.
            using (System.Diagnostics.Process upload = LibCoap.Start(LibCoap.Client, "-m", "put", "-f", file, "-B", "10", new Uri(uri.ToString().Replace("coap+tcp://", "coap://", StringComparison.Ordinal)).ToString()))
            {
                await upload.WaitForExitAsync();
                upload.ExitCode.Should().Be(0);
            }

            if (_scheme == "coap")
            {
                // Over UDP libcoap serves it in Block2 blocks; until the block-wise stage exists the client must refuse the first block rather than pass it off as the body.
                (await client.Invoking(c => c.GetAsync(uri)).Should().ThrowAsync<CoapNet.Messaging.CoapBadOptionException>())
                    .Which.Option.Should().Be(CoapOptionNumber.Block2);
            }
            else
            {
                // Over TCP one frame holds it whole (the CSMs allow it).
                (await client.GetAsync(uri)).Payload.ToArray().Should().Equal(body);
            }
        }
        finally
        {
            File.Delete(file);
        }
    }

    private Uri Uri(LibCoapServer server, string pathAndQuery) => new($"{_scheme}://127.0.0.1:{server.Port}{pathAndQuery}");
}

/// <summary>Our CoapClient against coap-server-notls over UDP.</summary>
public sealed class LibCoapServerInteropOverUdpTests() : LibCoapServerInteropTests("coap");

/// <summary>Our CoapClient against coap-server-notls over TCP: CSM first, then the same requests on one reused connection.</summary>
public sealed class LibCoapServerInteropOverTcpTests() : LibCoapServerInteropTests("coap+tcp");
