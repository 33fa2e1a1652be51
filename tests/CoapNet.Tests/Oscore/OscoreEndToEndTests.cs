using System.Net;
using System.Security.Cryptography;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Endpoints;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Oscore.Protection;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Oscore;

/// <summary>
/// OSCORE between our client and our server over loopback (RFC 8613): each test has a server and contexts of its own, so
/// no test's sequence numbers reach another's replay window.
/// </summary>
public sealed class OscoreEndToEndTests
{
    private const string ClientId = "0a";
    private const string ServerId = "0b";

    [Fact]
    public async Task A_protected_GET_reaches_a_route_that_requires_OSCORE_with_the_clients_identity()
    {
        await using LoopbackServer server = Start(out _);
        await using CoapClient client = Client(server.EndPoint);

        CoapResponse response = await client.GetAsync(server.Uri("/secret"));

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("secret for oscore:0a");
    }

    [Fact]
    public async Task An_unprotected_GET_of_a_route_that_requires_OSCORE_gets_4_01_without_the_content()
    {
        await using LoopbackServer server = Start(out _);
        await using CoapClient plain = new();

        CoapResponse response = await plain.GetAsync(server.Uri("/secret"));

        response.Code.Should().Be(CoapCode.Unauthorized);
        response.GetPayloadString().Should().NotContain("secret for");
    }

    [Fact]
    public async Task What_goes_on_the_wire_is_a_POST_with_the_OSCORE_option_and_no_path()
    {
        await using LoopbackServer server = Start(out _);
        OscoreContext context = ClientContext();
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/secret"));
        request.MessageId = 0x1234;
        request.Token = new byte[] { 1, 2, 3, 4 };

        CoapMessage outer = OscoreProtection.ProtectRequest(context, request, out RequestBinding binding);
        CoapMessage answer = await RawPeer.Exchange(server.EndPoint, outer);

        outer.Code.Should().Be(CoapCode.Post);
        outer.Options.Contains(CoapOptionNumber.UriPath).Should().BeFalse("Uri-Path is Class E, inside the ciphertext");
        answer.Code.Should().Be(CoapCode.Changed, "the outer code of a response is 2.04 (RFC 8613 section 4.2)");
        answer.Options.Contains(CoapOptionNumber.Oscore).Should().BeTrue();
        answer.Payload.ToArray().Should().NotContain(System.Text.Encoding.UTF8.GetBytes("secret"));
        answer.Options.TryGet(CoapOptionNumber.Oscore, out CoapOptionEntry option).Should().BeTrue();
        CoapNet.Oscore.Cose.OscoreOptionValue.TryRead(option.Value, out CoapNet.Oscore.Cose.OscoreOptionValue value).Should().BeTrue();
        OscoreProtection.OpenResponse(binding, answer, value)!.GetPayloadString().Should().Be("secret for oscore:0a");
    }

    [Fact]
    public async Task A_replayed_request_is_refused_with_an_unprotected_4_01()
    {
        await using LoopbackServer server = Start(out _);
        OscoreContext context = ClientContext();
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, server.Uri("/secret"));
        request.Token = new byte[] { 9 };
        CoapMessage outer = OscoreProtection.ProtectRequest(context, request, out _);
        outer.MessageId = 1;
        CoapMessage first = await RawPeer.Exchange(server.EndPoint, outer);

        // The same protected request again under a new Message ID, so the message layer takes it as a new one.
        outer.MessageId = 2;
        CoapMessage replay = await RawPeer.Exchange(server.EndPoint, outer);

