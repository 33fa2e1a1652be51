using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Oscore;
using CoapNet.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Oscore;

/// <summary>
/// The Sender Sequence Number kept in a file across restarts (RFC 8613 section 7.5.1, Appendix B.1.1): a client whose
/// state is dropped and made again from the file goes on where its reservation ended, so our server's replay window
/// takes its requests; without the file it would reuse Partial IVs, which that window refuses.
/// </summary>
public sealed class OscoreSequenceFileTests : IDisposable
{
    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");
    private static readonly byte[] ClientId = [0x0c];
    private static readonly byte[] ServerId = [0x0d];

    private readonly string _folder = Directory.CreateTempSubdirectory("coapnet-oscore-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public void A_missing_file_starts_at_0_and_a_reservation_is_where_the_next_start_resumes()
    {
        string path = Path.Combine(_folder, "client.seq");
        OscoreSequenceFile store = new(path);

        long first = store.Load();
        store.Reserve(100);

        first.Should().Be(0);
        new OscoreSequenceFile(path).Load().Should().Be(100);
        File.ReadAllText(path).Should().Be("100\n");
        Directory.GetFiles(_folder).Should().Equal([path], "the temporary file is renamed over the state, never left beside it");
    }

    [Theory]
    [InlineData("")]
    [InlineData("next=100")]
    [InlineData("-5")]
    [InlineData("1099511627777")]
    public void A_corrupt_file_is_refused_with_its_name_and_never_read_as_0(string content)
    {
        string path = Path.Combine(_folder, "client.seq");
        File.WriteAllText(path, content);

        Action load = () => new OscoreSequenceFile(path).Load();
        Action context = () => _ = new OscoreContext(ClientOptions(new OscoreSequenceFile(path)));

        load.Should().Throw<InvalidDataException>().Which.Message.Should().Contain(path).And.Contain("corrupt");
        context.Should().Throw<InvalidDataException>().Which.Message.Should().Contain(path);
    }

    [Fact]
    public void A_file_in_a_folder_that_does_not_exist_is_refused_with_its_name()
    {
        string path = Path.Combine(_folder, "missing", "client.seq");

        Action create = () => _ = new OscoreSequenceFile(path);

        create.Should().Throw<ArgumentException>().Which.Message.Should().Contain(Path.Combine(_folder, "missing"));
    }

    [Fact]
    public async Task A_client_made_again_from_its_file_after_its_state_is_dropped_is_still_taken_by_the_servers_replay_window()
    {
        string path = Path.Combine(_folder, "client.seq");
        int served = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref served));

        // A first life that sends three requests and ends without a word, as a crash would.
        await using (CoapClient first = Client(server.EndPoint, new OscoreContext(ClientOptions(new OscoreSequenceFile(path)))))
        {
            for (int i = 0; i < 3; i++)
            {
                (await first.GetAsync(server.Uri("/hello"))).GetPayloadString().Should().Be("hello oscore:0c");
            }
        }

        File.ReadAllText(path).Should().Be("100\n", "the numbers up to 100 were reserved before the first one went out");
        OscoreContext again = new(ClientOptions(new OscoreSequenceFile(path)));
        again.SenderSequenceNumber.Should().Be(100, "a restart resumes where the reservation ended");
        await using CoapClient second = Client(server.EndPoint, again);
        for (int i = 0; i < 3; i++)
        {
            CoapResponse response = await second.GetAsync(server.Uri("/hello"));
            response.Code.Should().Be(CoapCode.Content, response.GetPayloadString());
        }

        Volatile.Read(ref served).Should().Be(6);
    }

    [Fact]
    public async Task A_client_made_again_without_its_file_reuses_Partial_IVs_and_the_servers_replay_window_refuses_them()
    {
        int served = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref served));
        await using (CoapClient first = Client(server.EndPoint, new OscoreContext(ClientOptions(store: null))))
        {
            (await first.GetAsync(server.Uri("/hello"))).Code.Should().Be(CoapCode.Content);
            (await first.GetAsync(server.Uri("/hello"))).Code.Should().Be(CoapCode.Content);
        }

        // Sequence number 0 again, under the same keys: the nonce of the first request (RFC 8613 section 7.4). The client
        // sends a GET refused as a replay once more under its next number, 1: the nonce of the second request, refused too.
        await using CoapClient second = Client(server.EndPoint, new OscoreContext(ClientOptions(store: null)));
        CoapResponse replay = await second.GetAsync(server.Uri("/hello"));

        replay.Code.Should().Be(CoapCode.Unauthorized);
        replay.GetPayloadString().Should().Be("Replay detected");
        Volatile.Read(ref served).Should().Be(2, "the handler never sees a replayed request");
    }

    [Fact]
    public async Task While_the_file_cannot_be_written_no_request_goes_out_and_once_it_can_they_do()
    {
        string path = Path.Combine(_folder, "client.seq");
        int served = 0;
        await using LoopbackServer server = Start(() => Interlocked.Increment(ref served));
        await using CoapClient client = Client(server.EndPoint, new OscoreContext(ClientOptions(new OscoreSequenceFile(path))));

        // A folder where the temporary file goes: the reservation cannot be written.
        Directory.CreateDirectory(path + ".tmp");
        Func<Task> first = () => client.GetAsync(server.Uri("/hello"));
        Func<Task> second = () => client.GetAsync(server.Uri("/hello"));
        (await first.Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain(path);
        await second.Should().ThrowAsync<InvalidOperationException>("a failed reservation reserves nothing, so the next number is not sent either");
        Directory.Delete(path + ".tmp");
        CoapResponse after = await client.GetAsync(server.Uri("/hello"));

        after.Code.Should().Be(CoapCode.Content);
        Volatile.Read(ref served).Should().Be(1);
        File.ReadAllText(path).Should().Be("100\n");
    }

    private static OscoreContextOptions ClientOptions(IOscoreSequenceStore? store) => new()
    {
        MasterSecret = Secret,
        SenderId = ClientId,
        RecipientId = ServerId,
        SequenceStore = store,
    };

    private static CoapClient Client(IPEndPoint server, OscoreContext context)
        => new(new CoapClientOptions { Endpoint = new CoapEndpointOptions().UseOscore(new OscoreOptions().AddClientContext(server, context)) });

    private static LoopbackServer Start(Action served)
    {
        CoapServerOptions options = LoopbackServer.Options();
        options.Endpoint.UseOscore(new OscoreOptions().AddServerContext(new OscoreContext(new OscoreContextOptions
        {
            MasterSecret = Secret,
            SenderId = ServerId,
            RecipientId = ClientId,
        })));
        return LoopbackServer.Start(s => s.MapGet("/hello", request =>
        {
            served();
            return CoapResponse.Content($"hello {request.Peer.Identity}");
        }), options);
    }
}
