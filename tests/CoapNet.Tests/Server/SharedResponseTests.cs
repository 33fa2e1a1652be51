using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Tests.Server;

/// <summary>
/// A handler may answer every request with one response object built once (a cached answer): the server
/// writes each request's token, and a type and Message ID of its own, into the bytes it sends, and never
/// into the shared message (RFC 7252 sections 5.2 and 5.3.2, RFC 8323 section 3.3).
/// </summary>
public class SharedResponseTests
{
    [Fact]
    public async Task OneResponseObjectAnswersConNonAndTcpRequestsEachWithItsOwnTokenAndStaysUnchanged()
    {
        CoapResponse shared = CoapResponse.Content("shared");
        shared.Message.ETag = new byte[] { 0xE7 };
        CoapMessageType type = shared.Message.Type;
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/shared", _ => shared), LoopbackServer.Options(tcp: true));
        await using CoapClient confirmable = new();
        await using CoapClient nonConfirmable = new(new CoapClientOptions { UseNonConfirmable = true });

        // Many at once on each transport: the client matches each answer by its token, so a token not its own
        // (another request's, or the shared message's none) would leave a request unanswered until it timed out.
        List<Task<CoapResponse>> answers = [];
        for (int i = 0; i < 20; i++)
        {
            answers.Add(confirmable.GetAsync(server.Uri("/shared")));
            answers.Add(nonConfirmable.GetAsync(server.Uri("/shared")));
            answers.Add(confirmable.GetAsync(server.Uri("/shared", "coap+tcp")));
        }

        CoapResponse[] responses = await Task.WhenAll(answers).WaitAsync(TimeSpan.FromSeconds(30));

        responses.Should().AllSatisfy(r =>
        {
            r.Code.Should().Be(CoapCode.Content);
            r.GetPayloadString().Should().Be("shared");
            r.Message.ETag!.Value.ToArray().Should().Equal(0xE7);
        });
        shared.Message.Token.IsEmpty.Should().BeTrue("the token goes into the datagram, not into the handler's message");
        shared.Message.MessageId.Should().Be(0);
        shared.Message.Type.Should().Be(type);
        shared.Message.Options.Count.Should().Be(2, "Content-Format and ETag, nothing added");
    }
}
