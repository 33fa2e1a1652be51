using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Real RFC 8323 frames: coap-client connects over TCP on loopback, the test reads its CSM and
/// its request with the stream deserializer, then answers with a CSM and a response that
/// coap-client must accept and print.
/// </summary>
public sealed class LibCoapTcpCaptureTests
{
    [SkippableFact]
    public async Task ReadsLibcoapCsmAndRequestFromATcpStreamAndLibcoapAcceptsOurFrames()
    {
        TcpListener listener = new(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var client = LibCoap.Start(LibCoap.Client, "-m", "get", "-B", "5", $"coap+tcp://127.0.0.1:{port}/sensors/humidity");
        try
        {
            using CancellationTokenSource timeout = new(TimeSpan.FromSeconds(10));
            using TcpClient connection = await listener.AcceptTcpClientAsync(timeout.Token);
            NetworkStream stream = connection.GetStream();

            // RFC 8323 section 5.3: the CSM is the first message each side sends.
            CoapMessage? csm = await CoapMessageSerializer.Tcp.DeserializeAsync(stream, timeout.Token);
            csm.Should().NotBeNull();
            csm!.Code.Should().Be(CoapCode.Csm);
            csm.Options.Count.Should().BeGreaterThan(0, "libcoap announces its Max-Message-Size (option 2)");
            csm.Options[0].Number.Should().Be((CoapOptionNumber)2);

            // libcoap waits for the server's CSM before it sends the request.
            await CoapMessageSerializer.Tcp.SerializeAsync(new CoapMessage { Code = CoapCode.Csm }, stream, timeout.Token);
            CoapMessage? request = await CoapMessageSerializer.Tcp.DeserializeAsync(stream, timeout.Token);
            request.Should().NotBeNull();
            request!.Code.Should().Be(CoapCode.Get);
            request.UriPath.Should().Be("/sensors/humidity");

            CoapMessage response = new() { Code = CoapCode.Content, Token = request.Token };
            response.SetPayload("41 %");
            await CoapMessageSerializer.Tcp.SerializeAsync(response, stream, timeout.Token);

            (await client.StandardOutput.ReadToEndAsync(timeout.Token)).Should().Contain("41 %");
        }
        finally
        {
            LibCoap.Stop(client);
            listener.Stop();
        }
    }
}
