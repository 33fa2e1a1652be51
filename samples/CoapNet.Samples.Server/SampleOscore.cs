using CoapNet.Endpoints;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Server;

namespace CoapNet.Samples.Server;

/// <summary>
/// OSCORE (RFC 8613) on the sample server's coap port with the demo context of RFC 8613 Appendix C.1, printed at start
/// so any client can use it: every route answers a request protected with it, and /oscore/hello answers only those.
/// </summary>
internal static class SampleOscore
{
    /// <summary>The demo Master Secret (RFC 8613 Appendix C.1.1), in hexadecimal.</summary>
    public const string MasterSecret = "0102030405060708090a0b0c0d0e0f10";

    /// <summary>The demo Master Salt (RFC 8613 Appendix C.1.1), in hexadecimal.</summary>
    public const string MasterSalt = "9e7ca92223786340";

    /// <summary>The client's Sender ID: empty.</summary>
    public const string ClientSenderId = "";

    /// <summary>The server's Sender ID.</summary>
    public const string ServerSenderId = "01";

    /// <summary>The line printed at start: the whole context, since it is public anyway.</summary>
    public const string Banner = $"oscore context: master-secret '{MasterSecret}', master-salt '{MasterSalt}', client-sender-id '{ClientSenderId}', server-sender-id '{ServerSenderId}' (demo only; RFC 8613 Appendix C.1's, known to everyone; try: coap get --oscore FILE coap://127.0.0.1/oscore/hello, with FILE as docs/tool.md shows)";

    /// <summary>
    /// Endpoint settings with OSCORE and the demo context over a copy of <paramref name="endpoint"/>, for the coap port
    /// alone: the others keep theirs.
    /// </summary>
    /// <param name="endpoint">The server's endpoint settings.</param>
    /// <returns>The copy with OSCORE.</returns>
    public static CoapEndpointOptions Protect(CoapEndpointOptions endpoint)
    {
        // The server's side of the context: its Sender ID is 01, its Recipient ID the client's (empty). Its sequence
        // numbers (notifications only) restart with the process, which only a demo context whose keys are public may do.
        OscoreContext context = new(new OscoreContextOptions
        {
            MasterSecret = Convert.FromHexString(MasterSecret),
            MasterSalt = Convert.FromHexString(MasterSalt),
            SenderId = Convert.FromHexString(ServerSenderId),
            RecipientId = Convert.FromHexString(ClientSenderId),
        });
        return endpoint.Clone().UseOscore(new OscoreOptions().AddServerContext(context));
    }

    /// <summary>Maps /oscore/hello: "Hello, OSCORE!" to a protected GET, 4.01 Unauthorized to any other.</summary>
    /// <param name="server">The server, not yet started.</param>
    public static void Map(CoapServer server)
        => server.MapGet("/oscore/hello", () => "Hello, OSCORE!").RequireOscore();
}
