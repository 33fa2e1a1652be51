using System.Net;
using System.Net.Sockets;
using System.Text;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Interop;

/// <summary>
/// Real wire samples: libcoap's coap-client sends requests to a UDP socket of the test on
/// loopback; the test parses exactly what arrived, then answers with a response serialized by
/// CoapNet, which coap-client must accept and print.
/// </summary>
public sealed class LibCoapClientCaptureTests
{
    private static readonly TimeSpan ReceiveTimeout = TimeSpan.FromSeconds(10);

    [SkippableFact]
    public async Task ParsesAConfirmableGetWithTokenPathAndQueryAndLibcoapAcceptsOurPiggybackedResponse()
    {
        using UdpClient socket = new(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)socket.Client.LocalEndPoint!).Port;
        var client = LibCoap.Start(LibCoap.Client, "-m", "get", "-B", "5", "-T", "c0de", $"coap://127.0.0.1:{port}/sensors/temp?unit=C&fmt=text");
        try
        {
            UdpReceiveResult received = await ReceiveAsync(socket);
            CoapMessage request = CoapMessageSerializer.Udp.Deserialize(received.Buffer);

            request.Type.Should().Be(CoapMessageType.Confirmable);
            request.Code.Should().Be(CoapCode.Get);
            // -T gives the starting token; libcoap 4.3 increments it before the first request.
            request.Token.Length.Should().Be(4);
            Encoding.ASCII.GetString(request.Token.Span).Should().StartWith("c0d");
            request.GetUriPathSegments().Should().Equal("sensors", "temp");
            request.GetUriQueryArguments().Should().Equal("unit=C", "fmt=text");
            request.UriHost.Should().BeNull("an IP-literal host needs no Uri-Host (RFC 7252 section 6.4)");
            request.Payload.Length.Should().Be(0);
            CoapMessageSerializer.Udp.Serialize(request).Should().Equal(received.Buffer, "re-serializing reproduces libcoap's bytes");

            CoapMessage response = request.CreateResponse(CoapCode.Content);
            response.ContentFormat = CoapContentFormat.TextPlain;
            response.SetPayload("22.3 C");
            await socket.SendAsync(CoapMessageSerializer.Udp.Serialize(response), received.RemoteEndPoint);

            (await client.StandardOutput.ReadToEndAsync()).Should().Contain("22.3 C");
            await client.WaitForExitAsync();
            client.ExitCode.Should().Be(0);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }

    [SkippableFact]
    public async Task ParsesANonConfirmablePutWithContentFormatPayloadAndUnknownOption()
    {
        using UdpClient socket = new(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)socket.Client.LocalEndPoint!).Port;

        // Option 65000 is unregistered (elective, safe): it must arrive and survive a round trip unchanged.
        var client = LibCoap.Start(LibCoap.Client, "-m", "put", "-N", "-B", "2", "-t", "50", "-O", "65000,0x0102ff", "-e", "{\"on\":true}", $"coap://127.0.0.1:{port}/lamp");
        try
        {
            UdpReceiveResult received = await ReceiveAsync(socket);
            CoapMessage request = CoapMessageSerializer.Udp.Deserialize(received.Buffer);

            request.Type.Should().Be(CoapMessageType.NonConfirmable);
            request.Code.Should().Be(CoapCode.Put);
            request.UriPath.Should().Be("/lamp");
            request.ContentFormat.Should().Be(CoapContentFormat.Json);
            request.GetPayloadString().Should().Be("{\"on\":true}");
            request.Options.TryGet((CoapOptionNumber)65000, out CoapOptionEntry custom).Should().BeTrue();
            custom.Value.ToArray().Should().Equal(0x01, 0x02, 0xff);
            CoapMessageSerializer.Udp.Serialize(request).Should().Equal(received.Buffer);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }

    [SkippableFact]
    public async Task ParsesAPostWithBlock1AndAcceptFromLibcoap()
    {
        using UdpClient socket = new(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)socket.Client.LocalEndPoint!).Port;
        string body = new('x', 100);
        var client = LibCoap.Start(LibCoap.Client, "-m", "post", "-B", "2", "-b", "32", "-A", "60", "-e", body, $"coap://127.0.0.1:{port}/upload");
        try
        {
            UdpReceiveResult received = await ReceiveAsync(socket);
            CoapMessage request = CoapMessageSerializer.Udp.Deserialize(received.Buffer);

            request.Code.Should().Be(CoapCode.Post);
            request.Accept.Should().Be(CoapContentFormat.Cbor);
            request.Block1.Should().Be(new CoapBlock(0, more: true, sizeExponent: 1), "the first 32-byte block of a 100-byte body");
            request.Payload.Length.Should().Be(32);
            CoapMessageSerializer.Udp.Serialize(request).Should().Equal(received.Buffer);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }

    [SkippableFact]
    public async Task ParsesAnObserveRegistrationFromLibcoap()
    {
        using UdpClient socket = new(new IPEndPoint(IPAddress.Loopback, 0));
        int port = ((IPEndPoint)socket.Client.LocalEndPoint!).Port;
        var client = LibCoap.Start(LibCoap.Client, "-m", "get", "-s", "2", "-B", "2", $"coap://127.0.0.1:{port}/obs");
        try
        {
            UdpReceiveResult received = await ReceiveAsync(socket);
            CoapMessage request = CoapMessageSerializer.Udp.Deserialize(received.Buffer);

            request.Code.Should().Be(CoapCode.Get);
            request.Observe.Should().Be(0u, "0 registers an observer (RFC 7641 section 2)");
            request.Token.Length.Should().BeGreaterThan(0);
            CoapMessageSerializer.Udp.Serialize(request).Should().Equal(received.Buffer);
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }

    private static async Task<UdpReceiveResult> ReceiveAsync(UdpClient socket)
    {
        using CancellationTokenSource timeout = new(ReceiveTimeout);
        return await socket.ReceiveAsync(timeout.Token);
    }
}
