using System.Security.Authentication;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Dtls.Sessions;
using CoapNet.Messages;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Our DTLS client when the server no longer accepts the cookie it gave (RFC 6347 section 4.2.1), as when a server
/// restarts between its HelloVerifyRequest and the client's answer and its new incarnation has a new cookie secret: the
/// client starts its handshake over at once rather than resend the refused cookie until the handshake times out. A
/// relay on loopback between our client and our server plays the restart by altering the cookie on its way to the
/// client, so the server refuses it and asks again with its own.
/// </summary>
public sealed class DtlsCookieRestartTests
{
    [Fact]
    public async Task AClientWhoseCookieTheServerRefusesStartsItsHandshakeOverAndConnects()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("here")), out DtlsServerTransport transport);
        CookieRelay cookies = new(spoil: 1);
        await using UdpRelay relay = new(server.EndPoint, cookies.Rule);
        await using CoapClient client = DtlsLoopback.Client();

        CoapResponse response = await client.GetAsync(DtlsLoopback.Uri(relay.EndPoint, "/x"));

        response.GetPayloadString().Should().Be("here", "the second handshake got a cookie the server accepts; the first ends at the server's second HelloVerifyRequest, not after 30 s of retransmitting a refused cookie");
        cookies.ClientHellos.Should().Be(4, "each handshake sends a ClientHello and answers the HelloVerifyRequest with another: two handshakes");
        transport.SessionCount.Should().Be(1);
    }

    [Fact]
    public async Task AClientWhoseCookieIsRefusedEveryTimeGivesUpAfterFourHandshakesSayingWhy()
    {
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("here")), out DtlsServerTransport transport);
        CookieRelay cookies = new(spoil: int.MaxValue);
        await using UdpRelay relay = new(server.EndPoint, cookies.Rule);

        // A handshake timeout far past the test's bound: the client must give up on the refusals, not on the clock.
        await using CoapClient client = DtlsLoopback.Client(options: new DtlsClientOptions { HandshakeTimeout = TimeSpan.FromMinutes(10) });

        Func<Task> get = () => client.GetAsync(DtlsLoopback.Uri(relay.EndPoint, "/x")).WaitAsync(Wait.DefaultBound);

        (await get.Should().ThrowAsync<AuthenticationException>()).Which.Message.Should().Contain("refused the cookie of 4 handshakes in a row");
        cookies.ClientHellos.Should().Be(8, "the first handshake and three more, each of two ClientHellos");
        transport.SessionCount.Should().Be(0);
    }

    /// <summary>A relay rule that alters the cookie of the first <c>spoil</c> HelloVerifyRequests and counts the client's ClientHellos.</summary>
    private sealed class CookieRelay(int spoil)
    {
        private int _spoiled;
        private int _clientHellos;

        public int ClientHellos => Volatile.Read(ref _clientHellos);

        public IReadOnlyList<byte[]> Rule(bool toServer, byte[] datagram)
        {
            if (toServer)
            {
                if (DtlsRecords.IsClientHello(datagram))
                {
                    Interlocked.Increment(ref _clientHellos);
                }
            }
            else if (DtlsRecords.TryReadHelloVerifyCookie(datagram, out ReadOnlySpan<byte> cookie) && cookie.Length > 0 && _spoiled < spoil)
            {
                // The cookie is the datagram's last field: altering its last byte makes one the server did not issue,
                // and a different one each time, as a server restarting again and again would give.
                _spoiled++;
                datagram[^1] ^= (byte)(1 + (_spoiled % 255));
            }

            return [datagram];
        }
    }
}
