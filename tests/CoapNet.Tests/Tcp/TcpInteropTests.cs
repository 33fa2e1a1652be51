using System.Globalization;
using System.Net;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Interop;
using CoapNet.Transports;

namespace CoapNet.Tests.Tcp;

/// <summary>CoAP over TCP against libcoap 4.3 (coap-client-notls, coap-server-notls) over real loopback sockets.</summary>
public sealed class TcpInteropTests
{
    private static readonly TimeSpan ProcessTimeout = TimeSpan.FromSeconds(30);

    [SkippableFact]
    public async Task LibcoapClientGetsFromOurEndpointOverTcp()
    {
        string client = LibCoap.Client;
        await using CoapEndpoint server = new(new TcpConnectionListener(new IPEndPoint(IPAddress.Loopback, 0)));
        server.RequestHandler = exchange =>
        {
            CoapMessage response = new() { Code = CoapCode.Content };
            response.SetPayload("tcp says " + exchange.Request.UriPath);
            exchange.Respond(response);
        };
        server.Start();

        string port = server.LocalEndPoint.Port.ToString(CultureInfo.InvariantCulture);
        string output = await RunAsync(client, "-m", "get", "-B", "10", $"coap+tcp://127.0.0.1:{port}/x");

        output.Should().Contain("tcp says /x");
    }

    [SkippableFact]
    public async Task OurEndpointPutsGetsAndDeletesOnLibcoapServerOverTcp()
    {
        using LibCoapServer libcoap = LibCoapServer.Start();
        await using CoapEndpoint client = new(new TcpConnectionFactory());
        client.Start();
        CoapPeer peer = CoapPeer.Tcp(libcoap.EndPoint);
        string path = "dynamic-" + Guid.NewGuid().ToString("N")[..8];

        CoapMessage put = Request(CoapCode.Put, path);
        put.SetPayload("over tcp");
        (await client.SendRequestAsync(put, peer)).Code.Should().Be(CoapCode.Created);

        CoapMessage got = await client.SendRequestAsync(Request(CoapCode.Get, path), peer);
        got.Code.Should().Be(CoapCode.Content);
        got.GetPayloadString().Should().Be("over tcp");

        (await client.SendRequestAsync(Request(CoapCode.Delete, path), peer)).Code.Should().Be(CoapCode.Deleted);
        (await client.SendRequestAsync(Request(CoapCode.Get, path), peer)).Code.Should().Be(CoapCode.NotFound);
    }

    [SkippableFact]
    public async Task OurEndpointPingsLibcoapServerOverTcp()
    {
        using LibCoapServer libcoap = LibCoapServer.Start();
        await using CoapEndpoint client = new(new TcpConnectionFactory());
        client.Start();

        TimeSpan roundTrip = await client.PingAsync(libcoap.EndPoint);

        roundTrip.Should().BeGreaterThan(TimeSpan.Zero);
    }

    private static CoapMessage Request(CoapCode method, string path)
    {
        CoapMessage request = new() { Code = method };
        request.Options.Add(CoapOptionNumber.UriPath, path);
        return request;
    }

    private static async Task<string> RunAsync(string executable, params string[] arguments)
    {
        using System.Diagnostics.Process process = LibCoap.Start(executable, arguments);
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using (CancellationTokenSource timeout = new(ProcessTimeout))
        {
            await process.WaitForExitAsync(timeout.Token);
        }

        return await stdout + await stderr;
    }
}