        first.Options.Contains(CoapOptionNumber.Oscore).Should().BeTrue();
        replay.Code.Should().Be(CoapCode.Unauthorized);
        replay.Options.Contains(CoapOptionNumber.Oscore).Should().BeFalse("an OSCORE error is not protected (RFC 8613 section 8.2)");
        replay.GetPayloadString().Should().Be("Replay detected");
    }

    [Fact]
    public async Task A_client_with_the_wrong_key_gets_an_unprotected_4_00_and_never_the_content()
    {
        await using LoopbackServer server = Start(out _);
        OscoreContext wrong = new(new OscoreContextOptions
        {
            MasterSecret = RandomNumberGenerator.GetBytes(16),
            SenderId = Convert.FromHexString(ClientId),
            RecipientId = Convert.FromHexString(ServerId),
        });
        await using CoapClient client = Client(server.EndPoint, wrong);

        CoapResponse response = await client.GetAsync(server.Uri("/secret"));

        response.Code.Should().Be(CoapCode.BadRequest);
        response.GetPayloadString().Should().Be("Decryption failed");
    }

    [Fact]
    public async Task A_client_whose_kid_the_server_does_not_know_gets_4_01()
    {
        await using LoopbackServer server = Start(out _);
        OscoreContext stranger = new(new OscoreContextOptions
        {
            MasterSecret = Secret,
            SenderId = [0x77],
            RecipientId = Convert.FromHexString(ServerId),
        });
        await using CoapClient client = Client(server.EndPoint, stranger);

        CoapResponse response = await client.GetAsync(server.Uri("/secret"));

        response.Code.Should().Be(CoapCode.Unauthorized);
        response.GetPayloadString().Should().Be("Security context not found");
    }

    [Fact]
    public async Task A_protected_PUT_stores_what_a_protected_GET_reads()
    {
        await using LoopbackServer server = Start(out _);
        await using CoapClient client = Client(server.EndPoint);

        CoapResponse put = await client.PutAsync(server.Uri("/store"), "lamp on"u8.ToArray());
        CoapResponse get = await client.GetAsync(server.Uri("/store"));

        put.Code.Should().Be(CoapCode.Changed);
        get.GetPayloadString().Should().Be("lamp on");
    }

    [Theory]
    [InlineData("coap")]
    [InlineData("coap+tcp")]
    public async Task An_observation_gets_ten_protected_notifications_in_order(string scheme)
    {
        bool tcp = scheme == "coap+tcp";
        await using LoopbackServer server = Start(out Func<int> notify, tcp);
        await using CoapClient client = Client(tcp ? server.TcpEndPoint! : server.EndPoint);
        List<string> seen = [];

        using CoapObservation observation = client.Observe(server.Uri("/counter", scheme), response =>
        {
            lock (seen)
            {
                seen.Add(response.GetPayloadString());
            }
        });
        Wait.Until(() => Count(seen) == 1);
        for (int i = 1; i <= 10; i++)
        {
            notify();
            int expected = i + 1;
            Wait.Until(() => Count(seen) == expected);
        }

        lock (seen)
        {
            seen.Should().Equal(Enumerable.Range(0, 11).Select(i => i.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        }
    }

    [Fact]
    public async Task Over_TCP_a_protected_GET_and_PUT_work_as_over_UDP()
    {
        await using LoopbackServer server = Start(out _, tcp: true);
        await using CoapClient client = Client(server.TcpEndPoint!);

        CoapResponse put = await client.PutAsync(server.Uri("/store", "coap+tcp"), "over tcp"u8.ToArray());
        CoapResponse get = await client.GetAsync(server.Uri("/secret", "coap+tcp"));

        put.Code.Should().Be(CoapCode.Changed);
        get.GetPayloadString().Should().Be("secret for oscore:0a");
    }

    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");

    private static OscoreContext ClientContext() => new(new OscoreContextOptions
    {
        MasterSecret = Secret,
        MasterSalt = Convert.FromHexString("9e7ca92223786340"),
        SenderId = Convert.FromHexString(ClientId),
        RecipientId = Convert.FromHexString(ServerId),
    });

    private static OscoreContext ServerContext() => new(new OscoreContextOptions
    {
        MasterSecret = Secret,
        MasterSalt = Convert.FromHexString("9e7ca92223786340"),
        SenderId = Convert.FromHexString(ServerId),
        RecipientId = Convert.FromHexString(ClientId),
    });

    private static int Count(List<string> seen)
    {
        lock (seen)
        {
            return seen.Count;
        }
    }

    private static CoapClient Client(IPEndPoint server, OscoreContext? context = null)
        => new(new CoapClientOptions { Endpoint = new CoapEndpointOptions().UseOscore(new OscoreOptions().AddClientContext(server, context ?? ClientContext())) });

    private static LoopbackServer Start(out Func<int> notify, bool tcp = false)
    {
        CoapServerOptions options = LoopbackServer.Options(tcp: tcp);
        options.Endpoint.UseOscore(new OscoreOptions().AddServerContext(ServerContext()));
        byte[] stored = [];
        int counter = 0;
        CoapRouteBuilder? counterRoute = null;
        LoopbackServer server = LoopbackServer.Start(
            s =>
            {
                s.MapGet("/secret", (CoapPeerIdentity? identity) => $"secret for {identity}").RequireOscore();
                s.MapPut("/store", request =>
                {
                    stored = request.Payload.ToArray();
                    return new CoapResponse(CoapCode.Changed);
                });
                s.MapGet("/store", _ => new CoapResponse(CoapCode.Content, stored, CoapContentFormat.OctetStream));
                counterRoute = s.MapGet("/counter", _ => CoapResponse.Content(Volatile.Read(ref counter).ToString(System.Globalization.CultureInfo.InvariantCulture))).Observable();
            },
            options);
        notify = () =>
        {
            Interlocked.Increment(ref counter);
            return counterRoute!.NotifyObservers();
        };
        return server;
    }
}
